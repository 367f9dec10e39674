"""The Model Context Protocol over stdio, the part memstore serves: tools, resources, a prompt.

Standard library only. A client waits for its MCP servers before the first model turn, and the
SDK's import alone took 0.6 s of every session's start; the subset served here (initialize,
ping, tools, resources, prompts) is small and fixed, and the SDK's own client drives it in the
tests. Messages are JSON-RPC 2.0, one per line. A request gets exactly one answer; a
notification none; a tool's failure is a tool result with `isError`, never a crashed server.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, Any, Literal

# newest first; an unknown version asked for is answered with the newest
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
LINE_MAX = 4_000_000  # bytes of one message; a longer line is refused, not parsed

JsonType = Literal["string", "integer", "number", "boolean"]
PY_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,),
                                         "number": (int, float), "boolean": (bool,)}


class ToolFailed(Exception):
    """A tool's one-line failure, for the model to read."""


@dataclass(frozen=True)
class Param:
    name: str
    type: JsonType
    required: bool = True  # an optional one may also be sent as null


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    params: tuple[Param, ...]
    run: Callable[..., Any]

    def schema(self) -> dict[str, Any]:
        props = {p.name: ({"type": p.type} if p.required else {"anyOf": [{"type": p.type},
                                                                         {"type": "null"}]})
                 for p in self.params}
        return {"type": "object", "properties": props,
                "required": [p.name for p in self.params if p.required]}

    def arguments(self, given: Any) -> dict[str, Any]:
        """The arguments the tool's function takes, checked against its parameters."""
        if given is None:
            given = {}
        if not isinstance(given, dict):
            raise ToolFailed("arguments must be an object")
        out: dict[str, Any] = {}
        for p in self.params:
            if p.name not in given or (given[p.name] is None and not p.required):
                if p.required:
                    raise ToolFailed(f"missing argument: {p.name}")
                continue
            value = given[p.name]
            wrong_bool = isinstance(value, bool) and p.type != "boolean"
            if not isinstance(value, PY_TYPES[p.type]) or wrong_bool:
                kind = f"{'an' if p.type == 'integer' else 'a'} {p.type}"
                raise ToolFailed(f"argument {p.name} must be {kind}, not {value!r}"[:300])
            out[p.name] = value
        return out


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    description: str
    mime_type: str
    read: Callable[[], str]


@dataclass
class Server:
    name: str
    version: str
    instructions: str
    tools: list[Tool] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)
    prompts: dict[str, tuple[str, Callable[[], str]]] = field(default_factory=dict)
    failure: Callable[[BaseException], str] = str  # an exception as the one line a tool returns

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The answer to one message, or None for a notification. Never raises."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        method, ident = message.get("method"), message.get("id")
        if "id" not in message:
            return None  # a notification (initialized, cancelled, ...): nothing to answer
        if not (ident is None or isinstance(ident, str | int)) or isinstance(ident, bool):
            return _error(None, INVALID_REQUEST, "an id is a string or an integer")
        if not isinstance(method, str):
            return _error(ident, INVALID_REQUEST, "no method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        answer = self._methods().get(method)  # a closed table: no attribute is reached by name
        if answer is None:
            return _error(ident, NO_METHOD, f"method not found: {method!r}"[:200])
        try:
            return {"jsonrpc": "2.0", "id": ident, "result": answer(params)}
        except LookupError as exc:
            return _error(ident, INVALID_PARAMS, str(exc.args[0] if exc.args else exc)[:300])
        except Exception as exc:  # a failure is the client's to read; the server goes on
            return _error(ident, INTERNAL_ERROR, self.failure(exc)[:300])

    def _methods(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {"initialize": self._initialize, "ping": self._ping,
                "logging/setLevel": self._ping, "tools/list": self._tools_list,
                "tools/call": self._tools_call, "resources/list": self._resources_list,
                "resources/templates/list": self._resources_templates_list,
                "resources/read": self._resources_read, "prompts/list": self._prompts_list,
                "prompts/get": self._prompts_get}

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {"protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False},
                                 "resources": {"subscribe": False, "listChanged": False},
                                 "prompts": {"listChanged": False}},
                "serverInfo": {"name": self.name, "version": self.version},
                "instructions": self.instructions}

    def _ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"tools": [{"name": t.name, "description": t.description, "inputSchema": t.schema()}
                          for t in self.tools]}

    def _tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        tool = next((t for t in self.tools if t.name == params.get("name")), None)
        if tool is None:
            raise LookupError(f"unknown tool: {params.get('name')!r}"[:200])
        try:
            value = tool.run(**tool.arguments(params.get("arguments")))
        except ToolFailed as exc:
            return _tool_error(str(exc))
        except Exception as exc:  # a tool's failure is the model's to read; the server goes on
            return _tool_error(self.failure(exc))
        if isinstance(value, str):
            return {"content": [{"type": "text", "text": value}], "isError": False}
        structured = value if isinstance(value, dict) else {"result": value}
        return {"content": [{"type": "text", "text": json.dumps(value, indent=2, ensure_ascii=False,
                                                                default=str)}],
                "structuredContent": structured, "isError": False}

    def _resources_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"resources": [{"uri": r.uri, "name": r.name, "description": r.description,
                               "mimeType": r.mime_type} for r in self.resources]}

    def _resources_templates_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"resourceTemplates": []}

    def _resources_read(self, params: dict[str, Any]) -> dict[str, Any]:
        found = next((r for r in self.resources if r.uri == params.get("uri")), None)
        if found is None:
            raise LookupError(f"unknown resource: {params.get('uri')!r}"[:200])
        return {"contents": [{"uri": found.uri, "mimeType": found.mime_type, "text": found.read()}]}

    def _prompts_list(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"prompts": [{"name": name, "description": description, "arguments": []}
                            for name, (description, _text) in self.prompts.items()]}

    def _prompts_get(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str) or name not in self.prompts:
            raise LookupError(f"unknown prompt: {params.get('name')!r}"[:200])
        description, text = self.prompts[name]
        return {"description": description,
                "messages": [{"role": "user", "content": {"type": "text", "text": text()}}]}

    def serve(self, lines: Iterable[bytes] | None = None, out: IO[bytes] | None = None) -> None:
        """Answer each line until the client closes the stream."""
        out = out if out is not None else sys.stdout.buffer
        for line in lines if lines is not None else sys.stdin.buffer:
            if line.strip():
                answer = self.answer_line(line)
                if answer is not None:
                    out.write(answer + b"\n")
                    out.flush()

    def answer_line(self, line: bytes) -> bytes | None:
        """The bytes answering one line (None: nothing to answer), always plain JSON."""
        batch = False
        try:
            if len(line) > LINE_MAX:
                raise ValueError("too long")
            message = json.loads(line, parse_constant=_no_constant)
            batch = isinstance(message, list) and bool(message)
            answers = [self.handle(one) for one in (message if batch else [message])]
        except (ValueError, RecursionError):
            answers = [_error(None, PARSE_ERROR, "not a JSON message")]
        sent = [a for a in answers if a is not None]
        if not sent:
            return None
        try:
            return _encode(sent if batch else sent[0])
        except (ValueError, RecursionError):  # a value JSON cannot carry (NaN, too deep)
            return _encode(_error(None, INTERNAL_ERROR, "the answer could not be encoded"))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _encode(body: Any) -> bytes:
    # ASCII escapes: a lone surrogate in an id or a memory's text cannot break the stream
    return json.dumps(body, ensure_ascii=True, allow_nan=False, default=str).encode("ascii")


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}

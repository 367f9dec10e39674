"""A scripted stand-in for the Gemini API, for driving the real Gemini CLI binary.

Standard library only. `FakeGemini(steps)` serves on 127.0.0.1 at a random free port
(an http.server in a daemon thread); point Gemini CLI at it with
GOOGLE_GEMINI_BASE_URL=fake.url, GEMINI_API_KEY=<anything> and
`{"security": {"auth": {"selectedType": "gemini-api-key"}}}` in ~/.gemini/settings.json.
Each *main-conversation* request is answered with the next scripted step, streamed as
server-sent events the way the real API streams them: one `data: <GenerateContentResponse>`
event per part (candidates[0].content.parts, role "model"), the last one carrying
finishReason "STOP" and usageMetadata. A step is a list of parts: text parts and
functionCall parts. Once the script is exhausted, the reply is the text "done".

Every request is recorded (method, path, headers, parsed JSON body) in `fake.requests`,
in arrival order, for assertions; `fake.main_requests` keeps only the main-conversation
ones. The API key arrives in the `x-goog-api-key` header: never print headers wholesale.

What Gemini CLI 0.61.0 sends (observed with `gemini -p ... --skip-trust`, a fresh HOME):

- With an explicit `-m gemini-2.5-flash`: only
  `POST /v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, one per model
  turn, body {contents, systemInstruction, tools, generationConfig}. tools[0]
  .functionDeclarations lists the built-in tools with `parametersJsonSchema`
  (read_file, write_file, replace, run_shell_command, glob, grep_search, ...).
  contents[0] (user) holds a `<session_context>` text part, then the prompt parts.
  A tool call comes back as a model content with the functionCall (the CLI adds an
  `id` like "read_file_<ms>_0" and a thoughtSignature), followed by a user content with
  the matching functionResponse {name, id, response: {output: ...}}.
  Which tools are declared depends on --approval-mode: write_file and replace need
  auto_edit, run_shell_command needs yolo; a call to an undeclared tool gets
  {"error": "Tool \"...\" not found..."} and fires no BeforeTool hook.
- With the default model ("auto"), a router first sends one non-streamed
  `POST /v1beta/models/<flash-lite>:generateContent` request whose generationConfig has
  responseMimeType "application/json" and a responseJsonSchema (a complexity score).
  A reply that does not fit the schema makes the CLI retry for ~2 minutes, so JSON side
  requests get a minimal object built from their schema (first enum value, 1 for
  numbers, "ok" for strings: next_speaker "user", model_choice "flash", score 1).

Side requests never consume a scripted step: countTokens gets {"totalTokens": N}, JSON
requests get a schema-shaped object, any other non-main generate request (summaries,
titles, web-fetch helpers) gets the text "ok", GET /v1beta/models a small model list.

Which step answers a main request is not a counter but a pure function of the request:
the number of model turns already in its "contents". So an HTTP retry of the same turn
gets the same answer again instead of skipping a step, and the script stays in step with
the conversation whatever else the binary sends. (History compression would shrink that
count; the short scripted sessions never reach it.)
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from . import fake_server
from .fake_server import FakeHandler, FakeServer, route_of, sse

Part = dict[str, Any]
Step = list[Part]

FAKE_MODELS = ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite")


# -- script building -------------------------------------------------------------------


def text(value: str) -> Part:
    """A text part for a scripted step."""
    return {"text": value}


def function_call(name: str, **args: Any) -> Part:
    """A functionCall part for a scripted step: function_call("read_file", file_path="x")."""
    return {"functionCall": {"name": name, "args": args}}


def read_file(file_path: str, start_line: int | None = None, end_line: int | None = None) -> Part:
    """read_file(file_path, start_line?, end_line?): line numbers are 1-based, inclusive."""
    args: dict[str, Any] = {"file_path": file_path}
    if start_line is not None:
        args["start_line"] = start_line
    if end_line is not None:
        args["end_line"] = end_line
    return function_call("read_file", **args)


def write_file(file_path: str, content: str) -> Part:
    """write_file(file_path, content): creates or overwrites the whole file."""
    return function_call("write_file", file_path=file_path, content=content)


def replace(
    file_path: str,
    old_string: str,
    new_string: str,
    instruction: str = "Apply the scripted edit.",
    allow_multiple: bool | None = None,
) -> Part:
    """replace(file_path, instruction, old_string, new_string, allow_multiple?): all but the last
    required."""
    args: dict[str, Any] = {
        "file_path": file_path,
        "instruction": instruction,
        "old_string": old_string,
        "new_string": new_string,
    }
    if allow_multiple is not None:
        args["allow_multiple"] = allow_multiple
    return function_call("replace", **args)


def run_shell_command(
        command: str, description: str | None = None, dir_path: str | None = None) -> Part:
    """run_shell_command(command, description?, dir_path?): only offered in yolo approval mode."""
    args: dict[str, Any] = {"command": command}
    if description is not None:
        args["description"] = description
    if dir_path is not None:
        args["dir_path"] = dir_path
    return function_call("run_shell_command", **args)


# -- request classification ------------------------------------------------------------


class Recorded(fake_server.Recorded):
    @property
    def is_main(self) -> bool:
        return is_main_request(self.method, self.path, self.body)


def _method_of(path: str) -> str:
    """The RPC name after the colon: "streamGenerateContent", "countTokens", ... or ""."""
    last = route_of(path).rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def _model_of(path: str) -> str:
    last = route_of(path).rsplit("/", 1)[-1]
    return last.split(":", 1)[0] or "gemini-fake"


def response_schema(body: Any) -> Any:
    """The JSON schema a structured-output request asks for, or None."""
    if not isinstance(body, dict):
        return None
    config = body.get("generationConfig") or {}
    return config.get("responseJsonSchema") or config.get("responseSchema")


def declares_functions(body: Any) -> bool:
    return isinstance(body, dict) and any(
        isinstance(tool, dict) and tool.get("functionDeclarations")
        for tool in body.get("tools") or []
    )


def is_main_request(method: str, path: str, body: Any) -> bool:
    """A main-conversation turn: a streamed generate request offering function declarations."""
    return (
        method == "POST"
        and _method_of(path) == "streamGenerateContent"
        and declares_functions(body)
        and response_schema(body) is None
    )


def model_turns(body: dict[str, Any]) -> int:
    return sum(1 for content in body.get("contents", []) if content.get("role") == "model")


def sample_for_schema(schema: Any) -> Any:
    """A minimal value satisfying a (JSON or OpenAPI-style) schema: first enum value, required
    properties."""
    if not isinstance(schema, dict):
        return "ok"
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return sample_for_schema(schema[key][0])
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if str(k).lower() != "null"), "string")
    kind = str(kind).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: sample_for_schema(sub) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        return int(low) if kind == "integer" else float(low)
    if kind == "boolean":
        return False
    return "ok"


# -- wire format -----------------------------------------------------------------------


def _chunk(parts: Step, model: str, response_id: str, last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model,
                             "responseId": response_id}
    if last:
        candidate["finishReason"] = "STOP"
        chunk["usageMetadata"] = {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                  "totalTokenCount": 15}
    return chunk


def generate_response(parts: Step, model: str, response_id: str) -> dict[str, Any]:
    """A whole (non-streamed) GenerateContentResponse."""
    return _chunk(parts, model, response_id, last=True)


def stream_response(parts: Step, model: str, response_id: str) -> bytes:
    """The SSE byte stream for one model turn: one event per part, the last with finishReason."""
    parts = parts or [text("")]
    events = [_chunk([part], model, response_id, last=index == len(parts) - 1)
              for index, part in enumerate(parts)]
    return b"".join(sse(event, eol="\r\n") for event in events)


# -- the server ------------------------------------------------------------------------


class _Handler(FakeHandler):
    json_type: ClassVar[str] = "application/json; charset=UTF-8"

    def _not_found(self) -> None:
        error = {"code": 404, "message": f"fake: no route {self.command} {self.path}",
                 "status": "NOT_FOUND"}
        self._json({"error": error}, 404)

    def get(self) -> None:
        route = self.route
        if route.endswith("/models"):
            self._json({"models": [_model_info(name) for name in FAKE_MODELS]})
        elif "/models/" in route:
            self._json(_model_info(route.rsplit("/", 1)[-1]))
        else:
            self._json({})

    def post(self, raw: bytes, body: Any) -> None:
        method, model = _method_of(self.path), _model_of(self.path)

        if method == "countTokens":
            self._json({"totalTokens": max(1, len(raw) // 4)})
            return
        if method not in ("generateContent", "streamGenerateContent") or not isinstance(body, dict):
            self._not_found()
            return
        if is_main_request("POST", self.path, body):
            n, parts = self.fake.step_for(body)
            response_id = f"resp_e2e_{n:02d}"
        else:
            schema = response_schema(body)
            reply = "ok" if schema is None else json.dumps(sample_for_schema(schema))
            parts, response_id = [text(reply)], "resp_e2e_side"
        if method == "streamGenerateContent":
            self._stream(stream_response(parts, model, response_id))
        else:
            self._json(generate_response(parts, model, response_id))


class FakeGemini(FakeServer[Recorded]):
    """The scripted server. Use as a context manager, or call start() and stop()."""

    recorded_type = Recorded
    handler_type = _Handler
    thread_name = "fake-gemini"

    def __post_init__(self) -> None:
        self.steps = [[json.loads(json.dumps(part)) for part in step] for step in self.steps]
        super().__post_init__()

    def turns(self, body: dict[str, Any]) -> int:
        return model_turns(body)

    def final_step(self) -> Step:
        return [text(self.final_text)]

    def detail(self, r: Recorded) -> str:
        contents = r.body.get("contents", [])
        last = contents[-1] if contents else {}
        kinds = [next(iter(p), "?") for p in last.get("parts", []) if isinstance(p, dict)]
        return (
            f"contents={len(contents)} model_turns={model_turns(r.body)} "
            f"json={response_schema(r.body) is not None} last={last.get('role')}:{kinds}"
        )

    def shown_path(self, r: Recorded) -> str:
        return r.route


def _model_info(name: str) -> dict[str, Any]:
    return {
        "name": f"models/{name}",
        "baseModelId": name,
        "displayName": name,
        "inputTokenLimit": 1048576,
        "outputTokenLimit": 65536,
        "supportedGenerationMethods": ["generateContent", "countTokens"],
    }

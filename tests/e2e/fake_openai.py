"""A scripted stand-in for the OpenAI Responses API, for driving the real Codex CLI binary.

Standard library only. `FakeOpenAI(steps)` serves on 127.0.0.1 at a random free port (an
http.server in a daemon thread). Point Codex at it with a custom provider in
`$CODEX_HOME/config.toml`; `fake.provider_config()` returns these lines:

    model = "gpt-5.5"            # a known name: an unknown one loses the apply_patch tool
    model_provider = "fake"
    [model_providers.fake]
    name = "fake"
    base_url = "<fake.url>/v1"
    wire_api = "responses"
    env_key = "FAKE_OPENAI_API_KEY"   # must be set (to anything) in codex's environment

Each *main-conversation* request (`POST /v1/responses` with "stream": true and a "tools"
list) is answered with a scripted step, streamed as server-sent events the way the real
API streams them: response.created, response.in_progress, then per output item
response.output_item.added, its deltas (response.content_part.added /
response.output_text.delta / response.output_text.done / response.content_part.done for a
message, response.function_call_arguments.delta / .done for a function call,
response.custom_tool_call_input.delta / .done for a freeform tool call) and
response.output_item.done, then response.completed with usage. Once the script is
exhausted, the reply is the text "done".

Every request is recorded (method, path, headers, parsed JSON body) in `fake.requests`,
in arrival order, for assertions; `fake.main_requests` keeps only the main-conversation
ones.

What Codex CLI 0.171.0 sends (observed with `codex exec --skip-git-repo-check -s
workspace-write`, a fresh HOME and CODEX_HOME, the provider above):

- Only `POST /v1/responses`, one per model turn, with "stream": true, "store": false,
  the tool list in "tools" and the whole conversation so far in "input": developer
  messages (system prompt, skills, permissions), a user message holding AGENTS.md and
  <environment_context>, then the prompt. No model listing, no title or summary request.
- The shell tool is the function `exec_command` with JSON arguments {"cmd": "..."}
  (optional workdir, yield_time_ms, tty, ...); `shell(...)` builds that call. Its result
  comes back as a `function_call_output` item with the same call_id.
- `apply_patch` is a *custom* (freeform, lark grammar) tool: the model emits a
  `custom_tool_call` item whose "input" is the raw patch text ("*** Begin Patch" ...
  "*** End Patch"); `apply_patch(patch(add_file(...)))` builds it. Its result comes back
  as a `custom_tool_call_output` item.
- Hook additionalContext arrives as developer messages: SessionStart's before the prompt,
  UserPromptSubmit's after it, PreToolUse's and PostToolUse's between the call and its
  output. Codex sends the output items back with the ids this server gave them.

Side requests are still answered sensibly in case another version or configuration sends
them, and they never consume a scripted step: GET .../models gets a one-model list, other
GET/HEAD get "{}", a non-streaming or tool-less /v1/responses request gets the text "ok".
Context compaction (only near the 258k-token window) is not supported.

Which step answers a main request is not a counter but a pure function of the request:
the number of model responses already in its "input" (see `model_turns`). So an HTTP
retry of the same turn gets the same answer again instead of skipping a step. A resumed
session (`codex exec resume`) counts the earlier turns too: script it as a continuation.
Step n's k-th call has the call_id `call_id(n, k)`.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, ClassVar

from . import fake_server
from .fake_server import FakeHandler, FakeServer, route_of, sse

Item = dict[str, Any]
Step = list[Item]

SHELL_TOOL = "exec_command"
MODEL = "gpt-5.5"

# Input item types the model produces; anything else (user/developer messages, tool
# outputs) separates one model turn from the next.
_MODEL_ITEM_TYPES = {
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "tool_search_call",
    "web_search_call",
    "image_generation_call",
}
_STEP_ID = re.compile(r"^(?:msg|fc|ctc|call)_e2e_(\d+)_\d+$")
_ID_PREFIX = {"message": "msg", "function_call": "fc", "custom_tool_call": "ctc"}


# -- script building -------------------------------------------------------------------


def call_id(step: int, index: int) -> str:
    """The call_id the server gives output item `index` of scripted step `step`."""
    return f"call_e2e_{step:02d}_{index}"


def text(value: str) -> Item:
    """An assistant message output item for a scripted step."""
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": value}]}


def function_call(name: str, **arguments: Any) -> Item:
    """A function_call output item: the model calls the JSON-argument tool `name`."""
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}


def shell(cmd: str, **extra: Any) -> Item:
    """A call of Codex's shell tool: shell("cat memory/x.md"), shell("ls", workdir="/abs")."""
    return function_call(SHELL_TOOL, cmd=cmd, **extra)


def apply_patch(patch_text: str) -> Item:
    """A call of Codex's freeform apply_patch tool with the raw patch text as its input."""
    return {"type": "custom_tool_call", "name": "apply_patch", "input": patch_text}


def patch(*hunks: str) -> str:
    """A whole patch: patch(add_file(...), update_file(...))."""
    return "*** Begin Patch\n" + "".join(hunks) + "*** End Patch\n"


def add_file(path: str, content: str) -> str:
    """An `*** Add File:` hunk; every line of `content` becomes a `+` line."""
    return f"*** Add File: {path}\n" + "".join(f"+{line}\n" for line in content.splitlines())


def delete_file(path: str) -> str:
    """A `*** Delete File:` hunk."""
    return f"*** Delete File: {path}\n"


def update_file(
    path: str, old: list[str] | None = None, new: list[str] | None = None,
    move_to: str | None = None
) -> str:
    """An `*** Update File:` hunk replacing the lines `old` (matched in the file) by `new`.

    With old empty the new lines are appended at the end of the file.
    """
    out = f"*** Update File: {path}\n"
    if move_to:
        out += f"*** Move to: {move_to}\n"
    if old or new:
        out += ("@@\n" + "".join(f"-{line}\n" for line in old or [])
                + "".join(f"+{line}\n" for line in new or []))
        if not old:
            out += "*** End of File\n"
    return out


# -- requests ----------------------------------------------------------------------------


class Recorded(fake_server.Recorded):
    @property
    def is_main(self) -> bool:
        return is_main_request(self.method, self.path, self.body)

    @property
    def input(self) -> list[Item]:
        return list(self.body.get("input") or []) if isinstance(self.body, dict) else []

    def texts(self, role: str | None = None) -> list[str]:
        """The text of every message in "input" (of `role` when given), in order."""
        out = []
        for item in self.input:
            if item.get("type") == "message" and (role is None or item.get("role") == role):
                content = item.get("content")
                if isinstance(content, str):
                    out.append(content)
                elif isinstance(content, list):
                    out.extend(str(part.get("text", "")) for part in content
                               if isinstance(part, dict))
        return out

    def tool_outputs(self) -> list[Item]:
        """The function_call_output / custom_tool_call_output items in "input"."""
        return [item for item in self.input if str(item.get("type", "")).endswith("call_output")]


def is_main_request(method: str, path: str, body: Any) -> bool:
    """A main-conversation turn: a streamed POST /v1/responses carrying the tool list."""
    return (
        method == "POST"
        and route_of(path) == "/v1/responses"
        and isinstance(body, dict)
        and bool(body.get("stream"))
        and bool(body.get("tools"))
    )


def _is_model_item(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("type", "message")
    return kind in _MODEL_ITEM_TYPES or (kind == "message" and item.get("role") == "assistant")


def model_turns(body: dict[str, Any]) -> int:
    """How many model responses the conversation in `body["input"]` already holds.

    Consecutive model items are one response. Items this server produced also carry their
    step number in their id and call_id (Codex sends both back), so a response split up by
    what Codex slips in between its items (hook context as developer messages, tool
    outputs of parallel calls) still counts once.
    """
    runs: list[set[int]] = []
    inside = False
    for item in body.get("input") or []:
        produced = _is_model_item(item)
        if produced:
            if not inside:
                runs.append(set())
            for value in (item.get("call_id"), item.get("id")):
                marker = _STEP_ID.match(str(value or ""))
                if marker:
                    runs[-1].add(int(marker.group(1)))
        inside = produced
    steps: set[int] = set().union(*runs)
    return len(steps) + sum(1 for markers in runs if not markers)


# -- streaming ---------------------------------------------------------------------------


def _stream_item(item: Item, index: int, tag: str) -> tuple[list[dict[str, Any]], Item]:
    """The events for one output item (without sequence numbers) and the finished item."""
    id_, call_id = item_id(item, tag, index), f"call_{tag}_{index}"
    kind = item["type"]
    if kind == "message":
        value = "".join(part["text"] for part in item["content"])
        part = {"type": "output_text", "text": value, "annotations": [], "logprobs": []}
        done = {"id": id_, "type": "message", "status": "completed", "role": "assistant",
                "content": [part]}
        at = {"item_id": id_, "output_index": index, "content_index": 0}
        events = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": dict(done, status="in_progress", content=[]),
            },
            {"type": "response.content_part.added", **at, "part": dict(part, text="")},
            {"type": "response.output_text.delta", **at, "delta": value, "logprobs": []},
            {"type": "response.output_text.done", **at, "text": value, "logprobs": []},
            {"type": "response.content_part.done", **at, "part": part},
        ]
    elif kind == "function_call":
        done = {
            "id": id_,
            "type": "function_call",
            "status": "completed",
            "call_id": item.get("call_id") or call_id,
            "name": item["name"],
            "arguments": item["arguments"],
        }
        at = {"item_id": id_, "output_index": index}
        events = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": dict(done, status="in_progress", arguments=""),
            },
            {"type": "response.function_call_arguments.delta", **at, "delta": item["arguments"]},
            {"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]},
        ]
    elif kind == "custom_tool_call":
        done = {
            "id": id_,
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": item.get("call_id") or call_id,
            "name": item["name"],
            "input": item["input"],
        }
        at = {"item_id": id_, "output_index": index}
        events = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": dict(done, status="in_progress", input=""),
            },
            {"type": "response.custom_tool_call_input.delta", **at, "delta": item["input"]},
            {"type": "response.custom_tool_call_input.done", **at, "input": item["input"]},
        ]
    else:
        raise ValueError(f"cannot stream an output item of type {kind!r}")
    events.append({"type": "response.output_item.done", "output_index": index, "item": done})
    return events, done


def item_id(item: Item, tag: str, index: int) -> str:
    """The id of output item `index` of the response tagged `tag` ("e2e_03": step 3)."""
    return f"{_ID_PREFIX.get(item['type'], 'item')}_{tag}_{index}"


def completed_output(items: Step, tag: str) -> list[Item]:
    """The finished output items of a response, as a non-streaming reply carries them."""
    return [_stream_item(item, index, tag)[1] for index, item in enumerate(items)]


def stream_response(items: Step, model: str, tag: str) -> bytes:
    """The full SSE byte stream for one model response made of `items`; ids derive from `tag`."""
    response: dict[str, Any] = {
        "id": f"resp_{tag}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": model,
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": None,
    }
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response},
        {"type": "response.in_progress", "response": response},
    ]
    output: list[Item] = []
    for index, item in enumerate(items):
        item_events, done = _stream_item(item, index, tag)
        events.extend(item_events)
        output.append(done)
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    events.append(
        {"type": "response.completed",
         "response": dict(response, status="completed", output=output, usage=usage)}
    )
    return b"".join(sse(dict(event, sequence_number=n), event["type"])
                    for n, event in enumerate(events))


# -- the server --------------------------------------------------------------------------


class _Handler(FakeHandler):
    extra_headers: ClassVar[dict[str, str]] = {"x-request-id": "req_fake"}
    gzip_bodies = True

    def get(self) -> None:
        if self.route.endswith("/models"):
            self._json({"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "fake"}]})
            return
        self._json({})

    def post(self, raw: bytes, body: Any) -> None:
        route = self.route
        if route != "/v1/responses" or not isinstance(body, dict):
            self._json({"error": {"type": "invalid_request_error", "message": f"no route {route}"}},
                       404)
            return
        model = str(body.get("model") or MODEL)
        if is_main_request("POST", self.path, body):
            n, items = self.fake.step_for(body)
            tag = f"e2e_{n:02d}"
        else:
            items, tag = [text("ok")], "e2e_side"
        if body.get("stream"):
            self._stream(stream_response(items, model, tag))
            return
        self._json(
            {
                "id": f"resp_{tag}",
                "object": "response",
                "created_at": int(time.time()),
                "status": "completed",
                "model": model,
                "output": completed_output(items, tag),
                "usage": {"input_tokens": 10, "output_tokens": 1, "total_tokens": 11},
            }
        )


class FakeOpenAI(FakeServer[Recorded]):
    """The scripted server. Use as a context manager, or call start() and stop()."""

    recorded_type = Recorded
    handler_type = _Handler
    thread_name = "fake-openai"

    def provider_config(self, env_key: str = "FAKE_OPENAI_API_KEY", name: str = "fake") -> str:
        """config.toml lines that make Codex use this server (env_key must be set when it runs)."""
        return (
            f'model = "{MODEL}"\n'
            f'model_provider = "{name}"\n\n'
            f"[model_providers.{name}]\n"
            f'name = "{name}"\n'
            f'base_url = "{self.url}/v1"\n'
            'wire_api = "responses"\n'
            f'env_key = "{env_key}"\n'
        )

    def turns(self, body: dict[str, Any]) -> int:
        return model_turns(body)

    def final_step(self) -> Step:
        return [text(self.final_text)]

    def detail(self, r: Recorded) -> str:
        items = r.input
        last = items[-1] if items else {}
        return (
            f"model={r.body.get('model')} stream={r.body.get('stream')} "
            f"tools={len(r.body.get('tools') or [])} input={len(items)} "
            f"model_turns={model_turns(r.body)} "
            f"last={last.get('type')}:{last.get('role') or last.get('call_id')}"
        )

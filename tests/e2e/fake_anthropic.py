"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code binary.

Standard library only. `FakeAnthropic(steps)` serves on 127.0.0.1 at a random free port
(an http.server in a daemon thread); point Claude Code at it with
ANTHROPIC_BASE_URL=fake.url. Each *main-conversation* request is answered with the next
scripted step, streamed as server-sent events exactly as the real API streams them:
message_start, then per content block content_block_start / content_block_delta
(text_delta for text, input_json_delta for tool_use) / content_block_stop, then
message_delta (stop_reason "tool_use" when the step calls a tool, else "end_turn", with
usage) and message_stop. Once the script is exhausted, the reply is the text "done".

Every request is recorded (method, path, headers, parsed JSON body) in `fake.requests`,
in arrival order, for assertions; `fake.main_requests` keeps only the main-conversation
ones.

What Claude Code 2.1.332 sends (observed with `claude -p ... --output-format json`,
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, a fresh HOME and an ANTHROPIC_API_KEY):

- Only `POST /v1/messages?beta=true`, one per model turn, with "stream": true, the full
  tool list in "tools" (Agent, Bash, Edit, Read, Write, ToolSearch, ... ; no MultiEdit
  in this version), the system prompt as a list of text blocks in "system", and the whole
  conversation so far in "messages". With non-essential traffic disabled nothing else is
  sent: no HEAD/GET probe, no count_tokens, no title or haiku side request. Without that
  variable the only extra is one `HEAD /api/hello` connectivity probe at start-up.
- messages[0] (user) holds <system-reminder> text blocks (CLAUDE.md with its @imports
  expanded inline, a git-attribution note), then the prompt. messages[1] has role
  "system" and carries the "# Environment" section; a SessionStart hook's
  additionalContext is prepended to it as "SessionStart hook additional context: ...".
- A tool result comes back as a user message holding the tool_result block; a PreToolUse
  hook's additionalContext follows it as a role "system" message,
  "PreToolUse:<Tool> hook additional context: ..." (see tests/e2e/test_claude_code.py).

Side requests are still answered sensibly in case another version sends them, and they
never consume a scripted step: HEAD/GET get 200 with "{}", count_tokens gets
{"input_tokens": N}, a non-streaming message request gets a one-text JSON message, and a
streaming request without "tools" (title/summary helpers) gets the streamed text "ok".

Which step answers a main request is not a counter but a pure function of the request:
the number of assistant turns already in its "messages". So an HTTP retry of the same
turn gets the same answer again instead of skipping a step, and the script stays in
step with the conversation whatever else the binary sends.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from . import fake_server
from .fake_server import FakeHandler, FakeServer, route_of, sse

Block = dict[str, Any]
Step = list[Block]


def text(value: str) -> Block:
    """A text content block for a scripted step."""
    return {"type": "text", "text": value}


def tool_use(name: str, **tool_input: Any) -> Block:
    """A tool_use content block for a scripted step: tool_use("Read", file_path="/x")."""
    return {"type": "tool_use", "name": name, "input": tool_input}


class Recorded(fake_server.Recorded):
    @property
    def is_main(self) -> bool:
        return is_main_request(self.method, self.path, self.body)


def is_main_request(method: str, path: str, body: Any) -> bool:
    """A main-conversation turn: a streamed POST /v1/messages carrying the tool list."""
    return (
        method == "POST"
        and route_of(path) == "/v1/messages"
        and isinstance(body, dict)
        and bool(body.get("stream"))
        and bool(body.get("tools"))
    )


def assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")


def stream_message(blocks: Step, model: str, message_id: str) -> bytes:
    """The full SSE byte stream for one assistant message made of `blocks`."""
    out = [
        sse(
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
            "message_start",
        )
    ]
    calls_tool = False
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            calls_tool = True
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        out.append(sse({"type": "content_block_start", "index": index, "content_block": start},
                       "content_block_start"))
        out.append(sse({"type": "content_block_delta", "index": index, "delta": delta},
                       "content_block_delta"))
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    out.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use" if calls_tool else "end_turn",
                          "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
            "message_delta",
        )
    )
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return b"".join(out)


class _Handler(FakeHandler):
    extra_headers: ClassVar[dict[str, str]] = {"request-id": "req_fake"}

    def post(self, raw: bytes, body: Any) -> None:
        route = self.route
        model = body.get("model", "claude-fake") if isinstance(body, dict) else "claude-fake"

        if route.endswith("/count_tokens"):
            self._json({"input_tokens": max(1, len(raw) // 4)})
            return
        if route != "/v1/messages" or not isinstance(body, dict):
            self._json({"type": "error", "error": {"type": "not_found_error", "message": route}},
                       404)
            return
        if is_main_request("POST", self.path, body):
            n, blocks = self.fake.step_for(body)
            message_id = f"msg_e2e_{n:02d}"
        else:
            blocks, message_id = [text("ok")], "msg_e2e_side"
        if body.get("stream"):
            self._stream(stream_message(blocks, model, message_id))
            return
        self._json(
            {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            }
        )


class FakeAnthropic(FakeServer[Recorded]):
    """The scripted server. Use as a context manager, or call start() and stop()."""

    recorded_type = Recorded
    handler_type = _Handler
    thread_name = "fake-anthropic"

    def __post_init__(self) -> None:
        # Give every tool_use a stable, unique id: the binary pairs results with it.
        self.steps = [
            [
                dict(block, id=f"toolu_e2e_{n:02d}_{i}") if block["type"] == "tool_use"
                else dict(block)
                for i, block in enumerate(step)
            ]
            for n, step in enumerate(self.steps)
        ]
        super().__post_init__()

    def turns(self, body: dict[str, Any]) -> int:
        return assistant_turns(body)

    def final_step(self) -> Step:
        return [text(self.final_text)]

    def detail(self, r: Recorded) -> str:
        msgs = r.body.get("messages", [])
        last = msgs[-1] if msgs else {}
        content = last.get("content")
        kinds = (
            [c.get("type") for c in content if isinstance(c, dict)]
            if isinstance(content, list)
            else [type(content).__name__]
        )
        return (
            f"model={r.body.get('model')} stream={r.body.get('stream')} "
            f"tools={len(r.body.get('tools') or [])} messages={len(msgs)} "
            f"assistant_turns={assistant_turns(r.body)} last={last.get('role')}:{kinds}"
        )

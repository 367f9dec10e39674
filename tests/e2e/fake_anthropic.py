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
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]
Step = list[Block]


def text(value: str) -> Block:
    """A text content block for a scripted step."""
    return {"type": "text", "text": value}


def tool_use(name: str, **tool_input: Any) -> Block:
    """A tool_use content block for a scripted step: tool_use("Read", file_path="/x")."""
    return {"type": "tool_use", "name": name, "input": tool_input}


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON, or None

    @property
    def is_main(self) -> bool:
        return is_main_request(self.method, self.path, self.body)


def is_main_request(method: str, path: str, body: Any) -> bool:
    """A main-conversation turn: a streamed POST /v1/messages carrying the tool list."""
    return (
        method == "POST"
        and path.split("?", 1)[0].rstrip("/") == "/v1/messages"
        and isinstance(body, dict)
        and bool(body.get("stream"))
        and bool(body.get("tools"))
    )


def assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream_message(blocks: Step, model: str, message_id: str) -> bytes:
    """The full SSE byte stream for one assistant message made of `blocks`."""
    out = [
        _sse(
            "message_start",
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
        out.append(_sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use" if calls_tool else "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


@dataclass
class FakeAnthropic:
    """The scripted server. Use as a context manager, or call start() and stop()."""

    steps: list[Step]
    final_text: str = "done"
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Give every tool_use a stable, unique id: the binary pairs results with it.
        self.steps = [
            [
                dict(block, id=f"toolu_e2e_{n:02d}_{i}") if block["type"] == "tool_use" else dict(block)
                for i, block in enumerate(step)
            ]
            for n, step in enumerate(self.steps)
        ]
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-anthropic", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- what was seen -----------------------------------------------------------------

    def record(self, entry: Recorded) -> None:
        with self._lock:
            self.requests.append(entry)

    @property
    def main_requests(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.is_main]

    def step_for(self, body: dict[str, Any]) -> tuple[int, Step]:
        n = assistant_turns(body)
        if n < len(self.steps):
            return n, self.steps[n]
        return n, [text(self.final_text)]

    def summary(self) -> str:
        """One line per recorded request, for failure messages."""
        lines = []
        for i, r in enumerate(list(self.requests)):
            if isinstance(r.body, dict):
                msgs = r.body.get("messages", [])
                last = msgs[-1] if msgs else {}
                content = last.get("content")
                kinds = (
                    [c.get("type") for c in content if isinstance(c, dict)]
                    if isinstance(content, list)
                    else [type(content).__name__]
                )
                detail = (
                    f"model={r.body.get('model')} stream={r.body.get('stream')} tools={len(r.body.get('tools') or [])} "
                    f"messages={len(msgs)} assistant_turns={assistant_turns(r.body)} last={last.get('role')}:{kinds}"
                )
            else:
                detail = repr(r.body)[:120]
            lines.append(f"#{i} {r.method} {r.path} main={r.is_main} {detail}")
        return "\n".join(lines) or "(no requests)"


def _handler_for(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", "req_fake")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _json(self, value: Any, status: int = 200) -> None:
            self._send(status, "application/json", json.dumps(value).encode())

        def do_HEAD(self) -> None:
            fake.record(Recorded("HEAD", self.path, dict(self.headers), None))
            self._json({})

        def do_GET(self) -> None:
            fake.record(Recorded("GET", self.path, dict(self.headers), None))
            self._json({})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            fake.record(Recorded("POST", self.path, dict(self.headers), body))
            route = self.path.split("?", 1)[0].rstrip("/")
            model = body.get("model", "claude-fake") if isinstance(body, dict) else "claude-fake"

            if route.endswith("/count_tokens"):
                self._json({"input_tokens": max(1, len(raw) // 4)})
                return
            if route != "/v1/messages" or not isinstance(body, dict):
                self._json({"type": "error", "error": {"type": "not_found_error", "message": route}}, 404)
                return
            if is_main_request("POST", self.path, body):
                n, blocks = fake.step_for(body)
                message_id = f"msg_e2e_{n:02d}"
            else:
                blocks, message_id = [text("ok")], "msg_e2e_side"
            if body.get("stream"):
                self._send(200, "text/event-stream", stream_message(blocks, model, message_id))
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

    return Handler

"""A scripted stand-in for the Gemini API, for driving the real Gemini CLI binary.

Standard library only. `FakeGemini(steps)` serves on 127.0.0.1 at a random free port
(an http.server in a daemon thread). DRAFT.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Part = dict[str, Any]
Step = list[Part]


def text(value: str) -> Part:
    return {"text": value}


def function_call(name: str, **args: Any) -> Part:
    return {"functionCall": {"name": name, "args": args}}


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def model_turns(body: dict[str, Any]) -> int:
    return sum(1 for c in body.get("contents", []) if c.get("role") == "model")


@dataclass
class FakeGemini:
    steps: list[Step]
    final_text: str = "done"
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> FakeGemini:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def record(self, entry: Recorded) -> None:
        with self._lock:
            self.requests.append(entry)


def _handler_for(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            fake.record(Recorded("GET", self.path, dict(self.headers), None))
            self._send(200, "application/json", b"{}")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            fake.record(Recorded("POST", self.path, dict(self.headers), body))
            route = self.path.split("?", 1)[0]
            if route.endswith(":countTokens"):
                self._send(200, "application/json", json.dumps({"totalTokens": 10}).encode())
                return
            n = model_turns(body) if isinstance(body, dict) else 0
            parts = fake.steps[n] if n < len(fake.steps) else [text(fake.final_text)]
            resp = {
                "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            }
            if route.endswith(":streamGenerateContent"):
                self._send(200, "text/event-stream", f"data: {json.dumps(resp)}\r\n\r\n".encode())
                return
            self._send(200, "application/json", json.dumps(resp).encode())

    return Handler

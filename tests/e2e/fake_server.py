"""The HTTP plumbing the scripted model fakes share (fake_anthropic, fake_openai, fake_gemini).

Standard library only. A `FakeServer` serves on 127.0.0.1 at a random free port (a
ThreadingHTTPServer in a daemon thread), as a context manager or with start() and stop().
Every request is recorded (method, path, headers, parsed JSON body) in `fake.requests`, in
arrival order; `fake.main_requests` keeps only the main-conversation ones. A main request
is answered with the scripted step `step_for(body)` picks: step n once the conversation
holds n model turns, the text `final_text` once the script is exhausted.

A fake subclasses `Recorded` (its `is_main`), `FakeServer` (how turns are counted, what the
final step is, a summary line's detail) and `FakeHandler` (what a POST, and a GET, gets).
"""

from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Generic, Self, TypeVar

Step = list[dict[str, Any]]


def route_of(path: str) -> str:
    """The path without its query string and trailing slash: "/v1/messages?beta=true" ->
    "/v1/messages"."""
    return path.split("?", 1)[0].rstrip("/")


def sse(data: Any, event: str | None = None, eol: str = "\n") -> bytes:
    """One server-sent event: an `event:` line when named, the JSON `data:` line, a blank line."""
    named = f"event: {event}{eol}" if event is not None else ""
    return f"{named}data: {json.dumps(data)}{eol}{eol}".encode()


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON, or None

    @property
    def route(self) -> str:
        return route_of(self.path)

    @property
    def is_main(self) -> bool:
        raise NotImplementedError


R = TypeVar("R", bound=Recorded)


class FakeHandler(BaseHTTPRequestHandler):
    """Answers one connection's requests for `fake` (set on the subclass `FakeServer.start`
    makes)."""

    fake: ClassVar[FakeServer[Any]]
    protocol_version = "HTTP/1.1"
    json_type: ClassVar[str] = "application/json"
    extra_headers: ClassVar[dict[str, str]] = {}  # sent with every reply
    gzip_bodies: ClassVar[bool] = False  # whether a `Content-Encoding: gzip` body is decompressed

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    @property
    def route(self) -> str:
        return route_of(self.path)

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in self.extra_headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _json(self, value: Any, status: int = 200) -> None:
        self._send(status, self.json_type, json.dumps(value).encode())

    def _stream(self, payload: bytes) -> None:
        """A whole SSE stream, sent at once."""
        self._send(200, "text/event-stream", payload)

    def _record(self, body: Any) -> None:
        self.fake.record(self.fake.recorded(self.command, self.path, dict(self.headers), body))

    def _read_body(self) -> tuple[bytes, Any]:
        """The raw body (decompressed when gzip_bodies) and its JSON, or its text when not JSON, or
        None."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.gzip_bodies and self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        return raw, body

    def do_HEAD(self) -> None:
        self._record(None)
        self._json({})

    def do_GET(self) -> None:
        self._record(None)
        self.get()

    def do_POST(self) -> None:
        raw, body = self._read_body()
        self._record(body)
        self.post(raw, body)

    def get(self) -> None:
        """The reply to a GET, recorded already."""
        self._json({})

    def post(self, raw: bytes, body: Any) -> None:
        """The reply to a POST, recorded already: `raw` bytes, `body` as _read_body parsed it."""
        raise NotImplementedError


@dataclass
class FakeServer(Generic[R]):
    """The scripted server. Use as a context manager, or call start() and stop()."""

    steps: list[Step]
    final_text: str = "done"
    requests: list[R] = field(default_factory=list)

    recorded_type: ClassVar[type[Recorded]] = Recorded
    handler_type: ClassVar[type[FakeHandler]] = FakeHandler
    thread_name: ClassVar[str] = "fake-server"

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> Self:
        handler = type("Handler", (self.handler_type,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.thread_name,
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- what was seen -----------------------------------------------------------------

    def recorded(self, method: str, path: str, headers: dict[str, str], body: Any) -> R:
        return self.recorded_type(method, path, headers, body)  # type: ignore[return-value]

    def record(self, entry: R) -> None:
        with self._lock:
            self.requests.append(entry)

    @property
    def main_requests(self) -> list[R]:
        with self._lock:
            return [r for r in self.requests if r.is_main]

    def step_for(self, body: dict[str, Any]) -> tuple[int, Step]:
        n = self.turns(body)
        if n < len(self.steps):
            return n, self.steps[n]
        return n, self.final_step()

    def summary(self) -> str:
        """One line per recorded request, for failure messages (no headers: they may hold the
        key)."""
        lines = []
        for i, r in enumerate(list(self.requests)):
            detail = self.detail(r) if isinstance(r.body, dict) else repr(r.body)[:120]
            lines.append(f"#{i} {r.method} {self.shown_path(r)} main={r.is_main} {detail}")
        return "\n".join(lines) or "(no requests)"

    # -- what each fake says -----------------------------------------------------------

    def turns(self, body: dict[str, Any]) -> int:
        """How many model turns the conversation in `body` already holds: the step that answers
        it."""
        raise NotImplementedError

    def final_step(self) -> Step:
        """The step once the script is exhausted: the text `final_text`."""
        raise NotImplementedError

    def detail(self, r: R) -> str:
        """The end of `r`'s summary line, its body being a JSON object."""
        raise NotImplementedError

    def shown_path(self, r: R) -> str:
        return r.path

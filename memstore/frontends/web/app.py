"""The web inspector's ASGI application: Starlette routes over memstore.frontends.web.inspector.

Why Starlette and Jinja2: a small, well-kept ASGI toolkit whose routing, static files and
host checks are done right (StaticFiles refuses paths out of its folder), and templates
that escape by default, so memory text is shown as text and never becomes markup. The
charts are SVG drawn on the server (memstore.frontends.web.history): no script runs in the page.

Read-only by construction: only GET and HEAD reach a route (anything else is 405 before
routing), and the inspector opens the mirror read-only. The Host header must name this
machine unless the person chose to expose the page (a DNS-rebinding page in the person's
own browser could otherwise read their memory).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import sqlite3
import sys
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import markupsafe
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memstore.core.errors import BadUsage, MemstoreError, NotFound
from memstore.frontends.web.inspector import Inspector

HERE = Path(__file__).parent
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
SAFE_METHODS = ("GET", "HEAD")
HEADERS = {
    # No script at all, styles and images from this server only, never framed.
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; "
                               "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class ReadOnly:
    """Refuse every method but GET and HEAD, and add the security headers to every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] not in SAFE_METHODS:
            response = PlainTextResponse(
                "memstore serve is read-only: only GET and HEAD are answered\n", status_code=405,
                headers={"Allow": ", ".join(SAFE_METHODS), **HEADERS})
            await response(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()
                         if k.lower().encode() not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, finalize=_printable)
    env.filters["url"] = lambda path: quote(str(path))
    env.filters["num"] = _num
    env.filters["when"] = _when
    env.filters["plural"] = lambda n, word: f"{n} {word}" if n == 1 else f"{n} {word}s"
    return Jinja2Templates(env=env)


# C0/C1 controls (tab and newline kept) and the bidirectional controls that reorder what follows
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _printable(value: object) -> object:
    """Every value a template prints, with control characters (an escape sequence in a memory) made
    visible."""
    if isinstance(value, str) and _CONTROLS.search(value):
        shown = _CONTROLS.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 0x100
                              else f"\\u{ord(m.group(0)):04x}", value)
        return markupsafe.Markup(shown) if isinstance(value, markupsafe.Markup) else shown
    return value


def _num(value: object, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}".rstrip("0").rstrip(".") if value == value else "–"
    return str(value)


def _when(value: object) -> str:
    if value is None or value == "":
        return "never"
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S UTC")
    return str(value).replace("T", " ").replace("Z", " UTC")


def create_app(inspector: Inspector, *, exposed: bool = False) -> Starlette:
    """The application over one inspector. `exposed`: the person chose a non-loopback address."""
    templates = _templates()

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        context = {"root": str(inspector.root), "exposed": exposed, "q": "", "mode": "auto",
                   **context}
        return templates.TemplateResponse(request, name, context, status_code=status)

    async def overview(request: Request) -> Response:
        return page(request, "overview.html", inspector.overview())

    async def band(request: Request) -> Response:
        return page(request, "band.html", inspector.band(request.path_params["name"],
                                                         _int(request.query_params.get("page"), 1)))

    async def search(request: Request) -> Response:
        query = request.query_params.get("q", "")
        mode = request.query_params.get("mode", "auto")
        if not query.strip():
            return page(request, "search.html", {"result": None, "mode": mode})
        result = inspector.search(query, mode, request.query_params.get("type"))
        return page(request, "search.html", {"result": result, "q": query, "mode": mode})

    async def memory(request: Request) -> Response:
        return page(request, "memory.html", inspector.memory(request.path_params["path"]))

    async def timeline(request: Request) -> Response:
        return page(request, "timeline.html",
                    inspector.timeline(_int(request.query_params.get("days"), 7)))

    def problem(request: Request, status: int, message: str, hint: str | None) -> Response:
        return page(request, "error.html",
                    {"status": status, "message": message, "hint": hint}, status)

    async def on_memstore_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, MemstoreError)
        status = 404 if isinstance(exc, NotFound) else 400 if isinstance(exc, BadUsage) else 503
        return problem(request, status, str(exc), exc.hint)

    async def on_database_error(request: Request, exc: Exception) -> Response:
        busy = "locked" in str(exc) or "busy" in str(exc)
        return problem(request, 503, f"the mirror could not be read ({exc})",
                       "try again in a moment" if busy else "run: memstore rebuild")

    async def on_value_error(request: Request, exc: Exception) -> Response:
        # e.g. a NUL or a lone surrogate in a path or query: not a question the mirror can be asked
        return problem(request, 400, "that request cannot be read", None)

    async def on_crash(request: Request, exc: Exception) -> Response:
        traceback.print_exc()
        print(f"memstore serve: {request.url.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return problem(request, 500,
                       "the page failed; the terminal running `memstore serve` says why", None)

    def guarded(endpoint: Callable[[Request], Awaitable[Response]]
                ) -> Callable[[Request], Awaitable[Response]]:
        """Every failure of a page becomes a page saying what to do, with a 4xx or 503 where the
        request or the mirror is the cause; the traceback of a real bug goes to the terminal,
        once."""

        @functools.wraps(endpoint)
        async def run(request: Request) -> Response:
            try:
                return await endpoint(request)
            except MemstoreError as exc:
                return await on_memstore_error(request, exc)
            except sqlite3.DatabaseError as exc:
                return await on_database_error(request, exc)
            except (ValueError, UnicodeError) as exc:
                return await on_value_error(request, exc)
            except Exception as exc:
                return await on_crash(request, exc)

        return run

    routes = [
        Route("/", guarded(overview)),
        Route("/band/{name}", guarded(band)),
        Route("/search", guarded(search)),
        Route("/memory/{path:path}", guarded(memory)),
        Route("/timeline", guarded(timeline)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [
        Middleware(ReadOnly),
        Middleware(TrustedHostMiddleware, allowed_hosts=["*"] if exposed else LOOPBACK_HOSTS),
    ]
    return Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={404: lambda request, exc: problem(request, 404, "no such page", None)},
    )


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default




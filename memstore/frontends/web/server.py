"""Serving the inspector: the application built over a Store (web_app), the listening socket
(loopback unless the person says otherwise) and uvicorn.

The socket is bound here, before uvicorn starts, so that a port in use or a refused address
is one clear line, and `--port 0` can print the port the system chose.
"""

from __future__ import annotations

import errno
import ipaddress
import signal
import socket
from typing import TYPE_CHECKING, Any

from memstore.core.errors import BadUsage, MemstoreError

if TYPE_CHECKING:
    from memstore.api.store import Store


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: it may resolve to anything


def open_socket(host: str, port: int, expose: bool) -> socket.socket:
    """A listening socket on host:port. A non-loopback host needs `expose`: the page shows every
    memory."""
    if not is_loopback(host) and not expose:
        raise BadUsage(f"--host {host} would let other machines read every memory",
                       hint="keep the default 127.0.0.1, or add --expose if that is what you want")
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bare, port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        if port and exc.errno == errno.EADDRINUSE:
            raise MemstoreError(f"port {port} on {host} is in use",
                                hint="stop what holds it, or choose another: "
                                     f"memstore serve --port {port + 1}") from None
        raise MemstoreError(f"cannot listen on {host}:{port} ({exc.strerror or exc})",
                            hint="check --host and --port") from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def _stop(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def stop_on_sigterm() -> None:
    """SIGTERM (what `kill` and service managers send) ends serve as Ctrl-C does: cleanly, exit 0.
    uvicorn captures it while serving, then raises it again, into this handler."""
    signal.signal(signal.SIGTERM, _stop)


def run(app: object, sock: socket.socket) -> None:
    """Serve until Ctrl-C (or SIGTERM)."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False,  # type: ignore[arg-type]
                            server_header=False, date_header=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn shuts down gracefully, then raises the signal again: Ctrl-C ends serve
    finally:
        sock.close()


def web_app(store: Store, *, exposed: bool = False) -> Any:
    """The ASGI application of `memstore serve` over the Store's root (needs the `serve` extra): the
    inspector is handed the root, the config, the Store's clock and a way to the embedding model."""
    try:
        from memstore.frontends.web.app import create_app
    except ImportError as exc:
        from memstore.meaning.embedding import extra_hint

        raise MemstoreError(f"memstore serve needs the serve extra ({exc.name} is not installed)",
                            hint=extra_hint("serve", "'starlette>=0.37' 'jinja2>=3.1' "
                                                     "'uvicorn>=0.30'")) from None
    from memstore.frontends.web.inspector import Inspector

    inspector = Inspector(store.root, store.config, lambda: store.now, store.embedder)
    return create_app(inspector, exposed=exposed)

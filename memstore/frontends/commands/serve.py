"""`memstore serve`: the read-only web inspector (memstore.frontends.web), an optional extra."""

from __future__ import annotations

import click

from memstore.frontends.cligroup import App, cli, common


@cli.command()
@click.option("--port", "-p", default=8765, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on (0: any free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback needs --expose.")
@click.option("--expose", is_flag=True,
              help="Allow a non-loopback --host: anyone who can reach that address can read every "
                   "memory.")
@common
def serve(app: App, port: int, host: str, expose: bool) -> None:
    """A local, read-only web page over the memory: bands, search, each memory's history."""
    from memstore.frontends.web.server import open_socket, run, stop_on_sigterm, url_of, web_app

    # first: a missing extra is said before anything else
    web = web_app(app.live_store, exposed=expose)
    sock = open_socket(host, port, expose)
    app.live_store.sync(full=False, embed=False)  # once, before serving: the pages never write
    stop_on_sigterm()
    try:
        if expose:
            app.say(f"warning: listening on {host}: anyone who can reach it can read every memory "
                    f"under {app.root}, and any web site's page can ask for it (the Host check is "
                    "off)")
        app.say(f"serving {app.root} read-only at {url_of(sock)} (Ctrl-C stops)")
        run(web, sock)
    except KeyboardInterrupt:
        pass  # stopped before uvicorn took over the signals
    app.say("stopped")

"""The click group every command attaches to, and what the commands share: the App (the Store for
the chosen root and clock), the --root/--now options of every subcommand, --json and emit_json.

The command modules (memstore/frontends/commands/) import this module; memstore.frontends.cli,
which gathers them and holds the console script's main, imports it too. No command module
imports the gatherer, so the two never import each other.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from memstore import __version__
from memstore.api.store import Store
from memstore.core.errors import BadUsage, MemstoreError, storage_failure
from memstore.frontends.progress import progress_reporter


class App:
    """What every command needs: the Store for the chosen root and clock, and a way to speak."""

    def __init__(self, root_opt: str | None, now_opt: str | None) -> None:
        self.root_opt = root_opt
        self.now_opt = now_opt

    @functools.cached_property
    def now(self) -> dt.datetime:
        from memstore.core.timeutil import parse_now

        value = self.now_opt if self.now_opt is not None else os.environ.get("MEMSTORE_NOW")
        if value is not None and not value.strip():
            raise BadUsage("--now is empty",
                           hint="give a time, e.g. --now 2026-07-30T12:00:00Z, or leave it out")
        try:
            return parse_now(value)
        except ValueError as exc:
            raise BadUsage(str(exc),
                           hint="give --now as ISO 8601, e.g. 2026-07-30T12:00:00Z") from None

    @functools.cached_property
    def store(self) -> Store:
        if self.root_opt is not None and not self.root_opt.strip():
            raise BadUsage("--root is empty", hint="name the agent root, or leave --root out")
        return Store.locate(self.root_opt, self.now, notify=self.say,
                            progress=self.progress("rebuild"))

    @functools.cached_property
    def live_store(self) -> Store:
        """The Store of a long-lived server (mcp, serve): the real clock at each call, unless one
        was pinned."""
        if self.now_opt is not None or os.environ.get("MEMSTORE_NOW") is not None:
            return self.store
        self.now  # noqa: B018 - a malformed --now is a usage error here too
        return Store.locate(self.root_opt, None, notify=self.say, progress=self.progress("rebuild"))

    @property
    def root(self) -> Path:
        return self.store.root

    @staticmethod
    def say(message: str) -> None:
        click.echo(f"memstore: {message}", err=True)

    def progress(self, label: str, min_total: int = 2000,
                 unit: str = "files") -> Callable[[int, int], None]:
        """A progress reporter on stderr (memstore.frontends.progress)."""
        return progress_reporter(label, min_total, unit)


root_option = click.option(
    "--root",
    "root_opt",
    type=click.Path(file_okay=False),
    default=None,
    help="Agent root (default: $MEMSTORE_ROOT, else the nearest folder holding memory/, else the "
    "root `install --scope user` recorded).",
)
now_option = click.option(
    "--now", "now_opt", default=None, metavar="ISO8601",
    help="Pin the clock (default: $MEMSTORE_NOW, else now)."
)


def common(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--root and --now on every subcommand too (they override the group's)."""

    @root_option
    @now_option
    @click.pass_context
    @functools.wraps(fn)
    def wrapper(ctx: click.Context, root_opt: str | None, now_opt: str | None,
                **kwargs: Any) -> Any:
        app: App = ctx.ensure_object(App) if ctx.obj is None else ctx.obj
        if root_opt is not None:
            app.root_opt = root_opt
            app.__dict__.pop("store", None)
            app.__dict__.pop("live_store", None)
        if now_opt is not None:
            app.now_opt = now_opt
            app.__dict__.pop("now", None)
            app.__dict__.pop("store", None)
            app.__dict__.pop("live_store", None)
        return ctx.invoke(fn, app, **kwargs)

    return wrapper


class CliFailure(click.ClickException):
    def __init__(self, message: str, exit_code: int, hint: str | None) -> None:
        super().__init__(message)
        # click declares exit_code a ClassVar but reads it from the instance; ours differs per error
        self.exit_code = exit_code  # type: ignore[misc]
        self.hint = hint

    def show(self, file: Any = None) -> None:
        click.echo(f"memstore: error: {self.message}", err=True)
        if self.hint:
            click.echo(f"memstore: hint: {self.hint}", err=True)


class Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemstoreError as exc:
            raise CliFailure(str(exc), exc.exit_code, exc.hint) from None
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly, as other command-line tools do.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(0)
        # the file system or the mirror's SQLite: one line and what to do next
        except Exception as exc:
            # never made here
            store = ctx.obj.__dict__.get("store") if isinstance(ctx.obj, App) else None
            failure = storage_failure(exc, store.root if store is not None else None)
            if failure is None:
                raise
            raise CliFailure(str(failure), failure.exit_code, failure.hint) from None
        except KeyboardInterrupt:
            click.echo("memstore: interrupted", err=True)
            ctx.exit(130)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=True)
@root_option
@now_option
@click.version_option(__version__, prog_name="memstore")
@click.pass_context
def cli(ctx: click.Context, root_opt: str | None, now_opt: str | None) -> None:
    """An agent's memory as markdown files, mirrored into SQLite and ranked by use."""
    ctx.obj = App(root_opt, now_opt)
    if ctx.invoked_subcommand is None:  # bare `memstore`: the help, not a usage error
        click.echo(ctx.get_help())


# Every command's --json: the same flag and help text everywhere.
json_option = click.option("--json", "as_json", is_flag=True,
                           help="Print the result as JSON (for scripts) instead of text.")


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def table(rows: list[dict[str, Any]], columns: list[str], headers: list[str] | None = None) -> str:
    from tabulate import tabulate

    return tabulate([[r.get(c) for c in columns] for r in rows], headers=headers or columns)

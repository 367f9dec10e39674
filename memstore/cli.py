"""The command line: a thin click layer over the library (memstore.store.Store).

Each command parses its options, calls one Store method and prints what it returns;
no SQL, no orchestration lives here.

Every error the library raises is a MemstoreError and becomes one line on stderr
(plus a hint saying what to do next) with the exit code of DESIGN's contract:
0 success, 1 a problem found, 2 bad usage. No traceback reaches the user.
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
from memstore.errors import BadUsage, MemstoreError, storage_failure
from memstore.store import Store


class App:
    """What every command needs: the Store for the chosen root and clock, and a way to speak."""

    def __init__(self, root_opt: str | None, now_opt: str | None) -> None:
        self.root_opt = root_opt
        self.now_opt = now_opt

    @functools.cached_property
    def now(self) -> dt.datetime:
        from memstore.timeutil import parse_now

        value = self.now_opt if self.now_opt is not None else os.environ.get("MEMSTORE_NOW")
        if value is not None and not value.strip():
            raise BadUsage("--now is empty", hint="give a time, e.g. --now 2026-07-30T12:00:00Z, or leave it out")
        try:
            return parse_now(value)
        except ValueError as exc:
            raise BadUsage(str(exc), hint="give --now as ISO 8601, e.g. 2026-07-30T12:00:00Z") from None

    @functools.cached_property
    def store(self) -> Store:
        if self.root_opt is not None and not self.root_opt.strip():
            raise BadUsage("--root is empty", hint="name the agent root, or leave --root out")
        return Store.locate(self.root_opt, self.now, notify=self.say, progress=self.progress("rebuild"))

    @functools.cached_property
    def live_store(self) -> Store:
        """The Store of a long-lived server (mcp, serve): the real clock at each call, unless one was pinned."""
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

    def progress(self, label: str, min_total: int = 2000, unit: str = "files") -> Callable[[int, int], None]:
        """A progress reporter on stderr: a live line on a terminal, quarter marks otherwise.

        Silent for fewer than min_total items: those finish too soon to need it.
        """
        tty = sys.stderr.isatty()
        marks: set[int] = set()

        def report(done: int, total: int) -> None:
            if total < min_total:
                return
            if tty:
                end = "\n" if done == total else ""
                click.echo(f"\r{label}: {done}/{total} {unit}", err=True, nl=False)
                if end:
                    click.echo("", err=True)
                return
            quarter = done * 4 // total
            if quarter not in marks:
                marks.add(quarter)
                click.echo(f"{label}: {done}/{total} {unit}", err=True)

        return report


root_option = click.option(
    "--root",
    "root_opt",
    type=click.Path(file_okay=False),
    default=None,
    help="Agent root (default: $MEMSTORE_ROOT, else the nearest folder holding memory/, else the root "
    "`install --scope user` recorded).",
)
now_option = click.option(
    "--now", "now_opt", default=None, metavar="ISO8601", help="Pin the clock (default: $MEMSTORE_NOW, else now)."
)


def common(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--root and --now on every subcommand too (they override the group's)."""

    @root_option
    @now_option
    @click.pass_context
    @functools.wraps(fn)
    def wrapper(ctx: click.Context, root_opt: str | None, now_opt: str | None, **kwargs: Any) -> Any:
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
        self.exit_code = exit_code
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
        except Exception as exc:  # the file system or the mirror's SQLite: one line and what to do next
            store = ctx.obj.__dict__.get("store") if isinstance(ctx.obj, App) else None  # never made here
            failure = storage_failure(exc, store.root if store is not None else None)
            if failure is None:
                raise
            raise CliFailure(str(failure), failure.exit_code, failure.hint) from None
        except KeyboardInterrupt:
            click.echo("memstore: interrupted", err=True)
            ctx.exit(130)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
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


def main(argv: list[str] | None = None) -> None:
    """The console script. Usage errors, like every other error, are one line plus a hint, exit 2."""
    try:
        code = cli.main(args=argv, prog_name="memstore", standalone_mode=False)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx is not None else "memstore"
        click.echo(f"memstore: error: {exc.format_message()}", err=True)
        click.echo(f"memstore: hint: see: {command} --help", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("memstore: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


def run_as(command: str, argv: list[str]) -> None:
    """`memstore COMMAND ARGV` for the seed-style wrapper scripts; --root may come anywhere in ARGV."""
    rest = list(argv)
    options: list[str] = []
    if "--root" in rest:
        at = rest.index("--root")
        options, rest = rest[at : at + 2], rest[:at] + rest[at + 2 :]
    main([*options, command, *rest])


# The commands live in memstore/commands/, one module per concern; importing them attaches
# them to `cli` (they import App, cli and common from here, defined above).
from memstore.commands import capture, memory, nightly, serve, wiring  # noqa: E402, F401

"""The command line: a thin click layer over the library.

Every error the library raises is a MemstoreError and becomes one line on stderr
(plus a hint saying what to do next) with the exit code of DESIGN's contract:
0 success, 1 a problem found, 2 bad usage. No traceback reaches the user.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memstore import __version__
from memstore.agent_root import RootPaths, find_root
from memstore.config import Config, load_config
from memstore.errors import BadUsage, MemstoreError, NotFound

T = TypeVar("T")


class App:
    """What every command needs: the root, the clock, the config, a way to speak."""

    def __init__(self, root_opt: str | None, now_opt: str | None) -> None:
        self.root_opt = root_opt
        self.now_opt = now_opt

    @functools.cached_property
    def root(self) -> Path:
        return Path(find_root(self.root_opt, os.environ.get("MEMSTORE_ROOT"), Path.cwd()))

    @functools.cached_property
    def now(self) -> dt.datetime:
        from memstore.timeutil import parse_now

        value = self.now_opt if self.now_opt is not None else os.environ.get("MEMSTORE_NOW")
        try:
            return parse_now(value)
        except ValueError as exc:
            raise BadUsage(str(exc), hint="give --now as ISO 8601, e.g. 2026-07-30T12:00:00Z") from None

    @functools.cached_property
    def config(self) -> Config:
        return load_config(self.root)

    @staticmethod
    def say(message: str) -> None:
        click.echo(f"memstore: {message}", err=True)

    def progress(self, label: str) -> Callable[[int, int], None]:
        """A progress reporter on stderr: a live line on a terminal, quarter marks otherwise."""
        tty = sys.stderr.isatty()
        marks: set[int] = set()

        def report(done: int, total: int) -> None:
            if total < 2000:
                return
            if tty:
                end = "\n" if done == total else ""
                click.echo(f"\r{label}: {done}/{total} files", err=True, nl=False)
                if end:
                    click.echo("", err=True)
                return
            quarter = done * 4 // total
            if quarter not in marks:
                marks.add(quarter)
                click.echo(f"{label}: {done}/{total} files", err=True)

        return report

    def fresh(self, fn: Callable[[sqlite3.Connection], T]) -> Callable[[sqlite3.Connection], T]:
        """fn, after a quick sync: what a read-only command shows matches the files."""
        from memstore.sync import sync_locked

        def run(conn: sqlite3.Connection) -> T:
            sync_locked(conn, self.root, self.config, quick=True)
            return fn(conn)

        return run

    def with_mirror(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn on the live mirror; a mirror found corrupt mid-way is rebuilt and fn re-run once."""
        from memstore import mirror
        from memstore.sync import open_mirror, rebuild

        conn = open_mirror(self.root, self.config, self.say, self.progress("rebuild"))
        try:
            return fn(conn)
        except sqlite3.DatabaseError as exc:
            if not mirror.corrupt_error(exc):
                raise
            conn.close()
            self.say(f"mirror is corrupt ({exc}); rebuilding it from the files")
            rebuild(self.root, self.config, self.progress("rebuild"))
            conn = open_mirror(self.root, self.config, self.say, self.progress("rebuild"))
            return fn(conn)
        finally:
            conn.close()


root_option = click.option(
    "--root",
    "root_opt",
    type=click.Path(file_okay=False),
    default=None,
    help="Agent root (default: $MEMSTORE_ROOT, else nearest folder holding memory/).",
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
            app.__dict__.pop("root", None)
            app.__dict__.pop("config", None)
        if now_opt is not None:
            app.now_opt = now_opt
            app.__dict__.pop("now", None)
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
        except sqlite3.DatabaseError as exc:
            raise CliFailure(f"database: {exc}", 1, "run: memstore rebuild") from None
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly, as other command-line tools do.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(0)
        except OSError as exc:
            where = f" {exc.filename}" if exc.filename else ""
            raise CliFailure(f"{exc.strerror or exc}{where}", 1, None) from None
        except KeyboardInterrupt:
            click.echo("memstore: interrupted", err=True)
            ctx.exit(130)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@root_option
@now_option
@click.version_option(__version__, prog_name="memstore")
@click.pass_context
def cli(ctx: click.Context, root_opt: str | None, now_opt: str | None) -> None:
    """An agent's memory as markdown files, mirrored into SQLite and ranked by use."""
    ctx.obj = App(root_opt, now_opt)


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def table(rows: list[dict[str, Any]], columns: list[str], headers: list[str] | None = None) -> str:
    from tabulate import tabulate

    return tabulate([[r.get(c) for c in columns] for r in rows], headers=headers or columns)


# ---------------------------------------------------------------- init


@cli.command()
@click.argument("target", type=click.Path(file_okay=False), metavar="ROOT")
@click.option("--apply", "do_apply", is_flag=True, help="Make the changes (default: only print the plan).")
@common
def init(app: App, target: str, do_apply: bool) -> None:
    """Lay out an agent root at ROOT (dry run unless --apply)."""
    from memstore.scaffold import apply_plan, plan_init
    from memstore.sync import rebuild

    root = Path(target).expanduser().resolve()
    config = load_config(root) if root.is_dir() else Config()
    plan = plan_init(root, config)
    for line in plan.lines():
        click.echo(line)
    if not do_apply:
        click.echo(f"{len(plan.actions)} change(s) planned; nothing written. Run again with --apply.")
        return
    apply_plan(plan)
    report = rebuild(root, config, app.progress("index"))
    assert report is not None
    click.echo(f"{len(plan.actions)} change(s) made; mirror built: {report.summary()}")
    click.echo(f"next, wire it into Claude Code for every project: memstore --root {root} install --scope user")


# ---------------------------------------------------------------- sync / rebuild


@cli.command()
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
@common
def sync(app: App, quiet: bool) -> None:
    """Bring the mirror up to date with the files (incremental)."""
    from memstore.sync import sync as do_sync

    report = do_sync(app.root, app.config, app.progress("sync"), app.say)
    if not quiet:
        click.echo(report.summary())
    for rel in report.unreadable[:10]:
        app.say(f"unreadable, row kept: {rel}")


@cli.command()
@common
def rebuild(app: App) -> None:
    """Build the mirror afresh from the files and the journal, and swap it in."""
    from memstore.sync import rebuild as do_rebuild

    report = do_rebuild(app.root, app.config, app.progress("rebuild"))
    assert report is not None
    click.echo(f"rebuilt: {report.summary()}")


# ---------------------------------------------------------------- search


@cli.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(min=1, max=100_000))
@click.option("--type", "type_", default=None, help="Only this memory type or kind (feedback, lens, ...).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--no-sync", is_flag=True, help="Search the mirror as it is, without looking at the files first.")
@click.option("--full", is_flag=True, help="Walk every file first (also sees files edited in place by other tools).")
@common
def search(app: App, query: str, limit: int, type_: str | None, as_json: bool, no_sync: bool, full: bool) -> None:
    """Ranked full-text search; a plain-English question works.

    By default it first catches up with files added, removed or replaced since the last
    sync, and with files the hook saw written (a quick check of folders, not of every file).
    """
    from memstore.search import check_query
    from memstore.search import search as do_search
    from memstore.sync import sync_locked

    check_query(query)  # an empty query is bad usage, said before the mirror is opened

    def run(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        if not no_sync:
            sync_locked(conn, app.root, app.config, quick=not full)
        return do_search(conn, query, limit, type_, app.config)

    hits = app.with_mirror(run)
    if as_json:
        emit_json(hits)
        return
    if not hits:
        click.echo("no matches")
        return
    for hit in hits:
        click.echo(f"{hit['score']:7.2f}  {hit['path']}")
        if hit["summary"]:
            click.echo(f"         {hit['summary'][:150]}")
        if hit["snippet"]:
            click.echo(f"         …{hit['snippet'][:200]}")


# ---------------------------------------------------------------- show / status / lint


def _find(conn: sqlite3.Connection, name: str) -> sqlite3.Row:
    key = name[:-3] if name.endswith(".md") else name
    row = conn.execute(
        "SELECT * FROM files WHERE path = ? OR path = ? OR name = ? OR path LIKE ? "
        "ORDER BY kind = 't2' DESC, path LIMIT 1",
        (name, name + ".md", key, f"%/{key}.md"),
    ).fetchone()
    if row is None:
        raise NotFound(f"no memory named {name!r}", hint="try: memstore search " + json.dumps(key))
    return row


@cli.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
@common
def show(app: App, name: str, as_json: bool) -> None:
    """One memory: where it is, its policy state, its problems and its text."""
    from memstore.views import file_view

    view = app.with_mirror(app.fresh(lambda conn: file_view(conn, _find(conn, name), app.now, app.config)))
    if as_json:
        emit_json(view)
        return
    body = view.pop("body")
    problems = view.pop("problems")
    for key, value in view.items():
        if value is not None and value != "":
            click.echo(f"{key:16} {value}")
    for problem in problems:
        click.echo(f"{problem['level']:16} {problem['message']}")
    click.echo("")
    click.echo(body.rstrip())


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@common
def status(app: App, as_json: bool) -> None:
    """What the mirror holds: files by kind, problems, journal, mirror size."""
    from memstore.views import status_view

    view = app.with_mirror(app.fresh(lambda conn: status_view(conn, app.root, app.now, app.config)))
    if as_json:
        emit_json(view)
        return
    click.echo(f"root      {view['root']}")
    click.echo(f"mirror    {view['mirror']} ({view['mirror_bytes']:,} bytes)")
    click.echo(f"events    {view['events']} journal events, {view['t2_touched']} memories touched")
    click.echo(f"problems  {view['errors']} errors, {view['warnings']} warnings (memstore lint)")
    click.echo("")
    click.echo(table([{"kind": k, "files": v} for k, v in view["kinds"].items()], ["kind", "files"]))
    if view.get("bands"):
        click.echo("")
        click.echo(table(view["bands"], ["band", "rows", "chars", "budget", "use"]))


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@common
def lint(app: App, as_json: bool) -> None:
    """Hygiene: malformed or missing fields, name mismatches, oversize files. Exit 1 on errors."""
    from memstore.views import lint_view

    found = app.with_mirror(app.fresh(lint_view))
    errors = sum(1 for f in found if f["level"] == "error")
    if as_json:
        emit_json(found)
    else:
        for item in found:
            click.echo(f"{item['path']}: {item['level']}: {item['message']}")
        warnings = len(found) - errors
        click.echo(f"{errors} error(s), {warnings} warning(s)", err=not found)
    if errors:
        sys.exit(1)


# ---------------------------------------------------------------- policy: touch / render / flush / list


@cli.command()
@click.argument("path")
@click.option("--tool", default="Read", show_default=True, help="The tool the access came from.")
@click.option("--session", default=None, help="Session id to record with the event.")
@common
def touch(app: App, path: str, tool: str, session: str | None) -> None:
    """Record one access of a memory file, exactly as the hook does.

    Exit 1 if PATH is missing or is not a T2 memory file (where the hook would silently
    do nothing); exit 2 for a --tool that never reinforces.
    """
    from memstore.policy import REINFORCING_TOOLS, record_touch

    if tool not in REINFORCING_TOOLS:
        raise BadUsage(f"{tool} does not reinforce (only {', '.join(REINFORCING_TOOLS)})",
                       hint=f"use --tool {'|'.join(REINFORCING_TOOLS)}")
    target = Path(path).expanduser()
    if not target.is_absolute() and not target.exists() and (app.root / target).exists():
        target = app.root / target  # a path given relative to the root, e.g. memory/x.md
    hint = f"give a T2 memory file: {app.root}/memory/<type>_<topic>.md"
    if not target.is_file():  # else a touch of a file that is not there would be journaled
        raise NotFound(f"{'not a file' if target.exists() else 'no such file'}: {path}", hint=hint)
    result = record_touch(app.root, str(target), tool, app.now, app.config, session=session)
    if not result.recorded:
        raise NotFound(result.message, hint=hint)
    click.echo(f"{result.rel}: {result.message}")


@cli.command()
@common
def render(app: App) -> None:
    """Regenerate MEMORY.md, MEMORY-archive.md and current-state.md from the mirror."""
    from memstore.render import render as do_render
    from memstore.sync import sync_locked

    def run(conn: sqlite3.Connection) -> str:
        sync_locked(conn, app.root, app.config)
        return do_render(conn, app.root, app.now, app.config).summary()

    click.echo(app.with_mirror(run))


@cli.command()
@click.option("--force", is_flag=True, help="Include files modified in the last few minutes.")
@common
def flush(app: App, force: bool) -> None:
    """Fold policy state from the mirror into each memory file's frontmatter."""
    from memstore.flush import flush as do_flush
    from memstore.locks import file_lock
    from memstore.sync import sync_into

    def run(conn: sqlite3.Connection) -> str:
        with file_lock(Path(RootPaths(app.root).mirror_lock)):
            sync_into(conn, app.root, app.config)
            report = do_flush(conn, app.root, app.now, app.config, force)
            sync_into(conn, app.root, app.config)
        for rel, why in report.refused:
            app.say(f"left alone: {rel}: {why}")
        return report.summary()

    click.echo(app.with_mirror(run))


@cli.command(name="list")
@click.option("--band", type=click.Choice(["hot", "new", "cold", "archive", "superseded"]), default=None)
@click.option("--json", "as_json", is_flag=True)
@common
def list_(app: App, band: str | None, as_json: bool) -> None:
    """T2 memories with their band, score and policy state, in rank order."""
    from memstore.views import list_view

    rows = app.with_mirror(app.fresh(lambda conn: list_view(conn, app.root, app.now, app.config, band)))
    if as_json:
        emit_json(rows)
        return
    shown = [{**r, "score": f"{r['score']:.4f}", "pin": "pin" if r["pin"] else ""} for r in rows]
    click.echo(table(shown, ["band", "score", "access_count", "stability", "pin", "name"],
                     ["band", "score", "reinf", "stability", "pin", "name"]))


# ---------------------------------------------------------------- Claude Code: hook / context


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("extra", nargs=-1, type=click.UNPROCESSED, metavar="[ARGS]...")
@click.pass_context
def hook(ctx: click.Context, extra: tuple[str, ...]) -> None:
    """The Claude Code hook: one JSON object on stdin; always exits 0.

    Options after `hook` go to the hook as they are (it ignores any it does not know),
    so no argument can make it fail; only -h/--help is taken here, and prints this.
    """
    from memstore.hook import main as hook_main

    app: App = ctx.obj
    args = []
    if app.root_opt:
        args += ["--root", app.root_opt]
    if app.now_opt:
        args += ["--now", app.now_opt]
    args += extra
    hook_main(args, stdin=getattr(sys.stdin, "buffer", sys.stdin), stdout=sys.stdout)


@cli.command()
@common
def context(app: App) -> None:
    """Print the cold-start bundle that SessionStart injects."""
    from memstore.context import bundle

    click.echo(bundle(app.root, app.now, app.config), nl=False)


# ---------------------------------------------------------------- install / verify / tick


def _layout(app: App, scope: str, settings: str | None, claude_md: str | None) -> Any:
    from memstore.install import layout_for

    return layout_for(app.root, scope, settings, claude_md, Path.cwd())


def _lens_matcher(app: App) -> str | None:
    from memstore.lenses import tool_union
    from memstore.sync import sync_locked

    def run(conn: sqlite3.Connection) -> str | None:
        sync_locked(conn, app.root, app.config)
        return tool_union(conn)

    return app.with_mirror(run)


@cli.command()
@click.option("--apply", "do_apply", is_flag=True, help="Write the changes (default: print a diff only).")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True,
              help="user: one agent for every project (~/.claude); project: this project (./.claude, ./CLAUDE.md).")
@click.option("--settings", default=None, help="The settings.json to merge the hooks into (overrides --scope).")
@click.option("--claude-md", default=None, help="The file to add the @ import block to (overrides --scope).")
@click.option("--cron", is_flag=True, help="Also install the nightly tick in the user's crontab (needs `crontab`).")
@click.option("--crontab-file", default=None, help="Merge the cron line into this file instead of `crontab`.")
@click.option("--keep-auto-memory", is_flag=True, help="Leave Claude Code's own auto memory switched on.")
@common
def install(app: App, do_apply: bool, scope: str, settings: str | None, claude_md: str | None, cron: bool,
            crontab_file: str | None, keep_auto_memory: bool) -> None:
    """Register the hooks, the read grant and the imports, optionally the cron line (dry run unless --apply)."""
    from memstore.install import plan_install, read_system_crontab
    from memstore.render import render as do_render

    layout = _layout(app, scope, settings, claude_md)
    matcher = _lens_matcher(app)
    cron_file = Path(crontab_file).expanduser().absolute() if crontab_file else None
    cron_text = read_system_crontab() if cron and cron_file is None else None
    plan = plan_install(layout, matcher, disable_auto_memory=not keep_auto_memory,
                        crontab_file=cron_file, crontab_text=cron_text)
    changed = [c for c in plan.changes if c.changed]
    for change in changed:
        click.echo(change.diff())
    for warning in plan.warnings:
        app.say(f"warning: {warning}")
    if not do_apply:
        click.echo(f"{len(changed)} file(s) would change; nothing written. Run again with --apply.")
        return
    written = plan.apply()
    app.with_mirror(lambda conn: do_render(conn, app.root, app.now, app.config))
    where = "--scope user" if layout.scope == "user" else f"--settings {layout.settings}"
    if layout.imports is not None and layout.scope == "project":
        where += f" --claude-md {layout.imports}"
    click.echo(f"{len(written)} file(s) changed; index rendered. Check the wiring with: "
               f"memstore --root {app.root} verify {where}")


@cli.command()
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True)
@click.option("--settings", default=None, help="The settings.json to check (overrides --scope).")
@click.option("--claude-md", default=None, help="The file with the @ import block to check (overrides --scope).")
@click.option("--cron", is_flag=True, help="Also require the nightly tick in the user's crontab.")
@click.option("--crontab-file", default=None, help="Require the nightly tick in this file.")
@click.option("--json", "as_json", is_flag=True)
@common
def verify(app: App, scope: str, settings: str | None, claude_md: str | None, cron: bool,
           crontab_file: str | None, as_json: bool) -> None:
    """Say what Claude Code will do with the wiring, then prove a Read reinforces. Exit 1 if anything fails."""
    from memstore import verify as v
    from memstore.claude_code import read_state
    from memstore.install import read_system_crontab

    layout = _layout(app, scope, settings, claude_md)
    state = read_state()
    checks, command = v.check_settings(layout, _lens_matcher(app))
    checks.append(v.check_grant(layout, state))
    checks += v.check_imports(layout, state, app.config)
    checks.append(v.check_index(app.root, app.config))
    checks.append(v.check_mirror(app.root))
    if crontab_file:
        path = Path(crontab_file).expanduser()
        checks.append(v.check_cron(path.read_text() if path.exists() else "", app.root))
    elif cron:
        checks.append(v.check_cron(read_system_crontab(), app.root))
    if command:
        checks.append(v.check_reinforcement(app.root, command, app.now))
    failed = [c for c in checks if not c.ok]
    if as_json:
        emit_json([c.__dict__ for c in checks])
    else:
        for check in checks:
            mark = "ok  " if check.ok else "FAIL"
            click.echo(f"{mark:5} {check.name}: {check.detail}" + (f"\n      fix: {check.fix}"
                                                                  if not check.ok and check.fix else ""))
        click.echo(f"{len(checks) - len(failed)}/{len(checks)} checks passed")
    if failed:
        sys.exit(1)


@cli.command()
@common
def tick(app: App) -> None:
    """The nightly tick: sync, flush (skipping files in use), render, record status."""
    from memstore.nightly import tick as do_tick

    status = do_tick(app.root, app.now, app.config, app.say)
    click.echo(f"tick {status['ran_at']}: {status['sync']} | {status['flush']} | {status['render']}")


def main(argv: list[str] | None = None) -> None:
    cli.main(args=argv, prog_name="memstore")


def run_as(command: str, argv: list[str]) -> None:
    """`memstore COMMAND ARGV` for the seed-style wrapper scripts; --root may come anywhere in ARGV."""
    rest = list(argv)
    options: list[str] = []
    if "--root" in rest:
        at = rest.index("--root")
        options, rest = rest[at : at + 2], rest[:at] + rest[at + 2 :]
    main([*options, command, *rest])

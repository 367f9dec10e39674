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
from memstore.errors import BadUsage, MemstoreError
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
        try:
            return parse_now(value)
        except ValueError as exc:
            raise BadUsage(str(exc), hint="give --now as ISO 8601, e.g. 2026-07-30T12:00:00Z") from None

    @functools.cached_property
    def store(self) -> Store:
        return Store.locate(self.root_opt, self.now, notify=self.say, progress=self.progress("rebuild"))

    @property
    def root(self) -> Path:
        return self.store.root

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
            app.__dict__.pop("store", None)
        if now_opt is not None:
            app.now_opt = now_opt
            app.__dict__.pop("now", None)
            app.__dict__.pop("store", None)
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


# ---------------------------------------------------------------- init / sync / rebuild


@cli.command()
@click.argument("target", type=click.Path(file_okay=False), metavar="ROOT")
@click.option("--apply", "do_apply", is_flag=True, help="Make the changes (default: only print the plan).")
@common
def init(app: App, target: str, do_apply: bool) -> None:
    """Lay out an agent root at ROOT (dry run unless --apply)."""
    plan = Store.plan_init(target)
    for line in plan.lines():
        click.echo(line)
    if not do_apply:
        click.echo(f"{len(plan.actions)} change(s) planned; nothing written. Run again with --apply.")
        return
    store, report = Store.init(plan, notify=app.say, progress=app.progress("index"))
    click.echo(f"{len(plan.actions)} change(s) made; mirror built: {report.summary()}")
    click.echo(f"next, wire it into Claude Code: memstore --root {store.root} install --scope user  (every project)")
    click.echo(f"   or, from inside one project:     memstore --root {store.root} install")


@cli.command()
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
@common
def sync(app: App, quiet: bool) -> None:
    """Bring the mirror up to date with the files (incremental)."""
    report = app.store.sync()
    if not quiet:
        click.echo(report.summary())
    for rel in report.unreadable[:10]:
        app.say(f"unreadable, row kept: {rel}")


@cli.command()
@common
def rebuild(app: App) -> None:
    """Build the mirror afresh from the files and the journal, and swap it in."""
    click.echo(f"rebuilt: {app.store.rebuild().summary()}")


# ---------------------------------------------------------------- search / show / status / lint / list


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
    catch_up = "none" if no_sync else "full" if full else "quick"
    hits = app.store.search(query, limit, type_, catch_up=catch_up)
    if as_json:
        emit_json([hit.to_json() for hit in hits])
        return
    if not hits:
        click.echo("no matches")
        return
    for hit in hits:
        click.echo(f"{hit.score:7.2f}  {hit.path}")
        if hit.summary:
            click.echo(f"         {hit.summary[:150]}")
        if hit.snippet:
            click.echo(f"         …{hit.snippet[:200]}")


@cli.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True)
@common
def show(app: App, name: str, as_json: bool) -> None:
    """One memory: where it is, its policy state, its problems and its text."""
    view = app.store.show(name).to_json()
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
    view = app.store.status().to_json()
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
    found = [problem.to_json() for problem in app.store.lint()]
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


@cli.command(name="list")
@click.option("--band", type=click.Choice(["hot", "new", "cold", "archive", "superseded"]), default=None)
@click.option("--json", "as_json", is_flag=True)
@common
def list_(app: App, band: str | None, as_json: bool) -> None:
    """T2 memories with their band, score and policy state, in rank order."""
    rows = [row.to_json() for row in app.store.list(band)]
    if as_json:
        emit_json(rows)
        return
    shown = [{**r, "score": f"{r['score']:.4f}", "pin": "pin" if r["pin"] else ""} for r in rows]
    click.echo(table(shown, ["band", "score", "access_count", "stability", "pin", "name"],
                     ["band", "score", "reinf", "stability", "pin", "name"]))


# ---------------------------------------------------------------- policy: touch / render / flush / tick


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
    result = app.store.touch(path, tool, session=session)
    click.echo(f"{result.path}: {result.message}")


@cli.command()
@common
def render(app: App) -> None:
    """Regenerate MEMORY.md, MEMORY-archive.md and current-state.md from the mirror."""
    click.echo(app.store.render().summary())


@cli.command()
@click.option("--force", is_flag=True, help="Include files modified in the last few minutes.")
@common
def flush(app: App, force: bool) -> None:
    """Fold policy state from the mirror into each memory file's frontmatter."""
    report = app.store.flush(force)
    for rel, why in report.refused:
        app.say(f"left alone: {rel}: {why}")
    click.echo(report.summary())


@cli.command()
@click.option("--commit", is_flag=True, help="Commit exactly the files tick wrote or moved (root in a git work tree).")
@common
def tick(app: App, commit: bool) -> None:
    """The nightly tick: sync and lint; unless a memory file changed in the last few minutes,
    also flush, roll old short-term facts and dream entries into archive/, and render.
    Writes the cue (runtime/state/cue.json) and the status file."""
    from memstore.nightly import PER_KIND

    status = app.store.tick(commit=commit)
    click.echo(status.summary())
    for kind, count in status.cue_kinds.items():
        capped = f" (the {PER_KIND} most pressing in the cue)" if count > PER_KIND else ""
        click.echo(f"  cue: {count} {kind}{capped}")
    if status.committed is not None:
        click.echo(f"  git: {status.committed}")


@cli.command()
@click.option("--model-cmd", default=None, metavar="CMD",
              help="The model command, split like a shell would; prompt on stdin, answer on stdout "
                   "[default: claude -p --tools '']: no tools, so the model only writes text.")
@click.option("--timeout", default=600.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              metavar="S", help="Seconds allowed for each of the two model calls.")
@click.option("--commit", is_flag=True, help="Commit exactly the entries wake wrote (root in a git work tree).")
@click.option("--verbose", "-v", is_flag=True, help="Say so on stderr when there is nothing to wake for.")
@common
def wake(app: App, model_cmd: str | None, timeout: float, commit: bool, verbose: bool) -> None:
    """The nightly dream and meditation sit, when the tick's cue has items.

    Two model calls: a dream over the cue and the recent short-term facts, and a sit on
    the meditation object the rotation picks. Each answer becomes a dream-journal entry;
    the dream's proposed memory changes go to a short-term note and are never applied.
    No cue, or nothing in it: no model call, exit 0. A failed call: nothing written, the
    cue kept, exit 1.
    """
    result = app.store.wake(model_cmd, timeout, commit=commit)
    if not result.ran:
        if verbose:
            app.say(result.reason)
        return
    for note in result.notes:
        app.say(note)
    click.echo(f"dream       {result.dream}")
    if result.meditation:
        click.echo(f"meditation  {result.meditation}  ({result.object}, {result.shelf} shelf)")
    if result.proposals:
        click.echo(f"proposals   {result.proposals}  (not applied)")
    if result.commit:
        click.echo(f"git         {result.commit}")


@cli.command()
@click.option("--next", "show_next", is_flag=True, help="Print the object the next sit takes, and why.")
@click.option("--json", "as_json", is_flag=True)
@common
def meditate(app: App, show_next: bool, as_json: bool) -> None:
    """The meditation rotation: which object the next sit takes, and why (the sit itself runs in `wake`)."""
    if not show_next:
        raise BadUsage("say what to do: meditate --next", hint="the sit itself runs in: memstore wake")
    choice = app.store.meditate_next()
    if as_json:
        emit_json(choice.to_json())
        return
    if choice.object is None:
        click.echo("next: none (no usable object in meditations/)")
    else:
        click.echo(f"next: {choice.object} ({choice.shelf} shelf, score {choice.score:.4f}) on {choice.date}")
    recent = ", ".join(f"{r['object']} ({r['shelf'] or '?'}, {r['date']})" for r in choice.recent)
    click.echo(f"last sits: {recent or 'none yet'}")
    for rule in choice.rules:
        click.echo(f"rule: {rule}")
    if choice.candidates:
        rows = [{**c.to_json(), "last_used": c.last_used or "never", "days": "" if c.days is None else c.days,
                 "factor": f"{c.factor:.4f}", "score": f"{c.score:.4f}", "excluded_by": c.excluded_by or ""}
                for c in choice.candidates]
        click.echo("")
        click.echo(table(rows, ["name", "shelf", "weight", "last_used", "days", "factor", "score", "excluded_by"],
                         ["object", "shelf", "weight", "last used", "days", "factor", "score", "excluded by"]))
    for item in choice.skipped:
        app.say(f"skipped {item['path']}: {item['reason']}")
    for note in choice.notes:
        app.say(note)


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
    click.echo(app.store.context(), nl=False)


# ---------------------------------------------------------------- ledgers: new / bug


@cli.command()
@click.argument("type_", metavar="TYPE")
@click.argument("topic")
@click.option("--summary", required=True, help="One line: what the memory holds (the index row).")
@click.option("--importance", type=float, default=None, help="0-10; weighs the memory up in the ranking.")
@click.option("--pin", is_flag=True, help="Keep it in the Hot band whatever its score.")
@click.option("--body", default=None, help="The text under the heading (default: the summary).")
@common
def new(app: App, type_: str, topic: str, summary: str, importance: float | None, pin: bool,
        body: str | None) -> None:
    """Write a T2 memory memory/TYPE_<topic-in-kebab-case>.md with full frontmatter."""
    made = app.store.new(type_, topic, summary=summary, importance=importance, pin=pin, body=body)
    click.echo(f"wrote {made.path}")


@cli.group(cls=click.Group)
def bug() -> None:
    """The open-bug ledger (memory/bugs/): add, list, close."""


@bug.command(name="add")
@click.argument("title")
@click.option("--body", default=None, help="What is wrong, how to see it, what was ruled out.")
@click.option("--by", "by", default=None, help="Who files it (default: $MEMSTORE_FILED_BY, else user@host).")
@common
def bug_add(app: App, title: str, body: str | None, by: str | None) -> None:
    """File a bug: memory/bugs/<id>-<slug>.md, the next free id."""
    filed = app.store.bug_add(title, body=body, by=by)
    click.echo(f"filed bug {filed.id}: {filed.path}")


@bug.command(name="list")
@click.option("--all", "all_", is_flag=True, help="Closed bugs too.")
@click.option("--json", "as_json", is_flag=True)
@common
def bug_list(app: App, all_: bool, as_json: bool) -> None:
    """Every open bug, however old and whoever filed it, sorted by id."""
    bugs = app.store.bug_list(all=all_)
    if as_json:
        emit_json([b.to_json() for b in bugs])
        return
    if not bugs:
        click.echo("no bugs in the ledger" if all_ else "no open bugs (memstore bug list --all shows closed ones)")
        return
    rows = [{**b.to_json(), "filed": (b.filed_at or "?")[:10], "filed_by": b.filed_by or "?"} for b in bugs]
    columns = ["id", "status", "filed", "filed_by", "title"] if all_ else ["id", "filed", "filed_by", "title"]
    click.echo(table(rows, columns))
    for b in bugs:
        for problem in b.problems:
            app.say(f"{b.path}: {problem}")


@bug.command(name="close")
@click.argument("bug_id", metavar="ID")
@click.option("--why", default=None, help="Why it is closed: the fix, or why it is not a bug.")
@common
def bug_close(app: App, bug_id: str, why: str | None) -> None:
    """Close bug ID (1, 0001 or its file name); only status, closed_at and why change."""
    closed = app.store.bug_close(bug_id, why=why)
    click.echo(f"closed bug {closed.id}: {closed.path}")


# ---------------------------------------------------------------- capture: note / debrief


@cli.command()
@click.argument("text")
@click.option("--kind", default=None, metavar="KIND", help="A kebab-case kind for the frontmatter (e.g. decision).")
@click.option("--json", "as_json", is_flag=True)
@common
def note(app: App, text: str, kind: str | None, as_json: bool) -> None:
    """One fact into short-term memory (memory/short-term/YYMMDD-<slug>.md), at the moment of learning.

    The same fact twice on one day is written once; the second call says where it is.
    """
    result = app.store.note(text, kind=kind)
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(result.message)


@cli.command()
@click.option("--transcript", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="The session's JSONL transcript: the rules stated in its final answer become T1 lessons.")
@click.option("--commit", is_flag=True, help="Commit exactly the files debrief wrote (root in a git work tree).")
@click.option("--hook", "as_hook", is_flag=True,
              help="Run as Claude Code's SessionEnd hook: the hook JSON on stdin names the transcript; "
                   "nothing on stdout, failures to the hook error log, always exit 0.")
@click.option("--json", "as_json", is_flag=True)
@common
def debrief(app: App, transcript: str | None, commit: bool, as_hook: bool, as_json: bool) -> None:
    """The mechanical half of the end-of-session debrief: sync, lint, render, and what the session added.

    With --transcript: each sentence of the session's final answer that states a rule
    (a narrow cue: Always/Never/Do not/Must/..., no dates, hashes, numbers or "I did")
    becomes a T1 lesson, at most 3 per session and 30 in the short-term window.
    """
    if as_hook:
        _debrief_hook(app, commit)
        return
    result = app.store.debrief(transcript, commit=commit)
    if as_json:
        emit_json(result.to_json())
        return
    click.echo(f"sync     {result.sync}")
    click.echo(f"lint     {result.lint_errors} error(s), {result.lint_warnings} warning(s)")
    click.echo(f"render   {result.render}")
    if result.transcript is not None:
        click.echo(f"rules    {result.rules_found} rule-shaped sentence(s) in the final answer, "
                   f"{len(result.lessons)} kept")
    for lesson in result.lessons:
        click.echo(f"lesson   {lesson}")
    for item in result.skipped:
        click.echo(f"skipped  {item['rule']!r} ({item['why']})")
    for line in result.notes:
        app.say(line)
    if result.committed is not None:
        click.echo(f"git      {result.committed}")


def _debrief_hook(app: App, commit: bool) -> None:
    """`debrief --hook`: never blocks the session end, never speaks on stdout, logs what went wrong."""
    from memstore import capture
    from memstore.agent_root import locate

    root = locate(app.root_opt, os.environ.get("MEMSTORE_ROOT"), os.getcwd())
    try:
        payload, why = capture.hook_payload(capture.read_hook_stdin(getattr(sys.stdin, "buffer", sys.stdin)))
        transcript = None
        if payload is None:
            capture.log_failure(root, f"{why}; ran without a transcript")
        else:
            event = payload.get("hook_event_name")
            if event not in (None, "SessionEnd", "Stop"):
                capture.log_failure(root, f"called for {event!r}, not SessionEnd; nothing done")
                return
            named = payload.get("transcript_path")
            if isinstance(named, str) and named and os.path.isfile(named):
                transcript = named
            elif named:
                capture.log_failure(root, f"transcript {named!r} is not a file; ran without it")
        app.store.debrief(transcript, commit=commit)
    except Exception as exc:  # the session is ending: nothing may stop it
        capture.log_failure(root, f"failed: {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------- audit


@cli.command()
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: a list of file objects.")
@common
def audit(app: App, files: tuple[str, ...], as_json: bool) -> None:
    """What the always-loaded files cost every session, and which lines read as narrative.

    Default files: the root's identity.md, and CLAUDE.md and AGENTS.md where present in the
    current folder (the project) and in the root; the @ imports of a CLAUDE.md are followed
    one level. A line is flagged for a date, a commit hash, a count, a status word,
    first-person past narrative or a ticket number: what happened, not what to do.
    Tokens are estimated as characters / 4. It reports and never edits: exit 0, or exit 1
    when a named FILE does not exist.
    """
    from memstore.audit import totals

    found = app.store.audit(list(files) or None)
    if as_json:
        emit_json([entry.to_json() for entry in found])
        return
    here = Path.cwd()

    def shown(path: str) -> str:
        try:
            return Path(path).relative_to(here).as_posix()
        except ValueError:
            return path

    if not found:
        click.echo("no always-loaded files found (identity.md in the root; CLAUDE.md, AGENTS.md here or in the root)")
    for entry in found:
        role = f"import via {shown(entry.imported_by)}" if entry.imported_by else entry.role
        click.echo(f"{shown(entry.path)}  ({role})  {entry.chars:,} chars ≈ {entry.tokens:,} tokens, "
                   f"{entry.lines} line(s)")
        for item in entry.flagged:
            click.echo(f"  L{item.line}  {', '.join(item.reasons)}: {item.text}")
        for imp in entry.imports:
            click.echo(f"  {imp.ref}: {imp.chars:,} chars ≈ {imp.tokens:,} tokens (its own entry)" if imp.found
                       else f"  {imp.ref}: not found ({imp.path})")
        if entry.note:
            click.echo(f"  {entry.note}")
        elif entry.flagged:
            click.echo(f"  {len(entry.flagged)} narrative line(s): {entry.flagged_chars:,} chars "
                       f"≈ {entry.flagged_tokens:,} tokens")
    total = totals(found)
    click.echo(f"total: {total['files']} file(s), {total['chars']:,} chars ≈ {total['tokens']:,} tokens every "
               f"session; {total['flagged_lines']} narrative line(s), {total['flagged_chars']:,} chars "
               f"≈ {total['flagged_tokens']:,} tokens saved per session by removing them (tokens ≈ chars / 4)")


# ---------------------------------------------------------------- mcp


@cli.command()
@common
def mcp(app: App) -> None:
    """Serve this memory over stdio as an MCP server (needs the mcp extra: memstore[mcp])."""
    from memstore.mcp_server import serve

    pinned = app.now_opt is not None or os.environ.get("MEMSTORE_NOW") is not None
    # The server lives for hours: read the real clock at each call unless a clock was pinned.
    serve(Store.locate(app.root_opt, app.now if pinned else None, notify=app.say))


# ---------------------------------------------------------------- install / verify


@cli.command()
@click.option("--apply", "do_apply", is_flag=True, help="Write the changes (default: print a diff only).")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True,
              help="user: one agent for every project (~/.claude); project: this project (./.claude, ./CLAUDE.md).")
@click.option("--settings", default=None, help="The settings.json to merge the hooks into (overrides --scope).")
@click.option("--claude-md", default=None, help="The file to add the @ import block to (overrides --scope).")
@click.option("--cron", is_flag=True,
              help="Also the nightly jobs (tick, then wake 5 minutes later) in the user's crontab (needs `crontab`).")
@click.option("--crontab-file", default=None, help="The nightly jobs go into this crontab file instead of `crontab`.")
@click.option("--cron-time", default=None, metavar="HH:MM",
              help="When tick runs (default 03:30; wake 5 minutes later).")
@click.option("--keep-auto-memory", is_flag=True, help="Leave Claude Code's own auto memory switched on.")
@click.option("--model-cmd", default=None, metavar="CMD",
              help="The model command the wake job runs (default: claude -p --tools '', with claude's absolute path).")
@click.option("--mcp", "with_mcp", is_flag=True,
              help="Also register the MCP server (project: .mcp.json; user: prints the `claude mcp add` command).")
@click.option("--uninstall", is_flag=True,
              help="Take out this root's hooks and import block (and, with --cron/--crontab-file, its cron jobs).")
@common
def install(app: App, do_apply: bool, scope: str, settings: str | None, claude_md: str | None, cron: bool,
            crontab_file: str | None, cron_time: str | None, keep_auto_memory: bool, model_cmd: str | None,
            with_mcp: bool, uninstall: bool) -> None:
    """Register the hooks, the read grant and the imports, optionally the cron jobs (dry run unless --apply).

    With --uninstall: remove this root's hook handlers from the settings file of the scope,
    its @ import block, and with --cron or --crontab-file its tick and wake jobs. Left as
    they are: the read grant, autoMemoryEnabled, the .gitignore line, and everything that
    is not memstore's for this root (other roots' jobs, foreign jobs, comments, MAILTO=...).
    """
    layout = app.store.layout(scope, settings, claude_md)
    plan = app.store.plan_install(layout, keep_auto_memory=keep_auto_memory, cron=cron, crontab_file=crontab_file,
                                  cron_time=cron_time, uninstall=uninstall, model_cmd=model_cmd, mcp=with_mcp)
    changed = [c for c in plan.changes if c.changed]
    for change in changed:
        click.echo(change.diff())
    for warning in plan.warnings:
        app.say(f"warning: {warning}")
    if not do_apply:
        click.echo(f"{len(changed)} file(s) would change; nothing written. Run again with --apply.")
        return
    if uninstall:
        written = plan.apply()
        click.echo(f"{len(written)} file(s) changed; memstore's wiring for {app.root} taken out. "
                   "The read grant and autoMemoryEnabled were left as they are.")
        return
    written = app.store.install(plan)
    where = "--scope user" if layout.scope == "user" else f"--settings {layout.settings}"
    if layout.imports is not None and layout.scope == "project":
        where += f" --claude-md {layout.imports}"
    if crontab_file:
        where += f" --crontab-file {crontab_file}"
    elif cron:
        where += " --cron"
    click.echo(f"{len(written)} file(s) changed; index rendered. Check the wiring with: "
               f"memstore --root {app.root} verify {where}")


@cli.command()
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True)
@click.option("--settings", default=None, help="The settings.json to check (overrides --scope).")
@click.option("--claude-md", default=None, help="The file with the @ import block to check (overrides --scope).")
@click.option("--cron", is_flag=True, help="Also require the nightly tick and wake jobs in the user's crontab.")
@click.option("--crontab-file", default=None, help="Require the nightly tick and wake jobs in this crontab file.")
@click.option("--json", "as_json", is_flag=True)
@common
def verify(app: App, scope: str, settings: str | None, claude_md: str | None, cron: bool,
           crontab_file: str | None, as_json: bool) -> None:
    """Say what Claude Code will do with the wiring, then prove a Read reinforces. Exit 1 if anything fails."""
    layout = app.store.layout(scope, settings, claude_md)
    checks = app.store.verify(layout, cron=cron, crontab_file=crontab_file)
    failed = [c for c in checks if not c.ok]
    if as_json:
        emit_json([c.to_json() for c in checks])
    else:
        for check in checks:
            mark = "ok  " if check.ok else "FAIL"
            click.echo(f"{mark:5} {check.name}: {check.detail}" + (f"\n      fix: {check.fix}"
                                                                  if not check.ok and check.fix else ""))
        click.echo(f"{len(checks) - len(failed)}/{len(checks)} checks passed")
    if failed:
        sys.exit(1)


# ---------------------------------------------------------------- watch


@cli.command()
@click.option("--debounce", default=1.0, show_default=True, metavar="S", type=click.FloatRange(min=0),
              help="Seconds of quiet after a change before the mirror and MEMORY.md catch up.")
@click.option("--rescan", default=300.0, show_default=True, metavar="S", type=click.FloatRange(min=0, min_open=True),
              help="Seconds between full rescans, with or without events.")
@common
def watch(app: App, debounce: float, rescan: float) -> None:
    """Keep the mirror and MEMORY.md up to date as the files change, until Ctrl-C or SIGTERM.

    One watcher per root: a second one exits 1 naming the first one's pid.
    """
    import threading

    from memstore.watch import serve, stop_on_signals

    pinned = app.now if (app.now_opt or os.environ.get("MEMSTORE_NOW", "").strip()) else None
    store = Store(app.root, pinned, notify=app.say, progress=app.progress("rebuild"))  # a daemon: the real clock
    stop = threading.Event()
    with stop_on_signals(stop):
        serve(store, stop, debounce=debounce, rescan=rescan, log=click.echo,
              warn=lambda line: app.say(f"watch: {line}"))
    click.echo("stopped")


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

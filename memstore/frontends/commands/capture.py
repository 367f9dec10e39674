"""Where memories come from: new, the bug ledger, note, debrief, audit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memstore.api.store import Store
from memstore.frontends.cligroup import App, cli, common, emit_json, json_option, table

if TYPE_CHECKING:
    from memstore.hook.review import Item as ReviewItem

# ---------------------------------------------------------------- ledgers: new / bug


@cli.command()
@click.argument("type_", metavar="TYPE")
@click.argument("topic")
@click.option("--summary", required=True, help="One line: what the memory holds (the index row).")
@click.option("--importance", type=float, default=None,
              help="0-10; weighs the memory up in the ranking.")
@click.option("--pin", is_flag=True, help="Keep it in the Hot band whatever its score.")
@click.option("--body", default=None, help="The text under the heading (default: the summary).")
@click.option("--global", "everywhere", is_flag=True,
              help="For every project (default: the project of the current folder, if it is in "
                   "one).")
@json_option
@common
def new(app: App, type_: str, topic: str, summary: str, importance: float | None, pin: bool,
        body: str | None, everywhere: bool, as_json: bool) -> None:
    """Write a T2 memory memory/TYPE_<topic-in-kebab-case>.md with full frontmatter."""
    made = app.store.new(type_, topic, summary=summary, importance=importance, pin=pin, body=body,
                         everywhere=everywhere)
    if as_json:
        emit_json(made.to_json())
        return
    click.echo(f"wrote {made.path}")


@cli.group(cls=click.Group)
def bug() -> None:
    """The open-bug ledger (memory/bugs/): add, list, close."""


@bug.command(name="add")
@click.argument("title")
@click.option("--body", default=None, help="What is wrong, how to see it, what was ruled out.")
@click.option("--by", "by", default=None,
              help="Who files it (default: $MEMSTORE_FILED_BY, else user@host).")
@json_option
@common
def bug_add(app: App, title: str, body: str | None, by: str | None, as_json: bool) -> None:
    """File a bug: memory/bugs/<id>-<slug>.md, the next free id (an open bug with the same title:
    refused)."""
    filed = app.store.bug_add(title, body=body, by=by)
    if as_json:
        emit_json(filed.to_json())
        return
    click.echo(f"filed bug {filed.id}: {filed.path}")


@bug.command(name="list")
@click.option("--all", "all_", is_flag=True, help="Closed bugs too.")
@json_option
@common
def bug_list(app: App, all_: bool, as_json: bool) -> None:
    """Every open bug, however old and whoever filed it, sorted by id."""
    bugs = app.store.bug_list(all=all_)
    if as_json:
        emit_json([b.to_json() for b in bugs])
        return
    if not bugs:
        click.echo("no bugs in the ledger" if all_
                   else "no open bugs (memstore bug list --all shows closed ones)")
        return
    rows = [{**b.to_json(), "filed": (b.filed_at or "?")[:10], "filed_by": b.filed_by or "?"}
            for b in bugs]
    columns = (["id", "status", "filed", "filed_by", "title"] if all_
               else ["id", "filed", "filed_by", "title"])
    click.echo(table(rows, columns))
    for b in bugs:
        for problem in b.problems:
            app.say(f"{b.path}: {problem}")


@bug.command(name="close")
@click.argument("bug_id", metavar="ID")
@click.option("--why", default=None, help="Why it is closed: the fix, or why it is not a bug.")
@json_option
@common
def bug_close(app: App, bug_id: str, why: str | None, as_json: bool) -> None:
    """Close bug ID (1, 0001, 0001-3f9 or its file name); only status, closed_at and why change."""
    closed = app.store.bug_close(bug_id, why=why)
    if as_json:
        emit_json(closed.to_json())
        return
    click.echo(f"closed bug {closed.id}: {closed.path}")


# ---------------------------------------------------------------- capture: note / debrief


@cli.command()
@click.argument("text")
@click.option("--kind", default=None, metavar="KIND",
              help="A kebab-case kind for the frontmatter (e.g. decision).")
@click.option("--global", "everywhere", is_flag=True,
              help="For every project (default: the project of the current folder, if it is in "
                   "one).")
@json_option
@common
def note(app: App, text: str, kind: str | None, everywhere: bool, as_json: bool) -> None:
    """One fact into short-term memory (memory/short-term/YYMMDD-<slug>.md), at the moment of
    learning.

    The same fact twice on one day is written once; the second call says where it is.
    """
    result = app.store.note(text, kind=kind, everywhere=everywhere)
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(result.message)


@cli.command()
@click.option("--transcript", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="The session's JSONL transcript: the rules stated in its final answer become T1 "
                   "lessons.")
@click.option("--commit", is_flag=True,
              help="Commit exactly the files debrief wrote (root in a git work tree).")
@click.option("--hook", "as_hook", is_flag=True,
              help="Run as Claude Code's SessionEnd hook: the hook JSON on stdin names the "
                   "transcript; nothing on stdout, failures to the hook error log, always exit 0.")
@click.option("--detach", is_flag=True,
              help="With --hook: hand the work to a background process and return at once (a "
                   "client that kills its SessionEnd hook after a second or two: Codex).")
@json_option
@common
def debrief(app: App, transcript: str | None, commit: bool, as_hook: bool, detach: bool,
            as_json: bool) -> None:
    """The mechanical half of the end-of-session debrief: sync, lint, render, and what the session
    added.

    With --transcript: each sentence of the session's final answer that states a rule
    (a narrow cue: Always/Never/Do not/Must/..., no dates, hashes, numbers or "I did")
    becomes a T1 lesson, at most 3 per session and 30 in the short-term window.
    """
    if as_hook:
        _debrief_hook(app, commit, detach)
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


def _debrief_hook(app: App, commit: bool, detach: bool = False) -> None:
    """`debrief --hook`: never blocks the session end, never speaks on stdout, logs what went
    wrong."""
    stdin = getattr(sys.stdin, "buffer", None) or sys.stdin  # a text stream is read too (a test's)
    Store.debrief_hook(stdin, root=app.root_opt, now=app.now_opt, commit=commit, detach=detach,
                       notify=app.say)


# ---------------------------------------------------------------- audit


@cli.command()
@click.argument("files", nargs=-1, metavar="[FILE]...")
@json_option
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
    from memstore.wiring.audit import totals

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
        click.echo("no always-loaded files found (identity.md in the root; CLAUDE.md, AGENTS.md "
                   "here or in the root)")
    for entry in found:
        role = f"import via {shown(entry.imported_by)}" if entry.imported_by else entry.role
        click.echo(f"{shown(entry.path)}  ({role})  {entry.chars:,} chars ≈ {entry.tokens:,} "
                   f"tokens, {entry.lines} line(s)")
        for item in entry.flagged:
            click.echo(f"  L{item.line}  {', '.join(item.reasons)}: {item.text}")
        for imp in entry.imports:
            click.echo(f"  {imp.ref}: {imp.chars:,} chars ≈ {imp.tokens:,} tokens (its own entry)"
                       if imp.found else f"  {imp.ref}: not found ({imp.path})")
        if entry.note:
            click.echo(f"  {entry.note}")
        elif entry.flagged:
            click.echo(f"  {len(entry.flagged)} narrative line(s): {entry.flagged_chars:,} chars "
                       f"≈ {entry.flagged_tokens:,} tokens")
    total = totals(found)
    click.echo(f"total: {total['files']} file(s), {total['chars']:,} chars ≈ {total['tokens']:,} "
               f"tokens every session; {total['flagged_lines']} narrative line(s), "
               f"{total['flagged_chars']:,} chars ≈ {total['flagged_tokens']:,} tokens saved per "
               "session by removing them (tokens ≈ chars / 4)")


# ---------------------------------------------------------------- review


@cli.group(cls=click.Group, invoke_without_command=True)
@json_option
@common
@click.pass_context
def review(ctx: click.Context, app: App, as_json: bool) -> None:
    """What waits for you: captured lessons, the dream's proposals, the tick's cue items.

    At your terminal it walks them one by one (accept, reject, skip, quit); piped, it only lists.
    """
    if ctx.invoked_subcommand is not None:
        return
    items = app.store.review()
    if as_json:
        emit_json([item.to_json() for item in items])
        return
    if not items:
        click.echo("nothing waits for review")
        return
    from memstore.frontends.terminal import NotThePerson, person_at_terminal, stdin_is_terminal

    # the person at their terminal answers item by item; piped, it only lists
    if stdin_is_terminal():
        try:
            via = {"front": "terminal", **person_at_terminal("answering review")}
        except NotThePerson as exc:
            click.echo(f"memstore: {exc}", err=True)
        else:
            _walk(app, items, via)
            return
    for item in items:
        _show(item)
    click.echo(f"\n{len(items)} waiting: memstore review accept ID, or memstore review reject ID "
               "(in your own terminal)")


def _show(item: ReviewItem) -> None:
    from memstore.core.inert import for_terminal

    click.echo(f"{item.id}  {item.kind:<8}  {for_terminal(item.text)}")
    where = f", project {for_terminal(item.project)}" if item.project else ", person-wide"
    created = ", " + item.created[:10] if item.created else ""
    click.echo(f"{'':10}{'from ' + for_terminal(item.source)}{created}{where}")


def _done(item: ReviewItem, accept: bool) -> None:
    what = {"lesson": "a standing lesson now" if accept
            else "archived; it never reaches the agent again",
            "proposal": (f"it will be in the next sessions' bundles as your instruction until it "
                         f"is marked done (memstore review done {item.id})") if accept
            else "dropped",
            "cue": "noted" if accept else "it will not come back"}
    click.echo(f"{'accepted' if accept else 'rejected'} {item.kind} {item.id}: {what[item.kind]}")


def _walk(app: App, items: list[ReviewItem], via: dict[str, object]) -> None:
    """Each waiting item in turn: accept, reject, skip or quit (a person at their terminal only)."""
    from memstore.frontends.terminal import ask

    answered = 0
    for number, item in enumerate(items, 1):
        click.echo(f"\n[{number}/{len(items)}]")
        _show(item)
        while True:
            choice = ask("[a]ccept, [r]eject, [s]kip, [q]uit? ")
            if choice is None or choice in ("q", "quit"):
                click.echo(f"{answered} answered, {len(items) - answered} still waiting")
                return
            if choice in ("a", "accept", "r", "reject"):
                accept = choice.startswith("a")
                done = app.store.review_answer(item.id, accept=accept, via=via)
                if done is not None:
                    _done(done, accept)
                    answered += 1
                break
            if choice in ("s", "skip", ""):
                break
    click.echo(f"{answered} answered, {len(items) - answered} still waiting")


def _answer(app: App, ident: str, accept: bool) -> None:
    """Only for the person at their terminal, and only on a typed y (memstore.frontends.terminal):
    no flag skips it."""
    from memstore.frontends.terminal import NotThePerson, confirmed, person_at_terminal

    verb = "accept" if accept else "reject"
    Store.check_review_id(ident)
    via = {"front": "terminal", **person_at_terminal(f"review {verb}")}

    def confirm(item: ReviewItem) -> bool:
        _show(item)
        return confirmed(f"{verb} {item.id}?")

    item = app.store.review_answer(ident, accept=accept, via=via, confirm=confirm)
    if item is None:
        raise NotThePerson(f"not {verb}ed (no y typed): nothing changed")
    _done(item, accept)


@review.command(name="accept")
@click.argument("ident", metavar="ID")
@common
def review_accept(app: App, ident: str) -> None:
    """Accept one item: a lesson becomes a standing lesson, a proposal or cue item is taken.

    Yours alone: it runs only at your terminal and asks `accept ID? [y/N]` first (no flag skips it).
    """
    _answer(app, ident, True)


@review.command(name="reject")
@click.argument("ident", metavar="ID")
@common
def review_reject(app: App, ident: str) -> None:
    """Reject one item: a lesson is archived and never injected again; a cue item never returns.

    Yours alone: it runs only at your terminal and asks `reject ID? [y/N]` first (no flag skips it).
    """
    _answer(app, ident, False)


@review.command(name="done")
@click.argument("ident", metavar="ID")
@common
def review_done(app: App, ident: str) -> None:
    """Mark an accepted proposal done: the sessions' bundles stop carrying it as your instruction.

    Yours alone, like accept and reject: it runs only at your terminal and asks `done ID? [y/N]`
    first.
    """
    from memstore.frontends.terminal import NotThePerson, confirmed, person_at_terminal

    Store.check_review_id(ident)
    via = {"front": "terminal", **person_at_terminal("review done")}

    def confirm(item: ReviewItem) -> bool:
        _show(item)
        return confirmed(f"done {item.id}?")

    item = app.store.review_done(ident, via=via, confirm=confirm)
    if item is None:
        raise NotThePerson("not marked done (no y typed): nothing changed")
    click.echo(f"done proposal {item.id}: no longer carried into the sessions' bundles")


@cli.command()
@click.argument("name")
@common
def promote(app: App, name: str) -> None:
    """Make a memory, note or lesson captured in one project reach every project (project:
    global)."""
    click.echo(f"promoted {app.store.promote(name)}: it now reaches every project")

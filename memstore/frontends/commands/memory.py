"""Commands over the memory itself: init, sync, rebuild, search, show, status, lint, list, touch,
render, flush."""

from __future__ import annotations

import sys
from typing import Any

import click

from memstore.api.store import Store
from memstore.core.errors import BadUsage
from memstore.core.inert import for_terminal, inert_line
from memstore.frontends.cligroup import App, cli, common, emit_json, json_option, table

# ---------------------------------------------------------------- init / sync / rebuild


@cli.command()
@click.argument("target", type=click.Path(file_okay=False), metavar="ROOT")
@click.option("--apply", "do_apply", is_flag=True,
              help="Make the changes (default: only print the plan).")
@common
def init(app: App, target: str, do_apply: bool) -> None:
    """Lay out an agent root at ROOT (dry run unless --apply)."""
    plan = Store.plan_init(target)
    for line in plan.lines():
        click.echo(line)
    if not do_apply:
        click.echo(f"{len(plan.actions)} change(s) planned; nothing written. "
                   "Run again with --apply.")
        return
    store, report = Store.init(plan, notify=app.say, progress=app.progress("index"))
    click.echo(f"{len(plan.actions)} change(s) made; mirror built: {report.summary()}")
    click.echo(f"next, wire it into Claude Code: memstore --root {store.root} install --scope user"
               "  (every project)")
    click.echo(f"   or, from inside one project:     memstore --root {store.root} install")


@cli.command()
@click.option("--quiet", "-q", is_flag=True, help="Print nothing on success.")
@json_option
@common
def sync(app: App, quiet: bool, as_json: bool) -> None:
    """Bring the mirror up to date with the files (incremental); with the semantic extra, embed for
    a few seconds."""
    if quiet:
        # notices are not success output; errors still raise
        app.store.notify = lambda _message: None
    report = app.store.sync()
    if as_json:
        emit_json(report.to_json())
    elif not quiet:
        click.echo(report.summary())
    for rel in report.unreadable[:10]:
        app.say(f"unreadable, row kept: {rel}")


@cli.command()
@common
def rebuild(app: App) -> None:
    """Build the mirror afresh from the files and the journal, and swap it in."""
    click.echo(f"rebuilt: {app.store.rebuild().summary()}")


@cli.command()
@click.option("--budget", type=click.FloatRange(min=0), default=None,
              help="Stop after about this many seconds.")
@click.option("--background", is_flag=True, hidden=True,
              help="The detached pass a sync starts (memstore.mirror.embed_background): stops on "
                   "SIGTERM.")
@json_option
@common
def embed(app: App, budget: float | None, background: bool, as_json: bool) -> None:
    """Embed every file whose vector is missing or stale (the `semantic` extra), with progress."""
    if background:
        done = app.store.embed_background()
        click.echo(f"background pass: {done.summary()}" if done
                   else "background pass: nothing to do (another pass holds the lock, or meaning "
                        "is off)")
        return
    # 10-25 files a second: worth a progress line well before the 2,000 files other walks wait for
    report = app.store.embed(budget, progress=app.progress("embed", min_total=64, unit="parts"))
    assert report is not None  # required=True raises instead
    if report.embedded and sys.stderr.isatty():
        click.echo("", err=True)  # end the live progress line, which a budget may have cut short
    if as_json:
        emit_json(report.to_json())
    else:
        click.echo(report.summary())


# ------------------------------------------------------------ search / show / status / lint / list


@cli.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True,
              type=click.IntRange(min=1, max=100_000))
@click.option("--type", "type_", default=None,
              help="Only this memory type or kind (feedback, lens, ...).")
@json_option
@click.option("--no-sync", is_flag=True,
              help="Search the mirror as it is, without looking at the files first.")
@click.option("--full", is_flag=True,
              help="Walk every file first (also sees files edited in place by other tools).")
@click.option(
    "--mode", type=click.Choice(["auto", "fts", "hybrid"]), default="auto", show_default=True,
    help="auto: words and meaning when the semantic extra is installed; fts: words alone; hybrid: "
    "fail unless meaning can be searched (a query in FTS5 syntax is searched by its words either "
    "way).",
)
@click.option("--this-project", is_flag=True,
              help="Only memories made in the current folder's project (they come first anyway).")
@click.option("--all", "include_all", is_flag=True,
              help="Also memories that stepped aside: superseded, forgotten, or outside their "
              "valid dates; and lessons rejected in review, marked.")
@common
def search(
    app: App, query: str, limit: int, type_: str | None, as_json: bool, no_sync: bool, full: bool,
    mode: str, this_project: bool, include_all: bool,
) -> None:
    """Ranked search; a plain-English question works.

    By default it first catches up with files added, removed or replaced since the last
    sync, and with files the hook saw written (a quick check of folders, not of every file).
    With the `semantic` extra, results found by meaning as well as by words are fused in;
    --json says which signals found each hit.
    """
    catch_up = "none" if no_sync else "full" if full else "quick"
    hits = app.store.search(query, limit, type_, catch_up=catch_up, mode=mode,
                            this_project=this_project, include_all=include_all)
    if as_json:
        emit_json([hit.to_json() for hit in hits])
        return
    if not hits:
        click.echo("no matches")
        return
    # Meaning was asked (a hybrid search): say which signals found each hit.
    hybrid = any("vector" in hit.signals or hit.vector_score is not None for hit in hits)
    for hit in hits:
        found_by = f"  (found by {' + '.join(hit.signals)})" if hybrid else ""
        refused = "  (rejected in review)" if hit.rejected else ""
        click.echo(f"{hit.score:7.2f}  {for_terminal(hit.path)}{found_by}{refused}")
        if hit.summary:
            click.echo(f"         {for_terminal(hit.summary[:150])}")
        if hit.snippet:
            lead = "" if hit.snippet.startswith("…") else "…"
            click.echo(f"         {lead}{for_terminal(hit.snippet[:200])}")


@cli.command()
@click.argument("old")
@click.option("--by", "new", required=True, help="The memory that replaces OLD.")
@json_option
@common
def supersede(app: App, old: str, new: str, as_json: bool) -> None:
    """OLD steps aside for NEW: out of MEMORY.md and default search, never deleted (search --all
    finds it)."""
    from memstore.core.teams import TeamMemory

    try:
        result = app.store.supersede(old, by=new)
    # a team memory: its change is a pull request on the team's repository
    except TeamMemory as team_memory:
        from memstore.frontends.commands.team import propose

        path = team_memory.path
        propose(app, f"supersede {path} by {new}",
                lambda: app.store.teams.propose_supersede(path, new), as_json)
        return
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(for_terminal(result.message))


@cli.command()
@click.argument("name")
@click.option("--why", required=True, help="Why it goes, in a few words (kept in its frontmatter).")
@json_option
@common
def forget(app: App, name: str, why: str, as_json: bool) -> None:
    """NAME steps aside into memory/archive/ with why: its text and history kept, search --all finds
    it."""
    from memstore.core.teams import TeamMemory

    try:
        result = app.store.forget(name, why=why)
    # a team memory: taking it out is a pull request on the team's repository
    except TeamMemory as team_memory:
        from memstore.frontends.commands.team import propose

        path = team_memory.path
        propose(app, f"take {path} out of team {team_memory.team}",
                lambda: app.store.teams.propose_forget(path, why), as_json)
        return
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(for_terminal(result.message))


@cli.command()
@click.argument("name", required=False)
@click.option("--ack", is_flag=True,
              help="Say you saw the deletions kept so far: status and the bundle stop mentioning "
                   "them (the copies stay in memory/archive/).")
@json_option
@common
def restore(app: App, name: str | None, ack: bool, as_json: bool) -> None:
    """Put NAME back where it was: a memory deleted outside memstore (or forgotten), kept in
    memory/archive/."""
    if ack == (name is not None):
        raise BadUsage("give a NAME to restore, or --ack",
                       hint="memstore status lists the deleted memories")
    if ack:
        from memstore.frontends.terminal import person_at_terminal

        # the notice is for the person: the agent may not silence it
        person_at_terminal("restore --ack")
        count = app.store.acknowledge_deletions()
        if as_json:
            emit_json({"acknowledged": count})
        else:
            click.echo(f"{count} deletion(s) acknowledged; the copies stay in memory/archive/")
        return
    assert name is not None
    result = app.store.restore(name)
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(for_terminal(result.message))


@cli.command()
@click.argument("name")
@json_option
@common
def show(app: App, name: str, as_json: bool) -> None:
    """One memory: where it is, its policy state, its problems and its text."""
    view = app.store.show(name).to_json()
    if as_json:
        emit_json(view)
        return
    body = view.pop("body")
    problems = view.pop("problems")
    history = view.pop("history", [])
    for key, value in view.items():
        if value is None or value == "" or value == []:
            continue
        shown = ((" -> " if key == "superseded_by" else ", ").join(map(str, value))
                 if isinstance(value, list) else str(value))
        click.echo(f"{key:16} {for_terminal(shown)}")
    for problem in problems:
        click.echo(f"{problem['level']:16} {for_terminal(problem['message'])}")
    # a team memory: its git log in the team's clone, newest first
    for at, item in enumerate(history):
        label = "added by" if item.get("added") else "history" if at == 0 else ""
        # the team's words (an author's name, a commit subject): as inert as its memories' text
        click.echo(for_terminal(f"{label:16} {item['date'][:10]} {inert_line(item['author'])}: "
                                f"{inert_line(item['subject'])} ({item['commit'][:10]})"))
    click.echo("")
    click.echo(for_terminal(body.rstrip()))


@cli.command()
@json_option
@common
def status(app: App, as_json: bool) -> None:
    """What the mirror holds: files by kind, problems, journal, mirror size."""
    view = app.store.status().to_json()
    # the person's files and the wiring against what the person accepted
    found = app.store.tamper_check()
    lines = app.store.tamper_lines(found)
    view["tamper"] = [{**item.to_json(), "said": line}
                      for item, line in zip(found, lines, strict=True)]
    waiting: dict[str, int] = {}
    # a lesson left unanswered is archived, unreviewed, after short_term_days
    for item in app.store.review():
        waiting[item.kind] = waiting.get(item.kind, 0) + 1
    view["review_waiting"] = waiting
    if as_json:
        emit_json(view)
        return
    click.echo(f"root      {view['root']}")
    for item, line in zip(found, lines, strict=True):
        label = "HELD" if item.state == "held" else "GONE" if item.state == "gone" else "accepted"
        click.echo(f"{label:9} {for_terminal(line)}")
    click.echo(f"mirror    {view['mirror']} ({view['mirror_bytes']:,} bytes)")
    click.echo(f"events    {view['events']} journal events, {view['t2_touched']} memories touched")
    unchecked = (f"; {view['unchecked']} files' dates and secrets not checked yet "
                 "(memstore lint checks them)" if view.get("unchecked") else "")
    click.echo(f"problems  {view['errors']} errors, {view['warnings']} warnings "
               f"(memstore lint){unchecked}")
    deleted = view.get("deleted") or {}
    if deleted.get("count"):
        names = (", ".join(k["was"] for k in deleted["kept"][:5])
                 + (", ..." if deleted["count"] > 5 else ""))
        many = f"{deleted['count']} memories" if deleted["count"] != 1 else "1 memory"
        click.echo(for_terminal(f"deleted   {many} deleted outside memstore since "
                                f"{deleted['since']}, kept in memory/archive/: {names} "
                                "(memstore restore NAME puts one back; memstore restore --ack "
                                "stops this note)"))
    if waiting:
        said = ", ".join(f"{count} {kind}{'s' if count != 1 else ''}"
                         for kind, count in sorted(waiting.items()))
        aging = (f" (a lesson unanswered for {app.store.config.short_term_days} days is "
                 "archived unreviewed)" if waiting.get("lesson") else "")
        click.echo(f"review    {said} waiting for you: memstore review{aging}")
    click.echo(f"semantic  {semantic_line(view['semantic'])}")
    click.echo(f"pointers  {pointers_line(view.get('pointers') or {})}")
    if view.get("teams"):
        joined = ", ".join(f"{t['name']} ({t['memories']} memories, {t['lenses']} lenses)"
                           for t in view["teams"])
        click.echo(for_terminal("teams     " + joined + " (memstore team list)"))
    from memstore.life.lastrun import line as nightly_line

    click.echo(f"nightly   {nightly_line(view['nightly'])}")
    journal = view["journal"]
    click.echo(f"machine   {journal['this_machine']}  (this clone's journal identity)")
    if journal["flush_host"]:
        flushes = ("this machine flushes" if journal["this_machine_flushes"]
                   else "another machine flushes")
        click.echo(f"flushes   {journal['flush_host']!r} (flush_host in memstore.toml): {flushes}")
    for warning in journal["warnings"]:
        app.say(f"warning: {warning}")
    click.echo("")
    click.echo(table([{"kind": k, "files": v} for k, v in view["kinds"].items()],
                     ["kind", "files"]))
    if view.get("bands"):
        click.echo("")
        click.echo(table(view["bands"], ["band", "rows", "chars", "budget", "use"]))
    machines = journal["machines"]
    if len(machines) > 1 or machines[0]["events"]:
        click.echo("")
        rows = [{"machine": m["identity"] + (" (this one)" if m["this"] else ""),
                 "events": m["events"], "newest event": m["newest"] or "-",
                 "days ago": "-" if m["days_since"] is None else f"{m['days_since']:g}"}
                for m in machines]
        click.echo(table(rows, ["machine", "events", "newest event", "days ago"]))


def pointers_line(view: dict[str, Any]) -> str:
    """The prompt's pointers in one line: how many, and how many the agent then opened."""
    when = view.get("floor_measured")
    floor = (f"floor {view.get('floor')}" + (f" (measured {for_terminal(str(when)[:10])})" if when
                                             else " (not measured yet: the nightly tick does)"))
    if view.get("meaning_process"):
        floor += "; by words and meaning (its process is up)"
    elif view.get("meaning_wanted"):
        floor += ("; by words alone right now: the meaning process is not running (a session's "
                  "start or its next prompt starts it; runtime/state/meaning-server.log says why "
                  "one left)")
    if not view.get("pointers"):
        return f"none pushed in the last {view.get('days', 30)} days; {floor}"
    share = 100 * view["opened"] / view["pointers"]
    return (f"{view['pointers']} pushed in {view['sessions']} sessions over {view['days']} days, "
            f"{view['opened']} then opened in their session ({share:.0f}%); {floor}")


def semantic_line(view: dict[str, object]) -> str:
    if view["state"] == "off":
        return f"off ({view['switch']})"
    if view["state"] == "not installed":
        from memstore.meaning.embedding import EXTRA_HINT

        return f"FTS only (for meaning as well as words: {EXTRA_HINT})"
    embedded, searchable, waiting = (int(str(view[key])) for key in
                                     ("embedded", "searchable", "pending"))
    line = f"{embedded} of {searchable} files embedded ({view['model']})"
    if waiting:
        # a file found by its first part may still wait for its later ones: the counts overlap
        line += (f"; {waiting} file{'s have' if waiting != 1 else ' has'} parts still to embed, "
                 f"{max(searchable - embedded, 0)} of them no part yet " +
                 ("(a background pass is embedding them)" if view.get("background")
                  else "(the nightly tick embeds them; now: memstore embed)"))
    return line


@cli.command()
@json_option
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
@click.option("--band", type=click.Choice(["hot", "new", "cold", "archive", "superseded",
                                           "forgotten", "expired", "early"]),
              default=None, help="Only this band; forgotten, expired and early (outside "
              "valid_from/valid_until) are apart from superseded.")
@json_option
@common
def list_(app: App, band: str | None, as_json: bool) -> None:
    """T2 memories with their band, score and policy state, in rank order."""
    rows = [row.to_json() for row in app.store.list(band)]
    if as_json:
        emit_json(rows)
        return
    shown = [{**r, "score": f"{r['score']:.4f}",
              "pin": "pin" if r["pin"] and not r.get("team") else "",
              "name": f"{r['name']} (team {r['team']})" if r.get("team") else r["name"]}
             for r in rows]
    click.echo(table(shown, ["band", "score", "access_count", "stability", "pin", "name"],
                     ["band", "score", "reinf", "stability", "pin", "name"]))


# ------------------------------------------------------------ policy: touch / render / flush / tick


@cli.command()
@click.argument("path")
@click.option("--tool", default="Read", show_default=True, help="The tool the access came from.")
@click.option("--session", default=None, help="Session id to record with the event.")
@json_option
@common
def touch(app: App, path: str, tool: str, session: str | None, as_json: bool) -> None:
    """Record one access of a memory file, exactly as the hook does.

    Exit 1 if PATH is missing or is not a T2 memory file (where the hook would silently
    do nothing); exit 2 for a --tool that never reinforces.
    """
    result = app.store.touch(path, tool, session=session)
    if as_json:
        emit_json(result.to_json())
        return
    click.echo(f"{result.path}: {result.message}")


@cli.command()
@json_option
@common
def render(app: App, as_json: bool) -> None:
    """Regenerate MEMORY.md, MEMORY-archive.md and current-state.md from the mirror."""
    result = app.store.render()
    if as_json:
        emit_json(result.to_json())
        return
    click.echo(result.summary())


@cli.command()
@click.option("--force", is_flag=True, help="Include files modified in the last few minutes.")
@json_option
@common
def flush(app: App, force: bool, as_json: bool) -> None:
    """Fold policy state from the mirror into each memory file's frontmatter."""
    report = app.store.flush(force)
    if as_json:
        emit_json(report.to_json())
        return
    for rel, why in report.refused:
        app.say(f"left alone: {rel}: {why}")
    click.echo(report.summary())

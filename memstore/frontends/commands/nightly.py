"""The nightly cycle and the live watcher: tick, wake, meditate, watch."""

from __future__ import annotations

import os

import click

from memstore.api.store import Store
from memstore.frontends.cligroup import App, cli, common, emit_json, json_option, table

# ---------------------------------------------------------------- tick / wake / meditate


@cli.command()
@click.option("--commit", is_flag=True,
              help="Commit exactly the files tick wrote or moved (root in a git work tree).")
@json_option
@common
def tick(app: App, commit: bool, as_json: bool) -> None:
    """The nightly tick: sync and lint; unless a memory file changed in the last few minutes,
    also flush, roll old short-term facts and dream entries into archive/, and render.
    Writes the cue (runtime/state/cue.json) and the status file."""
    from memstore.life.cue import PER_KIND

    status = app.store.tick(commit=commit)
    if as_json:
        emit_json(status.to_json())
        return
    click.echo(status.summary())
    for kind, count in status.cue_kinds.items():
        capped = f" (the {PER_KIND} most pressing in the cue)" if count > PER_KIND else ""
        click.echo(f"  cue: {count} {kind}{capped}")
    if status.committed is not None:
        click.echo(f"  git: {status.committed}")


@cli.command()
@click.option("--model-cmd", default=None, metavar="CMD",
              help="The model command, split like a shell would; prompt on stdin, answer on stdout "
                   "[default: claude -p with no tools and no MCP servers]: the model only writes "
                   "text.")
@click.option("--timeout", default=600.0, show_default=True,
              type=click.FloatRange(min=0, min_open=True),
              metavar="S", help="Seconds allowed for each of the two model calls.")
@click.option("--commit", is_flag=True,
              help="Commit exactly the entries wake wrote (root in a git work tree).")
@click.option("--verbose", "-v", is_flag=True,
              help="Kept for old cron lines: the one line saying why there is nothing to wake for "
              "is printed either way.")
@json_option
@common
def wake(app: App, model_cmd: str | None, timeout: float, commit: bool, verbose: bool,
         as_json: bool) -> None:
    """The nightly dream and meditation sit, when the tick's cue has items.

    A dream per scope (the person-wide facts, each project's own) over the cue and the recent
    short-term facts, and a sit on the meditation object the rotation picks. Each answer becomes a
    dream-journal entry; the dream's proposed memory changes go to a short-term note and are never
    applied. No cue, or nothing in it: no model call, exit 0. A failed call: nothing written, the
    cue kept, exit 1.
    """
    result = app.store.wake(model_cmd, timeout, commit=commit)
    if as_json:
        emit_json(result.to_json())
        return
    if not result.ran:
        click.echo(result.reason)  # one line, -v or not: a quiet night is a night in cron's log
        return
    for note in result.notes:
        app.say(note)
    for dream in result.dreams or [str(result.dream)]:  # str(): as the f-string below shows it
        click.echo(f"dream       {dream}")
    if result.meditation:
        click.echo(f"meditation  {result.meditation}  ({result.object}, {result.shelf} shelf)")
    for note in result.proposal_notes or ([result.proposals] if result.proposals else []):
        click.echo(f"proposals   {note}  (not applied; memstore review answers them)")
    if result.commit:
        click.echo(f"git         {result.commit}")


@cli.command()
@click.option("--next", "show_next", is_flag=True,
              help="Print the object the next sit takes, and why (the default).")
@json_option
@common
def meditate(app: App, show_next: bool, as_json: bool) -> None:
    """The meditation rotation: which object the next sit takes, and why (the sit itself runs in
    `wake`)."""
    choice = app.store.meditate_next()
    if as_json:
        emit_json(choice.to_json())
        return
    if choice.object is None:
        click.echo("next: none (no usable object in meditations/)")
    else:
        click.echo(f"next: {choice.object} ({choice.shelf} shelf, score {choice.score:.4f}) "
                   f"on {choice.date}")
    recent = ", ".join(f"{r['object']} ({r['shelf'] or '?'}, {r['date']})" for r in choice.recent)
    click.echo(f"last sits: {recent or 'none yet'}")
    for rule in choice.rules:
        click.echo(f"rule: {rule}")
    if choice.candidates:
        rows = [{**c.to_json(), "last_used": c.last_used or "never",
                 "days": "" if c.days is None else c.days, "factor": f"{c.factor:.4f}",
                 "score": f"{c.score:.4f}", "excluded_by": c.excluded_by or ""}
                for c in choice.candidates]
        click.echo("")
        click.echo(table(rows, ["name", "shelf", "weight", "last_used", "days", "factor", "score",
                                "excluded_by"],
                         ["object", "shelf", "weight", "last used", "days", "factor", "score",
                          "excluded by"]))
    for item in choice.skipped:
        app.say(f"skipped {item['path']}: {item['reason']}")
    for note in choice.notes:
        app.say(note)


# ---------------------------------------------------------------- watch


@cli.command()
@click.option("--debounce", default=1.0, show_default=True, metavar="S",
              type=click.FloatRange(min=0),
              help="Seconds of quiet after a change before the mirror and MEMORY.md catch up.")
@click.option("--rescan", default=300.0, show_default=True, metavar="S",
              type=click.FloatRange(min=0, min_open=True),
              help="Seconds between full rescans, with or without events.")
@common
def watch(app: App, debounce: float, rescan: float) -> None:
    """Keep the mirror and MEMORY.md up to date as the files change, until Ctrl-C or SIGTERM.

    One watcher per root: a second one exits 1 naming the first one's pid.
    """
    import threading

    from memstore.frontends.watch import serve, stop_on_signals

    pinned = app.now if (app.now_opt or os.environ.get("MEMSTORE_NOW", "").strip()) else None
    # a daemon: the real clock
    store = Store(app.root, pinned, notify=app.say, progress=app.progress("rebuild"))
    stop = threading.Event()
    with stop_on_signals(stop):
        serve(store, stop, debounce=debounce, rescan=rescan, log=click.echo,
              warn=lambda line: app.say(f"watch: {line}"))
    click.echo("stopped")

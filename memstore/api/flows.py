"""The order of every flow that takes more than one step, written once: sync, rebuild, embedding,
flush, the nightly tick, the debrief, the wake, an edit the mirror follows (a memory superseded,
forgotten or restored), and a team pull.

Each flow opens the mirror once (memstore.api.mirroring.Mirror, at one instant of the clock),
lists the tree at most once and hands that listing down (memstore.mirror.changes), and calls
the steps of the layers below with the values they need: the root, the config, the clock, the
connection, the listing. No step is handed the Store or a way back into it.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from memstore.api import naming, queries
from memstore.api.mirroring import Mirror, NotFlushHost, flush_refusal, flush_warnings
from memstore.core import pointers, session_end, tamper, tamper_lines
from memstore.core.agent_root import locate
from memstore.core.errors import BadUsage, MemstoreError
from memstore.core.logs import rotate
from memstore.core.results import Restored, Retired
from memstore.core.timeutil import fmt, parse_now
from memstore.life import capture, lastrun, nightly
from memstore.life import wake as waking
from memstore.life.date_stamping import date_written
from memstore.life.rolling import Rolled, roll_windows
from memstore.meaning.vectors import pending_count
from memstore.mirror import changes, semantic, stepping_aside
from memstore.mirror import embed_background as background
from memstore.mirror.flush import FlushReport, flush
from memstore.mirror.render import RenderResult, render
from memstore.mirror.sync import SyncReport, rebuild, sync_into, sync_under_lock
from memstore.mirror.views import lint_view
from memstore.mirror.walking import Walk
from memstore.team.clones import Pulled, pull

if TYPE_CHECKING:
    from memstore.api.state import RootState
    from memstore.core.results import DebriefResult, TickStatus, WakeResult
    from memstore.core.teams import Team
    from memstore.meaning.embedding import Embedder
    from memstore.meaning.vectors import EmbedReport

T = TypeVar("T")
Progress = Callable[[int, int], None]
LOGS = ("tick.log", "wake.log", "hook-errors.log", "embed-background.log", "meaning-server.log")


def rotate_logs(state: RootState) -> None:
    """The cron jobs' logs and the hook's, each under logs.LOG_LIMIT (one older copy beside)."""
    for name in LOGS:
        rotate(Path(state.paths.state) / name)


# ---------------------------------------------------------------- sync, rebuild, embedding


def sync(m: Mirror, full: bool = True, embed: bool = True) -> SyncReport:
    """A full walk or the quick folder check; then, on the same connection, a bounded embedding
    pass (the `semantic` extra)."""
    embedder = semantic.embedder_for(m.config, m.notify, required=False) if embed else None

    def run(conn: sqlite3.Connection) -> SyncReport:
        report = sync_under_lock(conn, m.root, m.config, m.progress, quick=not full, now=m.now)
        if embed:
            report.vectors = _embed_briefly(conn, m, embedder)
        return report

    return m.run(run)


def rebuild_mirror(m: Mirror) -> SyncReport:
    """A fresh mirror swapped in, then the bounded embedding pass on it."""
    report = rebuild(m.root, m.config, m.progress, now=m.now)
    assert report is not None  # only_if_unhealthy was not asked for
    embedder = semantic.embedder_for(m.config, m.notify, required=False)
    if embedder is not None:
        report.vectors = m.run(lambda conn: _embed_briefly(conn, m, embedder))
    return report


def _embed_briefly(conn: sqlite3.Connection, m: Mirror, embedder: Embedder | None
                   ) -> dict[str, Any] | None:
    if embedder is None:
        return None
    return semantic.embed_briefly(conn, m.root, m.paths.embed_lock, m.config, m.notify, embedder,
                                  m.config.embed_budget_s)


def embed(m: Mirror, budget_s: float | None, required: bool, progress: Progress | None
          ) -> EmbedReport | None:
    """`memstore embed`: a full sync, then every file without a current vector, on one
    connection."""
    embedder = semantic.embedder_for(m.config, m.notify, required)
    if embedder is None:
        return None
    background.stop(m.root)  # it lets the lock go after its round: this pass embeds everything
    with semantic.embed_lock(m.paths.embed_lock, m.config.lock_timeout_s):
        def run(conn: sqlite3.Connection) -> EmbedReport:
            sync_under_lock(conn, m.root, m.config, m.progress, now=m.now)
            return semantic.embed_all(conn, m.root, embedder, budget_s, progress)

        return m.run(run)


def embed_background(m: Mirror) -> EmbedReport | None:
    """`memstore embed --background`, the detached pass a sync starts: rounds until nothing waits or
    SIGTERM asks it to end. Each round opens the mirror afresh, so a rebuild swapped in meanwhile is
    the one written. None when meaning is off or another pass holds the lock."""
    embedder = semantic.embedder_for(m.config, m.notify, required=False)
    if embedder is None:
        return None
    with background.held(m.root, m.paths.embed_lock, embedder.key) as held:
        if held is None:
            return None
        while not held.asked:
            done = m.run(lambda conn: background.one_round(conn, m.root, embedder))
            held.add(done)
            if not done.pending or not done.parts:
                break
        held.total.pending = m.run(lambda conn: pending_count(conn, embedder.key))
        if held.asked:
            m.notify(f"background pass stopped after its round ({held.total.pending} files left): "
                     "another memstore process needed the embedding lock")
        return held.total


def _embed_all(conn: sqlite3.Connection, m: Mirror, embedder: Embedder) -> EmbedReport:
    """The night's pass over the whole backlog, on the tick's connection (just synced)."""
    background.stop(m.root)
    with semantic.embed_lock(m.paths.embed_lock, m.config.lock_timeout_s):
        return semantic.embed_all(conn, m.root, embedder, None)


# ------------------------------------------------------------ flush: one order of fold and follow


def _fold(conn: sqlite3.Connection, m: Mirror, tree: Walk, *, flush_too: bool, roll: bool,
          force: bool = False) -> tuple[SyncReport, FlushReport | None, Rolled]:
    """Under the mirror lock: sync so flush sees every change, flush, roll the windows, then let
    the mirror take in what flush rewrote and roll moved (the listing follows them, no walk)."""
    synced = sync_into(conn, m.root, m.config, m.progress, m.now, tree=tree)
    flushed = flush(conn, m.root, m.now, m.config, force) if flush_too else None
    rolled = roll_windows(m.root, m.now, m.config) if roll else Rolled()
    moved = [*(flushed.written if flushed else []),
             *(path for move in rolled.moves for path in move)]
    if moved:
        changes.follow(m.root, tree, moved)
        sync_into(conn, m.root, m.config, now=m.now, tree=tree)
    return synced, flushed, rolled


def flush_memories(m: Mirror, force: bool) -> FlushReport:
    """`memstore flush`: NotFlushHost on a clone memstore.toml's flush_host does not name."""
    refusal = flush_refusal(m.root, m.config)
    if refusal:
        raise NotFlushHost(refusal, hint="flush on that machine: the reads recorded here reach it "
                           "through the journal in git (or change flush_host in memstore.toml)")

    def run(conn: sqlite3.Connection) -> FlushReport:
        with m.lock():
            tree = changes.listing(m.root, m.config)
            flushed = _fold(conn, m, tree, flush_too=True, roll=False, force=force)[1]
        for line in flush_warnings(conn, m.root, m.config):
            m.notify(line)
        assert flushed is not None
        return flushed

    return m.run(run)


# ---------------------------------------------------------------- the nightly tick


def tick(state: RootState, commit: bool) -> TickStatus:
    """The nightly tick, step by step (Store.tick says what each does for the person)."""
    rotate_logs(state)
    m = state.mirror()  # one instant for every pass, even on the real clock
    ran_at = fmt(m.now)
    # before the walk, so that the sync takes in what came
    teams = nightly.pulled_lines(pull_each(m.root, m.config.teams))
    not_here = flush_refusal(m.root, m.config)  # another clone is the one that flushes
    embedder = semantic.embedder_for(m.config, m.notify, required=False)
    night = m.run(lambda conn: _night(conn, m, ran_at, not_here, embedder))
    for line in nightly.notices(night):
        m.notify(line)
    nightly.write_night_cue(m.root, ran_at, night, not_here)
    committed, failure = nightly.commit_night(m.root, ran_at, night) if commit else (None, None)
    # a hand edit is said once and accepted; a change made during a session stays held
    found = tamper.check(str(m.root))
    said = [tamper_lines.describe(str(m.root), item) for item in found]
    evidence = nightly.evidence(found, said)
    status = nightly.tick_status(ran_at, night, not_here, committed, evidence, teams)
    nightly.write_status(m.root, status)
    if failure is not None:
        raise failure
    return status


def _night(conn: sqlite3.Connection, m: Mirror, ran_at: str, not_here: str | None,
           embedder: Embedder | None) -> nightly.Night:
    """The tick's passes on its one connection, over its one listing of the tree."""
    with m.lock():
        tree = changes.listing(m.root, m.config)
        live = nightly.live_change(tree.files, m.now, m.config)
        # the agent's writing gains its absolute dates (not mid-session: it may be editing)
        dated = date_written(m.root) if live is None else []
        changes.follow(m.root, tree, dated)
        synced, flushed, rolled = _fold(conn, m, tree, flush_too=live is None and not_here is None,
                                        roll=live is None)
    night = nightly.Night(live, synced, flushed, rolled, dated=dated)
    # before render, which marks the stale ones
    fresh = nightly.stale_items(conn, m.root, m.now, ran_at, m.notify)
    if live is None:
        night.rendered = render(conn, m.root, m.now, m.config)
    night.problems = lint_view(conn, m.root, tree)
    night.found = nightly.findings(conn, m.root, m.now, m.config, fresh)
    # the prompt's pointers: the floor, measured on prompts nothing here answers
    pointers.measure_floor(conn, str(m.root), fmt(m.now), m.now.timestamp())
    # with many machines: nobody, or more than one, flushes
    night.warnings = flush_warnings(conn, m.root, m.config)
    for line in night.warnings:
        m.notify(line)
    if dated:
        m.notify(f"dated the relative dates in {len(set(dated))} memory file(s) the agent wrote")
    if embedder is not None:  # the night works the backlog off in full; a sync embeds for seconds
        night.embedded = _embed_all(conn, m, embedder)
    return night


def pull_each(root: Path, teams: tuple[Team, ...] | list[Team]
              ) -> list[tuple[str, Pulled | MemstoreError]]:
    """Fast-forward each team's clone: what each pull did, or why it could not run."""
    results: list[tuple[str, Pulled | MemstoreError]] = []
    for team in teams:
        try:
            results.append((team.name, pull(root, team)))
        except MemstoreError as exc:  # a clone's config memstore refuses to run, git missing, ...
            results.append((team.name, exc))
    return results


# ---------------------------------------------------------------- the debrief and the wake


def debrief(state: RootState, transcript: str | os.PathLike[str] | None, commit: bool,
            cwd: str | None) -> DebriefResult:
    """The end-of-session debrief: sync, the transcript's lessons, lint and render, (commit)."""
    m = state.mirror()

    def run(conn: sqlite3.Connection) -> tuple[SyncReport, capture.Captured, list[dict[str, str]],
                                               RenderResult]:
        with m.lock():  # first, so the report says what the session itself added
            tree = changes.listing(m.root, m.config)
            synced = sync_into(conn, m.root, m.config, m.progress, m.now, tree=tree)
        captured = capture.lessons_from(m.root, m.config, m.now, transcript, cwd)
        if captured.written:  # lint and render see the lessons just written
            written = [p.relative_to(m.root).as_posix() for p in captured.written]
            changes.follow(m.root, tree, written)
            with m.lock():
                sync_into(conn, m.root, m.config, now=m.now, tree=tree)
        problems = queries.lint_rows(conn, m.root, tree=tree)
        return synced, captured, problems, render(conn, m.root, m.now, m.config)

    synced, captured, problems, rendered = m.run(run)
    committed = capture.commit_debrief(m.root, m.now, captured, rendered) if commit else None
    return capture.debrief_result(m.root, m.now, transcript, synced, captured, problems, rendered,
                                  committed)


def debrief_asked(stream: IO[Any], root: str | None, now: str | None, commit: bool, detach: bool
                  ) -> tuple[str | None, capture.Asked] | None:
    """`debrief --hook`'s steps before any mirror is opened: the payload read, the session's end
    recorded, the work handed to a detached process (detach). What is left for Store.debrief (with
    the root found, where a failure is logged), or None. Never raises."""
    if detach and session_end.hand_off(stream, root, now, commit):
        return None  # handed off, or a session memstore itself started: nothing left here
    if os.environ.get("MEMSTORE_HOOKS", "").lower() == "off":
        return None  # a session memstore itself started (the nightly wake): nothing to debrief
    located = locate(root, os.environ.get("MEMSTORE_ROOT"), session_end.working_folder())
    try:
        raw = session_end.read_hook_stdin(stream)
        if located is not None:
            session_end.session_ended(located, raw)
        asked = capture.hook_asks(located, raw)
    except Exception as exc:  # the session is ending: nothing may stop it
        hook_failed(located, exc)
        return None
    return None if asked is None else (located, asked)


def hook_clock(now: str | None) -> dt.datetime:
    """The clock --now (else $MEMSTORE_NOW) names, else the real one."""
    clock = now if now is not None else os.environ.get("MEMSTORE_NOW")
    if clock is not None and not clock.strip():
        raise BadUsage("--now is empty")
    return parse_now(clock)


def hook_failed(root: str | None, exc: Exception) -> None:
    session_end.log_failure(root, f"failed: {type(exc).__name__}: {exc}")


def wake(state: RootState, model_cmd: str | None, timeout: float, commit: bool) -> WakeResult:
    """The dream and sit; the mirror takes in the entries; (commit). A failure is recorded for
    status."""
    rotate_logs(state)
    m = state.mirror()
    try:
        result = waking.run(m.root, m.now, m.config, model_cmd=model_cmd, timeout=timeout,
                            commit=commit)
        if result.ran:
            sync(m)
            if commit:
                result = waking.commit_entries(m.root, m.now, result)
    except MemstoreError as exc:  # status says it daily until a wake works: cron shows no stderr
        lastrun.wake_failed(m.root, m.now, str(exc))
        raise
    lastrun.wake_failed(m.root, m.now, None)
    return result


# ---------------------------------------------------------------- an edit the mirror follows


def edited(m: Mirror, edit: Callable[[sqlite3.Connection], T]) -> T:
    """An edit of the memory on a caught-up mirror (a deletion not yet seen is kept first); then
    the mirror and MEMORY.md follow at once, so the agent's next session sees it."""
    def run(conn: sqlite3.Connection) -> T:
        sync_under_lock(conn, m.root, m.config, quick=True, now=m.now)
        done = edit(conn)
        sync_under_lock(conn, m.root, m.config, m.progress, now=m.now)
        render(conn, m.root, m.now, m.config)
        return done

    return m.run(run)


def caught_up(m: Mirror, step: Callable[[], T]) -> T:
    """A step on the files after a quick catch-up of the mirror (a deletion not seen yet is
    kept)."""
    def run(conn: sqlite3.Connection) -> T:
        sync_under_lock(conn, m.root, m.config, quick=True, now=m.now)
        return step()

    return m.run(run)


def render_index(m: Mirror) -> RenderResult:
    """MEMORY.md, MEMORY-archive.md and current-state.md from a mirror caught up in full."""
    return m.read(lambda conn: render(conn, m.root, m.now, m.config), catch_up="full")


def supersede(m: Mirror, old: str | os.PathLike[str], by: str | os.PathLike[str]) -> Retired:
    """Store.supersede: OLD steps aside for BY, and the mirror follows."""
    names = naming.key(m.root, old), naming.key(m.root, by)
    was, new, onward = edited(m, lambda conn: stepping_aside.supersede(conn, m.root, *names, m.now))
    end = f" (which leads on to {onward[-1]})" if onward else ""
    return Retired("superseded", was, was, new, onward,
                   f"{was}: superseded by {new}{end}; kept, found by search --all")


def forget(m: Mirror, memory: str | os.PathLike[str], why: str) -> Retired:
    """Store.forget: the memory steps aside into memory/archive/, and the mirror follows."""
    key = naming.key(m.root, memory)
    was, now_at = edited(m, lambda conn: stepping_aside.forget(conn, m.root, key, why, m.now))
    return Retired("forgotten", now_at, was,
                   message=f"{was}: forgotten, kept at {now_at}; found by search --all")


def restore(m: Mirror, memory: str | os.PathLike[str]) -> Restored:
    """Store.restore: a memory back from memory/archive/, and the mirror follows."""
    from memstore.mirror.deletions import restore as put_back

    kept = edited(m, lambda _conn: put_back(m.root, naming.key(m.root, memory)))
    return Restored(kept.was, kept.path, kept.how, f"{kept.was}: restored from {kept.path}")


def acknowledge_deletions(m: Mirror) -> int:
    """Store.acknowledge_deletions: the deletions kept so far marked seen (how many)."""
    from memstore.mirror.deletions import acknowledge

    return caught_up(m, lambda: acknowledge(m.root, fmt(m.now)))

"""The cheap, deterministic half of the nightly cycle: what `memstore tick` does beyond sync,
flush and render.

- `live_change`: is a person (or an agent) probably mid-session? Any memory file changed
  in the last `flush_quiet_minutes`. Then tick only scans (sync, lint) and writes the cue.
- `run_tick`: the whole tick, in order; its parts live beside it: window rolling
  (memstore.life.rolling), the cue for the wake (memstore.life.cue) and the commit of exactly
  the files it wrote (memstore.life.commits).

The tick is handed what it needs of the Store (TickHost, and the mirror runner), never the Store
itself. Every function takes `now` from its caller (the Store's clock); none reads the clock.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from memstore.core.config import Config
from memstore.core.errors import MemstoreError
from memstore.core.kinds import DERIVED
from memstore.core.locks import atomic_write
from memstore.core.timeutil import fmt
from memstore.hook import review
from memstore.life.commits import commit_paths
from memstore.life.cue import PER_KIND, Findings, cue, cue_items, dreamt_ids, write_cue
from memstore.life.dating import date_written
from memstore.life.rolling import Rolled, roll_windows
from memstore.mirror.semantic import Host

if TYPE_CHECKING:
    from memstore.core.results import TickStatus
    from memstore.meaning.vectors import EmbedReport
    from memstore.mirror.flush import FlushReport
    from memstore.mirror.render import RenderResult
    from memstore.mirror.sync import SyncReport

T = TypeVar("T")


class OnMirror(Protocol):
    """Runs `fn` on the live mirror (rebuilt first when missing, corrupt or foreign) and returns its result."""

    def __call__(self, fn: Callable[[sqlite3.Connection], T], /) -> T: ...


class TickHost(Host, Protocol):
    """What the tick needs of its caller (the Store): what an embedding pass needs (semantic.Host: the
    root, its paths and config, progress, notices), the clock, and the passes that are the caller's own
    (who flushes, embedding, the tamper check)."""

    @property
    def now(self) -> dt.datetime: ...
    def flush_refusal(self) -> str | None: ...
    def flush_warnings(self, conn: sqlite3.Connection | None = None) -> list[str]: ...
    def embed(self, *, required: bool = True) -> EmbedReport | None: ...
    def tamper_check(self) -> list[Any]: ...
    def tamper_lines(self, found: list[Any]) -> list[str]: ...


# ---------------------------------------------------------------- live-session awareness


def memory_files(root: Path) -> Iterable[tuple[str, int]]:
    """(root-relative path, mtime_ns) of every file a person or the agent writes.

    Markdown under memory/ (every depth, archives included), lenses/ and meditations/,
    and identity.md; not the derived files (tick writes those itself) nor runtime/.
    """
    from memstore.mirror.walking import walk

    for start in ("memory", "lenses", "meditations"):
        if not (root / start).is_dir():
            continue
        for rel, (mtime_ns, _size, _inode) in walk(root, start).files.items():
            if rel.startswith("memory/") and rel.count("/") == 1 and rel[len("memory/"):] in DERIVED:
                continue
            yield rel, mtime_ns
    try:
        yield "identity.md", (root / "identity.md").stat().st_mtime_ns
    except OSError:
        pass


def live_change(root: Path, now: dt.datetime, config: Config) -> tuple[str, float] | None:
    """The most recently changed memory file inside the quiet window, with its age in minutes; else None.

    The window is `flush_quiet_minutes` either side of now: a file stamped a little
    after now was written while the tick started (or on a host whose clock runs a
    little ahead), which says someone is at work just as well. A stamp far in the
    future says only that the clock is pinned or skewed, so it does not count.
    """
    window_ns = config.flush_quiet_minutes * 60 * 1_000_000_000
    now_ns = int(now.timestamp()) * 1_000_000_000
    best: tuple[int, str] | None = None
    for rel, mtime_ns in memory_files(root):
        if abs(now_ns - mtime_ns) < window_ns and (best is None or (mtime_ns, rel) > best):
            best = (mtime_ns, rel)
    if best is None:
        return None
    return best[1], (now_ns - best[0]) / 60e9


def describe_live(found: tuple[str, float] | None) -> str | None:
    """One phrase for a live_change result: which file, and when."""
    if found is None:
        return None
    rel, minutes = found
    if minutes < 0:
        return f"{rel} is stamped {-minutes:.0f} min after now"
    return f"{rel} changed {minutes:.0f} min ago"


def pull_teams(root: Path, config: Config) -> list[str]:
    """Fast-forward each joined team's clone (memstore.team.clones.pull): one line for each that did not
    simply come up to date (moved, unreachable, or left as it is because it cannot fast-forward)."""
    from memstore.team.clones import pull

    lines = []
    for team in config.teams:
        try:
            result = pull(root, team)
        except MemstoreError as exc:  # a clone whose config memstore refuses to run, git missing, ...
            lines.append(f"team {team.name}: not pulled: {exc}")
            continue
        if result.state != "current":
            lines.append(f"team {team.name}: {result.state}: {result.message}")
    return lines


def run_tick(store: TickHost, on_mirror: OnMirror, commit: bool = False) -> TickStatus:
    """Store.tick: the passes, the cue and the status file (see its docstring). `on_mirror` runs the
    mirror's passes on the live mirror (the Store's, which rebuilds a corrupt one and runs them again)."""
    from memstore.core.locks import file_lock
    from memstore.core.results import TickStatus
    from memstore.mirror.adoption import MENDING
    from memstore.mirror.flush import flush
    from memstore.mirror.freshness import tick_items, write_stale
    from memstore.mirror.render import render
    from memstore.mirror.sync import sync_into
    from memstore.mirror.views import lint_view, list_view

    now = store.now  # one instant for every pass, even on the real clock
    ran_at = fmt(now)
    teams = pull_teams(store.root, store.config)  # before the sync, so that it takes in what came
    live = live_change(store.root, now, store.config)
    not_here = store.flush_refusal()  # another clone is the one that flushes

    dated: list[str] = []  # memories whose relative dates the tick dated (life.dating.date_written)

    def run(conn: sqlite3.Connection) -> tuple[SyncReport, FlushReport | None, Rolled,
                                               RenderResult | None, list[dict[str, str]],
                                               Findings, list[str]]:
        flushed: FlushReport | None = None
        rolled = Rolled()
        rendered: RenderResult | None = None
        with file_lock(Path(store.paths.mirror_lock), timeout=store.config.lock_timeout_s):
            # what the agent wrote gains its absolute dates (not mid-session: the agent may be editing it)
            dated.extend(date_written(store.root) if live is None else [])
            synced = sync_into(conn, store.root, store.config, store.progress, now)
            if live is None:
                if not_here is None:
                    flushed = flush(conn, store.root, now, store.config)
                rolled = roll_windows(store.root, now, store.config)
                if (flushed and flushed.written) or rolled.moves:
                    sync_into(conn, store.root, store.config, now=now)  # the mirror follows the rewrites and moves
        # freshness: cited code gone, memories out of their dates (before render, which marks them)
        fresh, stale = tick_items(conn, store.root, now, review.answers(store.root), review.cue_id, PER_KIND,
                                  store.notify)
        write_stale(store.root, stale, ran_at)
        if live is None:
            rendered = render(conn, store.root, now, store.config)
        problems = lint_view(conn, store.root)
        rows = list_view(conn, store.root, now, store.config)
        found = cue_items(conn, store.root, now, store.config, rows)
        found.items += fresh
        for item in fresh:
            found.found[item["kind"]] = found.found.get(item["kind"], 0) + 1
        # with many machines: nobody, or more than one, flushes
        return synced, flushed, rolled, rendered, problems, found, store.flush_warnings(conn)

    synced, flushed, rolled, rendered, problems, found, flush_warnings = on_mirror(run)
    for line in flush_warnings:
        store.notify(line)
    if dated:
        store.notify(f"dated the relative dates in {len(set(dated))} memory file(s) the agent wrote")
    # The night is when the embedding backlog is worked off in full (the `semantic` extra):
    # a sync in the day embeds for a few seconds at most.
    embedded = store.embed(required=False)
    items = found.items
    for rel, why in rolled.failed:
        store.notify(f"could not roll {rel} into archive/ ({why}); left in place")
    if found.duplicates.exhausted:
        store.notify(f"near-duplicate check stopped after {found.duplicates.compared} comparisons; "
                    "the cue may miss some pairs")
    errors = sum(1 for p in problems if p["level"] == "error")
    warnings = len(problems) - errors
    for problem in problems:  # every night until the file is mended (memstore.mirror.adoption)
        if problem["message"].startswith(MENDING) and not problem["path"].startswith("teams/"):  # not the person's
            store.notify(f"{problem['path']}: {problem['message']}")
    did = {
        "sync": synced.summary(),
        "lint": f"{errors} error(s), {warnings} warning(s)",
        "flush": flushed.summary() if flushed else (f"skipped: {not_here}" if live is None else None),
        "rolled": rolled.paths,
        "render": rendered.summary() if rendered else None,
        "embed": embedded.summary() if embedded else None,
        "warnings": flush_warnings,
    }
    write_cue(store.root, cue(ran_at, live is not None, did, items, dreamt_ids(store.root)))

    committed: str | None = None
    failure: MemstoreError | None = None
    if commit:
        touched = [*dated, *(flushed.written if flushed else []), *(p for move in rolled.moves for p in move)]
        derived = [f"memory/{name}" for name in rendered.written] if rendered else []
        state = [Path(store.paths.cue).relative_to(store.root).as_posix()]
        try:
            committed = commit_paths(store.root, touched, f"memstore tick {ran_at}",
                                     tracked_only=[*derived, *state])
        except MemstoreError as exc:
            committed, failure = str(exc), exc
    skipped = "skipped (live session)"
    # the person's files and the wiring against what the person accepted: a hand edit is said once and
    # accepted; a change made during a session stays held; wiring gone is said every night until fixed
    tampered = store.tamper_check()
    evidence = [f"{'HELD' if f.state == 'held' else 'GONE' if f.state == 'gone' else 'accepted'}: {line}"
                for f, line in zip(tampered, store.tamper_lines(tampered), strict=True)]
    status = TickStatus(
        ran_at=ran_at,
        sync=synced.summary(),
        flush=flushed.summary() if flushed else (f"skipped: {not_here}" if live is None else skipped),
        render=rendered.summary() if rendered else skipped,
        lint_errors=errors,
        lint_warnings=warnings,
        live_session=live is not None,
        live_because=describe_live(live),
        rolled=len(rolled.moves),
        cue_items=len(items),
        cue_kinds=found.found,
        committed=committed,
        tamper=evidence,
        teams=teams,
    )
    target = Path(store.paths.tick_status)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(status.to_json(), indent=2) + "\n").encode())
    if failure is not None:
        raise failure
    return status

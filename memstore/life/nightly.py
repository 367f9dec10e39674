"""The nightly tick's own steps, beyond sync, flush and render: is someone at work, what the
team pulls said, what is stale, what goes into the cue, the commit, and the status file.

The tick's order is memstore.api.flows.tick; each step here takes the values it needs (the
root, the config, the clock, a connection, the command's listing of the root) and none reads
the clock. Its other parts live beside it: window rolling (memstore.life.rolling), the cue
for the wake (memstore.life.cue) and the commit of exactly the files it wrote
(memstore.life.commits).

A person (or an agent) is probably mid-session when any memory file changed in the last
`flush_quiet_minutes`: then the tick only scans (sync, lint) and writes the cue.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.agent_root import RootPaths
from memstore.core.config import Config
from memstore.core.errors import MemstoreError
from memstore.core.kinds import DERIVED
from memstore.core.locks import atomic_write
from memstore.core.results import TickStatus
from memstore.hook import review
from memstore.life.commits import commit_paths
from memstore.life.cue import PER_KIND, Findings, cue, cue_items, dreamt_ids, write_cue
from memstore.life.rolling import Rolled
from memstore.mirror.adoption import MENDING
from memstore.mirror.stale_refs import tick_items, write_stale
from memstore.mirror.views import list_view

if TYPE_CHECKING:
    from memstore.meaning.vectors import EmbedReport
    from memstore.mirror.flush import FlushReport
    from memstore.mirror.render import RenderResult
    from memstore.mirror.sync import SyncReport
    from memstore.team.clones import Pulled

SKIPPED = "skipped (live session)"
PERSON_FOLDERS = ("memory/", "lenses/", "meditations/")


@dataclass
class Night:
    """What the tick's passes on the mirror did, for the cue and the status file."""

    live: tuple[str, float] | None
    synced: SyncReport
    flushed: FlushReport | None = None
    rolled: Rolled = field(default_factory=Rolled)
    rendered: RenderResult | None = None
    problems: list[dict[str, str]] = field(default_factory=list)
    found: Findings | None = None
    warnings: list[str] = field(default_factory=list)
    dated: list[str] = field(default_factory=list)  # memories whose relative dates the tick dated
    embedded: EmbedReport | None = None


# ---------------------------------------------------------------- live-session awareness


def memory_files(files: Mapping[str, tuple[int, int, int]]) -> Iterator[tuple[str, int]]:
    """(root-relative path, mtime_ns) of every file a person or the agent writes, from the listing.

    Markdown under memory/ (every depth, archives included), lenses/ and meditations/,
    and identity.md; not the derived files (tick writes those itself) nor runtime/.
    """
    for rel, (mtime_ns, _size, _inode) in files.items():
        if rel == "identity.md":
            yield rel, mtime_ns
        elif rel.startswith(PERSON_FOLDERS):
            if rel.count("/") == 1 and rel.startswith("memory/") and rel[7:] in DERIVED:
                continue
            yield rel, mtime_ns


def live_change(files: Mapping[str, tuple[int, int, int]], now: dt.datetime, config: Config
                ) -> tuple[str, float] | None:
    """The most recently changed memory file inside the quiet window, with its age in minutes;
    else None.

    The window is `flush_quiet_minutes` either side of now: a file stamped a little
    after now was written while the tick started (or on a host whose clock runs a
    little ahead), which says someone is at work just as well. A stamp far in the
    future says only that the clock is pinned or skewed, so it does not count.
    """
    window_ns = config.flush_quiet_minutes * 60 * 1_000_000_000
    now_ns = int(now.timestamp()) * 1_000_000_000
    best: tuple[int, str] | None = None
    for rel, mtime_ns in memory_files(files):
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


def pulled_lines(pulled: Iterable[tuple[str, Pulled | MemstoreError]]) -> list[str]:
    """One line for each team whose pull did not simply come up to date (moved, unreachable, or
    left as it is because it cannot fast-forward, or not pulled at all)."""
    lines = []
    for name, result in pulled:
        if isinstance(result, MemstoreError):  # a clone's config memstore refuses, git missing
            lines.append(f"team {name}: not pulled: {result}")
        elif result.state != "current":
            lines.append(f"team {name}: {result.state}: {result.message}")
    return lines


# ---------------------------------------------------------------- what the night found


def stale_items(conn: sqlite3.Connection, root: Path, now: dt.datetime, ran_at: str,
                notify: Callable[[str], None]) -> list[dict[str, Any]]:
    """Cited code gone and memories out of their dates, as cue items; stale.json written for
    render."""
    answered = review.answers(root)
    fresh, stale = tick_items(conn, root, now, answered, review.cue_id, PER_KIND, notify)
    write_stale(root, stale, ran_at)
    return fresh


def findings(conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config,
             fresh: list[dict[str, Any]]) -> Findings:
    """The cue's items: what the memories' ranks and the short-term window show, and `fresh`."""
    found = cue_items(conn, root, now, config, list_view(conn, root, now, config))
    found.items += fresh
    for item in fresh:
        found.found[item["kind"]] = found.found.get(item["kind"], 0) + 1
    return found


def notices(night: Night) -> list[str]:
    """What the person hears of the night besides the status: files left in place, a comparison
    cut short, and each file the mirror mends every night until it is mended by hand."""
    lines = [f"could not roll {rel} into archive/ ({why}); left in place"
             for rel, why in night.rolled.failed]
    if night.found is not None and night.found.duplicates.exhausted:
        compared = night.found.duplicates.compared
        lines.append(f"near-duplicate check stopped after {compared} comparisons; "
                     "the cue may miss some pairs")
    for problem in night.problems:  # memstore.mirror.adoption; a team's file is not the person's
        if problem["message"].startswith(MENDING) and not problem["path"].startswith("teams/"):
            lines.append(f"{problem['path']}: {problem['message']}")
    return lines


def lint_counts(night: Night) -> tuple[int, int]:
    """(errors, warnings) among the night's lint problems."""
    errors = sum(1 for p in night.problems if p["level"] == "error")
    return errors, len(night.problems) - errors


def flush_said(night: Night, not_here: str | None) -> str | None:
    """The flush's line: its summary, why it was skipped, or None in a live session."""
    if night.flushed is not None:
        return night.flushed.summary()
    return f"skipped: {not_here}" if night.live is None else None


def write_night_cue(root: Path, ran_at: str, night: Night, not_here: str | None) -> None:
    """runtime/state/cue.json: what the tick did and what the wake should look at."""
    errors, warnings = lint_counts(night)
    assert night.found is not None
    did = {
        "sync": night.synced.summary(),
        "lint": f"{errors} error(s), {warnings} warning(s)",
        "flush": flush_said(night, not_here),
        "rolled": night.rolled.paths,
        "render": night.rendered.summary() if night.rendered else None,
        "embed": night.embedded.summary() if night.embedded else None,
        "warnings": night.warnings,
    }
    write_cue(root, cue(ran_at, night.live is not None, did, night.found.items, dreamt_ids(root)))


def commit_night(root: Path, ran_at: str, night: Night) -> tuple[str, MemstoreError | None]:
    """Commit exactly the files the tick wrote or moved: (what git said, the failure to raise
    later)."""
    touched = [*night.dated, *(night.flushed.written if night.flushed else []),
               *(p for move in night.rolled.moves for p in move)]
    derived = [f"memory/{name}" for name in night.rendered.written] if night.rendered else []
    state = [Path(RootPaths(root).cue).relative_to(root).as_posix()]
    try:
        said = commit_paths(root, touched, f"memstore tick {ran_at}",
                            tracked_only=[*derived, *state])
        return said, None
    except MemstoreError as exc:
        return str(exc), exc


def evidence(found: list[Any], lines: list[str]) -> list[str]:
    """The tamper check's findings as the status says them: held, gone or accepted."""
    label = {"held": "HELD", "gone": "GONE"}
    return [f"{label.get(f.state, 'accepted')}: {line}"
            for f, line in zip(found, lines, strict=True)]


def tick_status(ran_at: str, night: Night, not_here: str | None, committed: str | None,
                tamper: list[str], teams: list[str]) -> TickStatus:
    """The tick's record (returned, and written as runtime/state/tick-status.json)."""
    errors, warnings = lint_counts(night)
    assert night.found is not None
    return TickStatus(
        ran_at=ran_at,
        sync=night.synced.summary(),
        flush=flush_said(night, not_here) or SKIPPED,
        render=night.rendered.summary() if night.rendered else SKIPPED,
        lint_errors=errors,
        lint_warnings=warnings,
        live_session=night.live is not None,
        live_because=describe_live(night.live),
        rolled=len(night.rolled.moves),
        cue_items=len(night.found.items),
        cue_kinds=night.found.found,
        committed=committed,
        tamper=tamper,
        teams=teams,
    )


def write_status(root: Path, status: TickStatus) -> None:
    target = Path(RootPaths(root).tick_status)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(status.to_json(), indent=2) + "\n").encode())

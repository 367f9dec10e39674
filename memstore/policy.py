"""Policy in one place: the arithmetic, the score, and the one function that records a touch.

Standard library only: `record_touch` is the hook's whole job, and `memstore touch`
and `Store.touch` call the very same function, so what they show is what the hook does.

    score = (access_count + 1) * exp(-days_since(last_accessed) / stability) + w * importance

Two timestamps, never one: every touch refreshes last_accessed (recency), while
access_count and stability move only when the last reinforcement is at least
`spacing_hours` old (storage strength). Massed re-reads therefore move a memory to
the front without pretending it became durable.

The state of a T2 file is its frontmatter's policy fields (the checkpoint a flush
wrote), then every journal event newer than that checkpoint, applied in (ts, id)
order through the spacing gate. The hook applies its one event incrementally, which
gives the same state whenever events arrive in time order; when one arrives out of
order the path is recomputed from scratch, so the mirror always equals a replay.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import sqlite3

from memstore import journal
from memstore.agent_root import db_file
from memstore.config import Config
from memstore.kinds import REINFORCING_TOOLS, T2_NAME, WRITE_TOOLS  # noqa: F401  (re-exported)
from memstore.timeutil import days_between, fmt, parse_when
from memstore.transactions import hook_connect, transaction

BATCH = 500


class PolicyState:
    """Policy state of one memory. A plain class: dataclasses are too slow to import on the hook's path."""

    __slots__ = ("access_count", "last_accessed", "last_reinforced", "stability")

    def __init__(
        self,
        access_count: int,
        stability: float,
        last_accessed: dt.datetime | None,
        last_reinforced: dt.datetime | None,
    ) -> None:
        self.access_count = access_count
        self.stability = stability
        self.last_accessed = last_accessed
        self.last_reinforced = last_reinforced

    def _key(self) -> tuple[object, ...]:
        return (self.access_count, self.stability, self.last_accessed, self.last_reinforced)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PolicyState) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "PolicyState(access_count={!r}, stability={!r}, last_accessed={!r}, last_reinforced={!r})".format(
            *self._key()
        )


def baseline(
    access_count: int | None,
    stability: float | None,
    last_accessed: dt.datetime | None,
    last_reinforced: dt.datetime | None,
    config: Config,
) -> PolicyState:
    """The state written in a file's frontmatter, with defaults for what is missing."""
    return PolicyState(
        access_count=access_count if access_count is not None else 0,
        stability=stability if stability is not None else config.initial_stability,
        last_accessed=last_accessed,
        last_reinforced=last_reinforced,
    )


def apply_touch(state: PolicyState, when: dt.datetime, config: Config) -> PolicyState:
    """One Read/Edit/Write/MultiEdit at `when`, through the spacing gate."""
    last_accessed = when if state.last_accessed is None else max(state.last_accessed, when)
    gate_open = state.last_reinforced is None or (
        (when - state.last_reinforced).total_seconds() >= config.spacing_hours * 3600
    )
    if not gate_open:
        return PolicyState(state.access_count, state.stability, last_accessed, state.last_reinforced)
    return PolicyState(
        access_count=state.access_count + 1,
        # Rounded so the value a flush writes into the file reads back as exactly this state.
        stability=round(min(state.stability * config.stability_growth, config.stability_cap), 4),
        last_accessed=last_accessed,
        last_reinforced=when,
    )


def score(
    access_count: int,
    stability: float,
    last_accessed: dt.datetime,
    importance: float,
    now: dt.datetime,
    config: Config,
) -> float:
    """The retrieval score. Time before last_accessed (a future stamp) counts as zero days."""
    return score_days(access_count, stability, days_between(last_accessed, now), importance, config)


def score_days(access_count: int, stability: float, days: float, importance: float, config: Config) -> float:
    """The score from the days since last access (render computes those in SQL, for speed)."""
    days = max(days, 0.0)
    stability = stability if stability > 0 else config.initial_stability
    return (access_count + 1) * math.exp(-days / stability) + config.importance_weight * importance


def _state_row(path: str, state: PolicyState, touches: int) -> tuple[object, ...]:
    return (
        path,
        state.access_count,
        state.stability,
        fmt(state.last_accessed) if state.last_accessed else None,
        fmt(state.last_reinforced) if state.last_reinforced else None,
        touches,
    )


_UPSERT = (
    "INSERT INTO policy (path, access_count, stability, last_accessed, last_reinforced, touches) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET access_count=excluded.access_count, "
    "stability=excluded.stability, last_accessed=excluded.last_accessed, "
    "last_reinforced=excluded.last_reinforced, touches=excluded.touches"
)


def recompute_policy(conn: sqlite3.Connection, paths: list[str], config: Config) -> None:
    """Recompute the policy rows of `paths` from the files table and the events table."""
    for start in range(0, len(paths), BATCH):
        chunk = paths[start : start + BATCH]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            "SELECT path, kind, fm_access_count, fm_stability, fm_last_accessed, fm_last_reinforced "
            f"FROM files WHERE path IN ({marks})",
            chunk,
        ).fetchall()
        present = {r[0]: r for r in rows if r[1] == "t2"}
        gone = [p for p in chunk if p not in present]
        if gone:
            conn.executemany("DELETE FROM policy WHERE path = ?", [(p,) for p in gone])
        events: dict[str, list[str]] = {}
        for path, ts in conn.execute(
            f"SELECT path, ts FROM events WHERE path IN ({marks}) ORDER BY path, ts, id", chunk
        ):
            events.setdefault(path, []).append(ts)
        out = []
        for path, row in present.items():
            checkpoint = row[4]
            state = baseline(row[2], row[3], parse_when(row[4]), parse_when(row[5]), config)
            applied = 0
            for ts in events.get(path, ()):
                if checkpoint is not None and ts <= checkpoint:
                    continue  # folded into the file by an earlier flush
                when = parse_when(ts)
                if when is not None:
                    state = apply_touch(state, when, config)
                    applied += 1
            out.append(_state_row(path, state, applied))
        conn.executemany(_UPSERT, out)


class TouchResult:
    """What one touch did. (A plain class: this module is on the hook's path.)"""

    __slots__ = ("applied", "message", "recorded", "rel")

    def __init__(self, recorded: bool, applied: bool, rel: str | None, message: str) -> None:
        self.recorded = recorded  # a journal line was written
        self.applied = applied  # the mirror was updated now (else the next sync folds it in)
        self.rel = rel
        self.message = message


def memory_rel(root: str | os.PathLike[str], file_path: str, cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The root-relative path of a T2 memory file, or None if the path is anything else.

    The real path is used (symlinks and `..` resolved), so a link inside memory/ that
    points elsewhere is not a memory, and a path that wanders out and back in is.
    """
    if not file_path or "\x00" in file_path:
        return None
    candidate = os.path.join(cwd or os.getcwd(), file_path)  # an absolute file_path wins
    try:
        real = os.path.realpath(candidate)
        real_memory = os.path.join(os.path.realpath(root), "memory")
    except (OSError, ValueError):
        return None
    folder, name = os.path.split(real)
    if folder != real_memory or not T2_NAME.match(name):
        return None
    return f"memory/{name}"


def record_touch(
    root: str | os.PathLike[str],
    file_path: str,
    tool: str,
    now: dt.datetime,
    config: Config,
    *,
    session: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    lock_budget_ms: int | None = None,
    written: bool = False,
) -> TouchResult:
    """Record one access: a journal line first, then one SQLite transaction.

    The journal line lands even when the mirror is locked past the budget, missing or
    broken; the next sync folds it in. Nothing here raises for a locked database.
    """
    if tool not in REINFORCING_TOOLS:
        return TouchResult(False, False, None, f"{tool} does not reinforce (only {', '.join(REINFORCING_TOOLS)})")
    rel = memory_rel(root, file_path, cwd)
    if rel is None:
        return TouchResult(False, False, None, f"not a T2 memory file under {root}/memory: {file_path}")
    event = journal.new_event(rel, tool, now, session)
    journal.append(root, event)
    db = db_file(root)
    if not os.path.exists(db):
        return TouchResult(True, False, rel, "journaled; the mirror does not exist yet (next sync folds it in)")
    budget = config.hook_lock_budget_ms if lock_budget_ms is None else lock_budget_ms
    try:
        conn = hook_connect(db, budget)
    except sqlite3.Error as exc:
        return TouchResult(True, False, rel, f"journaled; mirror not opened ({exc})")
    try:
        with transaction(conn):
            apply_event(conn, event, config)
            if written:  # the agent changed the file: the next quick sync re-reads it
                conn.execute("INSERT OR IGNORE INTO dirty (path) VALUES (?)", (rel,))
            # The offset is not advanced: sync re-reads this line and skips it by id.
        return TouchResult(True, True, rel, "reinforced")
    except sqlite3.Error as exc:
        return TouchResult(True, False, rel, f"journaled; mirror busy or unusable ({exc})")
    finally:
        conn.close()


def mark_dirty(root: str | os.PathLike[str], rel: str, config: Config) -> bool:
    """Note that the agent wrote `rel` (root-relative), so the next quick sync re-reads it."""
    db = db_file(root)
    if not os.path.exists(db):
        return False
    budget = config.hook_lock_budget_ms
    try:
        conn = hook_connect(db, budget)
        try:
            conn.execute("INSERT OR IGNORE INTO dirty (path) VALUES (?)", (rel,))
        finally:
            conn.close()
    except sqlite3.Error:
        return False  # the next full sync finds the change anyway
    return True


def apply_event(conn: sqlite3.Connection, event: dict[str, str | None], config: Config) -> None:
    """Insert one event and bring its path's policy row up to date (caller holds a transaction)."""
    if not journal.insert_event(conn, event):
        return
    path = str(event["path"])
    row = conn.execute(
        "SELECT access_count, stability, last_accessed, last_reinforced, touches FROM policy WHERE path = ?", (path,)
    ).fetchone()
    if row is None:
        recompute_policy(conn, [path], config)  # known file not yet in policy, or not synced yet
        return
    when = parse_when(event["ts"])
    last = parse_when(row[2])
    if when is None or (last is not None and when < last):
        recompute_policy(conn, [path], config)  # out of order: only a full replay is exact
        return
    state = apply_touch(PolicyState(row[0], row[1], last, parse_when(row[3])), when, config)
    conn.execute(_UPSERT, _state_row(path, state, row[4] + 1))

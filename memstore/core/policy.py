"""Policy in one place: the arithmetic, the score, and the one function that records a touch.

Standard library only: `record_touch` is the hook's whole job, and `memstore touch`
and `Store.touch` call the very same function, so what they show is what the hook does.

    score = (access_count + 1) * exp(-days_since(last_accessed) / stability) + w * importance

Two timestamps, never one: every touch refreshes last_accessed (recency), while
access_count and stability move only when the last reinforcement is at least
`spacing_hours` old (storage strength). Massed re-reads therefore move a memory to
the front without pretending it became durable.

The state of a T2 file is a replay: a starting state, then every journal event for
it, in (ts, id) order, through the spacing gate. The journal is never pruned (it
travels in git), so the starting state is the one thing the file must keep:

- `policy_base` in the frontmatter, once a flush has written one: "AC STABILITY
  LAST_ACCESSED LAST_REINFORCED THROUGH" ("-" for none). The file's own access_count,
  stability and last_* are then only the last flush's result, for people and for
  harnesses without memstore; the mirror recomputes them from the base and the whole
  journal, so an event that reaches this machine after a flush (another machine's
  read, pulled late) still counts, in its place in time, and none counts twice.
- Without it (a file no flush of this version has touched): the policy fields as
  written, with every event up to their last_accessed taken as already in them (how
  flushes before policy_base checkpointed). The first flush writes exactly that as the
  file's policy_base, so its state does not move.

`THROUGH` is that old cut: events at or before it are inside the base. A base written
for a file that never had policy fields has none, and every event counts.

The hook applies its one event incrementally, which gives the same state whenever
events arrive in time order; when one arrives out of order the path is recomputed
from the base, so the mirror always equals a replay.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import sqlite3

from memstore.core import journal, statements
from memstore.core.agent_root import db_file
from memstore.core.config import Config
from memstore.core.kinds import REINFORCING_TOOLS, T2_NAME, WRITE_TOOLS  # noqa: F401  (re-exported)
from memstore.core.timeutil import days_between, fmt, parse_when
from memstore.core.toolpath import Resolved, reinforces, resolve
from memstore.core.transactions import hook_connect, transaction

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    from collections.abc import Iterable

BATCH = 500


class PolicyState:
    """Policy state of one memory. A plain class: dataclasses are too slow to import on the hook's
    path."""

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
        return (
            "PolicyState(access_count={!r}, stability={!r}, last_accessed={!r}, "
            "last_reinforced={!r})"
        ).format(*self._key())


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


def _num(value: float) -> str:
    text = f"{round(value, 4):.4f}".rstrip("0").rstrip(".")
    return text if "." in text else text + ".0"


def format_base(state: PolicyState, through: str | None) -> str:
    """The policy_base text of a starting state (see the module docstring): one line, the same
    everywhere."""
    stamps = [fmt(w) if w is not None else "-"
              for w in (state.last_accessed, state.last_reinforced)]
    return " ".join([str(state.access_count), _num(state.stability), *stamps, through or "-"])


def parse_base(text: object) -> tuple[PolicyState, str | None] | None:
    """(starting state, through) from policy_base text; None when it is not one."""
    if not isinstance(text, str):
        return None
    parts = text.split()
    if len(parts) != 5:
        return None
    try:
        count, stability = int(parts[0]), float(parts[1])
    except ValueError:
        return None
    if count < 0 or not stability > 0 or math.isinf(stability):
        return None
    stamps: list[dt.datetime | None] = []
    for part in parts[2:]:
        when = None if part == "-" else parse_when(part)
        if part != "-" and when is None:
            return None
        stamps.append(when)
    through = fmt(stamps[2]) if stamps[2] is not None else None
    return PolicyState(count, stability, stamps[0], stamps[1]), through


def apply_touch(state: PolicyState, when: dt.datetime, config: Config) -> PolicyState:
    """One Read/Edit/Write/MultiEdit at `when`, through the spacing gate."""
    last_accessed = when if state.last_accessed is None else max(state.last_accessed, when)
    gate_open = state.last_reinforced is None or (
        (when - state.last_reinforced).total_seconds() >= config.spacing_hours * 3600
    )
    if not gate_open:
        return PolicyState(state.access_count, state.stability, last_accessed,
                           state.last_reinforced)
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


def score_days(access_count: int, stability: float, days: float, importance: float,
               config: Config) -> float:
    """The score from the days since last access (render computes those in SQL, for speed)."""
    # a hand-edited or damaged mirror may hold text here: it scores as the defaults, no TypeError
    days = max(days, 0.0) if isinstance(days, (int, float)) else 0.0
    stability = (stability if isinstance(stability, (int, float)) and stability > 0
                 else config.initial_stability)
    access_count = access_count if isinstance(access_count, int) else 0
    importance = importance if isinstance(importance, (int, float)) else 0.0
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


def starting_state(
    access_count: int | None, stability: float | None, last_accessed: str | None,
    last_reinforced: str | None,
    base: str | None, config: Config,
) -> tuple[PolicyState, str | None]:
    """A T2 file's starting state and the cut below which events are inside it (module
    docstring)."""
    parsed = parse_base(base)
    if parsed is not None:
        return parsed
    state = baseline(access_count, stability, parse_when(last_accessed),
                     parse_when(last_reinforced), config)
    if not access_count and not last_reinforced:
        # Never reinforced: no touch is inside these fields (the first touch always reinforces),
        # so every event counts, one in the same second as a new memory's last_accessed included.
        return state, None
    return state, last_accessed


def _replay(start: tuple[PolicyState, str | None], stamps: Iterable[str],
            config: Config) -> tuple[PolicyState, int]:
    """The starting state with every event after its cut applied: (state, events applied)."""
    state, checkpoint = start
    applied = 0
    for ts in stamps:
        if checkpoint is not None and ts <= checkpoint:
            continue  # inside the starting state already
        when = parse_when(ts)
        if when is not None:
            state = apply_touch(state, when, config)
            applied += 1
    return state, applied


def _behind(state: PolicyState, access_count: int | None, last_accessed: str | None) -> bool:
    """Is a replayed state short of what the file itself says (fewer reinforcements, or older)?"""
    if access_count is not None and state.access_count < access_count:
        return True
    written = parse_when(last_accessed)
    return written is not None and (state.last_accessed is None or state.last_accessed < written)


def recompute_policy(conn: sqlite3.Connection, paths: list[str], config: Config) -> None:
    """Recompute the policy rows of `paths` from the files table and the events table."""
    for start in range(0, len(paths), BATCH):
        chunk = paths[start : start + BATCH]
        present = {r[0]: r for r in statements.policy_sources(conn, chunk) if r[1] == "t2"}
        gone = [p for p in chunk if p not in present]
        if gone:
            statements.drop_policy(conn, gone)
        events = statements.event_times(conn, chunk)
        out = []
        gaps = []
        for path, row in present.items():
            state, applied = _replay(starting_state(row[2], row[3], row[4], row[5], row[6], config),
                                     events.get(path, ()), config)
            gap = 0
            if row[6] is not None and _behind(state, row[2], row[4]):
                # The file says more than its base and the journal here explain: the events behind
                # its last flush are missing (runtime/ deleted, a journal never committed). The
                # file's own values are the truth then, never lowered: they become the base
                # (through their last_accessed), and only later events are applied on top.
                file_state = baseline(row[2], row[3], parse_when(row[4]), parse_when(row[5]),
                                      config)
                state, applied = _replay((file_state, row[4]), events.get(path, ()), config)
                gap = 1
            out.append(_state_row(path, state, applied))
            gaps.append((gap, path))
        statements.save_policy(conn, out)
        statements.set_journal_gaps(conn, gaps)


class TouchResult:
    """What one touch did. (A plain class: this module is on the hook's path.)"""

    __slots__ = ("applied", "message", "recorded", "rel")

    def __init__(self, recorded: bool, applied: bool, rel: str | None, message: str) -> None:
        self.recorded = recorded  # a journal line was written
        self.applied = applied  # the mirror was updated now (else the next sync folds it in)
        self.rel = rel
        self.message = message


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
    born: bool = False,
    resolved: Resolved | None = None,
) -> TouchResult:
    """Record one access: a journal line first, then one SQLite transaction.

    The journal line lands even when the mirror is locked past the budget, missing or
    broken; the next sync folds it in. Nothing here raises for a locked database.
    `born`: this Write created the memory. The line says so, with the project of the session's
    cwd as the bundle names it (none: person-wide), and the mirror counts it as the memory's
    birth (memstore.mirror.adoption). `resolved`: file_path as the caller resolved it already
    (core.toolpath), so the hook resolves a path once per call.
    """
    if tool not in REINFORCING_TOOLS:
        return TouchResult(False, False, None,
                           f"{tool} does not reinforce (only {', '.join(REINFORCING_TOOLS)})")
    found = resolved if resolved is not None else resolve(root, file_path, cwd)
    rel = reinforces(found, [team.name for team in config.teams])
    if rel is None:
        return TouchResult(False, False, None,
                           f"not a T2 memory file under {root}/memory: {file_path}")
    event = journal.new_event(rel, tool, now, session, source=journal.identity(root))
    if born and tool == "Write":
        from memstore.core.projects import locate

        event["born"] = "1"
        project = locate(os.fspath(cwd) if cwd else None, os.fspath(root))[0]
        if project:
            event["project"] = project
    journal.append(root, event)
    db = db_file(root)
    if not os.path.exists(db):
        return TouchResult(True, False, rel,
                           "journaled; the mirror does not exist yet (next sync folds it in)")
    budget = config.hook_lock_budget_ms if lock_budget_ms is None else lock_budget_ms
    try:
        conn = hook_connect(db, budget)
    except sqlite3.Error as exc:
        return TouchResult(True, False, rel, f"journaled; mirror not opened ({exc})")
    try:
        with transaction(conn):
            before = statements.access_count(conn, rel)
            apply_event(conn, event, config)
            after = statements.access_count(conn, rel)
            if written:  # the agent changed the file: the next quick sync re-reads it
                statements.mark_dirty(conn, rel)
            # The offset is not advanced: sync re-reads this line and skips it by id.
        if before is not None and after is not None and after <= before:
            return TouchResult(True, True, rel,
                               "read recorded, not reinforced (inside the spacing gate)")
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
            statements.mark_dirty(conn, rel)
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
    row = statements.policy_row(conn, path)
    if row is None:
        recompute_policy(conn, [path], config)  # known file not yet in policy, or not synced yet
        return
    when = parse_when(event["ts"])
    last = parse_when(row[2])
    if when is None or (last is not None and when <= last):
        # out of order (or a tie): only a full replay is exact
        recompute_policy(conn, [path], config)
        return
    state = apply_touch(PolicyState(row[0], row[1], last, parse_when(row[3])), when, config)
    statements.save_policy(conn, [_state_row(path, state, row[4] + 1)])

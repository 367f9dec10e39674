"""`memstore flush`: fold the mirror's policy state back into each file's frontmatter.

The hook never edits memory files (Claude Code refuses an Edit to a file that changed
since it was read), so reinforcement accumulates in SQLite and the journal until the
nightly tick flushes it. Only the values of the four policy fields change; missing
ones are appended; every other byte is kept (fmedit). A memory the agent made with Write
also gets the `created` and `project` the hook saw (memstore.mirror.adoption), when it lacks them.
The first flush of a file also appends its `policy_base`, the starting state its policy is replayed
from (see memstore.core.policy): from then on the fields flush writes are a result, not a
checkpoint, and a read that reaches this machine after the flush still counts. A file modified in
the last few minutes is probably open in a session and is skipped unless forced, and a file
that changed since the last sync is skipped rather than overwritten.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from memstore.core.config import Config
from memstore.core.locks import atomic_write, sweep_stale
from memstore.core.policy import format_base, starting_state
from memstore.core.timeutil import UTC, parse_when
from memstore.mirror.fmedit import CannotEdit, set_fields
from memstore.mirror.indexing import digest


@dataclass
class FlushReport:
    written: list[str] = field(default_factory=list)
    skipped_recent: list[str] = field(default_factory=list)
    skipped_changed: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"written": self.written, "skipped_recent": self.skipped_recent,
                "skipped_changed": self.skipped_changed, "refused": [list(r) for r in self.refused]}

    def summary(self) -> str:
        text = f"{len(self.written)} file(s) updated"
        if self.skipped_recent:
            text += f", {len(self.skipped_recent)} skipped (modified recently; --force to include)"
        if self.skipped_changed:
            text += f", {len(self.skipped_changed)} skipped (changed since the last sync)"
        if self.refused:
            text += f", {len(self.refused)} left alone (frontmatter not safely editable)"
        return text


def pending(conn: sqlite3.Connection, config: Config) -> list[sqlite3.Row]:
    """T2 files whose mirror state differs from what their frontmatter says (absent = default).

    Never a team's file: its policy state lives in this person's mirror alone (core.teams)."""
    return conn.execute(
        """
        SELECT f.path, f.digest, f.mtime_ns, f.fm_access_count, f.fm_stability, f.fm_last_accessed,
               f.fm_last_reinforced, f.fm_base, p.access_count, p.stability, p.last_accessed,
               p.last_reinforced, f.adopted
        FROM files f JOIN policy p ON p.path = f.path
        WHERE f.kind = 't2' AND f.path NOT LIKE 'teams/%' AND (
            COALESCE(f.fm_access_count, 0) != p.access_count
            OR COALESCE(f.fm_stability, ?) != p.stability
            OR f.fm_last_accessed IS NOT p.last_accessed
            OR f.fm_last_reinforced IS NOT p.last_reinforced
            OR f.adopted IS NOT NULL)
        ORDER BY f.path
        """,
        (config.initial_stability,),
    ).fetchall()


def flush(conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config,
          force: bool = False) -> FlushReport:
    """Write policy state into frontmatter. The caller holds the mirror lock and syncs after."""
    report = FlushReport()
    sweep_stale(root / "memory")  # temp files of a flush that was killed
    quiet_after = now - dt.timedelta(minutes=config.flush_quiet_minutes)
    for row in pending(conn, config):
        path = root / row["path"]
        try:
            raw = path.read_bytes()
            mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, UTC)
        except OSError:
            report.skipped_changed.append(row["path"])
            continue
        if digest(raw) != row["digest"]:
            report.skipped_changed.append(row["path"])
            continue
        if not force and mtime > quiet_after:
            report.skipped_recent.append(row["path"])
            continue
        updates: dict[str, object] = {
            "access_count": row["access_count"],
            "last_accessed": parse_when(row["last_accessed"]),
            "last_reinforced": parse_when(row["last_reinforced"]),
            "stability": row["stability"],
        }
        if row["fm_base"] is None:  # the state the mirror replayed from, kept before fields move
            start, through = starting_state(row["fm_access_count"], row["fm_stability"],
                                            row["fm_last_accessed"], row["fm_last_reinforced"],
                                            None, config)
            updates["policy_base"] = format_base(start, through)
        # a birth the hook saw (mirror.adoption): only keys the file lacks, so none is written over
        for key, value in json.loads(row["adopted"] or "{}").items():
            updates[key] = dt.date.fromisoformat(value) if key == "created" else value
        try:
            new = set_fields(raw, updates)
        except CannotEdit as exc:
            report.refused.append((row["path"], str(exc)))
            continue
        if atomic_write(path, new, expect=raw):
            report.written.append(row["path"])
        else:
            report.skipped_changed.append(row["path"])
    return report

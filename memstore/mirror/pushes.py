"""Were the prompt's pointers used? How often a memory pushed when a prompt arrived (core.pointers)
was then Read in that session, over the last DAYS days: the evidence for the floor."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

from memstore.core import meaning_client, pointers
from memstore.core.timeutil import fmt

DAYS = 30


def opened(conn: sqlite3.Connection, session: str, path: str, since: str) -> bool:
    """Was `path` Read in `session` at or after `since`?"""
    return conn.execute(
        "SELECT 1 FROM events WHERE session = ? AND path = ? AND tool = 'Read' AND ts >= ? "
        "LIMIT 1", (session, path, since)).fetchone() is not None


def pushes_view(conn: sqlite3.Connection, root: Path, now: dt.datetime, meaning_on: bool = False
                ) -> dict[str, Any]:
    """pushes, sessions, pointers and how many were opened in their session over DAYS days, with
    the floor in force, when the tick measured it, and whether meaning points too (`meaning_on`:
    the root's settings allow it)."""
    since = fmt(now - dt.timedelta(days=DAYS))
    pushes = pointers.recent(str(root), since)
    pairs = [(str(p["session"]), str(path), str(p["at"])) for p in pushes
             for path in p["paths"] if isinstance(path, str)]
    used = sum(1 for session, path, at in pairs if opened(conn, session, path, at))
    measured = pointers.measured(str(root))
    return {
        "days": DAYS,
        "pushes": len(pushes),
        "sessions": len({str(p["session"]) for p in pushes}),
        "pointers": len(pairs),
        "opened": used,
        "floor": pointers.floor(str(root)),  # the one in force: a number, whatever the file holds
        "floor_measured": when if isinstance(when := measured.get("measured"), str) else None,
        "meaning_process": meaning_client.listening(str(root)),  # pointers by meaning too, now
        "meaning_wanted": meaning_on and meaning_client.wanted(str(root)),
    }

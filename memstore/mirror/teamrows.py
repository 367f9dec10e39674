"""The joined teams' files as the mirror holds them, counted for `team list` and `status`."""

from __future__ import annotations

import sqlite3

from memstore.core.teams import team_of


def team_counts(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """team -> kind (t2, lens, ...) -> how many of the team's files the mirror holds."""
    counts: dict[str, dict[str, int]] = {}
    for path, kind in conn.execute("SELECT path, kind FROM files WHERE path LIKE 'teams/%'"):
        team = team_of(path)
        if team:
            by_kind = counts.setdefault(team, {})
            by_kind[kind] = by_kind.get(kind, 0) + 1
    return counts

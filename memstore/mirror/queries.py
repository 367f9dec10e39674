"""The questions the layers above ask the mirror, as functions with plain results.

Team, life, wiring and the front ends never write SQL against the mirror's tables: they call
these (or the mirror module a question belongs to), and `tests/test_sql_home.py` holds that.
Each function runs on the caller's connection, whatever its row factory, and returns tuples,
dicts or numbers; none begins a transaction unless its docstring says so.
"""

from __future__ import annotations

import sqlite3
from typing import Any, NamedTuple

from memstore.core.transactions import transaction
from memstore.mirror.indexing import body_of, delete_rows

# ---------------------------------------------------------------- files


class ShortTermNote(NamedTuple):
    path: str
    meta: str | None  # the frontmatter as the mirror holds it (JSON)
    body: str  # "" unless asked for


def short_term_notes(conn: sqlite3.Connection, *, bodies: bool = False) -> list[ShortTermNote]:
    """Every short-term note the mirror holds, archive included; with its body when `bodies`."""
    rows = conn.execute("SELECT id, path, meta FROM files WHERE kind = 'short-term'").fetchall()
    return [ShortTermNote(row[1], row[2], body_of(conn, row[0]) if bodies else "") for row in rows]


def own_file_digests(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(path, digest) of the person's own searchable files, by path: no derived file, no team's."""
    return [(row[0], row[1]) for row in conn.execute(
        "SELECT path, digest FROM files WHERE kind != 'derived' AND path NOT LIKE 'teams/%' "
        "ORDER BY path")]


def own_memory_digests(conn: sqlite3.Connection) -> list[tuple[str, str | None, str]]:
    """(path, created, digest) of the person's own T2 memories (no team's), by path."""
    return [(row[0], row[1], row[2]) for row in conn.execute(
        "SELECT path, created, digest FROM files WHERE kind = 't2' AND path NOT LIKE 'teams/%' "
        "ORDER BY path")]


def memory_projects(conn: sqlite3.Connection) -> dict[str, str | None]:
    """path -> the `project:` a T2 memory's frontmatter names (None: none, or not text)."""
    rows = conn.execute("SELECT path, json_extract(meta, '$.project') FROM files WHERE kind = 't2'")
    return {row[0]: row[1] if isinstance(row[1], str) else None for row in rows}


def in_flight_memories(conn: sqlite3.Connection) -> list[tuple[str, str | None, str | None]]:
    """(path, state, last_accessed) of each T2 memory marked in flight."""
    return [(row[0], row[1], row[2]) for row in conn.execute(
        "SELECT f.path, f.state, p.last_accessed FROM files f "
        "LEFT JOIN policy p ON p.path = f.path WHERE f.kind = 't2' AND f.in_flight")]


def policy_source(conn: sqlite3.Connection, path: str) -> tuple[Any, ...] | None:
    """(created, fm_access_count, fm_stability, fm_last_accessed, fm_last_reinforced, fm_base):
    the state a T2 memory's own file carries; None when `path` is not one."""
    row = conn.execute(
        "SELECT created, fm_access_count, fm_stability, fm_last_accessed, fm_last_reinforced, "
        "fm_base FROM files WHERE path = ? AND kind = 't2'", (path,)).fetchone()
    return None if row is None else tuple(row)


# ---------------------------------------------------------------- policy and reads


def policy_reads(conn: sqlite3.Connection, path: str) -> tuple[int, str | None] | None:
    """(access_count, last_accessed) of a memory's policy row; None when it has none."""
    row = conn.execute("SELECT access_count, last_accessed FROM policy WHERE path = ?",
                       (path,)).fetchone()
    return None if row is None else (row[0], row[1])


def newest_reads(conn: sqlite3.Connection, path: str, most: int
                 ) -> tuple[int, list[tuple[str, str, str | None]]]:
    """How many reads of `path` the mirror holds, and the newest `most` of them, oldest first:
    (ts, tool, host)."""
    total = conn.execute("SELECT count(*) FROM events WHERE path = ?", (path,)).fetchone()[0]
    rows = conn.execute(
        "SELECT ts, tool, host FROM (SELECT ts, tool, host, id FROM events WHERE path = ? "
        "ORDER BY ts DESC, id DESC LIMIT ?) ORDER BY ts, id", (path, most)).fetchall()
    return int(total), [(row[0], row[1], row[2]) for row in rows]


def reads_by_day(conn: sqlite3.Connection, since: str, most: int) -> list[dict[str, Any]]:
    """Reads since `since` per day and memory, newest day first: day, path, name (None: the file
    is gone), reads, hosts (comma-joined, '?' for none), newest."""
    rows = conn.execute(
        "SELECT substr(e.ts, 1, 10) AS day, e.path, f.name, count(*) AS reads, "
        "group_concat(DISTINCT coalesce(e.host, '?')) AS hosts, max(e.ts) AS newest "
        "FROM events e LEFT JOIN files f ON f.path = e.path WHERE e.ts >= ? "
        "GROUP BY day, e.path ORDER BY day DESC, reads DESC, e.path LIMIT ?", (since, most))
    keys = ("day", "path", "name", "reads", "hosts", "newest")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def reads_by_machine(conn: sqlite3.Connection, since: str) -> list[dict[str, Any]]:
    """Reads since `since` per machine, most first: host ('?' for none), reads, memories, newest."""
    rows = conn.execute(
        "SELECT coalesce(host, '?') AS host, count(*) AS reads, count(DISTINCT path) AS memories, "
        "max(ts) AS newest FROM events WHERE ts >= ? GROUP BY host ORDER BY reads DESC", (since,))
    keys = ("host", "reads", "memories", "newest")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def forget_host(conn: sqlite3.Connection, host: str, path: str, *, file_gone: bool) -> None:
    """Remove, in one transaction, every row a host made (its reads, its journal files' offsets)
    and `path`'s policy state; its file rows too when `file_gone`, so no sync keeps it as a
    deletion. A host's journal files are named `<host>-...`."""
    with transaction(conn):
        conn.execute("DELETE FROM events WHERE host = ? OR host LIKE ? OR path = ?",
                     (host, f"{host}-%", path))
        conn.execute("DELETE FROM journal_offsets WHERE file LIKE ?", (f"{host}-%",))
        conn.execute("DELETE FROM policy WHERE path = ?", (path,))
        conn.execute("DELETE FROM dirty WHERE path = ?", (path,))
        if file_gone:
            delete_rows(conn, [path])

"""Every SQL statement core runs against the mirror, as functions with plain results.

Core's statements are the hook's: the touch (an event, its memory's policy row, the dirty mark), the
journal's offsets, the lenses and the lenses fired, and a search hit's project. The mirror's own
SQL lives in memstore/mirror/; a change to the schema (migrations/) is read against these two
places. Standard library only, and nothing imported: it is on the hook's path. Every function runs
inside the caller's transaction when there is one; none begins or commits one.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable, Sequence

    # a memory's frontmatter policy fields, and its policy row, as the mirror holds them
    PolicySource = tuple[str, str, int | None, float | None, str | None, str | None, str | None]
    PolicyRow = tuple[int, float, str | None, str | None, int]

# ---------------------------------------------------------------- the policy rows

_UPSERT_POLICY = (
    "INSERT INTO policy (path, access_count, stability, last_accessed, last_reinforced, touches) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET access_count=excluded.access_count, "
    "stability=excluded.stability, last_accessed=excluded.last_accessed, "
    "last_reinforced=excluded.last_reinforced, touches=excluded.touches"
)

def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


def policy_sources(conn: sqlite3.Connection, paths: Sequence[str]) -> list[PolicySource]:
    """(path, kind, fm_access_count, fm_stability, fm_last_accessed, fm_last_reinforced, fm_base)
    of each of `paths` the files table holds."""
    return conn.execute(
        "SELECT path, kind, fm_access_count, fm_stability, fm_last_accessed, fm_last_reinforced, "
        f"fm_base FROM files WHERE path IN ({_marks(paths)})", list(paths)).fetchall()


def event_times(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, list[str]]:
    """{path: the ts of each of its events, in (ts, id) order} for `paths`."""
    found: dict[str, list[str]] = {}
    for path, ts in conn.execute(
            f"SELECT path, ts FROM events WHERE path IN ({_marks(paths)}) ORDER BY path, ts, id",
            list(paths)):
        found.setdefault(path, []).append(ts)
    return found


def drop_policy(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    conn.executemany("DELETE FROM policy WHERE path = ?", [(path,) for path in paths])


def save_policy(conn: sqlite3.Connection, rows: Iterable[Sequence[object]]) -> None:
    """Each (path, access_count, stability, last_accessed, last_reinforced, touches), made or
    replaced."""
    conn.executemany(_UPSERT_POLICY, rows)


def set_journal_gaps(conn: sqlite3.Connection, gaps: Iterable[tuple[int, str]]) -> None:
    """Each (gap, path): whether the file says more than its base and the journal explain."""
    conn.executemany("UPDATE policy SET journal_gap = ? WHERE path = ?", gaps)


def policy_row(conn: sqlite3.Connection, path: str) -> PolicyRow | None:
    """(access_count, stability, last_accessed, last_reinforced, touches) of a memory, or None."""
    row: PolicyRow | None = conn.execute(
        "SELECT access_count, stability, last_accessed, last_reinforced, touches FROM policy "
        "WHERE path = ?", (path,)).fetchone()
    return row


def access_count(conn: sqlite3.Connection, path: str) -> int | None:
    row = conn.execute("SELECT access_count FROM policy WHERE path = ?", (path,)).fetchone()
    return None if row is None else int(row[0])


def mark_dirty(conn: sqlite3.Connection, path: str) -> None:
    """The agent changed this file: the next quick sync re-reads it."""
    conn.execute("INSERT OR IGNORE INTO dirty (path) VALUES (?)", (path,))


# ---------------------------------------------------------------- the journal's events and offsets

def insert_event(conn: sqlite3.Connection, values: Sequence[object], *, born: bool = False,
                 project: str | None = None) -> bool:
    """One event (id, ts, path, tool, session, host), once by id; True when it was new. `born`: a
    Write that created its memory, with the session's project."""
    if born:
        cur = conn.execute(
            "INSERT OR IGNORE INTO events (id, ts, path, tool, session, host, born, project) "
            "VALUES (?, ?, ?, ?, ?, ?, 1, ?)", (*values, project))
    else:
        cur = conn.execute(
            "INSERT OR IGNORE INTO events (id, ts, path, tool, session, host) "
            "VALUES (?, ?, ?, ?, ?, ?)", tuple(values))
    return cur.rowcount == 1


def journal_offsets(conn: sqlite3.Connection) -> dict[str, tuple[int, str | None, int]]:
    """{journal file name: (offset reached, digest of the bytes before it, unreadable lines)}."""
    rows = conn.execute("SELECT file, offset, tail, bad_lines FROM journal_offsets")
    return {row[0]: (row[1], row[2], row[3]) for row in rows}


def drop_offsets(conn: sqlite3.Connection, names: Iterable[str]) -> None:
    conn.executemany("DELETE FROM journal_offsets WHERE file = ?", [(name,) for name in names])


def save_offset(conn: sqlite3.Connection, name: str, offset: int, tail: str,
                bad_lines: int) -> None:
    conn.execute(
        "INSERT INTO journal_offsets (file, offset, tail, bad_lines) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(file) DO UPDATE SET offset = excluded.offset, tail = excluded.tail, "
        "bad_lines = excluded.bad_lines", (name, offset, tail, bad_lines))


def bad_line_counts(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """(journal file name, unreadable lines in it) for every file that has some, by name."""
    return [(row[0], row[1]) for row in conn.execute(
        "SELECT file, bad_lines FROM journal_offsets WHERE bad_lines > 0 ORDER BY file")]


# ---------------------------------------------------------------- the lenses

def lens_rows(conn: sqlite3.Connection) -> list[tuple[str, str, str, int, int]]:
    """(path, meta, body, mtime_ns, size) of every lens the mirror holds, by path. The body lives
    in the full-text table, not in `files` (migration m004)."""
    return conn.execute(
        "SELECT f.path, f.meta, t.body, f.mtime_ns, f.size FROM files f "
        "LEFT JOIN files_fts t ON t.rowid = f.id WHERE f.kind = 'lens' ORDER BY f.path").fetchall()


def lens_fired(conn: sqlite3.Connection, session: str, lens: str, when: str) -> bool:
    """Mark the lens fired in this session; False when it had fired there already."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO lens_fired (session, lens, fired_at) VALUES (?, ?, ?)",
        (session, lens, when))
    return cur.rowcount == 1


# ---------------------------------------------------------------- projects

def projects_of(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, str | None]:
    """{path: the project its frontmatter names, or None} for each of `paths` the mirror holds."""
    rows = conn.execute(
        f"SELECT path, json_extract(meta, '$.project') FROM files WHERE path IN ({_marks(paths)})",
        list(paths)).fetchall()
    return {row[0]: row[1] for row in rows}


# ---------------------------------------------------------------- a prompt's pointers

# Stepped aside at a day (given twice): superseded or forgotten (the `aside` column sync fills),
# or out of its valid_from/valid_until. The one home of the rule, in its two forms: the files
# that stepped aside, one indexed lookup each (the partial indexes of m015; mirror.stepping_aside
# runs it), and a filter for those that stand.
STEPPED_ASIDE = ("SELECT path FROM files WHERE aside = 1 "
                 "UNION ALL SELECT path FROM files WHERE valid_until < ? "
                 "UNION ALL SELECT path FROM files WHERE valid_from > ?")
_STANDING = ("f.aside = 0 AND (f.valid_until IS NULL OR f.valid_until >= ?) "
             "AND (f.valid_from IS NULL OR f.valid_from <= ?)")
# A T2 memory (the person's, or a joined team's) that stands at the day given twice
_POINTABLE = f"f.kind = 't2' AND {_STANDING}"


def file_count(conn: sqlite3.Connection) -> int:
    """How many T2 memories the mirror holds."""
    return int(conn.execute("SELECT count(*) FROM files WHERE kind = 't2'").fetchone()[0])


def word_count(conn: sqlite3.Connection, word: str) -> int:
    """How many files hold `word` (as FTS5 stems it)."""
    return int(conn.execute("SELECT count(*) FROM files_fts WHERE files_fts MATCH ?",
                            [f'"{word}"']).fetchone()[0])


def pointable(conn: sqlite3.Connection, words: Sequence[str], day: str, limit: int
              ) -> list[tuple[int, str, str | None, str | None]]:
    """(rowid, path, index row, project) of the `limit` memories that best match any of `words`
    (bm25 over name, summary, description and body), best first."""
    expression = " OR ".join(f'"{w}"' for w in words)
    return conn.execute(
        "SELECT f.id, f.path, f.index_row, json_extract(f.meta, '$.project') "
        "FROM files_fts JOIN files f ON f.id = files_fts.rowid "
        f"WHERE files_fts MATCH ? AND {_POINTABLE} "
        "ORDER BY bm25(files_fts, 1.5, 2.0, 1.0, 1.0) LIMIT ?",
        [expression, day, day, limit]).fetchall()


def pointable_rows(conn: sqlite3.Connection, paths: Sequence[str], day: str
                   ) -> list[tuple[int, str, str | None, str | None]]:
    """(rowid, path, index row, project) of those of `paths` that may be pointed at on `day`."""
    if not paths:
        return []
    return conn.execute(
        "SELECT f.id, f.path, f.index_row, json_extract(f.meta, '$.project') FROM files f "
        f"WHERE f.path IN ({_marks(paths)}) AND {_POINTABLE}",
        [*paths, day, day]).fetchall()


def holding(conn: sqlite3.Connection, word: str, ids: Sequence[int], head: bool) -> set[int]:
    """Which of the files `ids` hold `word`: anywhere, or (`head`) in the name, summary or
    description, the index row's own words."""
    if not ids:
        return set()
    phrase = f'{{name summary description}} : "{word}"' if head else f'"{word}"'
    # FTS5 reads a word's matches between two rowids only; `rowid IN (...)` would read all
    rows = conn.execute(
        "SELECT rowid FROM files_fts WHERE files_fts MATCH ? AND rowid BETWEEN ? AND ?",
        [phrase, min(ids), max(ids)]).fetchall()
    wanted = set(ids)
    return {row[0] for row in rows if row[0] in wanted}

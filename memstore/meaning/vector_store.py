"""Every SQL statement of the meaning layer: the `vectors`, `background` and `latents` tables.

memstore.meaning.vectors (what to embed, and scoring) and memstore.meaning.latents (the second
opinion) ask their questions here and get plain values back: rows as tuples, blobs as bytes.
A part's row is current while it holds the digest its file has now for that part (files.
text_digest for the head, chunk 0; context_digest for the context part; tail_digest for the
tail parts). A function that writes does so in one short transaction of its own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstore.core.transactions import transaction
from memstore.meaning.chunking import CONTEXT_PART

# The digest a part's row must hold to be current, by its chunk number.
_DIGEST = ("CASE WHEN {chunk} = 0 THEN {f}text_digest WHEN {chunk} < 0 THEN {f}context_digest "
           "ELSE {f}tail_digest END")
_CURRENT = "v.text_digest = " + _DIGEST.format(chunk="v.chunk", f="f.")
_HEAD = ("EXISTS (SELECT 1 FROM vectors v WHERE v.path = f.path AND v.model = :model "
         "AND v.chunk = 0 AND v.text_digest = f.text_digest)")
_TAILS = ("(SELECT count(*) FROM vectors v WHERE v.path = f.path AND v.model = :model "
          "AND v.chunk > 0 AND v.text_digest = f.tail_digest)")
_CONTEXT = ("(f.context_digest IS NULL OR EXISTS (SELECT 1 FROM vectors v WHERE v.path = f.path "
            f"AND v.model = :model AND v.chunk = {CONTEXT_PART} "
            "AND v.text_digest = f.context_digest))")
# What a part's text and digest are made of, in this order: the first columns of a pending row.
_MADE_OF = ("f.path, f.text_digest, f.tail_digest, f.context_digest, f.context, f.summary, "
            "f.description, t.body")
# Files with a part missing go in this order: memories first (what search is mostly
# for), then everything else searchable, each by path so the order is the same everywhere.
_PENDING_SQL = f"""
    SELECT path, text_digest, tail_digest, context_digest, context, summary, description, body,
           head, tails, parts, has_context FROM (
        SELECT {_MADE_OF}, f.kind, {_HEAD} AS head, {_TAILS} AS tails, f.parts,
               {_CONTEXT} AS has_context
        FROM files f JOIN files_fts t ON t.rowid = f.id
        WHERE f.kind != 'derived' AND f.parts > 0
    ) WHERE head = 0 OR tails < parts - 1 OR has_context = 0
    ORDER BY kind != 't2', path
"""
_PENDING_COUNT_SQL = f"""
    SELECT count(*) FROM files f
    WHERE f.kind != 'derived' AND f.parts > 0
      AND (NOT {_HEAD} OR (f.parts > 1 AND {_TAILS} < f.parts - 1) OR NOT {_CONTEXT})
"""
_LOOKUP_CHUNK = 500  # digests asked for in one statement, below SQLite's limit on variables

# ---------------------------------------------------------------- counts


def pending_count(conn: sqlite3.Connection, model: str) -> int:
    """Searchable files with a part that has no current vector under `model`."""
    return int(conn.execute(_PENDING_COUNT_SQL, {"model": model}).fetchone()[0])


def searchable_count(conn: sqlite3.Connection) -> int:
    """Files a vector can be made for: what embedded_count is a share of."""
    return int(conn.execute(
        "SELECT count(*) FROM files f WHERE f.kind != 'derived' AND f.parts > 0").fetchone()[0])


def embedded_count(conn: sqlite3.Connection, model: str) -> int:
    """Searchable files whose head vector is current (so meaning ranks them)."""
    return int(conn.execute(
        f"SELECT count(*) FROM files f WHERE f.kind != 'derived' AND f.parts > 0 AND {_HEAD}",
        {"model": model}).fetchone()[0])


# ---------------------------------------------------------------- what to embed


def pending_rows(conn: sqlite3.Connection, model: str) -> list[tuple[Any, ...]]:
    """The files with a part to embed, memories first: path, text_digest, tail_digest,
    context_digest, context, summary, description, body (what a part is made of), then head
    (is it current), tails (how many are), parts, has_context (is the context part current)."""
    return [tuple(row) for row in conn.execute(_PENDING_SQL, {"model": model})]


def made_of(conn: sqlite3.Connection, path: str) -> tuple[Any, ...] | None:
    """What a file's parts are made of now (pending_rows' first eight columns); None: not there."""
    row = conn.execute(f"SELECT {_MADE_OF} FROM files f JOIN files_fts t ON t.rowid = f.id "
                       "WHERE f.path = ?", (path,)).fetchone()
    return None if row is None else tuple(row)


def current_tails(conn: sqlite3.Connection, model: str, path: str, tail_digest: str) -> set[int]:
    """The tail parts of a file whose vector under `model` holds its tail digest."""
    return {row[0] for row in conn.execute(
        "SELECT chunk FROM vectors WHERE path = ? AND model = ? AND chunk > 0 AND text_digest = ?",
        (path, model, tail_digest))}


def vectors_by_digest(conn: sqlite3.Connection, model: str, digests: Sequence[str]
                      ) -> dict[tuple[int, str], tuple[int, bytes]]:
    """(chunk, digest) -> (dim, vector blob) of every row under `model` holding one of `digests`,
    wherever its file lives (a renamed, copied or restored file); a damaged blob is left out."""
    found: dict[tuple[int, str], tuple[int, bytes]] = {}
    ordered = sorted(set(digests))
    for start in range(0, len(ordered), _LOOKUP_CHUNK):
        some = ordered[start : start + _LOOKUP_CHUNK]
        marks = ",".join("?" * len(some))
        for chunk, text_digest, dim, vec in conn.execute(
            "SELECT chunk, text_digest, dim, vec FROM vectors WHERE model = ? "
            f"AND text_digest IN ({marks})", [model, *some],
        ):
            if len(vec) == dim * 2:
                found[(chunk, text_digest)] = (dim, vec)
    return found


# ---------------------------------------------------------------- writes


def drop_other_models(conn: sqlite3.Connection, model: str) -> None:
    """Delete the vectors of every model but `model`: they are never used again."""
    with transaction(conn):
        conn.execute("DELETE FROM vectors WHERE model != ?", (model,))


def copy_vectors(conn: sqlite3.Connection, model: str,
                 rows: Sequence[tuple[str, int, str, int, bytes]]) -> None:
    """Keep (path, chunk, digest, dim, blob) rows as they are: vectors found under another path."""
    with transaction(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO vectors (path, model, chunk, text_digest, dim, vec) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(path, model, chunk, digest, dim, vec) for path, chunk, digest, dim, vec in rows])


def keep_vectors(conn: sqlite3.Connection, model: str, dim: int,
                 rows: Sequence[tuple[str, int, str, bytes]]) -> None:
    """Keep freshly made (path, chunk, digest, blob) vectors, each only while its file still has
    that digest for that part, and drop the tail parts of an older tail of those files."""
    params = [(path, model, chunk, digest, dim, vec, path, chunk, chunk, digest)
              for path, chunk, digest, vec in rows]
    paths = sorted({row[0] for row in rows})
    marks = ",".join("?" * len(paths))
    with transaction(conn):  # a file edited meanwhile keeps no vector of its old text
        conn.executemany(
            "INSERT OR REPLACE INTO vectors (path, model, chunk, text_digest, dim, vec) "
            "SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM files WHERE path = ? "
            f"AND ({_DIGEST.format(chunk='?', f='')}) = ?)", params)
        conn.execute(
            f"DELETE FROM vectors WHERE model = ? AND chunk > 0 AND path IN ({marks}) "
            "AND text_digest IS NOT "
            "(SELECT tail_digest FROM files WHERE files.path = vectors.path)",
            [model, *paths])


# ---------------------------------------------------------------- search


def current_vectors(conn: sqlite3.Connection, model: str, dim: int, type_: str | None
                    ) -> list[tuple[str, bytes, str, int]]:
    """(path, blob, kind, chunk) of every current vector of a searchable file (of `type_`, a
    type or a kind, when given), by path then chunk."""
    where = "f.kind != 'derived'" if type_ is None else "(f.type = ? OR f.kind = ?)"
    params: list[Any] = [model, dim] + ([] if type_ is None else [type_, type_])
    return [(row[0], row[1], row[2], row[3]) for row in conn.execute(
        f"SELECT v.path, v.vec, f.kind, v.chunk FROM vectors v JOIN files f ON f.path = v.path "
        f"AND {_CURRENT} WHERE v.model = ? AND v.dim = ? AND {where} ORDER BY v.path, v.chunk",
        params)]


def vectors_mark(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, newest rowid) of the vectors: either moves when a vector is made or dropped."""
    row = conn.execute("SELECT count(*), coalesce(max(rowid), 0) FROM vectors").fetchone()
    return int(row[0]), int(row[1])


def kept_background(conn: sqlite3.Connection, model: str) -> tuple[str, int, bytes] | None:
    """(digest, dim, blob) of the background sentences' vectors kept for `model`."""
    row = conn.execute("SELECT digest, dim, vecs FROM background WHERE model = ?",
                       (model,)).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def keep_background(conn: sqlite3.Connection, model: str, digest: str, dim: int,
                    blob: bytes) -> None:
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO background (model, digest, dim, vecs) "
                     "VALUES (?, ?, ?, ?)", (model, digest, dim, blob))


# ---------------------------------------------------------------- latent terms


def kept_latents(conn: sqlite3.Connection, model: str, path: str, part: int,
                 text_digest: str) -> list[bytes]:
    """The latent terms kept for a part's paragraphs, in order, while it has `text_digest`."""
    return [row[0] for row in conn.execute(
        "SELECT terms FROM latents WHERE path = ? AND model = ? AND chunk = ? "
        "AND text_digest = ? ORDER BY piece", (path, model, part, text_digest))]


def keep_latents(conn: sqlite3.Connection, model: str,
                 made: Sequence[tuple[str, int, str, Sequence[bytes]]]) -> None:
    """Keep each (path, part, digest, blobs) in place of what that part held before."""
    with transaction(conn):
        for path, part, text_digest, blobs in made:
            conn.execute("DELETE FROM latents WHERE path = ? AND model = ? AND chunk = ?",
                         (path, model, part))
            conn.executemany(
                "INSERT INTO latents (path, model, chunk, piece, text_digest, terms) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(path, model, part, i, text_digest, blob) for i, blob in enumerate(blobs)])


# ---------------------------------------------------------------- rebuild


def carry_over(fresh: sqlite3.Connection, old_path: Path) -> int:
    """Copy the old mirror's vectors into a freshly built one (a rebuild); stale ones go unused.

    A part's vector is kept under the digest of the text it was made from, so a carried
    row is used only while its file still has that text. Anything unreadable in the old
    mirror (it may be why we are rebuilding) carries nothing: the files are embedded again.
    """
    if not old_path.exists():
        return 0
    try:
        fresh.execute("ATTACH DATABASE ? AS old", (str(old_path),))
    except sqlite3.DatabaseError:
        return 0
    try:
        old_columns = {r[1] for r in fresh.execute("PRAGMA old.table_info(vectors)")}
        chunk = "v.chunk" if "chunk" in old_columns else "0"  # before m010: heads only
        with transaction(fresh):
            cursor = fresh.execute(
                "INSERT OR IGNORE INTO vectors (path, model, chunk, text_digest, dim, vec) "
                f"SELECT v.path, v.model, {chunk}, v.text_digest, v.dim, v.vec FROM old.vectors v "
                "JOIN files f ON f.path = v.path "
                f"AND v.text_digest = {_DIGEST.format(chunk=chunk, f='f.')} "
                "WHERE length(v.vec) = v.dim * 2"
            )
            carried = max(cursor.rowcount, 0)
            tables = {r[0] for r in fresh.execute("SELECT name FROM old.sqlite_master")}
            if "background" in tables:
                fresh.execute("INSERT OR IGNORE INTO background "
                              "SELECT model, digest, dim, vecs FROM old.background")
            return carried
    except sqlite3.DatabaseError:
        return 0
    finally:
        try:
            fresh.execute("DETACH DATABASE old")
        except sqlite3.DatabaseError:
            pass

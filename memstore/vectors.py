"""Vectors in the mirror: which files need embedding, embedding them, and the vector side of a search.

A file's vector is made from indexing.embed_text (summary, description, body) and kept
in `vectors` under the model's key and the text's digest (migration m005). A file needs
embedding when no row holds both the current key and its current text_digest: a new
file, an edited one and a model change are the same query. Only files search can return
are embedded (every kind but `derived`).

Embedding is slow next to everything else memstore does (about 25 files a second on two
cores), so it never runs inside the mirror lock or a long transaction: a batch is read,
embedded with no lock held, and written in one short transaction that keeps a vector
only if the file still has the text it was made from. A hook or a sync waiting on the
mirror therefore waits for at most one batch's write, and two embedders at once only
waste work. Callers bound a pass by time (`budget_s`) or by count (`max_files`); what is
left is reported as pending and picked up by the next pass.

numpy is imported inside the functions that need it: this module is imported by the
Store, which the hook never loads, but `status` should not pay for numpy either.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.indexing import embed_text
from memstore.transactions import transaction

if TYPE_CHECKING:
    import numpy as np

    from memstore.embedding import Embedder

BATCH = 16
# Files whose vectors are missing go in this order: memories first (what search is mostly
# for), then everything else searchable, each by path so the order is the same everywhere.
_PENDING_SQL = """
    SELECT f.path, f.text_digest, f.summary, f.description, t.body
    FROM files f
    JOIN files_fts t ON t.rowid = f.id
    LEFT JOIN vectors v ON v.path = f.path AND v.model = ? AND v.text_digest = f.text_digest
    WHERE f.kind != 'derived' AND v.path IS NULL
    ORDER BY f.kind != 't2', f.path
"""
_PENDING_COUNT_SQL = """
    SELECT count(*) FROM files f
    LEFT JOIN vectors v ON v.path = f.path AND v.model = ? AND v.text_digest = f.text_digest
    WHERE f.kind != 'derived' AND v.path IS NULL
"""


@dataclass
class EmbedReport:
    model: str
    embedded: int = 0
    pending: int = 0  # searchable files still without a current vector after this pass
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        text = f"embedded {self.embedded} files in {self.seconds:.1f}s"
        if self.pending:
            text += f"; {self.pending} still to embed (run: memstore embed)"
        return text


def pending_count(conn: sqlite3.Connection, model: str) -> int:
    return int(conn.execute(_PENDING_COUNT_SQL, (model,)).fetchone()[0])


def embedded_count(conn: sqlite3.Connection, model: str) -> int:
    """Searchable files whose vector is current."""
    return int(
        conn.execute(
            "SELECT count(*) FROM files f JOIN vectors v ON v.path = f.path AND v.model = ? "
            "AND v.text_digest = f.text_digest WHERE f.kind != 'derived'",
            (model,),
        ).fetchone()[0]
    )


def _pack(vec: np.ndarray) -> bytes:

    return vec.astype("<f2").tobytes()


def _unpack(blobs: list[bytes], dim: int) -> np.ndarray:
    import numpy as np

    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f2").reshape(len(blobs), dim).astype(np.float32)


def embed_pending(
    conn: sqlite3.Connection,
    embedder: Embedder,
    *,
    budget_s: float | None = None,
    max_files: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> EmbedReport:
    """Embed files without a current vector, batch by batch, until done, out of time or at max_files.

    budget_s bounds the pass's elapsed time (checked between batches, so one batch may
    run past it); None means no bound. The pass stops early, never half-writes a batch.
    """
    report = EmbedReport(embedder.key)
    budget_s = None if budget_s is None else max(0.0, budget_s)
    started = clock()
    with transaction(conn):  # vectors of another model (an upgrade, a downgrade) are never used again
        conn.execute("DELETE FROM vectors WHERE model != ?", (embedder.key,))
    todo = conn.execute(_PENDING_SQL, (embedder.key,)).fetchall()
    if max_files is not None:
        todo = todo[: max(0, max_files)]
    total = len(todo)
    for start in range(0, total, BATCH):
        if budget_s is not None and start and clock() - started >= budget_s:
            break
        batch = todo[start : start + BATCH]
        vectors = embedder.passages([embed_text(r[2], r[3], r[4]) for r in batch])
        rows = [
            (r[0], embedder.key, r[1], embedder.dim, _pack(vec), r[0], r[1])
            for r, vec in zip(batch, vectors, strict=True)
        ]
        with transaction(conn):  # one short write; a file edited meanwhile keeps no vector of its old text
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (path, model, text_digest, dim, vec) "
                "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM files WHERE path = ? AND text_digest = ?)",
                rows,
            )
        report.embedded += len(batch)
        if progress:
            progress(report.embedded, total)
    report.seconds = round(clock() - started, 3)
    report.pending = pending_count(conn, embedder.key)
    return report


def similarities(
    conn: sqlite3.Connection, model: str, query: np.ndarray, type_: str | None
) -> tuple[list[str], np.ndarray]:
    """Paths of the searchable files with a current vector, and each one's cosine with the query."""
    import numpy as np

    dim = int(query.shape[0])
    where = "f.kind != 'derived'" if type_ is None else "(f.type = ? OR f.kind = ?)"
    params: list[Any] = [model, dim] + ([] if type_ is None else [type_, type_])
    rows = conn.execute(
        "SELECT v.path, v.vec FROM vectors v JOIN files f ON f.path = v.path "
        f"AND v.text_digest = f.text_digest WHERE v.model = ? AND v.dim = ? AND {where}",
        params,
    ).fetchall()
    rows = [r for r in rows if len(r[1]) == dim * 2]  # a damaged blob is skipped, not trusted
    if not rows:
        return [], np.zeros(0, dtype=np.float32)
    return [r[0] for r in rows], _unpack([r[1] for r in rows], dim) @ query


def carry_over(fresh: sqlite3.Connection, old_path: Path) -> int:
    """Copy the old mirror's vectors into a freshly built one (a rebuild); stale ones are simply never used.

    A vector is kept under the digest of the text it was made from, so a carried row is
    used only while its file still has that text. Anything unreadable in the old mirror
    (it may be why we are rebuilding) carries nothing: the files are embedded again.
    """
    if not old_path.exists():
        return 0
    try:
        fresh.execute("ATTACH DATABASE ? AS old", (str(old_path),))
    except sqlite3.DatabaseError:
        return 0
    try:
        with transaction(fresh):
            cursor = fresh.execute(
                "INSERT OR IGNORE INTO vectors (path, model, text_digest, dim, vec) "
                "SELECT v.path, v.model, v.text_digest, v.dim, v.vec FROM old.vectors v "
                "JOIN files f ON f.path = v.path AND f.text_digest = v.text_digest "
                "WHERE length(v.vec) = v.dim * 2"
            )
            return max(cursor.rowcount, 0)
    except sqlite3.DatabaseError:
        return 0
    finally:
        try:
            fresh.execute("DETACH DATABASE old")
        except sqlite3.DatabaseError:
            pass

"""Vectors in the mirror: which parts of which files need embedding, embedding them, and the vector side of a search.

A file's text is embedded in parts (memstore/meaning/chunking.py): part 0, the head, kept under
files.text_digest, and the tail parts, kept under files.tail_digest, each a row of
`vectors` keyed by (path, model, chunk) (migrations m005, m010). A part needs embedding
when no row holds it under the current model key and its current digest: a new file, an
edited one and a model change are the same query. Only files search can return are
embedded (every kind but `derived`), and only files with readable text (files.parts > 0).
A search scores a file by its best part. A file with a `context:` line (an excerpt: what
it replied to) has one more part, the context then the head (chunk CONTEXT_PART, -1, kept
under files.context_digest, migration m014), which counts down-weighted: the file's score
is CONTEXT_WEIGHT that part's cosine and the rest its own parts' (`_with_context`).

Embedding is slow next to everything else memstore does (about 1,000 tokens a second on
two cores), so it never runs inside the mirror lock or a long transaction: a batch is
read, embedded with no lock held, and written in one short transaction that keeps a
vector only if the file still has the text it was made from. A hook or a sync waiting on
the mirror therefore waits for at most one batch's write, and two embedders at once only
waste work. Heads go before tails: a file with its head embedded is ranked by meaning,
so a pass cut short by its budget leaves as many files as it can searchable that way.
Callers bound a pass by time (`budget_s`) or by count (`max_files`); what is left is
reported as pending and picked up by the next pass.

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

from memstore.core.transactions import transaction
from memstore.meaning.chunking import CONTEXT_PART, context_text, digest, embed_text, tail_parts

if TYPE_CHECKING:
    import numpy as np

    from memstore.meaning.embedding import Embedder

BATCH = 16
PART_PENALTY = 0.005
CONTEXT_WEIGHT = 0.3
# A part's row is current when it holds the digest its file has now for that part.
_DIGEST = "CASE WHEN {chunk} = 0 THEN {f}text_digest WHEN {chunk} < 0 THEN {f}context_digest ELSE {f}tail_digest END"
_CURRENT = "v.text_digest = " + _DIGEST.format(chunk="v.chunk", f="f.")
_HEAD = "EXISTS (SELECT 1 FROM vectors v WHERE v.path = f.path AND v.model = :model AND v.chunk = 0 " \
        "AND v.text_digest = f.text_digest)"
_TAILS = "(SELECT count(*) FROM vectors v WHERE v.path = f.path AND v.model = :model AND v.chunk > 0 " \
         "AND v.text_digest = f.tail_digest)"
_CONTEXT = "(f.context_digest IS NULL OR EXISTS (SELECT 1 FROM vectors v WHERE v.path = f.path " \
           f"AND v.model = :model AND v.chunk = {CONTEXT_PART} AND v.text_digest = f.context_digest))"
# Files with a part missing go in this order: memories first (what search is mostly
# for), then everything else searchable, each by path so the order is the same everywhere.
_PENDING_SQL = f"""
    SELECT path, text_digest, tail_digest, context_digest, context, summary, description, body,
           head, tails, parts, has_context FROM (
        SELECT f.path, f.kind, f.text_digest, f.tail_digest, f.context_digest, f.context, f.summary,
               f.description, t.body, {_HEAD} AS head, {_TAILS} AS tails, f.parts, {_CONTEXT} AS has_context
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


@dataclass
class EmbedReport:
    model: str
    embedded: int = 0  # files that had a part embedded in this pass
    pending: int = 0  # searchable files still with a part to embed after this pass
    seconds: float = 0.0
    parts: int = 0  # texts embedded: heads and tail parts
    reused: int = 0  # parts whose vector was already there under another path (a rename, a copy)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        text = f"embedded {self.embedded} files in {self.seconds:.1f}s"
        if self.parts > self.embedded:
            text += f" ({self.parts} parts)"
        if self.reused:
            many = "parts" if self.reused != 1 else "part"
            text += f"; {self.reused} {many} already had a vector (a renamed, copied or restored file)"
        if self.pending:
            text += f"; {self.pending} files with parts still to embed (run: memstore embed)"
        return text


def pending_count(conn: sqlite3.Connection, model: str) -> int:
    return int(conn.execute(_PENDING_COUNT_SQL, {"model": model}).fetchone()[0])


def searchable_count(conn: sqlite3.Connection) -> int:
    """Files a vector can be made for: what embedded_count is a share of."""
    return int(conn.execute("SELECT count(*) FROM files f WHERE f.kind != 'derived' AND f.parts > 0").fetchone()[0])


def embedded_count(conn: sqlite3.Connection, model: str) -> int:
    """Searchable files whose head vector is current (so meaning ranks them)."""
    return int(
        conn.execute(
            f"SELECT count(*) FROM files f WHERE f.kind != 'derived' AND f.parts > 0 AND {_HEAD}",
            {"model": model},
        ).fetchone()[0]
    )


def _pack(vec: np.ndarray) -> bytes:
    return vec.astype("<f2").tobytes()


def _unpack(blobs: list[bytes], dim: int) -> np.ndarray:
    import numpy as np

    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f2").reshape(len(blobs), dim).astype(np.float32)


@dataclass
class _Part:
    path: str
    chunk: int
    digest: str
    text: str


def _pending_rows(conn: sqlite3.Connection, model: str, max_files: int | None) -> list[tuple[Any, ...]]:
    rows = conn.execute(_PENDING_SQL, {"model": model}).fetchall()
    return rows if max_files is None else rows[: max(0, max_files)]


# What a part's text and digest are made of, in this order: _PENDING_SQL's first columns and _PART_SQL's.
_MADE_OF = "f.path, f.text_digest, f.tail_digest, f.context_digest, f.context, f.summary, f.description, t.body"
_PART_SQL = f"SELECT {_MADE_OF} FROM files f JOIN files_fts t ON t.rowid = f.id WHERE f.path = ?"


def _parts_of(row: tuple[Any, ...], chunks: list[int]) -> list[_Part]:
    """The parts `chunks` of a file as its row (_MADE_OF) holds it now: 0 the head, CONTEXT_PART its context,
    1.. its tail; one the file does not have is left out. The one place a part's text and digest are chosen."""
    path, head_digest, tail_digest, context_digest, context, summary, description, body = row[:8]
    out: list[_Part] = []
    tails: list[str] | None = None
    for chunk in chunks:
        if chunk == 0:
            made: tuple[str | None, str | None] = (head_digest, embed_text(summary, description, body))
        elif chunk == CONTEXT_PART:
            made = (context_digest, context_text(context, summary, description, body) if context_digest else None)
        else:
            if tails is None:  # cut once for all the tail parts asked for
                tails = tail_parts(summary, description, body) if tail_digest else []
            made = (tail_digest, tails[chunk - 1] if 0 < chunk <= len(tails) else None)
        if made[0] and made[1] is not None:
            out.append(_Part(path, chunk, made[0], made[1]))
    return out


def part_text(conn: sqlite3.Connection, path: str, chunk: int) -> tuple[str, str] | None:
    """(digest, text) of a file's part as it is now; None when the file or the part is gone."""
    row = conn.execute(_PART_SQL, (path,)).fetchone()
    found = _parts_of(tuple(row), [chunk]) if row is not None else []
    return (found[0].digest, found[0].text) if found else None


def _heads(rows: list[tuple[Any, ...]]) -> list[_Part]:
    return [part for r in rows if not r[8] for part in _parts_of(r, [0])]


def _contexts(rows: list[tuple[Any, ...]]) -> list[_Part]:
    """The context parts still to embed: a file's context, then its head (chunking.context_text)."""
    return [part for r in rows if not r[11] for part in _parts_of(r, [CONTEXT_PART])]


def _tails(conn: sqlite3.Connection, model: str, rows: list[tuple[Any, ...]]) -> list[_Part]:
    """The tail parts still to embed: cut only now, since a budgeted pass seldom gets this far."""
    out: list[_Part] = []
    for row in rows:
        path, tail_digest, parts, done = row[0], row[2], row[10], row[9]
        if parts <= 1 or done >= parts - 1 or not tail_digest:
            continue
        have = set() if not done else {
            r[0] for r in conn.execute(
                "SELECT chunk FROM vectors WHERE path = ? AND model = ? AND chunk > 0 AND text_digest = ?",
                (path, model, tail_digest),
            )
        }
        out.extend(_parts_of(row, [i for i in range(1, parts) if i not in have]))
    return out


def _reuse(conn: sqlite3.Connection, model: str, todo: list[_Part]) -> list[_Part]:
    """Parts whose vector the mirror already holds under another path: copied, not embedded again.

    The same text has the same digest wherever it lives, so a renamed file, one that left
    and came back (a branch switch) and a copy cost a lookup. Returns what is left to embed.
    """
    if not todo:
        return todo
    wanted = {(p.chunk, p.digest) for p in todo}
    found: dict[tuple[int, str], tuple[int, bytes]] = {}
    digests = sorted({digest for _, digest in wanted})
    for start in range(0, len(digests), 500):
        chunk_of = digests[start : start + 500]
        marks = ",".join("?" * len(chunk_of))
        for chunk, text_digest, dim, vec in conn.execute(
            f"SELECT chunk, text_digest, dim, vec FROM vectors WHERE model = ? AND text_digest IN ({marks})",
            [model, *chunk_of],
        ):
            if (chunk, text_digest) in wanted and len(vec) == dim * 2:
                found[(chunk, text_digest)] = (dim, vec)
    if not found:
        return todo
    copies = [(p, found[(p.chunk, p.digest)]) for p in todo if (p.chunk, p.digest) in found]
    with transaction(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO vectors (path, model, chunk, text_digest, dim, vec) VALUES (?, ?, ?, ?, ?, ?)",
            [(p.path, model, p.chunk, p.digest, dim, vec) for p, (dim, vec) in copies],
        )
    return [p for p in todo if (p.chunk, p.digest) not in found]


def embed_pending(
    conn: sqlite3.Connection,
    embedder: Embedder,
    *,
    budget_s: float | None = None,
    max_files: int | None = None,
    heads_only: bool = False,
    progress: Callable[[int, int], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> EmbedReport:
    """Embed the parts without a current vector, batch by batch, until done, out of time or at max_files.

    budget_s bounds the pass's elapsed time (checked between batches, so one batch may
    run past it); None means no bound. The pass stops early, never half-writes a batch.
    heads_only leaves tail parts for a later pass (context parts, one a file at most, are
    made with the heads). progress(done, total) counts parts.
    """
    report = EmbedReport(embedder.key)
    budget_s = None if budget_s is None else max(0.0, budget_s)
    started = clock()
    with transaction(conn):  # vectors of another model (an upgrade, a downgrade) are never used again
        conn.execute("DELETE FROM vectors WHERE model != ?", (embedder.key,))
    rows = _pending_rows(conn, embedder.key, max_files)
    touched: set[str] = set()
    # Heads of every file first, then contexts, then tails: a pass cut short leaves the most files ranked by meaning.
    phases = [lambda: _heads(rows), lambda: _contexts(rows)]
    phases += [] if heads_only else [lambda: _tails(conn, embedder.key, rows)]
    # counted from the rows before the tails are cut, so progress runs to one total and never restarts
    tails_left = 0 if heads_only else sum(max(0, r[10] - 1 - r[9]) for r in rows if r[10] > 1 and r[2])
    for number, phase in enumerate(phases):
        if budget_s is not None and report.parts and clock() - started >= budget_s:
            break
        wanted = phase()
        todo = _reuse(conn, embedder.key, wanted)
        report.reused += len(wanted) - len(todo)
        total = report.parts + len(todo) + (tails_left if number < 2 else 0)
        for start in range(0, len(todo), BATCH):
            if budget_s is not None and report.parts and clock() - started >= budget_s:
                break
            batch = todo[start : start + BATCH]
            vectors = embedder.passages([p.text for p in batch])
            _store(conn, embedder, batch, vectors)
            touched.update(p.path for p in batch)
            report.parts += len(batch)
            if progress:
                progress(report.parts, total)
    report.embedded = len(touched)
    report.seconds = round(clock() - started, 3)
    report.pending = pending_count(conn, embedder.key)
    return report


def _store(conn: sqlite3.Connection, embedder: Embedder, batch: list[_Part], vectors: np.ndarray) -> None:
    rows = [
        (p.path, embedder.key, p.chunk, p.digest, embedder.dim, _pack(vec), p.path, p.chunk, p.chunk, p.digest)
        for p, vec in zip(batch, vectors, strict=True)
    ]
    paths = sorted({p.path for p in batch})
    with transaction(conn):  # one short write; a file edited meanwhile keeps no vector of its old text
        conn.executemany(
            "INSERT OR REPLACE INTO vectors (path, model, chunk, text_digest, dim, vec) "
            "SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM files WHERE path = ? "
            f"AND ({_DIGEST.format(chunk='?', f='')}) = ?)",
            rows,
        )
        # Tail parts of an older tail (the file was edited, perhaps grew shorter) go.
        marks = ",".join("?" * len(paths))
        conn.execute(
            f"DELETE FROM vectors WHERE model = ? AND chunk > 0 AND path IN ({marks}) AND text_digest IS NOT "
            "(SELECT tail_digest FROM files WHERE files.path = vectors.path)",
            [embedder.key, *paths],
        )


@dataclass
class Nearness:
    """The vector side of one question: each searchable file with a current vector."""

    paths: list[str]
    scores: np.ndarray  # the file's best part's cosine, less the part penalty; blended with a context part's
    kinds: list[str]
    best_part: list[int]  # which of its own parts was nearest (0 = the head)


def similarities(conn: sqlite3.Connection, model: str, query: np.ndarray, type_: str | None) -> Nearness:
    """Every searchable file with a current vector, scored by its nearest part."""
    import numpy as np

    dim = int(query.shape[0])
    where = "f.kind != 'derived'" if type_ is None else "(f.type = ? OR f.kind = ?)"
    params: list[Any] = [model, dim] + ([] if type_ is None else [type_, type_])
    every = conn.execute(
        f"SELECT v.path, v.vec, f.kind, v.chunk FROM vectors v JOIN files f ON f.path = v.path AND {_CURRENT} "
        f"WHERE v.model = ? AND v.dim = ? AND {where} ORDER BY v.path, v.chunk",
        params,
    ).fetchall()
    every = [r for r in every if len(r[1]) == dim * 2]  # a damaged blob is skipped, not trusted
    rows = [r for r in every if r[3] != CONTEXT_PART]
    contexts = [r for r in every if r[3] == CONTEXT_PART]
    if not rows:
        return Nearness([], np.zeros(0, dtype=np.float32), [], [])
    cosines = _unpack([r[1] for r in rows], dim) @ query
    starts = [i for i in range(len(rows)) if i == 0 or rows[i][0] != rows[i - 1][0]]
    counts = np.diff([*starts, len(rows)])
    nearest = np.maximum.reduceat(cosines, starts)
    group = np.repeat(np.arange(len(starts)), counts)
    _, first = np.unique(group[cosines == nearest[group]], return_index=True)
    best_row = np.flatnonzero(cosines == nearest[group])[first]
    # The best of many parts is high by chance alone (a ten-part memory on the data
    # warehouse came 0.02 nearer "when does the pet get her shots" than its head did): a
    # file is scored by its best part less PART_PENALTY for each e-fold of parts.
    scores = (nearest - PART_PENALTY * np.log(counts)).astype(np.float32)
    paths = [rows[i][0] for i in starts]
    if contexts:
        _with_context(scores, paths, contexts, _unpack([r[1] for r in contexts], dim) @ query)
    return Nearness(paths, scores, [rows[i][2] for i in starts], [int(rows[i][3]) for i in best_row])


def _with_context(scores: np.ndarray, paths: list[str], contexts: list[Any], near_context: np.ndarray) -> None:
    """Files with a context part: scored CONTEXT_WEIGHT by that part's cosine, the rest by their own (in place).

    The context says what an excerpt replied to, not what it says: counted whole, a reply
    ("Yes, on Tuesdays.") would answer every question its neighbour does. On turn-level LoCoMo
    with each turn's previous one as its context (BENCHMARKS.md, "Turns with context"), this
    blend at 0.3 gave success@1/@5 0.461 / 0.722 against 0.455 / 0.696 for the plain turns; a
    lift that never lowers a file (the head's cosine raised 0.3 of the way to the context
    part's, when above its own) 0.457 / 0.714. At 0.5 the blend gave 0.458 / 0.736, but the
    context then counts as much as the memory's own text.
    """
    at = {path: i for i, path in enumerate(paths)}
    for row, near in zip(contexts, near_context, strict=True):
        i = at.get(row[0])
        if i is not None:  # no own vector yet: its context alone says nothing of it
            scores[i] = (1 - CONTEXT_WEIGHT) * scores[i] + CONTEXT_WEIGHT * float(near)


def background(conn: sqlite3.Connection, embedder: Embedder) -> np.ndarray:
    """The vectors of memstore.meaning.background's sentences for this model: made once, then kept in the mirror."""
    import numpy as np

    from memstore.meaning.background import SENTENCES

    key = digest("\n".join(SENTENCES).encode("utf-8"))
    cached = _BACKGROUND.get(embedder.key)
    if cached is not None and cached[0] == key:
        return cached[1]
    row = conn.execute("SELECT digest, dim, vecs FROM background WHERE model = ?", (embedder.key,)).fetchone()
    if row is not None and row[0] == key and row[1] == embedder.dim and len(row[2]) == 2 * row[1] * len(SENTENCES):
        vecs = _unpack([row[2]], embedder.dim * len(SENTENCES)).reshape(len(SENTENCES), embedder.dim)
    else:
        vecs = embedder.passages(list(SENTENCES))
        try:
            with transaction(conn):
                conn.execute(
                    "INSERT OR REPLACE INTO background (model, digest, dim, vecs) VALUES (?, ?, ?, ?)",
                    (embedder.key, key, embedder.dim, _pack(np.asarray(vecs))),
                )
        except sqlite3.OperationalError:
            pass  # a mirror this process cannot write: made again next time, nothing lost
    _BACKGROUND[embedder.key] = (key, vecs)
    return vecs


_BACKGROUND: dict[str, tuple[str, Any]] = {}


def carry_over(fresh: sqlite3.Connection, old_path: Path) -> int:
    """Copy the old mirror's vectors into a freshly built one (a rebuild); stale ones are simply never used.

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
        chunk = "v.chunk" if "chunk" in old_columns else "0"  # a mirror from before m010 holds heads only
        with transaction(fresh):
            cursor = fresh.execute(
                "INSERT OR IGNORE INTO vectors (path, model, chunk, text_digest, dim, vec) "
                f"SELECT v.path, v.model, {chunk}, v.text_digest, v.dim, v.vec FROM old.vectors v "
                f"JOIN files f ON f.path = v.path AND v.text_digest = {_DIGEST.format(chunk=chunk, f='f.')} "
                "WHERE length(v.vec) = v.dim * 2"
            )
            carried = max(cursor.rowcount, 0)
            if "background" in {r[0] for r in fresh.execute("SELECT name FROM old.sqlite_master")}:
                fresh.execute("INSERT OR IGNORE INTO background SELECT model, digest, dim, vecs FROM old.background")
            return carried
    except sqlite3.DatabaseError:
        return 0
    finally:
        try:
            fresh.execute("DETACH DATABASE old")
        except sqlite3.DatabaseError:
            pass

"""Vectors in the mirror: which parts of which files need embedding, embedding them, and search.

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
Store, which the hook never loads, but `status` should not pay for numpy either. The SQL
is memstore.meaning.vector_store's.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from memstore.meaning import vector_store as store
from memstore.meaning.background import SENTENCES
from memstore.meaning.chunking import CONTEXT_PART, context_text, digest, embed_text, tail_parts

# the counts and the rebuild's copy are plain SQL, kept with the rest of it; named here for callers
from memstore.meaning.vector_store import carry_over as carry_over
from memstore.meaning.vector_store import embedded_count as embedded_count
from memstore.meaning.vector_store import pending_count as pending_count
from memstore.meaning.vector_store import searchable_count as searchable_count

if TYPE_CHECKING:
    import numpy as np

    from memstore.meaning.embedding import Embedder

BATCH = 16
PART_PENALTY = 0.005
CONTEXT_WEIGHT = 0.3


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
            text += (f"; {self.reused} {many} already had a vector "
                     "(a renamed, copied or restored file)")
        if self.pending:
            text += f"; {self.pending} files with parts still to embed (run: memstore embed)"
        return text


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


def _pending_rows(conn: sqlite3.Connection, model: str, max_files: int | None
                  ) -> list[tuple[Any, ...]]:
    rows = store.pending_rows(conn, model)
    return rows if max_files is None else rows[: max(0, max_files)]


def _parts_of(row: tuple[Any, ...], chunks: list[int]) -> list[_Part]:
    """The parts `chunks` of a file as its row (store.made_of) holds it now: 0 the head,
    CONTEXT_PART its context, 1.. its tail; one the file does not have is left out. The one
    place a part's text and digest are chosen."""
    path, head_digest, tail_digest, context_digest, context, summary, description, body = row[:8]
    out: list[_Part] = []
    tails: list[str] | None = None
    for chunk in chunks:
        if chunk == 0:
            made: tuple[str | None, str | None] = (head_digest,
                                                   embed_text(summary, description, body))
        elif chunk == CONTEXT_PART:
            made = (context_digest,
                    context_text(context, summary, description, body) if context_digest else None)
        else:
            if tails is None:  # cut once for all the tail parts asked for
                tails = tail_parts(summary, description, body) if tail_digest else []
            made = (tail_digest, tails[chunk - 1] if 0 < chunk <= len(tails) else None)
        if made[0] and made[1] is not None:
            out.append(_Part(path, chunk, made[0], made[1]))
    return out


def part_text(conn: sqlite3.Connection, path: str, chunk: int) -> tuple[str, str] | None:
    """(digest, text) of a file's part as it is now; None when the file or the part is gone."""
    row = store.made_of(conn, path)
    found = _parts_of(row, [chunk]) if row is not None else []
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
        have = store.current_tails(conn, model, path, tail_digest) if done else set()
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
    kept = store.vectors_by_digest(conn, model, [p.digest for p in todo])
    found = {key: value for key, value in kept.items() if key in wanted}
    if not found:
        return todo
    store.copy_vectors(conn, model, [(p.path, p.chunk, p.digest, *found[(p.chunk, p.digest)])
                                     for p in todo if (p.chunk, p.digest) in found])
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
    """Embed the parts without a current vector, batch by batch: until done, out of time or full.

    budget_s bounds the pass's elapsed time (checked between batches, so one batch may
    run past it); None means no bound. The pass stops early, never half-writes a batch.
    heads_only leaves tail parts for a later pass (context parts, one a file at most, are
    made with the heads). progress(done, total) counts parts.
    """
    report = EmbedReport(embedder.key)
    budget_s = None if budget_s is None else max(0.0, budget_s)
    started = clock()
    store.drop_other_models(conn, embedder.key)  # an upgrade's or a downgrade's: never used again
    rows = _pending_rows(conn, embedder.key, max_files)
    touched: set[str] = set()
    # Heads of every file first, then contexts, then tails: a pass cut short leaves the most files
    # ranked by meaning.
    phases = [lambda: _heads(rows), lambda: _contexts(rows)]
    phases += [] if heads_only else [lambda: _tails(conn, embedder.key, rows)]
    # counted from the rows before the tails are cut: progress runs to one total, never restarts
    tails_left = 0 if heads_only else sum(max(0, r[10] - 1 - r[9])
                                          for r in rows if r[10] > 1 and r[2])
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
    if touched:
        keep_background(conn, embedder)
    report.seconds = round(clock() - started, 3)
    report.pending = pending_count(conn, embedder.key)
    return report


def _store(conn: sqlite3.Connection, embedder: Embedder, batch: list[_Part], vectors: np.ndarray
           ) -> None:
    made = [(p.path, p.chunk, p.digest, _pack(vec)) for p, vec in zip(batch, vectors, strict=True)]
    store.keep_vectors(conn, embedder.key, embedder.dim, made)


@dataclass
class Nearness:
    """The vector side of one question: each searchable file with a current vector."""

    paths: list[str]
    # the file's best part's cosine, less the part penalty; blended with a context part's
    scores: np.ndarray
    kinds: list[str]
    best_part: list[int]  # which of its own parts was nearest (0 = the head)


@dataclass
class Kept:
    """Every current vector of the searchable files, unpacked once: a warm process (the prompt's
    meaning, mirror/meaning_server.py) keeps it between questions; a search makes it each time."""

    paths: list[str]  # one per file, in the order of its first row
    kinds: list[str]
    matrix: np.ndarray  # one row per part, grouped by file
    starts: list[int]  # each file's first row
    counts: np.ndarray  # each file's number of parts
    chunks: list[int]  # each row's part number
    context_paths: list[str]
    context_matrix: np.ndarray


def keep(conn: sqlite3.Connection, model: str, dim: int, type_: str | None) -> Kept:
    """The current vectors of every searchable file (of `type_`, a type or a kind, when given)."""
    import numpy as np

    # a damaged blob is skipped, not trusted
    every = [r for r in store.current_vectors(conn, model, dim, type_) if len(r[1]) == dim * 2]
    rows = [r for r in every if r[3] != CONTEXT_PART]
    contexts = [r for r in every if r[3] == CONTEXT_PART]
    starts = [i for i in range(len(rows)) if i == 0 or rows[i][0] != rows[i - 1][0]]
    return Kept([rows[i][0] for i in starts], [rows[i][2] for i in starts],
                _unpack([r[1] for r in rows], dim), starts,
                np.diff([*starts, len(rows)]).astype(np.int64), [int(r[3]) for r in rows],
                [r[0] for r in contexts], _unpack([r[1] for r in contexts], dim))


def nearness(kept: Kept, query: np.ndarray, parts: bool = True) -> Nearness:
    """Each file of `kept` scored against the question by its nearest part (and, with `parts`,
    which part that was)."""
    import numpy as np

    if not kept.paths:
        return Nearness([], np.zeros(0, dtype=np.float32), [], [])
    cosines = kept.matrix @ query
    starts, counts = kept.starts, kept.counts
    nearest = np.maximum.reduceat(cosines, starts)
    best_row: list[int] = []
    if parts:
        group = np.repeat(np.arange(len(starts)), counts)
        _, first = np.unique(group[cosines == nearest[group]], return_index=True)
        best_row = np.flatnonzero(cosines == nearest[group])[first].tolist()
    # The best of many parts is high by chance alone (a ten-part memory on the data
    # warehouse came 0.02 nearer "when does the pet get her shots" than its head did): a
    # file is scored by its best part less PART_PENALTY for each e-fold of parts.
    scores = (nearest - PART_PENALTY * np.log(counts)).astype(np.float32)
    if kept.context_paths:
        _with_context(scores, kept.paths, kept.context_paths, kept.context_matrix @ query)
    return Nearness(list(kept.paths), scores, list(kept.kinds),
                    [kept.chunks[i] for i in best_row])


def similarities(conn: sqlite3.Connection, model: str, query: np.ndarray, type_: str | None
                 ) -> Nearness:
    """Every searchable file with a current vector, scored by its nearest part."""
    return nearness(keep(conn, model, int(query.shape[0]), type_), query)


def _with_context(scores: np.ndarray, paths: list[str], contexts: list[str],
                  near_context: np.ndarray) -> None:
    """In place: a file with a context part scores CONTEXT_WEIGHT by its cosine, the rest by own.

    The context says what an excerpt replied to, not what it says: counted whole, a reply
    ("Yes, on Tuesdays.") would answer every question its neighbour does. On turn-level LoCoMo
    with each turn's previous one as its context (BENCHMARKS.md, "Turns with context"), this
    blend at 0.3 gave success@1/@5 0.461 / 0.722 against 0.455 / 0.696 for the plain turns; a
    lift that never lowers a file (the head's cosine raised 0.3 of the way to the context
    part's, when above its own) 0.457 / 0.714. At 0.5 the blend gave 0.458 / 0.736, but the
    context then counts as much as the memory's own text.
    """
    at = {path: i for i, path in enumerate(paths)}
    for path, near in zip(contexts, near_context, strict=True):
        i = at.get(path)
        if i is not None:  # no own vector yet: its context alone says nothing of it
            scores[i] = (1 - CONTEXT_WEIGHT) * scores[i] + CONTEXT_WEIGHT * float(near)


def background(conn: sqlite3.Connection, embedder: Embedder, bulk: bool = True) -> np.ndarray:
    """This model's vectors of meaning.background's sentences: made once, kept in the mirror.
    bulk=False: made without the bulk engine, which a process with nowhere to keep them would
    otherwise hold (a few hundred megabytes) for these 48 sentences only."""
    key = digest("\n".join(SENTENCES).encode("utf-8"))
    cached = _BACKGROUND.get(embedder.key)
    if cached is not None and cached[0] == key:
        return cached[1]
    return _background_kept(conn, embedder, key, bulk)


def keep_background(conn: sqlite3.Connection, embedder: Embedder) -> None:
    """The background's vectors kept in this mirror (the embedding pass's last step), so the warm
    prompt process, which reads the mirror read-only, never has to make them."""
    key = digest("\n".join(SENTENCES).encode("utf-8"))
    _background_kept(conn, embedder, key, True)


def _background_kept(conn: sqlite3.Connection, embedder: Embedder, key: str, bulk: bool
                     ) -> np.ndarray:
    import numpy as np

    row = store.kept_background(conn, embedder.key)
    if (row is not None and row[0] == key and row[1] == embedder.dim
            and len(row[2]) == 2 * row[1] * len(SENTENCES)):
        vecs = (_unpack([row[2]], embedder.dim * len(SENTENCES))
                .reshape(len(SENTENCES), embedder.dim))
    else:
        cached = _BACKGROUND.get(embedder.key)
        vecs = (cached[1] if cached is not None and cached[0] == key
                else embedder.passages(list(SENTENCES), bulk=bulk))
        try:
            store.keep_background(conn, embedder.key, key, embedder.dim, _pack(np.asarray(vecs)))
        except sqlite3.OperationalError:
            pass  # a mirror this process cannot write: made again next time, nothing lost
    _BACKGROUND[embedder.key] = (key, vecs)
    return vecs


_BACKGROUND: dict[str, tuple[str, Any]] = {}

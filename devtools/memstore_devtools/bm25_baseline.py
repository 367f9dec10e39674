"""Plain Okapi BM25: the reference baseline for memstore's search evaluation.

This is deliberately the simplest defensible keyword ranker, so that memstore's FTS5
search has an honest yardstick (the data README quotes about 0.54 success@5 on the
LoCoMo dev split for "a plain Okapi BM25 ... stop words removed"):

- tokenizer: lowercase, runs of ASCII letters/digits; no stemming;
- a fixed English stop-word list (``STOP_WORDS``) removed from documents and queries;
- Okapi BM25 with k1=1.2, b=0.75 and the non-negative idf
  ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (the classic Robertson idf goes negative for
  terms in more than half the documents, which would punish a match);
- each distinct query term counted once; ties broken by document order so runs are
  reproducible.

Standard library only. Also usable by hand::

    .venv/bin/python scripts/bm25_baseline.py DIR "what did Caroline research?"

which ranks every ``*.md`` file under DIR (whole file text) and prints the top 10.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

K1 = 1.2
B = 0.75

# A standard English stop list (function words, auxiliaries, pronouns, question words),
# written out here so the baseline is fixed and self-contained. Question words matter:
# LoCoMo queries are questions, and "what"/"when"/"did" match nearly every turn.
# Single letters cover contraction fragments left by the tokenizer ("caroline's" ->
# "caroline", "s"; "don't" -> "don", "t").
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are aren as at
    be because been before being below between both but by
    can cannot could couldn
    d did didn do does doesn doing don down during
    each few for from further
    had hadn has hasn have haven having he her here hers herself him himself his how
    i if in into is isn it its itself
    just ll m me more most my myself
    no nor not now o of off on once only or other ought our ours ourselves out over own
    re s same shan she should shouldn so some such
    t than that the their theirs them themselves then there these they this those
    through to too under until up us
    ve very was wasn we were weren what when where which while who whom why will with
    won would wouldn y you your yours yourself yourselves
    """.split()
)

_TOKEN_RE = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens with stop words removed (no stemming)."""
    return [tok for tok in _TOKEN_RE.findall(text.lower()) if tok not in STOP_WORDS]


class BM25Index:
    """An in-memory Okapi BM25 index over a fixed list of documents."""

    def __init__(self, docs: Iterable[str], k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        # Postings: term -> list of (doc index, term frequency); scoring walks only the
        # postings of the query's terms, so a query costs O(matching postings).
        self.postings: dict[str, list[tuple[int, int]]] = {}
        self.doc_len: list[int] = []
        for doc_id, text in enumerate(docs):
            counts = Counter(tokenize(text))
            self.doc_len.append(sum(counts.values()))
            for term, tf in counts.items():
                self.postings.setdefault(term, []).append((doc_id, tf))
        self.n_docs = len(self.doc_len)
        self.avg_len = (sum(self.doc_len) / self.n_docs) if self.n_docs else 0.0

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> dict[int, float]:
        """BM25 score of every document sharing at least one query term."""
        acc: dict[int, float] = {}
        if not self.n_docs:
            return acc
        avg = self.avg_len or 1.0
        for term in dict.fromkeys(tokenize(query)):  # distinct terms, query order
            plist = self.postings.get(term)
            if not plist:
                continue
            idf = self.idf(term)
            for doc_id, tf in plist:
                norm = self.k1 * (1.0 - self.b + self.b * self.doc_len[doc_id] / avg)
                acc[doc_id] = acc.get(doc_id, 0.0) + idf * tf * (self.k1 + 1.0) / (tf + norm)
        return acc

    def search(self, query: str, limit: int = 10) -> list[tuple[int, float]]:
        """Top ``limit`` (doc index, score) pairs, best first, ties by doc order."""
        ranked = sorted(self.scores(query).items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:limit]


def main(argv: Sequence[str] | None = None) -> int:
    """The command line of scripts/bm25_baseline.py: ``DIR QUERY``."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: bm25_baseline.py DIR QUERY", file=sys.stderr)
        return 2
    root = Path(argv[0])
    paths = sorted(root.rglob("*.md"))
    index = BM25Index(p.read_text(encoding="utf-8", errors="replace") for p in paths)
    for doc_id, score in index.search(argv[1]):
        print(f"{score:8.3f}  {paths[doc_id].relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

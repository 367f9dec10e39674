"""What a prompt means, measured against a root's memories: the meaning side of the pointers.

The prompt hook (memstore.core.pointers) finds memories by their words; a prompt that paraphrases
one shares none. This module scores every memory by the cosine of its nearest part
(meaning.vectors.nearness) and keeps it as its height over what an unrelated text reaches for
this prompt: the nearest of meaning.background's ordinary sentences, raised by how much nearer the
best of n files comes by chance (as hybrid search does). Each memory has a floor of its own, made
from the pointers' probe prompts (core.pointers.PROBES, prompts nothing answers): the highest
height any probe reaches on that memory, and never under the root's shared floor (the probes'
best heights but the SHARED highest, never under MIN_HEIGHT). In a coding root, chatter such as
"count the lines of code" comes near the notes on log formats; it no longer silences a note on a
dog's vaccines. A memory is then given as its height over its floor: 1.0 is just confident.

One `PromptMeaning` lives in the warm process that answers the hook (mirror/meaning_server.py):
the model, the vectors and the probes' vectors are loaded once, and each prompt costs one query
embedding and one matrix product.
"""

from __future__ import annotations

import math
import sqlite3
from typing import TYPE_CHECKING

from memstore.core.pointers import PROBES
from memstore.meaning.vectors import Kept, background, keep, nearness

if TYPE_CHECKING:
    import numpy as np

    from memstore.meaning.embedding import Embedder

MIN_HEIGHT = 0.02  # a floor never under this: a memory must stand clear of plain sentences
MARGIN = 0.005  # the floor sits just over the probes' heights
# the root-wide floor is over all but this many of the probes' best heights. Measured with
# scripts/eval_pointers.py --meaning (tuning questions, 2026-12-05) against one floor for every
# memory over all but one probe: LoCoMo recall 0.631 to 0.639, LongMemEval 0.747 to 0.747,
# off-topic 8 to 9 of 210; in a newcomer's mixed root of 197, 1 to 3 of 10 paraphrases pointed
SHARED = 4
MAX_CHARS = 600  # of the prompt embedded: its subject is at its start; 1,500 took 270 ms of 350
KIND = "t2"  # memories only: a pointer is an index row


class PromptMeaning:
    """The model and one root's memory vectors, kept warm between prompts."""

    def __init__(self, embedder: Embedder, bulk: bool = True) -> None:
        self.embedder = embedder
        self.bulk = bulk  # False in the warm process: the bulk engine is not kept for 48 lines
        self.kept: Kept | None = None
        self.floor = MIN_HEIGHT
        self.floors: np.ndarray | None = None
        self._plain: np.ndarray | None = None
        self._probes: np.ndarray | None = None

    def load(self, conn: sqlite3.Connection) -> None:
        """Read the root's memory vectors again (after the mirror changed) and measure the floor."""
        import numpy as np

        self.kept = keep(conn, self.embedder.key, self.embedder.dim, KIND)
        if self._plain is None:
            self._plain = background(conn, self.embedder, self.bulk)
        if self._probes is None:
            self._probes = np.stack([self.embedder.query(p) for p in PROBES])
        reached = np.stack([self._heights(q)[1] for q in self._probes]) if self.kept.paths \
            else np.zeros((len(self._probes), 0), dtype=np.float32)
        tops = sorted((float(r.max()) if r.size else 0.0 for r in reached), reverse=True)
        self.floor = max(MIN_HEIGHT, tops[SHARED] if len(tops) > SHARED else 0.0) + MARGIN
        # a memory the probes come near keeps its own higher floor; the rest share the root's
        self.floors = np.maximum(reached.max(axis=0) + MARGIN, self.floor) if reached.size \
            else np.zeros(0, dtype=np.float32)

    def _heights(self, query: np.ndarray) -> tuple[list[str], np.ndarray]:
        """Each memory's height over what an unrelated text reaches for this query."""
        assert self.kept is not None and self._plain is not None
        near = nearness(self.kept, query, parts=False)
        if not near.paths:
            return [], near.scores
        plain = self._plain @ query
        # the best of n unrelated files is nearer than the best of the 48 sentences by chance
        lift = max(0.0, math.sqrt(2 * math.log(max(len(near.paths), 2)))
                   - math.sqrt(2 * math.log(len(plain))))
        unrelated = float(plain.max()) + float(plain.std()) * lift
        return near.paths, near.scores - unrelated

    def ask(self, prompt: str, limit: int) -> list[tuple[str, float]]:
        """The `limit` memories nearest the prompt with a height over zero, each as (root-relative
        path, height over the floor), best first."""
        if self.kept is None or not self.kept.paths or not prompt.strip():
            return []
        import numpy as np

        paths, heights = self._heights(self.embedder.query(prompt[:MAX_CHARS]))
        if not len(paths):
            return []
        assert self.floors is not None
        over = heights / self.floors  # each memory against its own floor: 1.0 is just confident
        # the best `limit` picked by numpy: sorting 20,000 in Python took 13 ms a prompt
        best = np.argpartition(-over, limit - 1)[:limit] if len(paths) > limit else \
            np.arange(len(paths))
        order = sorted(best.tolist(), key=lambda i: (-float(over[i]), paths[i]))
        return [(paths[i], round(float(over[i]), 4)) for i in order if over[i] > 0]

    @property
    def size(self) -> int:
        return len(self.kept.paths) if self.kept is not None else 0

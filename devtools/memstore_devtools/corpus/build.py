"""`generate_corpus`: make the folders, write every file in a fixed order, count them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from memstore_devtools.corpus.fixed import _identity_text
from memstore_devtools.corpus.generator import _Gen
from memstore_devtools.corpus.other_files import (
    _plan_sits,
    _write_bugs,
    _write_dreams,
    _write_lenses,
    _write_meditations,
    _write_short_term,
)
from memstore_devtools.corpus.output import _write
from memstore_devtools.corpus.spec import T2_TYPES, CorpusSpec, _check_spec
from memstore_devtools.corpus.t2 import _plan_t2, _render_t2
from memstore_devtools.corpus.vocabulary import _words

# Keys of the dict `generate_corpus` returns (plus t2_<type> and the non-T2 folders).
_COUNT_KEYS = _words(
    """
files, t2, well_formed, anchors, malformed, reinforced, pinned, superseded, in_flight,
newborn, long_summary, long_body, no_summary, no_summary_no_description, importance,
zero_policy, no_policy
"""
)


def generate_corpus(
    root: Path,
    spec: CorpusSpec = CorpusSpec(),  # noqa: B008 - never mutated
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Write a whole agent root under `root` (created if missing).

    Deterministic for a given spec (same bytes every time). Returns counts by category.
    Existing files with the same names are overwritten; nothing else is removed.
    """
    _check_spec(spec)
    g = _Gen(spec)
    root = Path(root)
    mem = root / "memory"
    for d in (
        mem,
        mem / "short-term",
        mem / "dream-journal",
        mem / "bugs",
        root / "lenses",
        root / "meditations",
    ):
        d.mkdir(parents=True, exist_ok=True)

    plans = _plan_t2(g)
    total = (1 + len(plans) + spec.short_term + spec.dream + spec.bugs + spec.lenses
             + spec.meditations)
    step = max(1, total // 200)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None and (done % step == 0 or done == total):
            progress(done, total)

    counts: dict[str, int] = dict.fromkeys(_COUNT_KEYS, 0)
    for t in T2_TYPES:
        counts[f"t2_{t}"] = 0

    _write(root / "identity.md", _identity_text().encode(), g.epoch(g.today - timedelta(days=200)))
    tick()

    for plan in plans:
        data, mtime, cats = _render_t2(g, plan, plans)
        _write(mem / f"{plan.name}.md", data, mtime)
        for c in cats:
            counts[c] += 1
        counts["t2"] += 1
        counts[f"t2_{plan.t2type}"] += 1
        tick()

    objects, dream_objects, last_used = _plan_sits(g)
    _write_meditations(g, root / "meditations", objects, last_used, tick)
    _write_dreams(g, mem / "dream-journal", dream_objects, tick)
    _write_short_term(g, mem / "short-term", tick)
    _write_bugs(g, mem / "bugs", tick)
    _write_lenses(g, root / "lenses", tick)

    counts["short_term"] = spec.short_term
    counts["dream"] = spec.dream
    counts["bugs"] = spec.bugs
    counts["lenses"] = spec.lenses
    counts["meditations"] = spec.meditations
    counts["identity"] = 1
    counts["files"] = done
    return counts

#!/usr/bin/env python3
"""Paraphrases found and unrelated questions answered by nothing, on the hand-written agent set.

tests/data/agent_recall.json: twenty memories as an agent writes them, fourteen questions
that paraphrase one of them, ten questions nothing in the root answers (off-topic) and four
on the root's subjects that nothing answers either. Each is asked of four roots (small:
the memories and `memstore init`'s starters; large: with 400 generated work notes; "tail":
the staging-database memory's line at the end of a 5 KB memory instead; "log": that line one
item of a household log under the summary "Household and hobby log"), by hybrid search
with the latent-term second opinion (memstore/meaning/latents.py) and without it, side by
side in one run. Needs the `semantic` extra.

    .venv/bin/python scripts/eval_paraphrase.py
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

VARIANTS = {"small": {}, "small, tail": {"tail_of": "reference_db2-restart"},
            "small, log": {"in_log": "reference_db2-restart"},
            "large": {"large": True},
            "large, tail": {"large": True, "tail_of": "reference_db2-restart"},
            "large, log": {"large": True, "in_log": "reference_db2-restart"}}


def main() -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    os.environ.setdefault("MEMSTORE_SEMANTIC", "auto")
    os.environ.setdefault("MEMSTORE_EMBED_BACKGROUND", "off")
    from tabulate import tabulate

    import memstore.mirror.hybrid as hybrid
    from memstore import Store
    from memstore_devtools import agent_recall

    rows = []
    default = hybrid.RESCUE
    with tempfile.TemporaryDirectory(prefix="memstore-paraphrase-") as tmp:
        for label, options in VARIANTS.items():
            root = Path(tmp) / label.replace(", ", "-") / "agent"
            data = agent_recall.build(root, **options)  # type: ignore[arg-type]
            store = Store(root)
            store.sync()
            store.embed()
            for mode, rescue in (("without latent terms", 0), ("with latent terms", default)):
                hybrid.RESCUE = rescue
                top3 = top1 = 0
                started = time.perf_counter()
                for item in data["paraphrases"]:
                    names = [Path(h.path).stem
                             for h in store.search(item["question"], limit=3, mode="hybrid")]
                    top3 += item["answer"] in names
                    top1 += bool(names) and names[0] == item["answer"]
                first = time.perf_counter() - started
                off = sum(bool(store.search(q, limit=5, mode="hybrid"))
                          for q in data["unanswerable"])
                near = sum(bool(store.search(q, limit=5, mode="hybrid"))
                           for q in data["unanswered_on_topic"])
                started = time.perf_counter()
                for item in data["paraphrases"]:
                    store.search(item["question"], limit=3, mode="hybrid")
                again = time.perf_counter() - started
                n = len(data["paraphrases"])
                rows.append([label, mode, f"{top3}/{n}", f"{top1}/{n}",
                             f"{off}/{len(data['unanswerable'])}",
                             f"{near}/{len(data['unanswered_on_topic'])}",
                             f"{first / n * 1000:.0f}", f"{again / n * 1000:.0f}"])
                print(f"  {label}: {mode} done", file=sys.stderr, flush=True)
        hybrid.RESCUE = default
    print(tabulate(rows, headers=["root", "hybrid", "paraphrase in top 3", "top 1",
                                  "off-topic with hits", "on-topic unanswered with hits",
                                  "ms/question", "ms/question again"],
                   tablefmt="github"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

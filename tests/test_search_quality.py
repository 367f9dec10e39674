"""A guard on search quality over LoCoMo and LongMemEval, in well under a minute (the slow tier).

The figures are the benchmark scripts' (BENCHMARKS.md, "Search quality on memories" and "Recall
on the LoCoMo dev split"): scripts/eval_memories.py and scripts/eval_locomo.py over the dev data
in ../shared/data, beside the checkout. Here the same scripts run where they are cheap: every
question by words alone (both memory-shaped sets, and LoCoMo's turns beside plain BM25 and the
command line), and one LoCoMo root of observations with the model. The floors stand well under
the measured figures: a change that breaks search (tokenising, weights, fusion, the model, the
floor by meaning, a loader that drops data) fails here; a point of drift does not, and the
scripts measure it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"

pytestmark = [
    pytest.mark.skipif(
        not ((DATA / "locomo-dev.json").is_file()
             and (DATA / "longmemeval-oracle-dev.json").is_file()),
        reason=f"LoCoMo or LongMemEval data not found in {DATA} (ships beside the repo in shared/)",
    ),
    # 10-20 s each on two quiet cores; embedding is many times slower under load
    pytest.mark.timeout(900),
]


def evaluate(script: str, tmp_path: Path, *args: str, semantic: str = "off") -> dict[str, Any]:
    """The JSON report of scripts/<script> run with args (MEMSTORE_SEMANTIC=semantic)."""
    out = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / script), *args, "--json", str(out)],
        env={**os.environ, "MEMSTORE_SEMANTIC": semantic}, capture_output=True, text=True,
        check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return dict(json.loads(out.read_text(encoding="utf-8")))


def overall(entry: dict[str, Any]) -> dict[str, float]:
    assert entry["available"], entry.get("why")
    assert entry["errors"] == 0, entry["first_error"]
    return dict(entry["overall"])


def test_words_alone_find_memories_on_both_sets(tmp_path: Path) -> None:
    """Catches: FTS (tokenising, stop words, field weights, the word share) losing recall on
    fact-shaped and session memories, and a loader that drops memories or questions. Measured: s@5
    0.743 on the observations, 0.883 on LongMemEval (BENCHMARKS.md); every question, about 10 s."""
    report = evaluate("eval_memories.py", tmp_path, "--backend", "fts")
    obs, lme = report["sets"]["locomo-observations"], report["sets"]["longmemeval"]
    assert (obs["memories"], obs["roots"], obs["questions"], obs["left_out"]) == (1210, 5, 631, 129)
    assert (lme["memories"], lme["roots"], lme["questions"], lme["left_out"]) == (438, 1, 223, 17)
    assert overall(obs["backends"]["fts"])["s@5"] >= 0.70
    assert overall(lme["backends"]["fts"])["s@5"] >= 0.84


def test_meaning_adds_to_words_and_answers_no_unrelated_question(tmp_path: Path) -> None:
    """Catches: a model, fusion or embedded text that no longer earns its cost, and a floor by
    meaning that lets the least distant memories answer a question nobody spoke of. One LoCoMo root
    of observations (184 memories, 121 questions), embedded: measured FTS s@5 0.702, hybrid
    0.760."""
    report = evaluate("eval_memories.py", tmp_path, "--set", "locomo-observations",
                      "--conversations", "1", "--backend", "all", semantic="auto")
    entry = report["sets"]["locomo-observations"]
    fts, hybrid = overall(entry["backends"]["fts"]), overall(entry["backends"]["hybrid"])
    assert entry["backends"]["hybrid"]["embedded"] >= entry["memories"] == 184
    assert hybrid["s@5"] >= 0.72 and hybrid["s@5"] >= fts["s@5"] + 0.02, (fts, hybrid)
    assert hybrid["s@1"] >= fts["s@1"] and hybrid["s@10"] >= fts["s@10"], (fts, hybrid)
    unrelated = entry["backends"]["hybrid"]["unrelated"]
    assert unrelated["questions"] == 6 and unrelated["by_meaning"] == 0, unrelated["found"]


def test_on_chat_turns_memstore_beats_plain_bm25_and_the_command_line_agrees(
        tmp_path: Path) -> None:
    """Catches: a ranking that no longer clearly beats plain BM25 on LoCoMo's 2,760 chat turns, and
    a command line that returns other hits than the library. Measured: s@5 0.639 against BM25's
    0.595."""
    report = evaluate("eval_locomo.py", tmp_path, "--backend", "bm25,memstore,cli", "--cli-sample",
                      "12")
    bm25, ours = overall(report["backends"]["bm25"]), overall(report["backends"]["memstore"])
    assert ours["n"] == 760 and ours["s@5"] >= 0.60, ours
    assert ours["s@5"] >= bm25["s@5"] + 0.02, (ours, bm25)
    assert overall(report["backends"]["cli"])["n"] == 12
    assert report["cli_agreement"]["same_top10"] == 1.0

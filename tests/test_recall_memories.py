"""Search quality on memories shaped like memories (issue 34): LoCoMo's observations, LongMemEval pooled.

The headline measure (BENCHMARKS.md): one LoCoMo observation per memory file, and every
LongMemEval oracle evidence session of the dev split pooled in one root (definitions in
../shared/data/README.md and memstore_devtools/memories.py). The evaluation runs once, FTS
alone and hybrid on both sets, and the tests read its report. A change to tokenising,
weights, fusion, the model or the embedded text that loses recall on memories fails here;
turn-level LoCoMo (tests/test_search_quality.py) stays the regression guard on chat turns.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_search_quality import STALL_S, run_watched

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"

pytestmark = pytest.mark.skipif(
    not ((DATA / "locomo-dev.json").is_file() and (DATA / "longmemeval-oracle-dev.json").is_file()),
    reason=f"LoCoMo or LongMemEval data not found in {DATA} (ships beside the repo in shared/)",
)

# success@5 floors, a little under what the unchanged product measured on dev (2026-12-01,
# BENCHMARKS.md): a drop of more than about two points is a regression, not noise.
FLOORS = {
    ("locomo-observations", "fts"): 0.73,
    ("locomo-observations", "hybrid"): 0.77,
    ("longmemeval", "fts"): 0.86,
    ("longmemeval", "hybrid"): 0.87,
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("memories") / "memories.json"
    code, stderr = run_watched(
        [sys.executable, str(REPO / "scripts" / "eval_memories.py"), "--set", "all", "--backend", "all",
         "--verbose", "--json", str(out)],  # --verbose: a line per backend, set and root, the watchdog's pulse
        {**os.environ, "MEMSTORE_SEMANTIC": "auto"},  # the hybrid rows need it; conftest turns it off
        STALL_S,
    )
    assert code == 0, stderr[-2000:]
    return json.loads(out.read_text())


def figures(report: dict[str, Any], name: str, backend: str) -> dict[str, Any]:
    entry = report["sets"][name]["backends"][backend]
    assert entry["available"], entry.get("why")
    assert entry["errors"] == 0, entry["first_error"]
    return dict(entry["overall"])


def test_the_sets_are_the_measure_the_data_readme_defines(report: dict[str, Any]) -> None:
    # Failure caught: a loader that silently drops memories or questions (an observation whose
    # source is a list of turns, a session two questions share written twice, _abs asked).
    obs, lme = report["sets"]["locomo-observations"], report["sets"]["longmemeval"]
    assert (obs["memories"], obs["roots"], obs["questions"], obs["left_out"]) == (1210, 5, 631, 129)
    assert (lme["memories"], lme["roots"], lme["questions"], lme["left_out"]) == (438, 1, 223, 17)


@pytest.mark.parametrize("name", ["locomo-observations", "longmemeval"])
def test_words_alone_find_memories(report: dict[str, Any], name: str) -> None:
    # Failure caught: FTS (tokenising, stop words, field weights, the word share) losing recall on
    # fact-shaped memories and session memories.
    s5 = figures(report, name, "fts")["s@5"]
    assert s5 >= FLOORS[(name, "fts")], f"{name}: FTS success@5 fell to {s5:.3f}"


@pytest.mark.parametrize("name", ["locomo-observations", "longmemeval"])
def test_hybrid_finds_memories_and_is_never_worse_than_words_alone(report: dict[str, Any], name: str) -> None:
    # Failure caught: a model, fusion or embedded text that costs recall on memories, or an
    # off-topic floor that throws real answers away (hybrid then falls to or below FTS).
    fts, hybrid = figures(report, name, "fts"), figures(report, name, "hybrid")
    assert hybrid["s@5"] >= FLOORS[(name, "hybrid")], f"{name}: hybrid success@5 fell to {hybrid['s@5']:.3f}"
    for k in ("s@1", "s@5", "s@10"):
        assert hybrid[k] >= fts[k] - 0.005, f"{name}: hybrid {k} {hybrid[k]:.3f} below FTS alone {fts[k]:.3f}"
    # every memory was embedded (a rebuild and the embed after it may count a long file twice)
    assert report["sets"][name]["backends"]["hybrid"]["embedded"] >= report["sets"][name]["memories"]

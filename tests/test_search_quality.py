"""Search quality on real conversational data (LoCoMo dev split), against plain BM25 and FTS alone.

Guards the claim that a plain-English question finds the answering turn: a change to
tokenising, stop words, weights or re-ranking that loses recall fails here, and so does
a semantic side (model, embedded text, fusion) that stops earning its cost. The data
sits beside the checkout in ../shared/data (as on the developers' machines and CI).
The evaluation runs once (about two minutes, most of it embedding 2,760 turns) and
both tests read its report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"

pytestmark = pytest.mark.skipif(
    not DATA.is_file(), reason=f"LoCoMo data not found at {DATA} (ships beside the repo in shared/)"
)


# No wall-clock limit on the whole run: on a busy machine it took past the 900 s once allowed
# (issue 31), and a slow run is not a failure. What is one is a run that stopped moving:
# with --verbose the evaluation prints a line on stderr as each backend finishes each
# conversation, so it fails when no line came for STALL_S (MEMSTORE_QUALITY_STALL_S).
# Measured on this machine: the longest silence was 161 s (the hybrid backend embedding one
# conversation while two other pytest runs shared the two cores); the default is 7 times that.
STALL_S = float(os.environ.get("MEMSTORE_QUALITY_STALL_S", "1200"))


def run_watched(argv: list[str], env: dict[str, str], stall_s: float) -> tuple[int, str]:
    """(exit code, stderr) of argv, killed when its stderr has been silent for stall_s seconds."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    lines: list[str] = []
    last = [time.monotonic()]

    def read() -> None:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line)
            last[0] = time.monotonic()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = time.monotonic()
    while proc.poll() is None:
        if time.monotonic() - last[0] > stall_s:
            proc.kill()
            proc.wait()
            pytest.fail(f"the evaluation printed nothing for {stall_s:.0f} s (after {time.monotonic() - started:.0f} s "
                        f"in all; last line: {lines[-1].strip() if lines else 'none'}): stuck, killed")
        time.sleep(1)
    reader.join(timeout=10)
    return proc.returncode, "".join(lines)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("quality") / "quality.json"
    code, stderr = run_watched(
        [sys.executable, str(REPO / "scripts" / "eval_locomo.py"), "--backend", "all", "--cli-sample", "12",
         "--verbose", "--json", str(out)],  # --verbose: a line per backend and conversation, the watchdog's pulse
        {**os.environ, "MEMSTORE_SEMANTIC": "auto"},  # the hybrid rows need it; conftest turns it off
        STALL_S,
    )
    assert code == 0, stderr[-2000:]
    return json.loads(out.read_text())


def test_memstore_beats_plain_bm25_on_locomo(report: dict[str, Any]) -> None:
    backends = report["backends"]
    bm25 = backends["bm25"]["overall"]["s@5"]
    ours = backends["memstore"]["overall"]["s@5"]
    assert backends["memstore"]["errors"] == 0 and backends["cli"]["errors"] == 0
    assert ours >= 0.60, f"memstore s@5 fell to {ours:.3f}"
    assert ours >= bm25 + 0.02, f"memstore s@5 {ours:.3f} no longer clearly beats BM25 {bm25:.3f}"
    # The command line returns what the library returns.
    assert backends["cli"]["overall"]["n"] == 12
    assert report["cli_agreement"]["same_top10"] == 1.0


def test_hybrid_search_clearly_beats_fts_alone_on_locomo(report: dict[str, Any]) -> None:
    # Failure caught: a fusion, model or embedded text that no longer earns its cost: with
    # the semantic extra, an answering turn must reach the top 5 clearly more often than
    # with FTS5 alone (the target: +0.05), through the library and the command line.
    backends = report["backends"]
    assert backends["hybrid"]["available"], backends["hybrid"].get("why")
    fts = backends["memstore"]["overall"]["s@5"]
    hybrid = backends["hybrid"]["overall"]["s@5"]
    assert hybrid >= fts + 0.05, f"hybrid s@5 {hybrid:.3f} is not clearly above FTS alone {fts:.3f}"
    assert backends["hybrid"]["errors"] == 0 and backends["cli-hybrid"]["errors"] == 0
    assert report["cli-hybrid_agreement"]["same_top10"] == 1.0
    assert report["embedding"]["files"] == 2760  # every turn has a vector: none was left to a later pass


def test_a_root_still_being_embedded_is_never_worse_than_words_alone(report: dict[str, Any]) -> None:
    # Failure caught (issue 21): right after the first sync, with most vectors still pending
    # (sync embeds for its default budget), hybrid ranked 0.06 below FTS alone: the few
    # embedded files, with a vector part the others lacked, crowded out the answers.
    backends = report["backends"]
    fts = backends["memstore"]["overall"]["s@5"]
    half = backends["hybrid-sync"]
    assert half["available"] and half["errors"] == 0, half.get("why") or half.get("first_error")
    assert half["embedded_share"] < 0.9  # the state under test: most of the root not embedded yet
    assert half["overall"]["s@5"] >= fts - 0.01, f"half-embedded {half['overall']['s@5']:.3f} < FTS {fts:.3f}"


def test_questions_no_conversation_discusses_are_not_answered_by_meaning(report: dict[str, Any]) -> None:
    # Failure caught (issue 21): on a root of 500 turns the least distant turns came back as
    # "found by meaning" for a question about something nobody in it ever spoke of.
    unrelated = report["unrelated"]
    assert unrelated["questions"] == 30
    assert unrelated["by_meaning"] == 0, unrelated["found"]

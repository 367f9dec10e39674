"""Search quality on real conversational data (LoCoMo dev split), against plain BM25.

Guards the claim that a plain-English question finds the answering turn: a change to
tokenising, stop words, weights or re-ranking that loses recall fails here. The data
sits beside the checkout in ../shared/data (as on the developers' machines and CI).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"


@pytest.mark.skipif(not DATA.is_file(), reason=f"LoCoMo data not found at {DATA} (ships beside the repo in shared/)")
def test_memstore_beats_plain_bm25_on_locomo(tmp_path: Path) -> None:
    out = tmp_path / "quality.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "eval_locomo.py"), "--backend", "all", "--cli-sample", "12",
         "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())["backends"]
    bm25 = report["bm25"]["overall"]["s@5"]
    ours = report["memstore"]["overall"]["s@5"]
    assert report["memstore"]["errors"] == 0 and report["cli"]["errors"] == 0
    assert ours >= 0.60, f"memstore s@5 fell to {ours:.3f}"
    assert ours >= bm25 + 0.02, f"memstore s@5 {ours:.3f} no longer clearly beats BM25 {bm25:.3f}"
    # The command line returns what the library returns.
    assert report["cli"]["overall"]["n"] == 12

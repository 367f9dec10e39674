"""The test tiers: plain pytest is the fast one, and the README's test command runs them all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def collected(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args,
                           "tests/e2e", "tests/test_search_quality.py", "tests/test_tiers.py"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    return {line.split("::", 1)[0] for line in done.stdout.splitlines() if "::" in line}


def test_plain_pytest_leaves_the_slow_tiers_out_and_the_test_command_runs_every_one() -> None:
    """Catches: the e2e and quality tiers (the real clients, LoCoMo: most of the suite's time) run by a plain
    `pytest` between two edits; and the README's test command (scripts/test.sh, CI's) leaving a tier out."""
    fast = collected()
    every = collected("-m", "")
    assert "tests/test_tiers.py" in fast
    assert not any(path.startswith("tests/e2e/") or path.endswith("test_search_quality.py") for path in fast)
    assert "tests/e2e/test_claude_code.py" in every and "tests/test_search_quality.py" in every
    assert '-m pytest -q -m ""' in (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")

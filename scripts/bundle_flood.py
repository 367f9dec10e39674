"""Measure the SessionStart bundle on a root flooded with small short-term files
(issue 31 review, B).

    .venv/bin/python scripts/bundle_flood.py [--short N] [--archive N] [--dreams N]

Builds a throwaway root: a small one, then the same with N files dated today in memory/short-term/
(and short-term/archive/, dream-journal/), each posing as the wake's proposals, as one Bash loop of
the agent's would. Prints the bundle's time for both (best of 3) and the time to read the flood
once.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import tempfile
import time
from pathlib import Path

from memstore.core.config import Config
from memstore.hook.bundle import bundle

NOW = dt.datetime(2026, 7, 30, 9, 0, tzinfo=dt.UTC)


def lay_out(root: Path) -> None:
    (root / "memory" / "short-term").mkdir(parents=True)
    (root / "review").mkdir()
    (root / "memory" / "current-state.md").write_text(
        "---\nkind: current-state\n---\n- the export rewrite\n")
    (root / "memory" / "short-term" / "260729-export.md").write_text(
        "---\ndate: 2026-07-29\n---\nA fact.\n")
    (root / "review" / "person.jsonl").write_text(json.dumps(
        {"id": "p1234567", "kind": "proposal", "decision": "accepted", "text": "fold a into b",
         "source": "s", "at": "2026-07-01"}) + "\n")


def flood(root: Path, folder: str, count: int) -> None:
    base = root / "memory" / folder
    base.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (base / f"{NOW:%y%m%d}-x{i}.md").write_text(
            f"---\nkind: wake-proposals\n---\n- flood {i}\n")


def timed(root: Path) -> tuple[float, str]:
    best, text = float("inf"), ""
    for _ in range(3):
        start = time.perf_counter()
        text = bundle(root, NOW, Config(), None, evidence=[])
        best = min(best, time.perf_counter() - start)
    return best, text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--short", type=int, default=100_000)
    parser.add_argument("--archive", type=int, default=20_000)
    parser.add_argument("--dreams", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp, "small"), Path(tmp, "big")
        lay_out(small)
        lay_out(big)
        flood(big, "short-term", args.short)
        flood(big, "short-term/archive", args.archive)
        flood(big, "dream-journal", args.dreams)
        small_s, _ = timed(small)
        big_s, text = timed(big)
        start = time.perf_counter()
        for folder in ("short-term", "short-term/archive", "dream-journal"):
            for path in (big / "memory" / folder).glob("*.md"):
                path.read_bytes()
        read_s = time.perf_counter() - start
        print(f"small root: {small_s * 1000:.1f} ms; flooded ({args.short} + {args.archive} "
              f"archived + {args.dreams} dreams): {big_s * 1000:.1f} ms ({big_s / small_s:.0f}x); "
              f"reading the flood once: {read_s * 1000:.0f} ms")
        print("accepted instruction kept:", "The person accepted: fold a into b" in text,
              "| left-out note:", "were not read" in text, "| bundle chars:", len(text))


if __name__ == "__main__":
    main()

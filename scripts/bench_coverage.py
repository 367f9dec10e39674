#!/usr/bin/env python3
"""How much of a root has meaning, minute by minute, after one sync and no `memstore embed`.

Writes N generated work notes (memstore_devtools.agent_recall.filler_notes) into a fresh
root, runs `memstore sync` once (which starts the detached background embedding pass,
memstore/mirror/embed_background.py), then reads `memstore status --json` every few seconds
until every file has a vector or the time is up, and prints the share embedded over time.
Needs the `semantic` extra.

    .venv/bin/python scripts/bench_coverage.py --files 3000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--every", type=float, default=10.0, help="seconds between readings")
    ap.add_argument("--max-seconds", type=float, default=1200.0)
    args = ap.parse_args()
    from memstore_devtools.agent_recall import filler_notes

    exe = str(Path(sys.executable).parent / "memstore")
    env = {k: v for k, v in os.environ.items() if k != "MEMSTORE_EMBED_BACKGROUND"}
    env["MEMSTORE_SEMANTIC"] = "auto"
    with tempfile.TemporaryDirectory(prefix="memstore-coverage-") as tmp:
        root = Path(tmp) / "agent"
        subprocess.run([exe, "init", str(root), "--apply"], check=True, capture_output=True,
                       env=env)
        for name, text in filler_notes(args.files, seed=3).items():
            (root / "memory" / f"{name}.md").write_text(text, encoding="utf-8")
        started = time.monotonic()
        subprocess.run([exe, "--root", str(root), "sync"], check=True, capture_output=True, env=env)
        print(f"sync returned after {time.monotonic() - started:.1f} s", flush=True)
        print("| seconds after sync | embedded | pending | share | background pass |")
        print("| ---: | ---: | ---: | ---: | :--- |")
        while True:
            out = subprocess.run([exe, "--root", str(root), "status", "--json"],
                                 capture_output=True, text=True, env=env)
            sem = json.loads(out.stdout)["semantic"]
            done, left = int(sem["embedded"]), int(sem["pending"])
            elapsed = time.monotonic() - started
            print(f"| {elapsed:.0f} | {done} | {left} | {done / max(done + left, 1):.1%} | "
                  f"{'running' if sem['background'] else 'not running'} |", flush=True)
            if left == 0 or elapsed > args.max_seconds:
                break
            time.sleep(args.every)
        # stops a pass left over
        subprocess.run([exe, "--root", str(root), "embed"], capture_output=True, env=env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""The hook of this checkout beside the hook of an earlier revision, call for call (BENCHMARKS.md).

    .venv/bin/python scripts/hook_ab.py REV [--calls N]

REV is checked out into a temporary git worktree; both hooks run as `install` registers them
(`python -S <tree>/memstore/hookrun.py --root ROOT`) on the same small root with a lens, the two
ways alternating call by call so that a busy machine slows both alike. Printed: the median of each
and their ratio, for a PreToolUse Bash that fires the lens, a plain PreToolUse Bash, and a
PostToolUse Read of a memory (a reinforcement), a PostToolUse Write of one (with a relative date
the hook keeps) and a SessionStart (the bundle).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rev")
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hook-ab-"))
    old = work / "old"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(old),
                    args.rev], check=True)
    try:
        return measure(work, old, args.calls)
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old)],
                       check=False)


def measure(work: Path, old: Path, calls: int) -> int:
    python = sys.executable
    env = {**os.environ, "HOME": str(work / "home")}
    (work / "home").mkdir()
    root = work / "root"
    memstore = [python, "-m", "memstore", "--root", str(root)]
    subprocess.run([python, "-m", "memstore", "init", str(root), "--apply"], env=env, check=True,
                   capture_output=True)
    lens = "---\ntype: lens\ntrigger:\n  tool_match: '^Bash$'\n---\nLook before you push.\n"
    (root / "lenses" / "bench.md").write_text(lens)
    memory = root / "memory" / "feedback_bench.md"
    memory.write_text("---\nname: feedback_bench\ntype: feedback\nsummary: a memory to read\n"
                      "---\nbody\n")
    subprocess.run([*memstore, "sync"], env=env, check=True, capture_output=True)
    subprocess.run([python, "-m", "compileall", "-q", str(REPO / "memstore"),
                    str(old / "memstore")], check=True)
    trees = {"this checkout": REPO, "REV": old}
    payloads = {
        "PreToolUse Bash, the lens fires": lambda: {
            "tool_name": "Bash", "hook_event_name": "PreToolUse", "session_id": uuid.uuid4().hex,
            "tool_input": {"command": "git push origin main"}},
        "PreToolUse Bash, nothing to do": lambda: {
            "tool_name": "Bash", "hook_event_name": "PreToolUse", "session_id": "s",
            "tool_input": {"command": "ls -la"}},
        "PostToolUse Read of a memory": lambda: {
            "tool_name": "Read", "hook_event_name": "PostToolUse", "session_id": "s",
            "tool_input": {"file_path": str(memory)}, "tool_response": {}},
        # an agent's text, with a relative date the hook keeps for the tick (core.pending_dates)
        "PostToolUse Write of a memory": lambda: {
            "tool_name": "Write", "hook_event_name": "PostToolUse", "session_id": "s",
            "tool_input": {"file_path": str(memory),
                           "content": "Met Anna yesterday about the demo.\n" * 20},
            "tool_response": {"type": "update"}},
        "SessionStart (the bundle)": lambda: {
            "hook_event_name": "SessionStart", "session_id": uuid.uuid4().hex, "source": "startup"},
    }
    print(f"{'payload':<34} {'this checkout':>14} {'REV':>9} {'ratio':>7}")
    for label, make in payloads.items():
        times: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(calls):
            for name, tree in trees.items():
                data = json.dumps({**make(), "cwd": str(work)}).encode()
                start = time.perf_counter()
                subprocess.run([python, "-S", str(tree / "memstore" / "hookrun.py"),
                                "--root", str(root)], input=data, capture_output=True, env=env)
                times[name].append(time.perf_counter() - start)
        new, was = (statistics.median(times[name]) for name in trees)
        print(f"{label:<34} {new * 1000:>12.1f}ms {was * 1000:>7.1f}ms {new / was:>6.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

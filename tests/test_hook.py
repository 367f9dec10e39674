"""The hook contract: always exit 0, never block, approve only memory files,
lenses once per session."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memstore.mirror.sync import sync
from tests.helpers import call, decision, pre, write


@pytest.mark.parametrize("raw", [b"", b"garbage", b"\xff\xfe\x00\x01", b"[1, 2]", b"null",
                                 b'{"hook_event_name": 5}', b"{" * 10000, b'"a string"'])
def test_garbage_stdin_exits_0_silently(agent: Path, raw: bytes) -> None:
    assert call(agent, None, raw=raw) == (0, None)


def test_huge_stdin_is_ignored(agent: Path) -> None:
    payload = pre("Write", str(agent / "memory/feedback_x.md"))
    payload["padding"] = "x" * (5 * 1024 * 1024)
    assert call(agent, payload) == (0, None)


@pytest.mark.parametrize("payload", [
    {}, {"hook_event_name": "PreToolUse"}, {"hook_event_name": "PreToolUse", "tool_name": "Write"},
    {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": "not a dict"},
    {"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": 42}},
    {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": None}},
    {"hook_event_name": "Unknown"}, {"hook_event_name": "SessionStart", "session_id": 7},
])
def test_missing_or_wrong_fields(agent: Path, payload: dict) -> None:
    code, response = call(agent, payload)
    assert code == 0 and decision(response) is None


def test_approves_memory_writes_only(agent: Path, tmp_path: Path) -> None:
    mem = agent / "memory"
    allowed = [mem / "feedback_new.md", mem / "short-term/260730-fact.md", mem / "bugs/0001-x.md",
               mem / ".." / "memory" / "feedback_dotdot.md"]
    for path in allowed:
        for tool in ("Write", "Edit", "MultiEdit"):
            assert decision(call(agent, pre(tool, str(path)))[1]) == "allow", (tool, path)
    # relative to the session's cwd
    assert decision(call(agent, pre("Write", "memory/feedback_rel.md", cwd=str(agent)))[1]) == \
        "allow"

    outside = tmp_path / "outside.md"
    outside.write_text("x")
    os.symlink(outside, mem / "feedback_link-out.md")
    os.symlink(agent / "lenses", mem / "lens-door")
    # the person's own files are refused outright (through a link into lenses/ too)
    refused = [agent / "identity.md", agent / "lenses/new-lens.md", agent / "meditations/new.md",
               mem / "lens-door/bash-care.md", mem / ".." / "identity.md", agent / "memstore.toml"]
    for path in refused:
        for tool in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
            assert decision(call(agent, pre(tool, str(path)))[1]) == "deny", (tool, path)
    # derived files (any case: memory.md is MEMORY.md on macOS) are memstore's to write: refused,
    # since the client loads MEMORY.md and only the inert render may write it
    for path in (mem / "MEMORY.md", mem / "memory.md", mem / "Memory-Archive.md",
                 mem / "MEMORY-archive.md", mem / "current-state.md"):
        for tool in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
            assert decision(call(agent, pre(tool, str(path)))[1]) == "deny", (tool, path)
    # anything else outside memory/'s own files: not approved
    unapproved = [mem / "feedback_link-out.md", mem / "notes.txt",
                  tmp_path / "memory" / "feedback_elsewhere.md", Path("/etc/passwd")]
    for path in unapproved:
        assert decision(call(agent, pre("Write", str(path)))[1]) is None, path
    # never for reads or other tools, even inside memory/
    assert decision(call(agent, pre("Read", str(mem / "feedback_alpha.md")))[1]) is None
    assert decision(call(agent, pre("Bash", None))[1]) is None


def test_reads_are_approved_only_for_a_root_outside_the_project(
        agent: Path, tmp_path: Path) -> None:
    """Failure caught: with the root outside the project, `claude -p` denies the Read of a
    memory file unless something approves it, and nothing is reinforced."""
    mem = agent / "memory"
    project = tmp_path / "elsewhere"
    project.mkdir()
    os.symlink(tmp_path / "secret.md", mem / "feedback_link-out.md")
    (tmp_path / "secret.md").write_text("x")
    away = str(project)
    for path in (mem / "feedback_alpha.md", mem / "MEMORY.md", mem / "short-term/260730-x.md"):
        assert decision(call(agent, pre("Read", str(path), cwd=away))[1]) == "allow", path
    for path in (agent / "identity.md", agent / "lenses/bash-care.md", mem / "feedback_link-out.md",
                 tmp_path / "secret.md", mem / "notes.txt", Path("/etc/passwd")):
        assert decision(call(agent, pre("Read", str(path), cwd=away))[1]) is None, path
    # inside the project reads need no approval, so the hook gives none
    assert decision(call(agent, pre("Read", str(mem / "feedback_alpha.md"),
                                    cwd=str(agent)))[1]) is None


def test_lens_fires_once_per_session_and_again_in_a_new_one(agent: Path) -> None:
    first = call(agent, pre("Bash", session="one"))[1]
    text = first["hookSpecificOutput"]["additionalContext"]
    assert "LENSMARK" in text and "bash-care" in text
    assert len(text) < 20 * 4 + 60  # body cut to its token cap
    assert call(agent, pre("Bash", session="one"))[1] is None
    assert "LENSMARK" in \
        call(agent, pre("Bash", session="two"))[1]["hookSpecificOutput"]["additionalContext"]


def test_lens_path_pattern(agent: Path) -> None:
    assert call(agent, pre("Edit", "/x/src/main.py"))[1] is None
    response = call(agent, pre("Edit", "/x/notes/today.md"))[1]
    assert "PATHLENS" in response["hookSpecificOutput"]["additionalContext"]


def test_post_tool_use_reinforces_and_journals(agent: Path) -> None:
    payload = {"hook_event_name": "PostToolUse", "session_id": "s", "cwd": str(agent),
               "tool_name": "Read", "tool_input": {"file_path": "memory/feedback_alpha.md"}}
    assert call(agent, payload) == (0, None)
    conn = sqlite3.connect(agent / "runtime/memstore.db")
    assert conn.execute("SELECT access_count FROM policy "
                        "WHERE path = 'memory/feedback_alpha.md'").fetchone() == (1,)
    conn.close()
    line = json.loads(next((agent / "runtime/journal").glob("*.jsonl")).read_text())
    assert line["session"] == "s" and line["path"] == "memory/feedback_alpha.md"


def test_locked_database_still_journals_and_returns_fast(agent: Path) -> None:
    blocker = sqlite3.connect(agent / "runtime/memstore.db", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        payload = {"hook_event_name": "PostToolUse", "session_id": "s", "cwd": str(agent),
                   "tool_name": "Edit",
                   "tool_input": {"file_path": str(agent / "memory/feedback_alpha.md")}}
        started = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "memstore", "--root", str(agent), "hook"],
                              input=json.dumps(payload).encode(), capture_output=True, timeout=30)
        elapsed = time.monotonic() - started
        assert proc.returncode == 0 and proc.stdout == b""
        assert elapsed < 5  # gave up on the lock inside its small budget
        assert len(next((agent / "runtime/journal").glob("*.jsonl")).read_text().splitlines()) == 1
        assert "journaled only" in (agent / "runtime/state/hook-errors.log").read_text()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    sync(agent)  # the next sync folds the journaled touch in
    conn = sqlite3.connect(agent / "runtime/memstore.db")
    assert conn.execute("SELECT access_count FROM policy "
                        "WHERE path = 'memory/feedback_alpha.md'").fetchone() == (1,)
    conn.close()


def test_missing_or_corrupt_mirror_never_fails_the_hook(agent: Path) -> None:
    (agent / "runtime/memstore.db").write_bytes(b"not a database at all" * 50)
    for suffix in ("-wal", "-shm"):
        (agent / f"runtime/memstore.db{suffix}").unlink(missing_ok=True)
    assert call(agent, pre("Bash"))[0] == 0
    post = {"hook_event_name": "PostToolUse", "tool_name": "Read", "cwd": str(agent),
            "tool_input": {"file_path": str(agent / "memory/feedback_alpha.md")}}
    assert call(agent, post) == (0, None)
    assert (agent / "runtime/journal").is_dir()  # the touch was not lost


def test_hook_path_imports_only_the_standard_library(agent: Path) -> None:
    write(agent, "memory/bugs/0001-open.md", "---\ntitle: a bug so the bundle is not empty\n"
                                             "status: open\n---\n")
    probe = (
        "import io, json, sys\n"
        "from memstore.frontends.entry import main\n"
        "payloads = [\n"
        f"  {{'hook_event_name': 'PreToolUse', 'session_id': 'q', 'tool_name': 'Bash', "
        f"'tool_input': {{}}}},\n"
        f"  {{'hook_event_name': 'PostToolUse', 'tool_name': 'Read', 'tool_input': {{'file_path': "
        f"{str(agent / 'memory/feedback_alpha.md')!r}}}}},\n"
        "  {'hook_event_name': 'SessionStart', 'session_id': 'q'},\n"
        "]\n"
        "for p in payloads:\n"
        "    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(p).encode()))\n"
        "    try:\n"
        f"        main(['--root', {str(agent)!r}, 'hook'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        # third-party packages, and any memstore module outside the hook's world (core, hook) but
        # the entry point itself: no import contract can say this, the entry point is a front end
        "world = ('memstore', 'memstore.entry', 'memstore.frontends', 'memstore.frontends.entry')\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "  {'click', 'yaml', 'sqlite_utils', 'frontmatter', 'tabulate', 'watchdog'} or "
        "m.startswith('memstore')\n"
        "  and m not in world and m.split('.')[1] not in ('core', 'hook'))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in proc.stderr, proc.stderr
    # the probe really exercised the paths
    assert "LENSMARK" in proc.stdout and "SessionStart" in proc.stdout


def test_session_start_bundle(agent: Path, run) -> None:
    write(agent, "memory/short-term/260728-recent-fact.md",
          "---\ncreated: 2026-07-28\n---\nFACTMARK recent\n")
    write(agent, "memory/short-term/260701-old-fact.md", "OLDMARK too old for the window\n")
    write(agent, "memory/bugs/0001-open.md", "---\nid: '0001'\ntitle: OPENBUG flush skips\n"
                                             "status: open\n---\n")
    write(agent, "memory/bugs/0002-closed.md", "---\ntitle: CLOSEDBUG\nstatus: closed\n---\n")
    for day in range(20, 26):
        write(agent, f"memory/dream-journal/2607{day}-sit.md", f"DREAM{day} residue\n")
    write(agent, "memory/current-state.md",
          "# In flight\n\n- [project_x](project_x.md): FLIGHTMARK migrating\n")
    _code, response = call(agent, {"hook_event_name": "SessionStart", "session_id": "s",
                                   "cwd": str(agent)})
    text = response["hookSpecificOutput"]["additionalContext"]
    for marker in ("FACTMARK", "OPENBUG", "FLIGHTMARK", "DREAM25", "DREAM24", "DREAM23"):
        assert marker in text, marker
    for marker in ("OLDMARK", "CLOSEDBUG", "DREAM22"):
        assert marker not in text, marker
    assert run(agent, "context").stdout == text  # the CLI prints the same bundle


def test_bundle_stays_within_budget(agent: Path) -> None:
    for i in range(60):
        write(agent, f"memory/short-term/2607{20 + i % 9:02d}-fact-{i:02d}.md",
              f"FACT{i} " + "words " * 300)
    text = call(agent, {"hook_event_name": "SessionStart"})[1]["hookSpecificOutput"][
        "additionalContext"]
    assert len(text) <= 10_000
    assert "left out" in text


def test_a_birth_the_hook_saw_before_any_mirror_existed_still_counts(root: Path) -> None:
    """Failure caught (issue 31 item 3): a birth kept only in the mirror is lost when the hook finds
    no mirror (journaled only); the journal line itself must carry it, project and all (here: none,
    person-wide), and a Write that replaced a file ("update") must not be one."""
    made = write(root, "memory/feedback_fresh.md", "---\nsummary: made by the agent\n---\nbody\n")
    kept = write(root, "memory/feedback_kept.md",
                 "---\nsummary: replaced by the agent\n---\nbody\n")
    for file, kind in ((made, "create"), (kept, "update")):
        payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(root),
                   "tool_name": "Write", "tool_input": {"file_path": str(file)},
                   "tool_response": {"type": kind}}
        assert call(root, payload)[0] == 0
    assert not (root / "runtime" / "memstore.db").exists()
    sync(root)
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    rows = dict(conn.execute("SELECT path, adopted FROM files WHERE kind = 't2'").fetchall())
    conn.close()
    assert rows == {"memory/feedback_fresh.md": '{"created": "2026-07-30"}',
                    "memory/feedback_kept.md": None}

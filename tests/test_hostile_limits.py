"""Issue 30, item 7: a clock out of range, a journal write the disk cuts short, an over-long path.

Failures caught:
- `--now 0001-01-01T00:00:00Z` (or year 9999, or in $MEMSTORE_NOW) ending tick and flush in an
  OverflowError traceback: every command that takes --now refuses it in one line, exit 2,
  and the hook (which always exits 0) falls back to the wall clock;
- a journal line torn by a real short write (RLIMIT_FSIZE: write(2) takes a few bytes, or
  none, EFBIG) with that touch lost and nothing said: the file must be cut back to whole lines,
  the loss counted in runtime/state/journal-lost.json and shown by `status` (text and --json),
  and the hook must still exit 0;
- a PostToolUse whose file_path or cwd is 300 KB long spending seconds in realpath (its cost
  grows with the square of the depth): refused before realpath, in the hook and in
  core.toolpath.resolve (which `memstore touch` reaches too).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memstore.core import journal
from memstore.core.timeutil import parse_when
from memstore.core.toolpath import reinforces, resolve
from tests.helpers import NOW, memory, write

REL = "memory/feedback_alpha.md"
LONG = "/" + "a/" * 150_000  # 300 KB, 150,000 components


@pytest.fixture
def laptop_root(root: Path, run, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMSTORE_HOST", "laptop")
    monkeypatch.setenv("MEMSTORE_CLONE_ID", "0123abcd")
    write(root, REL, memory("feedback_alpha", "alpha things"))
    assert run(root, "sync").exit_code == 0
    return root


def hook(root: Path, payload: dict[str, object], *, env: dict[str, str] | None = None,
         preexec=None) -> tuple[subprocess.CompletedProcess[bytes], float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "memstore", "--root", str(root), "hook"],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60,
                          env={**os.environ, "MEMSTORE_NOW": NOW, **(env or {})},
                          preexec_fn=preexec)
    return proc, time.monotonic() - started


def read_payload(root: Path, file_path: str | None = None, cwd: str | None = None,
                 event: str = "PostToolUse", tool: str = "Read") -> dict[str, object]:
    return {"hook_event_name": event, "session_id": "s1", "cwd": cwd or str(root),
            "tool_name": tool, "tool_input": {"file_path": file_path or str(root / REL)}}


# ---------------------------------------------------------------- 7a: a clock out of range

OUT_OF_RANGE = ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1969-12-31T23:59:59+00:00"]
COMMANDS = [["tick"], ["flush"], ["flush", "--force"], ["render"], ["status"], ["status", "--json"],
            ["search", "alpha"], ["list"], ["lint"], ["sync"], ["rebuild"],
            ["show", "feedback_alpha"], ["touch", REL], ["context"], ["note", "a fact"],
            ["bug", "list"], ["review", "--json"]]


@pytest.mark.parametrize("value", OUT_OF_RANGE)
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a))
def test_every_command_refuses_a_clock_out_of_range_in_one_line(laptop_root: Path, run, value: str,
                                                                args: list[str]) -> None:
    # catch_exceptions=False: an OverflowError fails here
    result = run(laptop_root, "--now", value, *args)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("memstore: error: ") and \
        "outside the years 1970 to 9000" in lines[0], lines
    assert len(lines) <= 2 and "Traceback" not in result.stderr  # the line and its hint


def test_the_same_clock_in_the_environment_and_at_the_edges(
        laptop_root: Path, run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_NOW", "0001-01-01T00:00:00Z")
    for args in (["tick"], ["flush"]):
        result = run(laptop_root, *args)
        assert result.exit_code == 2 and "outside the years" in result.stderr
    for edge in ("1970-01-01T00:00:00Z", "9000-12-31T23:59:59Z"):  # inside: these run
        for args in (["tick"], ["flush", "--force"], ["render"], ["status"]):
            result = run(laptop_root, "--now", edge, *args)
            assert result.exit_code == 0, (edge, args, result.stderr)


@pytest.mark.parametrize("value", OUT_OF_RANGE[:2])
def test_the_hook_survives_a_clock_out_of_range(laptop_root: Path, value: str) -> None:
    for payload in (read_payload(laptop_root), {"hook_event_name": "SessionStart",
                                                "session_id": "s1", "cwd": str(laptop_root),
                                                "source": "startup"}):
        proc, _ = hook(laptop_root, payload, env={"MEMSTORE_NOW": value})
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    # the touch was journaled on the wall clock, not in year 1 (or 9999)
    (line,) = [json.loads(x) for f in (laptop_root / "runtime/journal").glob("*.jsonl")
               for x in f.read_text().splitlines()]
    assert 1970 < parse_when(line["ts"]).year < 9000


# ---------------------------------------------------------------- 7b: a journal write cut short

def journal_lines(root: Path) -> list[bytes]:
    (path,) = (root / "runtime/journal").glob("*.jsonl")
    return path.read_bytes().split(b"\n")


@pytest.mark.parametrize("room", [7, 0], ids=["short-write", "efbig"])
def test_a_real_short_journal_write_is_taken_back_counted_and_reported(
        laptop_root: Path, run, room: int) -> None:
    day = parse_when(NOW)
    # a journal longer than the loss record, so that record fits under the limit
    for minutes in range(4):
        journal.append(laptop_root, journal.new_event(REL, "Read", day.replace(hour=minutes), "s0",
                                                source=journal.identity(laptop_root)))
    (path,) = (laptop_root / "runtime/journal").glob("*.jsonl")
    size = path.stat().st_size
    assert size > journal.LOST_WIDTH + 1

    def limit() -> None:  # in the child: writes past size + room fail (write(2) short, then EFBIG)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + room, hard))

    proc, _ = hook(laptop_root, read_payload(laptop_root), preexec=limit)
    assert proc.returncode == 0 and proc.stdout == b"" and b"Traceback" not in proc.stderr, \
        proc.stderr

    lines = journal_lines(laptop_root)
    assert path.stat().st_size == size and lines[-1] == b""  # cut back: no torn line remains
    assert [json.loads(line)["session"] for line in lines[:-1]] == ["s0"] * 4
    lost = journal.lost_touches(laptop_root)
    assert lost is not None and lost["lost"] == 1 and lost["last"] == NOW and \
        lost["file"] == path.name

    status = run(laptop_root, "status")
    assert status.exit_code == 0
    said = status.stdout + status.stderr
    assert "1 touch(es) could not be written to the journal" in said and "journal-lost.json" in said
    view = json.loads(run(laptop_root, "status", "--json").stdout)["journal"]
    assert view["journal_lost"]["lost"] == 1

    # With room again, the next touch lands whole after the others, and the count stays.
    proc, _ = hook(laptop_root, read_payload(laptop_root))
    assert proc.returncode == 0
    lines = journal_lines(laptop_root)
    assert len(lines) == 6 and json.loads(lines[-2])["session"] == "s1"
    assert journal.lost_touches(laptop_root)["lost"] == 1  # type: ignore[index]


def test_no_loss_record_says_nothing(laptop_root: Path, run) -> None:
    journal.append(laptop_root, journal.new_event(REL, "Read", parse_when(NOW), "s0",
                                                  source=journal.identity(laptop_root)))
    # its place is made before a disk fills
    assert (laptop_root / "runtime/state/journal-lost.json").exists()
    assert journal.lost_touches(laptop_root) is None
    assert json.loads(
        run(laptop_root, "status", "--json").stdout)["journal"]["journal_lost"] is None
    assert "could not be written to the journal" not in run(laptop_root, "status").stdout


# ---------------------------------------------------------------- 7c: an over-long path

def folded(path: Path | str) -> str:
    """A 300 KB spelling of `path` (60,000 `a/..` pairs) that realpath folds back into it, cheaply:
    a hook that resolved it would record the touch, so the guard is seen without timing anything."""
    return "/" + "a/../" * 60_000 + str(path).lstrip("/")


@pytest.mark.parametrize("where", ["file_path", "relative-file_path", "cwd", "folded-file_path",
                                   "folded-cwd"])
@pytest.mark.parametrize("tool", ["Write", "Read"])
def test_a_300_kb_path_in_a_post_tool_use_returns_fast(
        laptop_root: Path, where: str, tool: str) -> None:
    if where == "file_path":
        payload = read_payload(laptop_root, file_path=LONG + "feedback_alpha.md", tool=tool)
    elif where == "relative-file_path":
        payload = read_payload(laptop_root, file_path=LONG[1:] + "feedback_alpha.md", tool=tool)
    elif where == "cwd":
        payload = read_payload(laptop_root, file_path="memory/feedback_alpha.md", cwd=LONG,
                               tool=tool)
    elif where == "folded-file_path":
        payload = read_payload(laptop_root, file_path=folded(laptop_root / REL), tool=tool)
    else:
        payload = read_payload(laptop_root, file_path="memory/feedback_alpha.md",
                               cwd=folded(laptop_root), tool=tool)
    proc, elapsed = hook(laptop_root, payload)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    # a hang guard: unguarded, the deep ones took 5-9 s in realpath here
    assert elapsed < 5, elapsed
    # refused before resolving: nothing recorded
    assert not list((laptop_root / "runtime/journal").glob("*.jsonl"))
    conn = sqlite3.connect(laptop_root / "runtime/memstore.db")
    try:  # nor marked for re-reading (a Write the hook resolved, by the cwd, into memory/)
        assert conn.execute("SELECT path FROM dirty").fetchall() == []
    finally:
        conn.close()


def test_the_resolver_refuses_a_path_longer_than_a_path_can_be(laptop_root: Path, run) -> None:
    started = time.monotonic()
    # refused, not folded into the memory
    assert resolve(laptop_root, folded(laptop_root / REL), None) is None
    assert resolve(laptop_root, "feedback_alpha.md", LONG) is None
    assert time.monotonic() - started < 5
    # an ordinary path still is one
    assert reinforces(resolve(laptop_root, str(laptop_root / REL), None)) == REL
    started = time.monotonic()
    # the CLI reaches the resolver without the hook's guard
    result = run(laptop_root, "touch", LONG + "feedback_alpha.md")
    assert result.exit_code != 0 and "Traceback" not in result.stderr and \
        time.monotonic() - started < 5

"""The access journal loses no whole event to a torn line, says when lines are unreadable,
and takes in lines a git merge put before the offset it had read to.

Failures caught:
- an append glued onto a torn tail (a write cut short by a full disk), so the next event
  is part of an unreadable line and lost, silently;
- a short write ignored, leaving half a line for the next append to glue onto (it is cut
  back and counted as a lost touch: tests/test_hostile_limits.py does it with a real short write);
- unreadable lines counted by ingest and never shown: `status` and `lint` (text and JSON)
  must name the file and the count, after later syncs and after a rebuild too;
- a journal file rewritten with lines inserted before the stored offset (another clone's
  events, by a git merge) read on from that offset, so those events wait for a rebuild;
- a mirror of the schema before journal_offsets.tail/bad_lines not re-reading its files.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memstore.core import journal
from memstore.core.config import Config
from memstore.mirror.sync import rebuild, sync
from tests.helpers import NOW, memory, write

CFG = Config()
T0 = dt.datetime(2026, 7, 1, 9, 0, tzinfo=dt.UTC)
REL = "memory/feedback_a.md"


@pytest.fixture
def laptop_root(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMSTORE_HOST", "laptop")
    monkeypatch.setenv("MEMSTORE_CLONE_ID", "0123abcd")
    write(root, REL, memory("feedback_a", "apples"))
    return root


def event(root: Path, minutes: int) -> dict[str, str | None]:
    return journal.new_event(REL, "Read", T0 + dt.timedelta(minutes=minutes), "s1",
                             source=journal.identity(root))


def journal_file(root: Path) -> Path:
    files = sorted((root / "runtime" / "journal").glob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / "runtime" / "memstore.db")


def event_ids(root: Path) -> set[str]:
    conn = db(root)
    try:
        return {row[0] for row in conn.execute("SELECT id FROM events")}
    finally:
        conn.close()


def bad_counts(root: Path) -> dict[str, int]:
    conn = db(root)
    try:
        return dict(conn.execute("SELECT file, bad_lines FROM journal_offsets WHERE bad_lines > 0"))
    finally:
        conn.close()


def torn_line(ev: dict[str, str | None]) -> bytes:
    whole = (json.dumps(ev, sort_keys=True) + "\n").encode()
    return whole[: len(whole) // 2]


def test_append_after_a_torn_tail_starts_a_new_line(laptop_root: Path) -> None:
    first, lost, after = event(laptop_root, 0), event(laptop_root, 1), event(laptop_root, 2)
    journal.append(laptop_root, first)
    path = journal_file(laptop_root)
    with open(path, "ab") as handle:  # an earlier write cut short: half a line, no newline
        handle.write(torn_line(lost))
    journal.append(laptop_root, after)

    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 4, lines
    assert json.loads(lines[2])["id"] == after["id"]  # whole, on a line of its own
    sync(laptop_root, CFG)
    assert {first["id"], after["id"]} <= event_ids(laptop_root)
    assert bad_counts(laptop_root) == {path.name: 1}
    # read on from the offset: still counted, not twice
    journal.append(laptop_root, event(laptop_root, 3))
    sync(laptop_root, CFG)
    assert bad_counts(laptop_root) == {path.name: 1}


def test_a_short_write_that_fails_leaves_nothing_the_next_append_glues_onto(
    laptop_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal.append(laptop_root, event(laptop_root, 0))
    real_write = os.write
    calls: list[int] = []

    def full_disk(fd: int, data: bytes) -> int:  # the disk fills half way through the line
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError) as caught:
        journal.append(laptop_root, event(laptop_root, 1))
    assert caught.value.errno == errno.ENOSPC
    monkeypatch.setattr(os, "write", real_write)

    later = event(laptop_root, 2)
    journal.append(laptop_root, later)
    path = journal_file(laptop_root)
    assert path.read_bytes().endswith((json.dumps(later, sort_keys=True) + "\n").encode())
    assert json.loads(path.read_bytes().splitlines()[-1])["id"] == later["id"]
    sync(laptop_root, CFG)
    assert later["id"] in event_ids(laptop_root)
    rebuild(laptop_root, CFG)  # every journal read again from 0: the event comes back
    assert later["id"] in event_ids(laptop_root)
    assert bad_counts(laptop_root) == {}  # the half line was cut back: no torn line is left
    assert (journal.lost_touches(laptop_root) or {}).get("lost") == 1


def memstore_cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a person runs it (python -m memstore where there is
    none)."""
    script = Path(sys.executable).with_name("memstore")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "memstore"]
    env = {**os.environ, "MEMSTORE_NOW": NOW}
    env.pop("MEMSTORE_ROOT", None)
    return subprocess.run([*argv, "--root", str(root), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_status_and_lint_name_the_unreadable_lines(laptop_root: Path) -> None:
    journal.append(laptop_root, event(laptop_root, 0))
    path = journal_file(laptop_root)
    with open(path, "ab") as handle:
        handle.write(b"<<<<<<< HEAD\n")
        handle.write(torn_line(event(laptop_root, 1)))
    journal.append(laptop_root, event(laptop_root, 2))
    assert memstore_cli(laptop_root, "sync").returncode == 0
    # the lines were read once, by the first sync
    assert memstore_cli(laptop_root, "sync").returncode == 0
    rel = f"runtime/journal/{path.name}"

    status = memstore_cli(laptop_root, "status")
    assert status.returncode == 0, status.stderr
    said = status.stdout + status.stderr
    assert f"2 unreadable lines in {rel}" in said and "safe to leave" in said, said
    assert "problems  0 errors, 1 warnings (memstore lint)" in status.stdout  # the count lint gives
    view = json.loads(memstore_cli(laptop_root, "status", "--json").stdout)["journal"]
    assert view["bad_lines"] == [{"file": rel, "lines": 2}]
    assert any(rel in warning for warning in view["warnings"])

    lint = memstore_cli(laptop_root, "lint")
    # a warning: nothing here is an error to fix
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert f"{rel}: warning: 2 unreadable lines in {rel}" in lint.stdout
    found = json.loads(memstore_cli(laptop_root, "lint", "--json").stdout)
    assert [(f["path"], f["level"]) for f in found] == [(rel, "warning")]
    assert "the reads recorded there are lost" in found[0]["message"]

    # The remedy the message gives: delete the lines that are not JSON, sync; the report goes.
    kept = [line for line in path.read_bytes().splitlines(keepends=True)
            if line.startswith(b'{"host"') and line.endswith(b"}\n")]
    path.write_bytes(b"".join(kept))
    assert memstore_cli(laptop_root, "sync").returncode == 0
    assert json.loads(
        memstore_cli(laptop_root, "status", "--json").stdout)["journal"]["bad_lines"] == []
    assert json.loads(memstore_cli(laptop_root, "lint", "--json").stdout) == []


def test_lines_a_merge_puts_before_the_offset_are_read_without_a_rebuild(
        laptop_root: Path, run) -> None:
    mine = [event(laptop_root, 10), event(laptop_root, 20)]
    for ev in mine:
        journal.append(laptop_root, ev)
    sync(laptop_root, CFG)
    assert json.loads(
        run(laptop_root, "show", "feedback_a", "--json").stdout)["journal_touches"] == 2

    # A merge of another copy of this file: its event lands first, and the file grows.
    path = journal_file(laptop_root)
    theirs = event(laptop_root, 5)
    path.write_bytes((json.dumps(theirs, sort_keys=True) + "\n").encode() + path.read_bytes())
    sync(laptop_root, CFG)
    assert theirs["id"] in event_ids(laptop_root)
    assert json.loads(
        run(laptop_root, "show", "feedback_a", "--json").stdout)["journal_touches"] == 3
    assert bad_counts(laptop_root) == {}


def test_a_mirror_from_before_the_tail_digest_reads_each_journal_again(
        laptop_root: Path, run) -> None:
    """The in-place migration: offsets stored without a tail are not trusted, so the files are read
    from 0."""
    from sqlite_utils import Database

    from memstore.migrations import migrations

    journal.append(laptop_root, event(laptop_root, 0))
    path = journal_file(laptop_root)
    with open(path, "ab") as handle:
        handle.write(b"not json\n")
    missed = event(laptop_root, 1)
    journal.append(laptop_root, missed)
    # A mirror of the m006 schema that had read the whole file before, and missed an event
    # a merge put before its offset.
    conn = sqlite3.connect(laptop_root / "runtime" / "memstore.db")
    migrations.apply(Database(conn), stop_before="m007_journal_integrity")
    conn.execute("INSERT INTO journal_offsets (file, offset) VALUES (?, ?)",
                 (path.name, path.stat().st_size))
    conn.commit()
    conn.close()

    result = run(laptop_root, "sync")
    assert result.exit_code == 0 and "rebuil" not in result.stderr  # migrated in place
    assert missed["id"] in event_ids(laptop_root)
    assert bad_counts(laptop_root) == {path.name: 1}

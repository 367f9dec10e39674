"""flush folds policy state into frontmatter, changing nothing else, and skips files in use."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import time
from pathlib import Path

from memstore.core.config import Config
from memstore.core.policy import record_touch
from memstore.mirror.sync import rebuild

CFG = Config()
UTC = dt.UTC
T0 = dt.datetime(2026, 7, 1, 9, 0, tzinfo=UTC)

HAND_WRITTEN = (
    "---\n"
    "name: feedback_careful   # the stem\n"
    "type: feedback\n"
    "summary: 'Quoted: with a colon'\n"
    "# policy below is maintained by memstore\n"
    "access_count: 1    # spaced\n"
    "stability: 22.4\n"
    "tags: [x, y]\n"
    "last_accessed: 2026-06-01T00:00:00Z\n"
    "last_reinforced: 2026-06-01T00:00:00Z\n"
    "---\n"
    "\n"
    "# Careful\n"
    "\n"
    "Body with --- and trailing spaces   \n"
)


def make(root: Path) -> Path:
    path = root / "memory/feedback_careful.md"
    path.write_text(HAND_WRITTEN)
    (root / "memory/feedback_untouched.md").write_text("---\nname: feedback_untouched\n"
                                                       "summary: never read\n---\nx\n")
    old = time.time() - 3600
    for p in (root / "memory").glob("*.md"):
        os.utime(p, (old, old))
    return path


def policy_rows(root: Path) -> list[tuple]:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        return conn.execute("SELECT path, access_count, stability, last_accessed, last_reinforced "
                            "FROM policy ORDER BY path").fetchall()
    finally:
        conn.close()


def test_flush_changes_only_policy_values(root: Path, run) -> None:
    path = make(root)
    run(root, "sync")
    for days in (0, 2):
        record_touch(root, str(path), "Read", T0 + dt.timedelta(days=days), CFG)
    untouched_before = (root / "memory/feedback_untouched.md").read_bytes()
    result = run(root, "flush", "--now", dt.datetime.now(UTC).isoformat())  # mtimes are an hour old
    assert result.exit_code == 0 and "1 file(s) updated" in result.stdout, result.output
    expected = (
        HAND_WRITTEN.replace("access_count: 1    # spaced", "access_count: 3    # spaced")
        .replace("stability: 22.4", "stability: 57.344")
        .replace("last_accessed: 2026-06-01T00:00:00Z", "last_accessed: 2026-07-03T09:00:00Z")
        .replace("last_reinforced: 2026-06-01T00:00:00Z", "last_reinforced: 2026-07-03T09:00:00Z")
        # the state the policy is replayed from, appended once: what the file said before this flush
        .replace("\n---\n\n# Careful", '\npolicy_base: "1 22.4 2026-06-01T00:00:00Z '
                 '2026-06-01T00:00:00Z 2026-06-01T00:00:00Z"\n---\n\n# Careful')
    )
    assert path.read_text() == expected
    # A file whose state is all defaults is not rewritten just to spell the defaults out.
    assert (root / "memory/feedback_untouched.md").read_bytes() == untouched_before
    # Nothing left to flush, and the state after flush equals a replay from scratch.
    assert "0 file(s) updated" in run(root, "flush", "--force").stdout
    live = policy_rows(root)
    for suffix in ("", "-wal", "-shm"):
        (root / "runtime" / f"memstore.db{suffix}").unlink(missing_ok=True)
    rebuild(root, CFG)
    assert policy_rows(root) == live


def test_flush_skips_recently_modified_unless_forced(root: Path, run) -> None:
    path = make(root)
    run(root, "sync")
    record_touch(root, str(path), "Read", T0, CFG)
    os.utime(path, None)  # a person is editing it right now
    result = run(root, "flush", "--now", dt.datetime.now(UTC).isoformat())
    assert "0 file(s) updated" in result.stdout and "1 skipped (modified recently" in result.stdout
    assert path.read_text() == HAND_WRITTEN
    forced = run(root, "flush", "--force")
    assert "1 file(s) updated" in forced.stdout


def test_flush_leaves_unsafe_frontmatter_alone(root: Path, run) -> None:
    weird = root / "memory/feedback_weird.md"
    weird.write_text("---\nname: feedback_weird\naccess_count:\n  - 1\n---\nbody\n")
    old = time.time() - 3600
    os.utime(weird, (old, old))
    run(root, "sync")
    record_touch(root, str(weird), "Read", T0, CFG)
    result = run(root, "flush", "--force")
    assert "left alone" in result.stderr
    assert weird.read_text() == "---\nname: feedback_weird\naccess_count:\n  - 1\n---\nbody\n"


def test_atomic_write_never_overwrites_an_edit_made_meanwhile(tmp_path: Path) -> None:
    from memstore.core.locks import atomic_write

    path = tmp_path / "feedback_x.md"
    path.write_bytes(b"what flush read\n")
    read = path.read_bytes()
    path.write_bytes(b"what the agent wrote since\n")  # the edit lands between read and write
    assert atomic_write(path, b"flushed bytes\n", expect=read) is False
    assert path.read_bytes() == b"what the agent wrote since\n"
    assert atomic_write(path, b"flushed bytes\n", expect=path.read_bytes()) is True
    assert path.read_bytes() == b"flushed bytes\n"
    assert not list(tmp_path.glob(".*.tmp"))

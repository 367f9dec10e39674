"""The library API: everything a front end does, through `Store` alone, on a temporary root."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memstore import BadUsage, Busy, Hit, MemoryRow, NotFound, RootNotFound, Store
from memstore.core.config import Config
from tests.helpers import memory, write

# seconds on purpose: render cuts to the minute
NOW = dt.datetime(2026, 7, 30, 12, 0, 37, tzinfo=dt.UTC)
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(root: Path) -> Store:
    write(root, "memory/feedback_testing.md",
          memory("feedback_testing", "Run the e2e test before merging",
                 body="The e2e test drives the real binary.", importance=3))
    write(root, "memory/project_export.md", memory("project_export", "The CSV export streams rows",
                                                   body="We decided the export streams rows, "
                                                        "never loads all.", created="2026-07-29"))
    write(root, "memory/reference_old.md",
          memory("reference_old", "Old notes", status="superseded"))
    write(root, "memory/feedback_untouched.md", memory("feedback_untouched", "Never read yet"))
    for path in (root / "memory").glob("*.md"):  # written days before NOW, as real memories are
        os.utime(path, (NOW.timestamp() - 86400 * 3,) * 2)
    return Store(root, NOW)


def test_store_does_what_the_cli_does(store: Store) -> None:
    """Failure caught: a front end that needs cli.py (or SQL) to sync, search, touch, rank, render,
    flush."""
    # the mirror is missing: opening it builds it, then the walk finds nothing new
    report = store.sync()
    assert report.scanned == 4 and store.status().kinds["t2"] == 4
    hits = store.search("what did we decide about the export", limit=3)
    assert isinstance(hits[0], Hit) and hits[0].path == "memory/project_export.md"
    assert set(hits[0].to_json()) >= {"path", "name", "type", "summary", "score", "snippet"}

    touched = store.touch("memory/feedback_testing.md")
    assert touched.applied and touched.path == "memory/feedback_testing.md"
    rows = {row.name: row for row in store.list()}
    assert isinstance(rows["feedback_testing"], MemoryRow)
    assert rows["feedback_testing"].access_count == 1 and rows["feedback_testing"].stability == 22.4
    assert rows["reference_old"].band == "superseded"
    assert {row.band for row in store.list("hot")} == {"hot"}

    rendered = store.render()
    index = (store.root / "memory/MEMORY.md").read_text()
    assert "feedback_testing" in index and "reference_old" not in index
    assert rendered.summary()

    later = Store(store.root, NOW + dt.timedelta(hours=1))
    flushed = later.flush()
    assert flushed.written == ["memory/feedback_testing.md"]
    assert "access_count: 1" in (store.root / "memory/feedback_testing.md").read_text()
    status = later.tick()
    assert status.lint_errors == 0 and status.ran_at == "2026-07-30T13:00:37Z"
    assert (
        json.loads((store.root / "runtime/state/tick-status.json").read_text()) == status.to_json())
    assert later.status().files == 4 + 3  # the three derived files are indexed too


def test_show_list_and_render_agree_to_the_digit(store: Store) -> None:
    """Failure caught: `show` scored with the exact clock while `list` and render cut it to the
    minute, so the same memory showed two scores."""
    store.touch("memory/feedback_testing.md")
    listed = {row.name: row.score for row in store.list()}
    for name in ("feedback_testing", "feedback_untouched", "project_export"):
        assert store.show(name).score == listed[name], name
    assert store.show("memory/feedback_testing.md").score == listed["feedback_testing"]


def test_a_memory_is_named_by_path_absolute_path_or_name(store: Store) -> None:
    by_name = store.show("feedback_testing")
    assert store.show("memory/feedback_testing.md") == by_name
    assert store.show(str(store.root / "memory/feedback_testing.md")) == by_name
    assert by_name.body.strip().endswith("The e2e test drives the real binary.")
    assert store.touch("feedback_testing").path == "memory/feedback_testing.md"
    assert store.touch(store.root / "memory/feedback_testing.md", "Edit").tool == "Edit"


def test_errors_are_the_projects_own(store: Store, tmp_path: Path) -> None:
    with pytest.raises(RootNotFound):
        Store(tmp_path / "nowhere")
    with pytest.raises(NotFound):
        store.show("feedback_nothing")
    with pytest.raises(NotFound):
        store.touch("identity.md")
    with pytest.raises(BadUsage):
        store.touch("memory/feedback_testing.md", "Grep")
    with pytest.raises(BadUsage):
        store.search("   ")
    with pytest.raises(BadUsage):
        store.list("lukewarm")


def test_a_held_mirror_lock_is_busy_not_a_hang(store: Store) -> None:
    """Failure caught: the lock timeout existed but nothing used it, so a stuck writer hung every
    command."""
    store.sync()
    lock = store.root / "runtime/state/mirror.lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "time.sleep(30)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        impatient = Store(store.root, NOW, config=Config(lock_timeout_s=0.3))
        with pytest.raises(Busy):
            impatient.flush()
        with pytest.raises(Busy):
            impatient.sync()
    finally:
        holder.kill()
        holder.wait()
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released: the process that held it is gone
    os.close(fd)


def test_import_memstore_loads_nothing_third_party(store: Store) -> None:
    """Failure caught: `import memstore` (or building a Store) pulling in click, YAML or
    sqlite-utils."""
    probe = (
        "import sys\n"
        "import memstore\n"
        "from memstore import Store\n"
        f"Store({str(store.root)!r})\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "  {'click', 'yaml', 'sqlite_utils', 'frontmatter', 'tabulate', 'watchdog'})\n"
        "print(heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_cli_is_a_thin_layer() -> None:
    """Failure caught: SQL, sqlite3 or mirror orchestration creeping back into the command line."""
    front = REPO / "memstore/frontends"
    files = [front / "cli.py", front / "cligroup.py", *(front / "commands").glob("*.py")]
    source = "\n".join(p.read_text() for p in files)
    for forbidden in ("import sqlite3", "SELECT ", "INSERT ", "open_mirror", "sync_under_lock",
                      "file_lock", "from memstore.mirror.sync", "from memstore.mirror.views",
                      "from memstore.mirror.render"):
        assert forbidden not in source, forbidden

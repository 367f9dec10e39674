"""The mirror equals the files after every kind of change, and rebuild reproduces it exactly."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from memstore.core.config import Config
from memstore.mirror.sync import SyncReport, open_mirror, quick_sync, rebuild, sync
from tests.helpers import memory, write

CFG = Config()

ROW_COLUMNS = (
    "path, kind, type, name, summary, description, row_text, created, status, pin, importance, "
    "fm_access_count, fm_stability, fm_last_accessed, fm_last_reinforced, meta, problems, size, "
    "digest"
)


def mirror_rows(root: Path) -> list[tuple]:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        files = conn.execute(f"SELECT {ROW_COLUMNS} FROM files ORDER BY path").fetchall()
        policy = conn.execute("SELECT * FROM policy ORDER BY path").fetchall()
        fts = conn.execute("SELECT rowid, * FROM files_fts ORDER BY rowid").fetchall()
        ids = conn.execute("SELECT id, path FROM files ORDER BY id").fetchall()
        return [*files, ("--policy--",), *policy, ("--fts--",), *fts, ("--ids--",), *ids]
    finally:
        conn.close()


def disk_state(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*.md")
        if "runtime" not in p.relative_to(root).parts
    }


def mirror_paths(root: Path) -> dict[str, str]:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        rows = conn.execute(
            "SELECT f.path, t.body FROM files f LEFT JOIN files_fts t ON t.rowid = f.id")
        return dict(rows.fetchall())
    finally:
        conn.close()


def fts_count(root: Path, word: str) -> int:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        return conn.execute("SELECT count(*) FROM files_fts WHERE files_fts MATCH ?",
                            (word,)).fetchone()[0]
    finally:
        conn.close()


def corpus(root: Path) -> None:
    write(root, "identity.md", "# I am the agent\n")
    for i in range(12):
        write(root, f"memory/project_topic-{i:02d}.md",
              memory(f"project_topic-{i:02d}", f"summary {i} apples"))
    write(root, "memory/short-term/260729-fact.md", "a short-term fact about pears\n")
    write(root, "lenses/git.md", "---\ntype: lens\ntrigger:\n  tool_match: Bash\n---\nlens body\n")


def test_add_change_delete_rename_keep_mirror_equal_to_files(root: Path) -> None:
    corpus(root)
    report = sync(root, CFG)
    assert set(mirror_paths(root)) == set(disk_state(root))
    assert report.scanned == 15

    # add
    write(root, "memory/feedback_new-one.md", memory("feedback_new-one", "fresh kiwis"))
    # change (same size would still be caught by mtime; change the size too)
    write(root, "memory/project_topic-03.md", memory("project_topic-03", "changed to bananas"))
    # delete
    (root / "memory/project_topic-05.md").unlink()
    # rename
    os.rename(root / "memory/project_topic-07.md", root / "memory/project_topic-77.md")
    report = sync(root, CFG)
    assert (report.added, report.changed, report.removed) == (2, 1, 2)
    rows = mirror_paths(root)
    assert set(rows) == set(disk_state(root))
    assert "bananas" not in rows["memory/project_topic-03.md"]  # body unchanged, summary changed
    assert fts_count(root, "bananas") == 1 and fts_count(root, "kiwis") == 1
    # 12, less the changed one; the renamed one keeps its text, the deleted one is kept in
    # memory/archive/ (memstore.mirror.deletions)
    assert report.kept_deleted == ["memory/archive/project_topic-05.md"]
    assert fts_count(root, "apples") == 11
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    policy = {r[0] for r in conn.execute("SELECT path FROM policy")}
    conn.close()
    assert policy == {p for p in disk_state(root)
                      if p.startswith("memory/") and "_" in p.split("/")[-1]
                      and not p.startswith("memory/archive/")}  # a kept copy is no T2 memory


def test_same_size_edit_is_seen(root: Path) -> None:
    corpus(root)
    sync(root, CFG)
    path = root / "memory/project_topic-01.md"
    text = path.read_text().replace("apples", "grapes")
    assert len(text) == len(path.read_text()) - 0  # same length word swap
    stat = path.stat()
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    sync(root, CFG)
    assert fts_count(root, "grapes") == 1


def test_touch_without_change_rehashes_but_keeps_row(root: Path) -> None:
    corpus(root)
    _age(root)
    sync(root, CFG)
    before = mirror_rows(root)
    os.utime(root / "memory/project_topic-02.md", None)
    report = sync(root, CFG)
    assert report.touched_only == 1 and report.changed == 0
    assert mirror_rows(root) == before


def test_unreadable_file_keeps_its_row(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus(root)
    sync(root, CFG)
    # A file that changed but cannot be read now (an I/O error, a permission). A link is never
    # read at all (tests/test_symlinks.py), so the failure is made by hand.
    path = write(root, "memory/project_linked.md", memory("project_linked", "linked memory"))
    sync(root, CFG)
    assert "memory/project_linked.md" in mirror_paths(root)
    path.write_text(memory("project_linked", "changed memory") + "more\n", encoding="utf-8")
    import memstore.mirror.sync

    real_read = memstore.mirror.sync.read_regular

    def failing(target: os.PathLike[str]) -> bytes:
        if os.fspath(target).endswith("project_linked.md"):
            raise PermissionError(13, "Permission denied", os.fspath(target))
        return real_read(target)

    monkeypatch.setattr(memstore.mirror.sync, "read_regular", failing)
    report = sync(root, CFG)
    assert "memory/project_linked.md" in mirror_paths(root)
    assert report.removed == 0 and "memory/project_linked.md" in report.unreadable


def test_rebuild_after_deleting_mirror_gives_identical_rows_and_results(root: Path, run) -> None:
    corpus(root)
    write(root, "memory/feedback_broken.md", b'---\nname: "x\n---\nbroken apples\n')
    assert run(root, "sync").exit_code == 0
    rows = mirror_rows(root)
    results = [run(root, "search", q, "--json").stdout
               for q in ("apples", "summary 3", "lens body pears")]
    for suffix in ("", "-wal", "-shm"):
        p = root / "runtime" / f"memstore.db{suffix}"
        if p.exists():
            p.unlink()
    assert run(root, "rebuild").exit_code == 0
    assert mirror_rows(root) == rows
    assert [run(root, "search", q, "--json").stdout
            for q in ("apples", "summary 3", "lens body pears")] == results


def test_rebuild_while_healthy_swaps_in_place(root: Path) -> None:
    corpus(root)
    sync(root, CFG)
    reader = sqlite3.connect(root / "runtime" / "memstore.db")
    reader.execute("BEGIN")
    seen_before = reader.execute("SELECT count(*) FROM files").fetchone()[0]
    write(root, "memory/feedback_extra.md", memory("feedback_extra", "extra"))
    rebuild(root, CFG)
    # The open read transaction still sees its snapshot: never half a mirror.
    assert reader.execute("SELECT count(*) FROM files").fetchone()[0] == seen_before
    reader.execute("COMMIT")
    assert reader.execute("SELECT count(*) FROM files").fetchone()[0] == seen_before + 1
    reader.close()
    assert not list((root / "runtime").glob("memstore.db.rebuild-*"))


def test_corrupt_mirror_is_rebuilt_with_one_line(root: Path, run) -> None:
    corpus(root)
    assert run(root, "sync").exit_code == 0
    db = root / "runtime" / "memstore.db"
    for suffix in ("-wal", "-shm"):
        (root / "runtime" / f"memstore.db{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"garbage, not a database" * 100)
    result = run(root, "search", "apples", "--json")
    assert result.exit_code == 0
    lines = [line for line in result.stderr.splitlines() if line]
    assert len(lines) == 1 and "corrupt" in lines[0] and "rebuilding" in lines[0]
    assert len(json.loads(result.stdout)) == 10


def test_truncated_mirror_is_rebuilt(root: Path, run) -> None:
    corpus(root)
    assert run(root, "sync").exit_code == 0
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    db = root / "runtime" / "memstore.db"
    db.write_bytes(db.read_bytes()[:4096])
    result = run(root, "status", "--json")
    assert result.exit_code == 0, result.output
    assert "rebuilding" in result.stderr
    assert json.loads(result.stdout)["kinds"]["t2"] == 12


def test_foreign_schema_is_rebuilt(root: Path, run) -> None:
    corpus(root)
    assert run(root, "sync").exit_code == 0
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
        "VALUES ('memstore', 'm999_future', 'x')"
    )
    conn.commit()
    conn.close()
    result = run(root, "status")
    assert result.exit_code == 0
    assert "another schema version" in result.stderr


def test_known_migrations_match_the_migrations_package() -> None:
    from memstore import migrations
    from memstore.mirror import db as mirror

    assert list(mirror.KNOWN_MIGRATIONS) == migrations.names()


# -------------------------------------------------------------- quick sync (what search runs first)


def _age(root: Path) -> None:
    """Age every stamp under root past the racy window, as if the last sync were minutes ago."""
    old = time.time() - 600
    for path in [root, *root.rglob("*")]:
        os.utime(path, (old, old), follow_symlinks=False)


def _quick(root: Path) -> SyncReport:
    conn = open_mirror(root)
    try:
        return quick_sync(conn, root, CFG)
    finally:
        conn.close()


def test_quick_sync_sees_added_removed_renamed_and_replaced_files(root: Path) -> None:
    corpus(root)
    _age(root)
    sync(root, CFG)
    write(root, "memory/feedback_added.md", memory("feedback_added", "added kiwis"))
    (root / "memory/project_topic-01.md").unlink()
    os.rename(root / "memory/project_topic-02.md", root / "memory/project_topic-22.md")
    tmp = root / "memory/.project_topic-03.md.tmp"  # an editor's save: write aside, rename over
    tmp.write_text(memory("project_topic-03", "replaced with mangoes"))
    os.replace(tmp, root / "memory/project_topic-03.md")
    write(root, "memory/bugs/0009-new-folder-bug.md",
          "---\ntitle: nested\nstatus: open\n---\nnested figs\n")
    report = _quick(root)
    assert (report.added, report.changed, report.removed) == (3, 1, 2)
    assert set(mirror_paths(root)) == set(disk_state(root))
    assert (fts_count(root, "mangoes") == 1 and fts_count(root, "figs") == 1
            and fts_count(root, "kiwis") == 1)


def test_quick_sync_after_folder_removal(root: Path) -> None:
    corpus(root)
    write(root, "memory/short-term/sub/260701-deep.md", "deep\n")
    _age(root)
    sync(root, CFG)
    import shutil

    shutil.rmtree(root / "memory/short-term")
    _quick(root)
    assert set(mirror_paths(root)) == set(disk_state(root))


def test_quick_sync_misses_in_place_edits_by_other_tools_until_a_full_sync(root: Path) -> None:
    """The documented gap: same inode, same folder mtime. A full sync (or the hook's dirty mark)
    catches it."""
    corpus(root)
    _age(root)
    sync(root, CFG)
    path = root / "memory/project_topic-04.md"
    with open(path, "a") as handle:
        handle.write("appended papayas\n")
    _quick(root)
    assert fts_count(root, "papayas") == 0
    sync(root, CFG)
    assert fts_count(root, "papayas") == 1


def test_quick_sync_reads_files_the_hook_saw_written(root: Path) -> None:
    from memstore.hook.handler import main as hook_main

    corpus(root)
    _age(root)
    sync(root, CFG)
    path = root / "memory/short-term/260729-fact.md"
    with open(path, "a") as handle:  # edited in place, as the Edit tool does
        handle.write("guavas\n")
    payload = {"hook_event_name": "PostToolUse", "tool_name": "Edit", "cwd": str(root),
               "tool_input": {"file_path": "memory/short-term/260729-fact.md"}}
    import io

    hook_main(["--root", str(root)], stdin=io.BytesIO(json.dumps(payload).encode()),
              stdout=io.StringIO())
    _quick(root)
    assert fts_count(root, "guavas") == 1
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    assert conn.execute("SELECT count(*) FROM dirty").fetchone()[0] == 0
    conn.close()


def test_quick_sync_does_nothing_when_nothing_moved(root: Path) -> None:
    corpus(root)
    _age(root)
    sync(root, CFG)
    report = _quick(root)
    assert (report.scanned, report.added, report.changed, report.removed) == (0, 0, 0, 0)


def test_mirror_of_an_older_schema_is_migrated_in_place(root: Path, run) -> None:
    from sqlite_utils import Database

    from memstore.migrations import migrations
    from memstore.mirror import db as mirror

    corpus(root)
    db = root / "runtime" / "memstore.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    migrations.apply(Database(conn), stop_before="m002_quick_freshness")
    conn.close()
    result = run(root, "search", "apples", "--json")
    assert result.exit_code == 0 and "rebuil" not in result.stderr  # upgraded, not rebuilt
    assert len(json.loads(result.stdout)) == 10
    conn = sqlite3.connect(db)
    assert [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")] == list(
        mirror.KNOWN_MIGRATIONS)
    conn.close()


def test_racily_clean_file_is_looked_at_again(root: Path) -> None:
    """A file changed within the same clock tick as the sync that read it must not stay stale."""
    corpus(root)
    path = root / "memory/project_topic-05.md"
    stamp = path.stat().st_mtime_ns
    sync(root, CFG)  # the file's stamp is seconds old at most: racy
    path.write_text(path.read_text().replace("apples", "quince"))  # same size
    os.utime(path, ns=(stamp, stamp))  # ... and, on a coarse clock, the same mtime
    sync(root, CFG)
    assert fts_count(root, "quince") == 1


def test_damage_inside_the_file_is_detected_and_rebuilt_with_one_line(root: Path, run) -> None:
    for i in range(400):  # enough rows that the damage lands in table pages, past the header
        write(root, f"memory/reference_bulk-{i:03d}.md",
              memory(f"reference_bulk-{i:03d}", f"bulk apples {i}", body="filler text " * 40))
    assert run(root, "sync").exit_code == 0
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    db = root / "runtime" / "memstore.db"
    data = bytearray(db.read_bytes())
    page = 4096
    for start in range(page * 2, len(data) - page, page * 3):  # scribble over every third page
        data[start + 100 : start + 1100] = os.urandom(1000)
    db.write_bytes(bytes(data))
    result = run(root, "search", "bulk apples", "--json")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line]
    assert len(lines) == 1 and "corrupt" in lines[0] and "rebuil" in lines[0], lines
    assert len(json.loads(result.stdout)) == 10
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()

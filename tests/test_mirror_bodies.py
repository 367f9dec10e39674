"""Note bodies live in the full-text tables, not in `files` (migration m004), so render reads none.

Sync writes files_fts and files_cjk itself (no trigger can: `files` has no body), a
mirror of the previous schema is migrated in place with its data, and the row render
shows is built once at sync (files.index_row). Each test names the failure it catches.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from memstore.core.config import Config
from memstore.core.lenses import load_lenses
from memstore.mirror import db as mirror
from memstore.mirror.index_rows import make_row
from memstore.mirror.indexing import COLUMNS, body_of, build_row
from memstore.mirror.render import render
from memstore.mirror.sync import sync
from tests.helpers import NOW_DT, memory, search_json, write

CFG = Config()
FAUNA = "memory/project_fauna.md"
ZH = "memory/project_db-migration.md"
FAUNA_BODY = "The quokka colony moved north.\n\nSecond paragraph about wombats."
LENS_BODY = "LENSMARK check the working directory before any shell command."


def corpus(root: Path) -> None:
    write(root, "identity.md", "# I am the agent\n")
    write(root, FAUNA, memory("project_fauna", "animals we track", body=FAUNA_BODY))
    write(root, ZH, memory("project_db-migration", body="我们需要在下周完成数据库迁移的计划。"))
    for i in range(8):
        write(root, f"memory/reference_item-{i}.md",
              memory(f"reference_item-{i}", f"item {i} ledger", access_count=i,
                     stability=14, last_accessed="2026-07-20T10:00:00Z"))
    # a summary render must clean: control bytes, a bidi override
    write(root, "memory/feedback_messy.md",
          "---\nname: feedback_messy\ntype: feedback\n"
          "summary: \"tabs\\tand \\u202e bidi \\x07 bell\"\n---\nmessy\n")
    write(root, "memory/feedback_old.md",
          memory("feedback_old", "replaced", status="superseded by feedback_messy"))
    write(root, "memory/user_pinned.md", memory("user_pinned", "always shown", pin="true"))
    write(root, "memory/project_new.md", memory("project_new", "born today", created="2026-07-30"))
    write(root, "memory/short-term/260729-fact.md", "a short-term fact about pears\n")
    write(root, "lenses/bash-care.md",
          f"---\nname: bash-care\ntype: lens\ntrigger:\n  tool_match: Bash\n---\n{LENS_BODY}\n")


def db_path(root: Path) -> Path:
    return root / "runtime" / "memstore.db"


def old_mirror(root: Path) -> dict[str, int]:
    """A mirror as the version before m004 left it: m001-m003, rows written with the body in
    `files`.

    The m001/m003 triggers fill files_fts and files_cjk from those rows, as they did then.
    Returns each path's files.id.
    """
    from sqlite_utils import Database

    from memstore.migrations import migrations

    path = db_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = mirror.connect(path)
    migrations.apply(Database(conn), stop_before="m004_bodies_out_of_files")
    later = ("index_row", "text_digest", "fm_base", "parts", "tail_digest", "context",
             "context_digest")
    old_columns = [*(c for c in COLUMNS if c not in later), "body"]
    for file in sorted(p for p in root.rglob("*.md") if "runtime" not in p.parts):
        rel = file.relative_to(root).as_posix()
        if rel == FAUNA:  # a file removed below: a gap in the ids, which the copy must keep
            conn.execute("INSERT INTO files (path, kind, body, mtime_ns, size, digest) "
                         "VALUES ('memory/gone.md', 'other', 'gone', 0, 0, '')")
        raw = file.read_bytes()
        info = file.stat()
        row = build_row(rel, raw, info.st_mtime_ns, len(raw), CFG, info.st_ino)
        conn.execute(f"INSERT INTO files ({', '.join(old_columns)}) "
                     f"VALUES ({', '.join('?' * len(old_columns))})", [row[c] for c in old_columns])
    conn.execute("DELETE FROM files WHERE path = 'memory/gone.md'")
    # What recompute_policy gave then, with no journal: each file's own policy fields.
    conn.execute("INSERT INTO policy (path, access_count, stability, last_accessed, "
                 "last_reinforced, touches) SELECT path, COALESCE(fm_access_count, 0), "
                 "COALESCE(fm_stability, ?), fm_last_accessed, fm_last_reinforced, 0 FROM files "
                 "WHERE kind = 't2'", (CFG.initial_stability,))
    ids = dict(conn.execute("SELECT path, id FROM files").fetchall())
    assert "body" in {r[1] for r in conn.execute("PRAGMA table_info(files)")}
    assert max(ids.values()) > len(ids)
    conn.close()
    return ids


@pytest.fixture
def migrated(root: Path) -> tuple[Path, dict[str, int]]:
    corpus(root)
    return root, old_mirror(root)


def test_previous_schema_is_migrated_in_place_keeping_ids(migrated) -> None:
    """Fails if m004 is not applied to an existing mirror (or it is rebuilt instead), if the body
    column, a trigger that writes from it, or the unused `settings` table survives, if the copy
    of `files` renumbers the rows (files_fts and files_cjk are keyed by files.id), or if the
    pages the copy freed stay in the file (a migrated mirror would keep twice its size)."""
    root, ids = migrated
    conn = mirror.open_checked(db_path(root))
    try:
        assert mirror.applied_migrations(conn) == list(mirror.KNOWN_MIGRATIONS)
        assert "body" not in {r[1] for r in conn.execute("PRAGMA table_info(files)")}
        assert conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall() == []
        assert conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'settings'").fetchone() is None
        assert dict(conn.execute("SELECT path, id FROM files").fetchall()) == ids
        assert {r[0] for r in conn.execute("SELECT rowid FROM files_fts")} == set(ids.values())
        assert {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'")} >= {"files_kind", "files_dir"}
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # the old table's pages given back
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
    finally:
        conn.close()


def test_migrated_mirror_search_show_and_lenses_find_the_bodies(run, migrated) -> None:
    """Fails if the bodies are not copied into the new files_fts (a word only in a body is not
    found, or its snippet is empty), if files_cjk is lost or out of step (CJK not found), or if
    `show` or the lenses still read a body column that is gone. Also fails if the hook, which
    never migrates, cannot read a lens from a mirror not migrated yet."""
    root, _ = migrated
    conn = sqlite3.connect(db_path(root))  # as the hook opens it: no migration
    try:
        assert [lens.body.strip() for lens in load_lenses(conn)] == [LENS_BODY]
    finally:
        conn.close()
    result = run(root, "search", "quokka", "--json", "--no-sync")
    assert result.exit_code == 0 and "rebuil" not in result.stderr  # migrated, not rebuilt
    hits = json.loads(result.stdout)
    assert [h["path"] for h in hits] == [FAUNA] and "[quokka]" in hits[0]["snippet"]
    assert [h["path"] for h in search_json(run, root, "数据库", "--no-sync")] == [ZH]
    shown = json.loads(run(root, "show", "project_fauna", "--json").stdout)
    assert shown["body"].strip() == f"# project_fauna\n\n{FAUNA_BODY}"
    conn = mirror.open_checked(db_path(root))
    try:
        (lens,) = load_lenses(conn)
        assert lens.body.strip() == LENS_BODY and LENS_BODY in lens.text()
    finally:
        conn.close()


def test_migrated_mirror_renders_exactly_as_a_rebuilt_one(run, migrated) -> None:
    """Fails if m004 leaves files.index_row empty or different from what sync builds (the
    migrated index would differ from a rebuilt one, or show raw control bytes)."""
    root, _ = migrated
    assert run(root, "render").exit_code == 0
    outputs = ("MEMORY.md", "MEMORY-archive.md", "current-state.md")
    migrated_text = {name: (root / "memory" / name).read_bytes() for name in outputs}
    assert (b"\x07" not in migrated_text["MEMORY.md"]
            and b"[feedback_messy]" in migrated_text["MEMORY.md"])
    conn = sqlite3.connect(db_path(root))
    migrated_rows = conn.execute(
        "SELECT path, index_row FROM files WHERE kind = 't2' ORDER BY path").fetchall()
    conn.close()
    assert run(root, "rebuild").exit_code == 0
    conn = sqlite3.connect(db_path(root))
    assert conn.execute("SELECT path, index_row FROM files "
                        "WHERE kind = 't2' ORDER BY path").fetchall() == migrated_rows
    conn.close()
    assert run(root, "render").exit_code == 0
    assert {name: (root / "memory" / name).read_bytes() for name in outputs} == migrated_text


def test_sync_after_migration_keeps_the_text_tables_in_step(run, migrated) -> None:
    """Fails if sync, now the only writer of files_fts and files_cjk, misses an edit (old words
    still found), a removal (orphan rows) or an addition on a migrated mirror."""
    root, _ = migrated
    write(root, FAUNA, memory("project_fauna", "animals we track", body="Now only platypus notes."))
    write(root, ZH, memory("project_db-migration", body="English only now."))
    write(root, "memory/reference_added.md", memory("reference_added", body="numbat sighting"))
    assert run(root, "sync").exit_code == 0
    assert search_json(run, root, "quokka") == []
    assert [h["path"] for h in search_json(run, root, "platypus")] == [FAUNA]
    assert [h["path"] for h in search_json(run, root, "numbat")] == ["memory/reference_added.md"]
    assert search_json(run, root, "数据库") == []
    conn = sqlite3.connect(db_path(root))
    try:
        assert conn.execute("SELECT count(*) FROM files_cjk").fetchone()[0] == 0
    finally:
        conn.close()


def text_tables(root: Path) -> tuple[dict[str, int], set[int], set[int], set[int]]:
    conn = sqlite3.connect(db_path(root))
    try:
        ids = dict(conn.execute("SELECT path, id FROM files").fetchall())
        fts = {r[0] for r in conn.execute("SELECT rowid FROM files_fts")}
        cjk = {r[0] for r in conn.execute("SELECT rowid FROM files_cjk")}
        unspaced = {r[0] for r in conn.execute("SELECT id FROM files WHERE unspaced")}
        return ids, fts, cjk, unspaced
    finally:
        conn.close()


def test_sync_keeps_one_text_row_per_file_under_a_stable_id(root: Path) -> None:
    """Fails if an update gives a file a new id (its text rows would be orphaned under the old
    one), or an edit, a removal or a rename leaves a full-text or trigram row without its file."""
    corpus(root)
    write(root, "memory/reference_ja.md", memory("reference_ja", body="データベースの移行"))
    sync(root, CFG)
    before, fts, cjk, unspaced = text_tables(root)
    assert (fts == set(before.values())
            and cjk == unspaced == {before[ZH], before["memory/reference_ja.md"]})
    # gains CJK text
    write(root, FAUNA, memory("project_fauna", "animals we track", body="其他数据 and more"))
    write(root, ZH, memory("project_db-migration", body="no longer Chinese"))  # loses it
    (root / "memory/reference_ja.md").unlink()
    (root / "memory/reference_item-3.md").unlink()
    os.rename(root / "memory/reference_item-4.md", root / "memory/reference_item-44.md")
    sync(root, CFG)
    after, fts, cjk, unspaced = text_tables(root)
    assert after[FAUNA] == before[FAUNA] and after[ZH] == before[ZH]
    assert fts == set(after.values())
    # the deleted one's text lives on only in its copy in memory/archive/
    # (memstore.mirror.deletions)
    assert cjk == unspaced == {after[FAUNA], after["memory/archive/reference_ja.md"]}
    conn = sqlite3.connect(db_path(root))
    try:
        assert body_of(conn, after[FAUNA]) == body_of(conn, FAUNA) == (
            "# project_fauna\n\n其他数据 and more\n")
        assert body_of(conn, "memory/no-such.md") == ""
    finally:
        conn.close()


def test_show_reads_the_body_from_the_full_text_table(run, root: Path) -> None:
    """Fails if `show` reads the body from `files` (gone) or from another file's row."""
    corpus(root)
    shown = json.loads(run(root, "show", "project_fauna", "--json").stdout)
    assert shown["body"].strip() == f"# project_fauna\n\n{FAUNA_BODY}"
    assert "Second paragraph" in run(root, "show", "project_fauna").stdout


def test_render_reads_no_body_and_no_text_table(root: Path) -> None:
    """Fails if render reads a note body again: a join on files_fts or files_cjk, or a body column
    in `files`."""
    corpus(root)
    sync(root, CFG)
    conn = mirror.open_checked(db_path(root))
    reads: set[tuple[str, str]] = set()

    def authorizer(
            action: int, table: str | None, column: str | None, _db: str | None,
            _src: str | None) -> int:
        if action == sqlite3.SQLITE_READ:
            reads.add((table or "", column or ""))
        return sqlite3.SQLITE_OK

    conn.set_authorizer(authorizer)
    try:
        render(conn, root, NOW_DT, CFG)
    finally:
        conn.close()
    assert ("files", "index_row") in reads  # the authorizer saw render's query
    assert not [r for r in reads if r[1] == "body" or r[0].startswith(("files_fts", "files_cjk"))]


def test_index_row_is_the_row_render_would_build(root: Path) -> None:
    """Fails if sync stores a row other than make_row's of the file's name and row_text (say,
    of its raw summary), or if render's fallback for a row not built at sync differs."""
    corpus(root)
    sync(root, CFG)
    conn = mirror.open_checked(db_path(root))
    try:
        rows = conn.execute("SELECT path, row_text, index_row, kind FROM files").fetchall()
        for path, row_text, index_row, kind in rows:
            filename = path.rsplit("/", 1)[-1]
            expected = make_row(filename[:-3], filename, row_text or "") if kind == "t2" else None
            assert index_row == expected, path
        messy = conn.execute(
            "SELECT index_row FROM files WHERE path = 'memory/feedback_messy.md'").fetchone()[0]
        assert messy.isprintable() and "bell" in messy
        built = render(conn, root, NOW_DT, CFG).bands
        conn.execute("UPDATE files SET index_row = NULL")
        fallback = render(conn, root, NOW_DT, CFG)
        assert fallback.written == []  # byte-identical files: nothing rewritten
        assert [(e.path, e.band, e.row) for e in fallback.bands.entries] == [
            (e.path, e.band, e.row) for e in built.entries]
    finally:
        conn.close()


def test_rebuild_leaves_each_text_index_in_one_segment(run, root: Path) -> None:
    """Fails if a rebuild leaves the full-text indexes in the segments of its write batches
    (search then looks every word up in each: its coverage pass ran three times slower at 100,000
    files)."""
    from memstore.mirror.sync import BATCH

    for i in range(2 * BATCH + 50):
        write(root, f"memory/reference_n{i:04d}.md",
              memory(f"reference_n{i:04d}", f"note {i}", body=f"数据 body {i}"))
    assert run(root, "rebuild").exit_code == 0
    conn = sqlite3.connect(db_path(root))
    try:
        for table in ("files_fts", "files_cjk"):
            assert conn.execute(
                f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0] == 1, table
    finally:
        conn.close()

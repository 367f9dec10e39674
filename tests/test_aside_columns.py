"""What makes a memory step aside, held in files.aside, files.valid_from and files.valid_until
(migration m015, indexing.aside_values), so a search finds those memories by index."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from memstore import Store
from memstore.mirror.stepping_aside import stepped_aside
from tests.helpers import NOW_DT, git, joined, memory, team_remote, write

# The pinned day is 2026-07-30 (tests.helpers.NOW). Each file holds the word "quince"; True: a
# default search leaves it out.
CASES: dict[str, tuple[dict[str, str], bool]] = {
    "project_kept": ({}, False),
    "project_superseded": ({"status": "superseded", "superseded_by": "project_kept"}, True),
    "project_forgotten-cased": ({"status": '"Forgotten: the export went"'}, True),
    "project_status-later": ({"status": '"review, then superseded"'}, False),
    # whitespace around the word: render puts it in the superseded band, so search leaves it out
    "project_superseded-spaced": ({"status": '" superseded"'}, True),
    "project_deleted": ({"status": "deleted", "deleted_from": "memory/project_gone.md"}, True),
    # said, even empty: json_extract gives '', not NULL
    "project_deleted-empty": ({"deleted_from": '""'}, True),
    "project_deleted-null": ({"deleted_from": "null"}, False),
    "project_expired": ({"valid_until": "2026-07-29"}, True),
    "project_expired-stamp": ({"valid_until": '"2026-07-29T23:59:00Z"'}, True),
    "project_expired-yaml-time": ({"valid_until": "2026-07-29 10:00:00"}, True),
    "project_last-day": ({"valid_from": "2026-07-30", "valid_until": "2026-07-30"}, False),
    "project_not-yet": ({"valid_from": "2026-07-31"}, True),
    "project_not-yet-stamp": ({"valid_from": '"2026-08-01 tomorrow or so"'}, True),
    "project_not-a-date": ({"valid_until": "soon"}, False),
    "project_short-date": ({"valid_until": "2020-1-1"}, False),
    "project_number": ({"valid_until": "20200101"}, False),
    "project_list": ({"valid_until": '["2020-01-01"]'}, False),
    "project_mapping": ({"valid_until": '{"day": "2020-01-01"}'}, False),
    "project_true": ({"valid_from": "true"}, False),
    "project_spaced": ({"valid_until": '" 2020-01-01"'}, False),
    # GLOB's [0-9] is ASCII only: these are no dates (as one, the first would sort after any day)
    "project_other-digits": ({"valid_from": '"٢٠٢٠-٠١-٠١"', "valid_until": '"٢٠٢٠-٠١-٠١"'},
                             False),
}


def _file(name: str, fields: dict[str, str]) -> str:
    return memory(name, f"quince notes for {name}", f"The quince orchard, {name}.", **fields)


def cases_root(root: Path) -> Path:
    for name, (fields, _) in CASES.items():
        write(root, f"memory/{name}.md", _file(name, fields))
    return root


def kept() -> set[str]:
    return {f"memory/{name}.md" for name, (_, aside) in CASES.items() if not aside}


def found(store: Store, *, include_all: bool = False, catch_up: str = "quick") -> set[str]:
    hits = store.search("quince", 100, mode="fts", include_all=include_all, catch_up=catch_up)
    return {hit.path for hit in hits}


def columns(root: Path) -> dict[str, tuple[int, str | None, str | None]]:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        rows = conn.execute("SELECT path, aside, valid_from, valid_until FROM files "
                            "WHERE kind = 't2'")
        return {path: tuple(rest) for path, *rest in rows}
    finally:
        conn.close()


def test_default_search_leaves_out_each_memory_that_stepped_aside(root: Path) -> None:
    """Fails if sync leaves the columns empty or reads a case its own way: a superseded, forgotten,
    deleted_from, expired or not-yet-valid memory in a default search, or a memory whose status or
    dates only look like that (a later word, a date not in its first ten characters) left out."""
    store = Store(cases_root(root), NOW_DT)
    assert found(store) == kept()
    assert found(store, include_all=True) == {f"memory/{name}.md" for name in CASES}


def test_a_memory_steps_aside_and_back_as_its_file_changes(root: Path) -> None:
    """Fails if an updated row keeps the columns it had (only new rows filled): a memory superseded
    after it was indexed still found, or one taken back out of its status still left out."""
    write(root, "memory/project_new.md", _file("project_new", {}))
    write(root, "memory/project_old.md", _file("project_old", {}))
    store = Store(root, NOW_DT)
    assert found(store) == {"memory/project_new.md", "memory/project_old.md"}
    store.supersede("project_old", by="project_new")
    assert found(store) == {"memory/project_new.md"}
    write(root, "memory/project_old.md", _file("project_old", {"valid_from": "2026-01-01"}))
    assert found(store, catch_up="full") == {"memory/project_new.md", "memory/project_old.md"}
    write(root, "memory/project_new.md", _file("project_new", {"valid_until": "2025-12-31"}))
    assert found(store, catch_up="full") == {"memory/project_old.md"}


def test_a_broken_frontmatter_keeps_its_memory_aside(root: Path) -> None:
    """Fails if the columns follow what a broken file parses to (nothing) rather than the last good
    status and frontmatter the mirror keeps for it (adoption.keep_last_good)."""
    for name, fields in (("project_old", {"status": "superseded"}),
                         ("project_expired", {"valid_until": "2020-01-01"})):
        write(root, f"memory/{name}.md", _file(name, fields))
    store = Store(root, NOW_DT)
    assert found(store) == set()
    for name in ("project_old", "project_expired"):  # no closing ---: the frontmatter is broken
        path = root / "memory" / f"{name}.md"
        path.write_text(path.read_text().replace("\n---\n", "\n\n", 1) + "A quince more.\n")
    assert found(store, catch_up="full") == set()
    assert found(store, include_all=True) == {"memory/project_old.md", "memory/project_expired.md"}


def test_a_team_memory_that_stepped_aside_is_left_out_too(tmp_path: Path) -> None:
    """Fails if a joined team's files (written by the same sync, under teams/) get no columns."""
    seed, bare = team_remote(tmp_path)
    for name in ("project_team-kept", "project_team-old", "project_team-expired"):
        fields = {"project_team-old": {"status": "superseded"},
                  "project_team-expired": {"valid_until": "2026-01-01"}}.get(name, {})
        write(seed, f"memory/{name}.md", _file(name, fields))
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "three quince memories")
    git(seed, "push", "-q", "origin", "HEAD:main")
    store = joined(tmp_path, bare)
    assert found(store) == {"teams/acme/memory/project_team-kept.md"}
    assert len(found(store, include_all=True)) == 3


def test_an_existing_mirror_gets_the_columns_from_what_it_holds(
        root: Path, run: Callable[..., Result]) -> None:
    """Fails if m015 leaves the columns empty on an installed root (its memories that stepped aside
    found by every search until their files change), or fills them by a rule other than sync's."""
    from sqlite_utils import Database

    from memstore.core.config import Config
    from memstore.migrations import migrations
    from memstore.mirror import db as mirror
    from memstore.mirror.indexing import COLUMNS, build_row

    cases_root(root)
    db = root / "runtime" / "memstore.db"
    db.parent.mkdir(parents=True)
    conn = mirror.connect(db)
    migrations.apply(Database(conn), stop_before="m015_stepping_aside")
    assert "aside" not in {row[1] for row in conn.execute("PRAGMA table_info(files)")}
    # the rows as the version before m015 wrote them
    marks = ", ".join("?" * len(COLUMNS))
    for file in sorted((root / "memory").glob("*.md")):
        rel = file.relative_to(root).as_posix()
        raw = file.read_bytes()
        row = build_row(rel, raw, file.stat().st_mtime_ns, len(raw), Config(), file.stat().st_ino)
        conn.execute(f"INSERT INTO files ({', '.join(COLUMNS)}) VALUES ({marks})",
                     [row[c] for c in COLUMNS])
        conn.execute("INSERT INTO files_fts (rowid, name, summary, description, body) "
                     "SELECT id, ?, ?, ?, ? FROM files WHERE path = ?",
                     (row["name"], row["summary"], row["description"], row["body"], rel))
    conn.close()

    result = run(root, "search", "quince", "--json", "--no-sync", "--mode", "fts", "--limit", "100")
    # migrated in place, not rebuilt
    assert result.exit_code == 0 and "rebuil" not in result.stderr, result.stderr
    assert {hit["path"] for hit in json.loads(result.stdout)} == kept()
    conn = sqlite3.connect(db)
    assert [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")] == list(
        mirror.KNOWN_MIGRATIONS)
    conn.close()
    migrated = columns(root)
    Store(root, NOW_DT).rebuild()  # every row written again by sync
    assert migrated == columns(root)


def test_stepped_aside_reads_only_the_rows_that_stepped_aside(root: Path) -> None:
    """Fails if stepped_aside (on every search) reads every row of `files`: its cost would grow
    with a joined team's thousands of memories however few of them stepped aside."""
    store = Store(cases_root(root), NOW_DT)
    store.sync(embed=False)
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        aside = {f"memory/{name}.md" for name, (_, out) in CASES.items() if out}

        def steps() -> tuple[int, list[str]]:
            count = [0]

            def tick() -> int:
                count[0] += 1
                return 0

            statements: list[str] = []
            conn.set_trace_callback(statements.append)
            conn.set_progress_handler(tick, 1)  # once per SQLite VM instruction
            try:
                assert stepped_aside(conn, NOW_DT) == aside
            finally:
                conn.set_progress_handler(None, 1)
                conn.set_trace_callback(None)
            return count[0], statements

        few, _ = steps()
        with conn:  # 5,000 more rows that did not step aside, some with dates in their time
            conn.executemany(
                "INSERT INTO files (path, kind, meta, mtime_ns, size, digest, aside, valid_from, "
                "valid_until) VALUES (?, 't2', '{}', 0, 0, '', 0, ?, ?)",
                [(f"memory/project_bulk-{i}.md", "2026-01-01" if i % 10 == 0 else None,
                  "2027-01-01" if i % 10 == 1 else None) for i in range(5000)])
        many, statements = steps()
        assert many < few + 100, (few, many)  # a scan would take many instructions per row
        assert statements
        for sql in statements:
            plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
            reads = [step for step in plan if " files" in step]
            assert reads and all(step.startswith("SEARCH files USING") and "INDEX" in step
                                 for step in reads), plan
    finally:
        conn.close()

"""Substring search in scripts written without spaces (CJK, Thai, ...), and the empty query.

unicode61 makes a whole run of CJK letters one token, so before migration m003 the
query 数据库 did not find a memory saying 数据库迁移. Each test names the failure it
catches.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memstore import Store
from memstore.core.config import Config
from memstore.core.errors import BadUsage
from memstore.mirror import cjk, search
from tests.helpers import memory, search_json, write

ZH = "memory/project_db-migration.md"
JA = "memory/reference_ja-migration.md"
KO = "memory/reference_ko-migration.md"
TH = "memory/reference_th-language.md"
EN = "memory/project_deploy.md"
EN_ONLY = "memory/reference_weather.md"


@pytest.fixture
def scripts(root: Path) -> Path:
    write(root, ZH, memory("project_db-migration",
                           body="我们需要在下周完成数据库迁移的计划，然后 deploy 到生产环境。"))
    write(root, JA,
          memory("reference_ja-migration", body="データベースの移行は来週に予定されています。"))
    write(root, KO,
          memory("reference_ko-migration", body="다음 주에 데이터베이스를 마이그레이션합니다."))
    write(root, TH, memory("reference_th-language", body="ภาษาไทยง่ายมากสำหรับคนไทย"))
    write(root, EN,
          memory("project_deploy", body="How we deploy the service. Deploy early, deploy often."))
    write(root, EN_ONLY,
          memory("reference_weather", body="It rained all week and the garden flooded twice."))
    return root


def paths(run, root: Path, query: str, *extra: str) -> list[str]:
    return [h["path"] for h in search_json(run, root, query, *extra)]


def cjk_rowcount(root: Path) -> int:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        return conn.execute("SELECT count(*) FROM files_cjk").fetchone()[0]
    finally:
        conn.close()


# ---------------------------------------------------------------- finding substrings


def test_three_character_cjk_substring_is_found(run, scripts: Path) -> None:
    """Fails if runs of 3+ characters are looked up as whole unicode61 tokens (the old
    behaviour)."""
    hits = search_json(run, scripts, "数据库")
    assert [h["path"] for h in hits] == [ZH]
    assert "[数据库]" in hits[0]["snippet"]  # the snippet shows the matched text, marked
    assert paths(run, scripts, "迁移的计划") == [ZH]


def test_two_and_one_character_cjk_substrings_are_found(run, scripts: Path) -> None:
    """Fails if runs too short for a trigram are dropped (or sent through LIKE, which 3.40 answers
    wrongly)."""
    hits = search_json(run, scripts, "迁移")
    assert [h["path"] for h in hits] == [ZH]
    assert "[迁移]" in hits[0]["snippet"]
    assert paths(run, scripts, "库") == [ZH]
    assert paths(run, scripts, "来週") == [JA]


def test_japanese_korean_and_thai_substrings(run, scripts: Path) -> None:
    """Fails if kana, Hangul (a word with its particle attached) or Thai are left out of the scripts
    searched."""
    assert paths(run, scripts, "データベース") == [JA]
    assert paths(run, scripts, "移行") == [JA]
    # the text says 데이터베이스를: the word plus a particle
    hits = search_json(run, scripts, "데이터베이스")
    assert [h["path"] for h in hits] == [KO]
    assert "[데이터베이스]를" in hits[0]["snippet"]
    assert paths(run, scripts, "ง่าย") == [TH]  # ง่าย holds a combining tone mark


def test_a_run_not_in_any_file_finds_nothing(run, scripts: Path) -> None:
    """Fails if a run matches loosely: as separate characters, or as trigrams found apart from each
    other."""
    assert paths(run, scripts, "数据仓库") == []
    assert paths(run, scripts, "データ移行") == []
    write(scripts, "memory/reference_apart.md",
          memory("reference_apart", body="数据库迁，以及库迁移计。"))
    # every trigram is in that file, the run is not
    assert paths(run, scripts, "数据库迁移计") == []
    assert paths(run, scripts, "库迁移计") == ["memory/reference_apart.md"]


def test_mixed_query_ranks_the_file_holding_every_term_first(run, scripts: Path) -> None:
    """Fails if the English words and the CJK runs of one query are not merged into one ranking."""
    order = paths(run, scripts, "deploy 数据库")
    assert order[0] == ZH  # holds both
    assert EN in order  # holds only the English word, still listed
    hits = search_json(run, scripts, "deploy 数据库")
    assert "[数据库]" in hits[0]["snippet"] and "[deploy]" in hits[0]["snippet"]


def test_file_holding_every_run_ranks_first(run, root: Path) -> None:
    """Fails if a file holding one rare run many times outranks the one file holding every run.

    By bm25 times coverage alone, A (数据库 ten times, short) would beat B (both runs
    once, in a long text, and 计划 is common): the ranking must not let it.
    """
    write(root, "memory/project_a.md", memory("project_a", body="数据库" * 10 + "。"))
    write(root, "memory/project_b.md",
          memory("project_b", body="数据库迁移的计划。" + "别的内容很长。" * 60))
    for i in range(6):  # 计划 is everywhere, 数据库 is rare
        write(root, f"memory/project_plan-{i}.md", memory(f"project_plan-{i}", body=f"计划 {i}"))
    for i in range(8):
        write(root, f"memory/reference_other-{i}.md",
              memory(f"reference_other-{i}", body=f"unrelated note {i}"))
    order = paths(run, root, "数据库 计划")
    assert order[:2] == ["memory/project_b.md", "memory/project_a.md"]


def test_type_filter_applies_to_substring_hits(run, scripts: Path) -> None:
    """Fails if the run lookup ignores --type."""
    assert paths(run, scripts, "移", "--type", "project") == [ZH]
    assert paths(run, scripts, "移", "--type", "reference") == [JA]


# ---------------------------------------------------------------- the trigram table stays in step


def test_only_files_with_such_text_enter_the_trigram_table(run, scripts: Path) -> None:
    """Fails if every file is copied into files_cjk (the mirror would double in size)."""
    assert run(scripts, "sync").exit_code == 0
    assert cjk_rowcount(scripts) == 4  # ZH, JA, KO, TH; not the two English memories


def test_edit_and_delete_keep_the_trigram_table_in_step(run, scripts: Path) -> None:
    """Fails if files_cjk misses an update (stale CJK text still found) or a delete (orphan row)."""
    assert paths(run, scripts, "数据库") == [ZH]
    write(scripts, ZH, memory("project_db-migration", body="We finished the database migration."))
    assert paths(run, scripts, "数据库", "--full") == []
    assert cjk_rowcount(scripts) == 3
    # English file gains CJK text
    write(scripts, EN, memory("project_deploy", body="部署服务的步骤"))
    assert paths(run, scripts, "部署", "--full") == [EN]
    (scripts / JA).unlink()
    assert paths(run, scripts, "データベース") == []
    # KO, TH, EN, and JA's copy in memory/archive/ (memstore.mirror.deletions)
    assert cjk_rowcount(scripts) == 4
    assert paths(run, scripts, "データベース", "--all") == [
        "memory/archive/" + JA.rsplit("/", 1)[1]]


def test_mirror_at_the_previous_schema_is_migrated_and_backfilled(run, scripts: Path) -> None:
    """Fails if m003 is not applied in place to an existing mirror, or does not index the rows
    already there."""
    from sqlite_utils import Database

    from memstore.migrations import migrations
    from memstore.mirror import db as mirror
    from memstore.mirror.indexing import COLUMNS, build_row

    db = scripts / "runtime" / "memstore.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = mirror.connect(db)
    migrations.apply(Database(conn), stop_before="m003_unspaced_scripts")
    # the rows as the version before m003 wrote them (the body still in files, until m004)
    later = ("unspaced", "index_row", "text_digest", "fm_base", "parts", "tail_digest", "context",
             "context_digest")
    old_columns = [*(c for c in COLUMNS if c not in later), "body"]
    for path in sorted((scripts / "memory").glob("*.md")):
        raw = path.read_bytes()
        row = build_row(f"memory/{path.name}", raw, path.stat().st_mtime_ns, len(raw), Config())
        conn.execute(f"INSERT INTO files ({', '.join(old_columns)}) "
                     f"VALUES ({', '.join('?' * len(old_columns))})", [row[c] for c in old_columns])
    assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 6
    conn.close()

    # no sync: the rows must come from backfill
    result = run(scripts, "search", "数据库", "--json", "--no-sync")
    assert result.exit_code == 0 and "rebuil" not in result.stderr  # migrated, not rebuilt
    assert [h["path"] for h in json.loads(result.stdout)] == [ZH]
    conn = sqlite3.connect(db)
    assert [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")] == list(
        mirror.KNOWN_MIGRATIONS)
    conn.close()
    assert cjk_rowcount(scripts) == 4


def test_without_trigram_the_plain_table_scan_gives_the_same_hits(
        run, scripts: Path, monkeypatch) -> None:
    """Fails if the fallback for SQLite < 3.34 (no trigram tokenizer) breaks the schema or the
    search."""
    from memstore import migrations

    monkeypatch.setattr(migrations, "trigram_supported", lambda: False)
    # the first open builds the mirror: with a plain files_cjk
    assert paths(run, scripts, "数据库") == [ZH]
    conn = sqlite3.connect(scripts / "runtime" / "memstore.db")
    assert not search._has_trigram(conn)
    conn.close()
    assert paths(run, scripts, "迁移") == [ZH]
    assert paths(run, scripts, "deploy 数据库")[0] == ZH
    assert paths(run, scripts, "数据仓库") == []


# ---------------------------------------------------------------- which characters count


def test_ranges_frozen_in_the_migration_match_the_search_side() -> None:
    """Fails if memstore/mirror/cjk.py's ranges change without a migration (the trigger would test
    other ranges)."""
    from memstore import migrations

    assert migrations.M003_RANGES == cjk.RANGES


def test_sync_flag_backfill_and_query_side_agree_at_every_range_edge() -> None:
    """Fails if build_row's flag, m003's backfill and the query side disagree about a character at a
    block edge."""
    from sqlite_utils import Database

    from memstore.migrations import migrations
    from memstore.mirror.indexing import build_row

    chars = sorted({chr(c) for lo, hi in cjk.RANGES for c in (lo - 1, lo, hi, hi + 1)
                    if not 0xD800 <= c <= 0xDFFF})
    expected = {ch for ch in chars if cjk.has_unspaced(ch)}
    # both sides of edges
    assert "\u0e00" in expected and "\U000323af" in expected and "\u3004" not in expected
    flagged = {ch for ch in chars
               if build_row("memory/x.md", f"x{ch}x".encode(), 0, 4, Config())["unspaced"]}
    assert flagged == expected
    conn = sqlite3.connect(":memory:")
    migrations.apply(Database(conn), stop_before="m003_unspaced_scripts")
    for i, ch in enumerate(chars):
        conn.execute("INSERT INTO files (path, kind, body, mtime_ns, size, digest) "
                     "VALUES (?, 't2', ?, 0, 0, '')", (f"f{i}.md", f"x{ch}x"))
    migrations.apply(Database(conn))
    assert {row[0][1] for row in conn.execute("SELECT body FROM files_cjk")} == expected


def test_query_runs_split_at_punctuation_and_keep_combining_marks() -> None:
    """Fails if 。/・ stop separating runs, or a Thai tone mark splits a word."""
    assert cjk.runs("deploy 数据库。迁移 データ・ベース ง่าย 数据库") == [
        "数据库", "迁移", "データ", "ベース", "ง่าย"]
    assert cjk.strip_runs("deploy 数据库 now") == "deploy   now"
    assert cjk.runs("plain English, Ελληνικά, русский, हिन्दी") == []


# ---------------------------------------------------------------- the empty query


@pytest.mark.parametrize("query", ["", "   ", "\t\n", "?!", '""', "*", "((()))", "^"])
def test_empty_query_is_bad_usage_in_one_line(run, scripts: Path, query: str) -> None:
    """Fails if a query with nothing to search for prints "no matches" and exits 0."""
    result = run(scripts, "search", query)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert [line for line in lines if line.startswith("memstore: error:")] == [lines[0]]
    assert (all(line.startswith(("memstore: error:", "memstore: hint:")) for line in lines)
            and len(lines) <= 2)
    assert "Traceback" not in result.output + result.stderr and result.stdout == ""


def test_empty_query_through_the_real_command(scripts: Path) -> None:
    """Fails if the installed command exits 0, or shows a traceback, for `memstore search ""`."""
    proc = subprocess.run([sys.executable, "-m", "memstore", "--root", str(scripts), "search", ""],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("memstore: error: empty query") and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_library_search_raises_bad_usage_with_a_hint(scripts: Path) -> None:
    """Fails if the library (not only the CLI) lets an empty query through."""
    with pytest.raises(BadUsage) as info:
        Store(scripts).search("  ")
    assert info.value.exit_code == 2 and info.value.hint

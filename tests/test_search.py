"""Plain-English questions find the right memory; broken queries never reach the user as a
traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import memory, search_json, write

TURNS = {
    "reference_maria-dog": "Maria adopted a rescue dog named Biscuit from the shelter last spring.",
    "reference_maria-job": "Maria started a new job as a nurse at the city hospital.",
    "reference_john-dog": "John walks his neighbour's dog every morning before work.",
    "reference_adoption-papers": "The adoption papers for the house were signed by the lawyer.",
    "reference_weather": "It rained all week and the garden flooded twice.",
    "reference_maria-cat": "Maria is allergic to cats, so she never kept one.",
}


@pytest.fixture
def turns(root: Path) -> Path:
    for name, text in TURNS.items():
        write(root, f"memory/{name}.md", memory(name, body=text))
    write(root, "lenses/dog-lens.md",
          "---\ntype: lens\ntrigger:\n  tool_match: Read\n---\nAbout the dog lens.\n")
    return root


def test_plain_english_question_ranks_the_answer_first(run, turns: Path) -> None:
    hits = search_json(run, turns, "When did Maria adopt the dog?")
    assert hits, "a question with one absent word must not return nothing"
    assert hits[0]["path"] == "memory/reference_maria-dog.md"
    # Both Maria and dog turns rank above turns sharing neither word.
    order = [h["path"] for h in hits]
    assert order.index("memory/reference_maria-dog.md") < order.index(
        "memory/reference_john-dog.md")
    if "memory/reference_weather.md" in order:
        assert order.index("memory/reference_weather.md") > order.index(
            "memory/reference_maria-job.md")


def test_json_shape(run, turns: Path) -> None:
    hits = search_json(run, turns, "Maria dog", "--limit", "2")
    assert len(hits) == 2
    for hit in hits:
        assert {"path", "name", "type", "summary", "score", "snippet"} <= set(hit)
        assert not hit["path"].startswith("/")
        assert isinstance(hit["score"], float) and hit["score"] > 0
    assert hits[0]["score"] >= hits[1]["score"]
    assert "[" in hits[0]["snippet"]  # the matched words are marked


def test_type_filter(run, turns: Path) -> None:
    hits = search_json(run, turns, "dog", "--type", "lens")
    assert [h["path"] for h in hits] == ["lenses/dog-lens.md"]
    hits = search_json(run, turns, "dog", "--type", "reference")
    assert all(h["type"] == "reference" for h in hits) and len(hits) == 2


def test_unknown_type_is_bad_usage(run, turns: Path) -> None:
    result = run(turns, "search", "dog", "--type", "nonsense")
    assert result.exit_code == 2
    assert "unknown type" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize(
    "query",
    # (a query with no letter or digit at all, "" or "   " or "*", is bad usage:
    # tests/test_search_scripts.py)
    ['"unbalanced', "dog AND (", "NEAR(", "dog OR", "col:dog", "Maria's dog?!", "AND",
     "🐕 dog", "dog -x", "dog NOT", "a the of",
     # a real question that once crashed search (an unbalanced quote inside a title)
     'When did Joanna first watch "Eternal Sunshine of the Spotless Mind? dog'],
)
def test_broken_queries_never_raise(run, turns: Path, query: str) -> None:
    result = run(turns, "search", query, "--json")
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert isinstance(hits, list)
    if "dog" in query.lower():
        assert hits, f"{query!r} should still find the dog turns"


def test_advanced_syntax_is_honoured_when_valid(run, turns: Path) -> None:
    hits = search_json(run, turns, '"rescue dog"')
    assert [h["path"] for h in hits] == ["memory/reference_maria-dog.md"]
    hits = search_json(run, turns, "maria NOT dog")
    assert "memory/reference_maria-dog.md" not in [h["path"] for h in hits] and hits


def test_stemming_matches_word_forms(run, turns: Path) -> None:
    hits = search_json(run, turns, "adopting dogs")
    assert hits[0]["path"] == "memory/reference_maria-dog.md"


def test_search_sees_new_files_without_explicit_sync(run, turns: Path) -> None:
    assert search_json(run, turns, "zeppelin") == []
    write(turns, "memory/reference_zeppelin.md",
          memory("reference_zeppelin", body="A zeppelin flew over."))
    assert [h["path"] for h in search_json(run, turns, "zeppelin")] == [
        "memory/reference_zeppelin.md"]

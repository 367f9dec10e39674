"""Dates that stay true (issue 34, item 4): a relative date written in a note, a `new` memory or a
debrief lesson gains the absolute date it meant, from the pinned clock; lint names one left bare in a
T2 memory; a question's absolute date, in ISO or in words, finds the annotated memory."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from conftest import memory, search_json, write

from memstore.life.dating import annotate

Run = Callable[..., Result]  # the `run` fixture pins the clock at 2026-07-30T12:00:00Z


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("---\n", 2)[2]


def test_a_note_gains_the_date_its_relative_words_meant(root: Path, run: Run) -> None:
    """Fails if `note` keeps "yesterday" bare (broken: the annotate line in capture._write_note removed),
    or resolves it from anything but --now (2026-07-30: yesterday is 07-29, next Friday 07-31)."""
    result = run(root, "--now", "2026-07-30T12:00:00Z", "note", "Met Anna yesterday; the demo is next Friday.")
    assert result.exit_code == 0, result.stderr
    (path,) = sorted((root / "memory" / "short-term").glob("*.md"))
    assert _body(path).strip() == "Met Anna yesterday (2026-07-29); the demo is next Friday (2026-07-31)."
    again = run(root, "note", "Met Anna yesterday; the demo is next Friday.")  # same day, same fact
    assert "already" in again.stdout  # dedupe still sees the same fact once it is dated


def test_a_debrief_lesson_is_dated_too(root: Path, tmp_path: Path, run: Run) -> None:
    """Fails if the debrief's lessons skip the annotation (they go through the same writer as notes)."""
    answer = {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "- Never run the migration on Fridays: it broke last week."}]}}
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(answer) + "\n", encoding="utf-8")
    assert run(root, "debrief", "--transcript", str(path)).exit_code == 0
    (lesson,) = sorted((root / "memory" / "short-term").glob("*.md"))
    assert "last week (week of 2026-07-20)" in _body(lesson)


def test_new_dates_its_summary_and_body(root: Path, run: Run) -> None:
    """Fails if `new` writes "2 days ago" bare (broken: the annotate line in ledgers.write_new removed)."""
    result = run(root, "--now", "2026-12-01T09:00:00Z", "new", "project", "db move", "--summary",
                 "Moved the DB two days ago", "--body", "The cutover finishes in 3 days.")
    assert result.exit_code == 0, result.stderr
    text = (root / "memory" / "project_db-move.md").read_text(encoding="utf-8")
    assert 'two days ago (2026-11-29)' in text.split("---\n")[1]  # the summary, in the frontmatter
    assert "The cutover finishes in 3 days (2026-12-04)." in text


@pytest.mark.parametrize("sentence", [
    "The team may switch to Rust.", "This is the second attempt at the cache.", "We march on with the plan.",
    "Now the build uses uv.", "I have used Postgres for 3 years.", "Restart it every 5 minutes.",
    "Kickoff was on November 3, 2026.", "0001", "Release 2.5 ships with 12 fixes.",
    "The `last week` flag is code, not a date.",
])
@pytest.mark.parametrize("day", [dt.date(2026, 7, 30), dt.date(2026, 12, 1)])
def test_ordinary_words_and_absolute_dates_gain_nothing(sentence: str, day: dt.date) -> None:
    """Fails if dateparser's false hits get through (broken: drop the past/future direction check in
    datewords._relative and "may", "march", "3 years" are dated; drop the letter check and "0001" is
    read as a year whose month moves with a July base)."""
    assert annotate(sentence, day) == sentence


def test_annotating_twice_changes_nothing() -> None:
    """Fails if an annotated phrase is dated again (the nightly or a re-note would stack dates)."""
    once = annotate("Fixed it yesterday.", dt.date(2026, 12, 1))
    assert once == "Fixed it yesterday (2026-11-30)."
    assert annotate(once, dt.date(2026, 12, 5)) == once


def test_lint_warns_on_a_bare_relative_date_in_a_t2_memory(root: Path, run: Run) -> None:
    """Fails if lint says nothing of "last week" in a memory (broken: the dated() call in
    queries.lint_rows removed), or dates it from the clock rather than the file's `created` day."""
    write(root, "memory/project_outage.md", memory(
        "project_outage", "the outage", "The cache fell over last week.", created="2026-03-10"))
    write(root, "memory/project_done.md", memory(
        "project_done", "done", "The cache fell over last week (week of 2026-03-02).", created="2026-03-10"))
    result = run(root, "lint", "--json")
    rows = [r for r in json.loads(result.stdout) if "relative date" in r["message"]]
    assert [(r["path"], r["level"]) for r in rows] == [("memory/project_outage.md", "warning")]
    assert "'last week'" in rows[0]["message"] and "week of 2026-03-02" in rows[0]["message"]


def test_lint_reads_each_file_once_and_leaves_team_files_out(root: Path, run: Run) -> None:
    """Fails if a second lint parses every file again (dateparser costs ms a file: a 3,000-file root took
    about 40 s each lint), if an edited file keeps its old finding, or if a team's file (the person cannot
    mend it) is linted for dates."""
    write(root, "memory/project_outage.md", memory(
        "project_outage", "the outage", "The cache fell over last week.", created="2026-03-10"))
    write(root, "teams/acme/memory/project_theirs.md", memory(
        "project_theirs", "theirs", "It broke yesterday.", created="2026-03-10"))
    first = [r for r in json.loads(run(root, "lint", "--json").stdout) if "relative date" in r["message"]]
    assert [r["path"] for r in first] == ["memory/project_outage.md"]
    cache = json.loads((root / "runtime" / "state" / "lint-dates.json").read_text())
    assert len(cache["files"]) == 1
    write(root, "memory/project_outage.md", memory(
        "project_outage", "the outage", "The cache fell over last week (week of 2026-03-02).", created="2026-03-10"))
    again = [r for r in json.loads(run(root, "lint", "--json").stdout) if "relative date" in r["message"]]
    assert again == []


def test_a_question_with_an_absolute_date_finds_the_dated_memory(root: Path, run: Run) -> None:
    """Fails if the annotation is not searchable, or if "November 30, 2026" in words does not reach it
    (broken: the iso_in_query term in search.search_with_shares removed: the other memory, sharing
    the day and year, then ties and comes first by path)."""
    noted = run(root, "--now", "2026-12-01T12:00:00Z", "note", "The staging cluster was rebuilt yesterday.")
    assert noted.exit_code == 0, noted.stderr
    write(root, "memory/project_aaa.md", memory("project_aaa", "budget", "Budget: 30 units in 2026."))
    for question in ("what happened on 2026-11-30?", "what happened on November 30, 2026?"):
        hits = search_json(run, root, question)
        assert hits and "short-term/" in str(hits[0]["path"]), (question, hits)

"""Dates that stay true (issue 34, item 4): a relative date written in a note, a `new` memory or a
debrief lesson gains the absolute date it meant, from the pinned clock; lint names one left bare in
a T2 memory; a question's absolute date, in ISO or in words, finds the annotated memory."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memstore.life.date_stamping import annotate
from tests.helpers import TICK_AT, WRITTEN_AT, agent_wrote, memory, run_hook, search_json, write

Run = Callable[..., Result]  # the `run` fixture pins the clock at 2026-07-30T12:00:00Z


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("---\n", 2)[2]


def test_a_note_gains_the_date_its_relative_words_meant(root: Path, run: Run) -> None:
    """Fails if `note` keeps "yesterday" bare (broken: the annotate line in capture._write_note
    removed), or resolves it from anything but --now (2026-07-30: yesterday is 07-29, next Friday
    07-31)."""
    result = run(root, "--now", "2026-07-30T12:00:00Z", "note",
                 "Met Anna yesterday; the demo is next Friday.")
    assert result.exit_code == 0, result.stderr
    (path,) = sorted((root / "memory" / "short-term").glob("*.md"))
    assert _body(path).strip() == ("Met Anna yesterday (2026-07-29); the demo is next Friday "
                                   "(2026-07-31).")
    again = run(root, "note", "Met Anna yesterday; the demo is next Friday.")  # same day, same fact
    assert "already" in again.stdout  # dedupe still sees the same fact once it is dated


def test_a_debrief_lesson_is_dated_too(root: Path, tmp_path: Path, run: Run) -> None:
    """Fails if the debrief's lessons skip the annotation (they go through the same writer as
    notes)."""
    answer = {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "- Never run the migration on Fridays: it broke last week."}]}}
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(answer) + "\n", encoding="utf-8")
    assert run(root, "debrief", "--transcript", str(path)).exit_code == 0
    (lesson,) = sorted((root / "memory" / "short-term").glob("*.md"))
    assert "last week (week of 2026-07-20)" in _body(lesson)


def test_new_dates_its_summary_and_body(root: Path, run: Run) -> None:
    """Fails if `new` writes "2 days ago" bare (broken: the annotate line in ledgers.write_new
    removed)."""
    result = run(root, "--now", "2026-12-01T09:00:00Z", "new", "project", "db move", "--summary",
                 "Moved the DB two days ago", "--body", "The cutover finishes in 3 days.")
    assert result.exit_code == 0, result.stderr
    text = (root / "memory" / "project_db-move.md").read_text(encoding="utf-8")
    assert 'two days ago (2026-11-29)' in text.split("---\n")[1]  # the summary, in the frontmatter
    assert "The cutover finishes in 3 days (2026-12-04)." in text


@pytest.mark.parametrize("sentence", [
    "The team may switch to Rust.", "This is the second attempt at the cache.",
    "We march on with the plan.", "Now the build uses uv.", "I have used Postgres for 3 years.",
    "Restart it every 5 minutes.", "Kickoff was on November 3, 2026.", "0001",
    "Release 2.5 ships with 12 fixes.", "The `last week` flag is code, not a date.",
    "The licence came in 15% off.", "It takes about 30 minutes.",
])
@pytest.mark.parametrize("day", [dt.date(2026, 7, 30), dt.date(2026, 12, 1)])
def test_ordinary_words_and_absolute_dates_gain_nothing(sentence: str, day: dt.date) -> None:
    """Fails if dateparser's false hits get through (broken: drop the past/future direction check in
    date_phrases._relative and "may", "march", "3 years" are dated; drop the letter check and "0001"
    is read as a year whose month moves with a July base)."""
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
        "project_done", "done", "The cache fell over last week (week of 2026-03-02).",
        created="2026-03-10"))
    result = run(root, "lint", "--json")
    rows = [r for r in json.loads(result.stdout) if "relative date" in r["message"]]
    assert [(r["path"], r["level"]) for r in rows] == [("memory/project_outage.md", "warning")]
    assert "'last week'" in rows[0]["message"] and "week of 2026-03-02" in rows[0]["message"]


def test_lint_reads_each_file_once_and_leaves_team_files_out(root: Path, run: Run) -> None:
    """Fails if a second lint parses every file again (dateparser costs ms a file: a 3,000-file root
    took about 40 s each lint), if an edited file keeps its old finding, or if a team's file (the
    person cannot mend it) is linted for dates."""
    write(root, "memory/project_outage.md", memory(
        "project_outage", "the outage", "The cache fell over last week.", created="2026-03-10"))
    write(root, "teams/acme/memory/project_theirs.md", memory(
        "project_theirs", "theirs", "It broke yesterday.", created="2026-03-10"))
    first = [r for r in json.loads(run(root, "lint", "--json").stdout)
             if "relative date" in r["message"]]
    assert [r["path"] for r in first] == ["memory/project_outage.md"]
    cache = json.loads((root / "runtime" / "state" / "lint-dates.json").read_text())
    assert len(cache["files"]) == 1
    write(root, "memory/project_outage.md", memory(
        "project_outage", "the outage", "The cache fell over last week (week of 2026-03-02).",
        created="2026-03-10"))
    again = [r for r in json.loads(run(root, "lint", "--json").stdout)
             if "relative date" in r["message"]]
    assert again == []


def test_a_question_with_an_absolute_date_finds_the_dated_memory(root: Path, run: Run) -> None:
    """Fails if the annotation is not searchable, or if "November 30, 2026" in words does not reach
    it (broken: the iso_in_query term in search.search_with_shares removed: the other memory,
    sharing the day and year, then ties and comes first by path)."""
    noted = run(root, "--now", "2026-12-01T12:00:00Z", "note",
                "The staging cluster was rebuilt yesterday.")
    assert noted.exit_code == 0, noted.stderr
    write(root, "memory/project_aaa.md", memory("project_aaa", "budget",
                                                "Budget: 30 units in 2026."))
    for question in ("what happened on 2026-11-30?", "what happened on November 30, 2026?"):
        hits = search_json(run, root, question)
        assert hits and "short-term/" in str(hits[0]["path"]), (question, hits)


# -------------------------------------------------- what the agent writes (the hook, then the tick)

def test_a_memory_the_agent_writes_is_dated_from_the_moment_it_was_written(
        root: Path, run: Run) -> None:
    """Fails if a memory the agent writes keeps "yesterday" bare after the tick (broken: the hook's
    _remember_dates call or the tick's date_written removed), or if it is dated from the tick's
    clock (08-05) rather than the hook's at the moment of writing (07-29)."""
    rel = "memory/project_demo.md"
    text = memory("project_demo", "Demo prep",
                  "Met Anna yesterday about the demo; it moves to next Friday.")
    agent_wrote(root, rel, text)
    tick = run(root, "--now", TICK_AT, "tick")
    assert tick.exit_code == 0, tick.stderr
    assert ("Met Anna yesterday (2026-07-29) about the demo; it moves to next Friday "
            "(2026-07-31).") in _body(root / rel)
    before = (root / rel).read_bytes()
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    assert (root / rel).read_bytes() == before  # taken once: a second tick changes nothing


def test_a_multiedit_dates_each_new_string(root: Path, run: Run) -> None:
    """Fails if MultiEdit's new_strings are not kept (broken: pending_dates.written_text reading
    only content/new_string), or if a line it did not write is dated."""
    rel = "memory/project_db.md"
    text = memory("project_db", "DB notes",
                  "Talked to Bo yesterday.\n\nDeployed v2 last Friday.\n\n"
                  "The backup ran 3 days ago.")
    agent_wrote(root, rel, text, "MultiEdit", edits=[
        {"old_string": "v1", "new_string": "Deployed v2 last Friday."},
        {"old_string": "never", "new_string": "The backup ran 3 days ago."}])
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    body = _body(root / rel)
    assert "Deployed v2 last Friday (2026-07-24)." in body and \
        "The backup ran 3 days ago (2026-07-27)." in body
    assert "Talked to Bo yesterday.\n" in body


def test_a_line_the_agent_did_not_write_stays_as_written(root: Path, run: Run) -> None:
    """Fails if the tick dates text outside what the Edit wrote (broken: _dated_lines annotating
    every line of the file)."""
    rel = "memory/project_db.md"
    text = memory("project_db", "DB notes", "Talked to Bo yesterday.\n\nDeployed v2 last Friday.")
    agent_wrote(root, rel, text, "Edit", old_string="v1", new_string="Deployed v2 last Friday.")
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    body = _body(root / rel)
    assert "Deployed v2 last Friday (2026-07-24)." in body and "Talked to Bo yesterday.\n" in body


def test_a_codex_patch_is_dated_too(root: Path, run: Run) -> None:
    """Fails if the Codex adapter drops what apply_patch added (broken: codex.patch_added's text not
    passed on as the Write's content)."""
    rel = "memory/project_ci.md"
    text = memory("project_ci", "CI", "The runner broke two days ago.")
    path = root / rel
    path.write_text(text, encoding="utf-8")
    import os

    os.utime(path, (1785000000, 1785000000))
    patch = "*** Begin Patch\n*** Add File: memory/project_ci.md\n" + \
        "".join(f"+{line}\n" for line in text.splitlines()) + "*** End Patch\n"
    run_hook(root, {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(root),
                    "tool_name": "apply_patch", "tool_input": {"command": patch}},
             "--client", "codex")
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    assert "The runner broke two days ago (2026-07-28)." in _body(path)


def test_an_edit_made_after_the_write_wins(root: Path, run: Run) -> None:
    """Fails if the tick overwrites a memory changed since the agent wrote it, or dates a line the
    person reworded (their words are the truth; lint names what is left bare)."""
    rel = "memory/project_demo.md"
    agent_wrote(root, rel, memory("project_demo", "Demo", "Met Anna yesterday."))
    reworded = memory("project_demo", "Demo", "Met Anna yesterday, and Bo too.")
    (root / rel).write_text(reworded, encoding="utf-8")
    import os

    os.utime(root / rel, (1785000000, 1785000000))
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    # (flush adds its policy fields above)
    assert "Met Anna yesterday, and Bo too." in _body(root / rel)
    assert "(2026" not in _body(root / rel)


def test_a_loop_of_writes_cannot_fill_the_disk(root: Path) -> None:
    """Fails if the pending file grows past MAX_PENDING between ticks (broken: the size check in
    pending_dates.remember removed): an agent rewriting a memory in a loop would fill
    runtime/state."""
    from memstore.core import pending_dates

    pending = root / "runtime" / "state" / pending_dates.PENDING
    pending.parent.mkdir(parents=True)
    pending.write_bytes(b"x" * (pending_dates.MAX_PENDING + 1))
    assert not pending_dates.remember(str(root), "memory/a.md", "Met Anna yesterday.", WRITTEN_AT)
    assert pending.stat().st_size == pending_dates.MAX_PENDING + 1
    pending.unlink()
    assert pending_dates.remember(str(root), "memory/a.md", "Met Anna yesterday.", WRITTEN_AT)


# -------------------------------------------------- what an attacker tried (issue 34's walkthrough)


def test_an_edits_context_lines_keep_the_day_they_were_written(root: Path, run: Run) -> None:
    """Fails if a line an Edit only carried along is dated from the Edit's day (broken: written_text
    taking the whole new_string, or ignoring Claude Code's structuredPatch): the vendor called on
    11-19, not 11-29."""
    rel = "memory/project_vendor.md"
    old = "The vendor called yesterday about the contract.\nStatus: TODO"
    new = "The vendor called yesterday about the contract.\nStatus: DONE, shipped yesterday."
    text = memory("project_vendor", "Vendor", new, created="2026-07-20")
    patch = [{"oldStart": 9, "oldLines": 2, "newStart": 9, "newLines": 2, "lines": [
        " The vendor called yesterday about the contract.", "-Status: TODO",
        "+Status: DONE, shipped yesterday."]}]
    agent_wrote(root, rel, text, "Edit", old_string=old, new_string=new)
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    assert "The vendor called yesterday about the contract.\n" in _body(root / rel)
    assert "Status: DONE, shipped yesterday (2026-07-29)." in _body(root / rel)
    # the same with the diff Claude Code's answer carries (and a new_string saying otherwise)
    rel2 = "memory/project_vendor2.md"
    path = root / rel2
    path.write_text(text, encoding="utf-8")
    import os

    os.utime(path, (1785000000, 1785000000))
    run_hook(root, {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(root),
                    "tool_name": "Edit",
                    "tool_input": {"file_path": str(path), "old_string": "x", "new_string": new},
                    "tool_response": {"structuredPatch": patch}})
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    assert "The vendor called yesterday about the contract.\n" in _body(path)
    assert "Status: DONE, shipped yesterday (2026-07-29)." in _body(path)


def test_a_folder_linked_out_of_memory_is_not_followed(
        root: Path, run: Run, tmp_path: Path) -> None:
    """Fails if the tick rewrites a file outside memory/ through a folder symlinked there after the
    write (broken: date_written checking only the last part of the path), here the person's
    identity.md."""
    rel = "memory/proj/identity.md"
    (root / "memory" / "proj").mkdir()
    agent_wrote(root, rel, "# me\n\nFroze the API last week.\n")
    (root / "memory" / "proj" / "identity.md").unlink()
    (root / "memory" / "proj").rmdir()
    (root / "memory" / "proj").symlink_to(root)
    (root / "identity.md").write_text("# me\n\nFroze the API last week.\n", encoding="utf-8")
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    assert (root / "identity.md").read_text(encoding="utf-8") == \
        "# me\n\nFroze the API last week.\n"


def test_a_longer_line_a_fence_or_a_crlf_frontmatter_is_left_alone(root: Path, run: Run) -> None:
    """Fails if a line the person grew from the agent's is dated (a substring match), if code in a
    fence is rewritten, or if a CRLF file's frontmatter is taken for body."""
    rel = "memory/project_mix.md"
    text = ("---\r\nname: project_mix\r\ntype: project\r\nvalid_until: next friday\r\n---\r\n\r\n"
            "Anna called yesterday about the invoice; paid.\r\n```sh\r\n"
            "date -d \"next friday\"\r\n```\r\n")
    agent_wrote(root, rel, text, "Write",
                content="valid_until: next friday\nAnna called yesterday\n"
                        "date -d \"next friday\"\n")
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    after = (root / rel).read_bytes().decode("utf-8")
    assert "valid_until: next friday\r\n" in after and "(2026" not in after


@pytest.mark.parametrize("created", ["9999-12-31", "0001-01-01"])
def test_a_date_past_the_calendar_is_a_lint_line_not_a_traceback(
        root: Path, run: Run, created: str) -> None:
    """Fails if lint (and so every debrief, and the tick) raises OverflowError on a memory created
    at the calendar's edge, or a pending record written then (broken: the guards in
    date_phrases)."""
    write(root, "memory/project_edge.md",
          memory("project_edge", "Edge", "We meet tomorrow; it was yesterday.", created=created))
    assert run(root, "lint").exit_code in (0, 1)
    from memstore.core import pending_dates

    pending_dates.remember(str(root), "memory/project_edge.md",
                           "We meet tomorrow; it was yesterday.", f"{created}T12:00:00")
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    # taken, not stuck for every night
    assert not (root / "runtime" / "state" / pending_dates.TAKING).exists()


def test_a_time_of_day_stays_after_the_date_it_belongs_to() -> None:
    """Fails if the date lands after the time ("tomorrow from 14:00 (2026-12-10)"): the shortest run
    of words naming the same day is the phrase (broken: _trimmed comparing datetimes, not days)."""
    assert annotate("Booked for us tomorrow from 14:00 to 16:00.", dt.date(2026, 12, 9)) == \
        "Booked for us tomorrow (2026-12-10) from 14:00 to 16:00."


def test_a_day_of_the_month_is_found_whatever_else_the_file_says(root: Path, run: Run) -> None:
    """Fails if "on the 18th" is linted only when another relative word shares the file (broken: the
    ordinal missing from pending_dates.CUE, the gate before dateparser)."""
    write(root, "memory/project_freeze.md",
          memory("project_freeze", "Freeze", "The freeze lifts on the 18th.", created="2026-12-11"))
    rows = [r for r in json.loads(run(root, "lint", "--json").stdout)
            if "relative date" in r["message"]]
    assert len(rows) == 1 and "2026-12-18" in rows[0]["message"]


def test_the_index_row_is_dated_too_and_lint_leaves_pending_lines_to_the_tick(
        root: Path, run: Run) -> None:
    """Fails if a summary the agent wrote (the row MEMORY.md loads at every start) keeps "yesterday"
    bare (broken: date_written dating the body only), or if lint, before the tick, tells the person
    a date counted from `created` for a line the agent wrote on another day (the tick dates it from
    its write)."""
    rel = "memory/feedback_migrations.md"
    text = ("---\nname: feedback_migrations\ntype: feedback\ncreated: 2026-07-01\n"
            "summary: Run migrations on staging first; yesterday one locked prod.\n---\n\n"
            "Yesterday a migration locked the orders table.\n")
    agent_wrote(root, rel, text)
    rows = [r for r in json.loads(run(root, "lint", "--json").stdout)
            if "relative date" in r["message"]]
    assert rows == []  # both lines wait for the tick
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    after = (root / rel).read_text(encoding="utf-8")
    assert ("summary: Run migrations on staging first; yesterday (2026-07-29) "
            "one locked prod.") in after
    assert "Yesterday (2026-07-29) a migration locked the orders table." in after
    index = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert "yesterday (2026-07-29) one locked prod" in index

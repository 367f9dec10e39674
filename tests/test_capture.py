"""Capture: `memstore note` (one fact into T1) and `memstore debrief` (sync, lint, render, and the
rule-shaped sentences of a session's final answer as T1 lessons), plus its SessionEnd
registration."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memstore.api.store import Store
from memstore.life import capture
from tests.helpers import git, write

NOW = dt.datetime(2026, 7, 30, 12, 0, tzinfo=dt.UTC)
Run = Callable[..., Result]


def short_term(root: Path) -> list[Path]:
    folder = root / "memory" / "short-term"
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def lessons(root: Path) -> list[str]:
    """The bodies of the T1 lesson files."""
    out = []
    for path in short_term(root):
        front, body = capture.split_front(path.read_text(encoding="utf-8"))
        if "kind: lesson" in front:
            out.append(body.strip())
    return out


def assistant(text: str, ident: str | None = None, **extra: object) -> dict[str, object]:
    message: dict[str, object] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    if ident:
        message["id"] = ident
    return {"type": "assistant", "message": message, **extra}


def transcript(tmp_path: Path, *entries: object, name: str = "session.jsonl") -> Path:
    lines = [entry if isinstance(entry, str) else json.dumps(entry) for entry in entries]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def user(text: str) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": text}}


# ---------------------------------------------------------------- note


def test_note_same_fact_twice_is_written_once(root: Path, run: Run) -> None:
    """Guards: dedupe by normalised text (whitespace, case); without it a repeated note doubles in
    T1."""
    first = run(root, "note", "The export job reads from the replica.")
    assert first.exit_code == 0, first.stderr
    again = run(root, "note", "  the export   job reads from the REPLICA. ")
    assert again.exit_code == 0
    assert "already" in again.stdout
    files = short_term(root)
    assert [p.name for p in files] == ["260730-the-export-job-reads-from-the.md"]
    text = files[0].read_text(encoding="utf-8")
    assert text.startswith("---\ncreated: 2026-07-30\nsource: note\n---\n")
    assert text.rstrip().endswith("The export job reads from the replica.")


def test_note_different_facts_same_slug_get_a_suffix(root: Path) -> None:
    """Guards: a second fact whose first six words match must not overwrite the first."""
    store = Store(root, NOW)
    a = store.note("Use the staging bucket for uploads from CI")
    b = store.note("Use the staging bucket for uploads from laptops", kind="decision")
    assert a.written and b.written
    assert a.path == "memory/short-term/260730-use-the-staging-bucket-for-uploads.md"
    assert b.path == "memory/short-term/260730-use-the-staging-bucket-for-uploads-2.md"
    assert "kind: decision" in (root / b.path).read_text(encoding="utf-8")
    assert len(short_term(root)) == 2
    # the note is synced afterwards: search finds it
    assert [h.path for h in store.search("laptops", catch_up="none")] == [b.path]


def test_note_empty_text_is_bad_usage(root: Path, run: Run) -> None:
    """Guards: an empty note must exit 2 and write nothing."""
    result = run(root, "note", "   ")
    assert result.exit_code == 2
    assert short_term(root) == []


# ---------------------------------------------------------------- the rule cue


@pytest.mark.parametrize("sentence", [
    "Always run the migrations before the tests.",
    "Never commit the runtime folder.",
    "Do not edit MEMORY.md by hand.",
    "Don't trust the quick sync after a rename.",
    "Prefer atomic writes over in-place edits.",
    "Before touching the mirror, take the lock.",
    "When the hook fails, never block the session.",
    "The hook must never print on stdout.",
])
def test_rule_shapes_are_kept(sentence: str) -> None:
    """Guards: the cue's documented shapes each keep a plain rule."""
    assert capture.rules(sentence) == [sentence]


@pytest.mark.parametrize("sentence", [
    "Never again will the tests on 2026-07-29 be this slow.",  # a date
    "Always rebase onto 3f9c2ab1 first.",  # a commit hash
    "Never change the guard at memstore/api/store.py:123 again.",  # file:line
    "Always expect 345 passed, 2 skipped, 12 warnings.",  # numbers-heavy status
    "Never mind, I fixed the flaky watcher test.",  # first-person narrative
    "Always a pleasure: we found the bug in the cache.",  # first-person narrative
    "Always run the full suite twice?",  # a question
    "Never " + "let the long rule run on " * 10 + "forever.",  # over 200 characters
    "All tests pass now.",  # no rule marker at all
    "The mirror was rebuilt and the index rendered.",
])
def test_narrative_is_dropped(sentence: str) -> None:
    """Guards: status lines, dates, hashes, file:line, first person and questions never become
    lessons."""
    assert capture.rules(sentence) == []


# ---------------------------------------------------------------- debrief


def test_debrief_keeps_a_rule_as_a_t1_lesson_and_drops_the_narrative(
        root: Path, tmp_path: Path, run: Run) -> None:
    """Guards: the final answer's rule lands as a kind: lesson T1 file; its status prose does
    not."""
    answer = ("Done. I fixed the flaky watcher test in 3f9c2ab1 and all 345 tests pass.\n\n"
              "- Never run the watcher tests in parallel with the sync tests.\n"
              "- Updated memstore/frontends/watch.py:88 on 2026-07-30.\n")
    path = transcript(tmp_path, user("fix it"), assistant(answer, "msg_1"))
    result = run(root, "debrief", "--transcript", str(path))
    assert result.exit_code == 0, result.stderr
    assert lessons(root) == ["Never run the watcher tests in parallel with the sync tests."]
    (lesson,) = short_term(root)
    assert "kind: lesson" in lesson.read_text(encoding="utf-8")
    assert "lesson   memory/short-term/" in result.stdout
    assert "lint     0 error(s)" in result.stdout
    assert (root / "memory" / "MEMORY.md").exists()  # rendered


def test_debrief_caps_lessons_per_session(root: Path, tmp_path: Path) -> None:
    """Guards: the per-session cap; a chatty final answer must not flood T1."""
    answer = " ".join(f"Never skip check number {word}." for word in
                      ("alpha", "bravo", "charlie", "delta", "echo"))
    result = Store(root, NOW).debrief(transcript(tmp_path, assistant(answer)))
    assert result.rules_found == 5
    assert len(result.lessons) == capture.LESSONS_PER_SESSION == 3
    assert len(lessons(root)) == 3
    assert all("cap" in item["why"] for item in result.skipped)


def test_debrief_keeps_none_when_the_window_is_full(root: Path, tmp_path: Path) -> None:
    """Guards: the overall cap of lessons in the short-term window (keep none, say so)."""
    for n in range(capture.LESSONS_IN_WINDOW):
        write(root, f"memory/short-term/260729-old-lesson-{n}.md",
              "---\ncreated: 2026-07-29\nsource: debrief\nkind: lesson\n---\n\n"
              f"Never forget rule {n}.\n")
    result = Store(root, NOW).debrief(
        transcript(tmp_path, assistant("Always pin the clock in tests.")))
    assert result.lessons == []
    assert result.notes and "none kept" in result.notes[0]
    assert len(short_term(root)) == capture.LESSONS_IN_WINDOW


def test_debrief_writes_nothing_when_nothing_is_rule_shaped(root: Path, tmp_path: Path) -> None:
    """Guards: a session that reported no rule contributes nothing (an empty memory beats a
    misleading one)."""
    answer = ("I ran the suite and everything passes. The export now streams rows. Shall I "
              "open a PR?")
    result = Store(root, NOW).debrief(transcript(tmp_path, assistant(answer)))
    assert result.rules_found == 0 and result.lessons == []
    assert short_term(root) == []


def test_debrief_dedupes_against_an_existing_lesson(root: Path, tmp_path: Path) -> None:
    """Guards: a rule already held as a lesson (even an archived one) is not written again."""
    write(root, "memory/short-term/archive/260701-never-edit-memory-md.md",
          "---\ncreated: 2026-07-01\nsource: debrief\nkind: lesson\n---\n\n"
          "Never edit MEMORY.md by hand.\n")
    answer = "Never edit  MEMORY.md  by HAND! Always sync after moving files."
    result = Store(root, NOW).debrief(transcript(tmp_path, assistant(answer)))
    assert lessons(root) == ["Always sync after moving files."]
    assert result.skipped == [{"rule": "Never edit  MEMORY.md  by HAND!",
                               "why": "already a lesson"}]


def test_debrief_reads_only_the_final_answer(root: Path, tmp_path: Path) -> None:
    """Guards: only the last assistant message with text is read; an earlier one's rule is not
    kept."""
    path = transcript(
        tmp_path,
        "this line is not JSON",
        assistant("Never deploy on Fridays.", "msg_1"),
        user("and now?"),
        {"type": "assistant", "message": {"role": "assistant", "id": "msg_2",
                                           "content": [{"type": "tool_use", "name": "Bash",
                                                        "input": {}}]}},
        assistant("Always tag the release before pushing.", "msg_3"),
        # the same message, a second block
        assistant("Always write the changelog entry first.", "msg_3"),
        {"type": "assistant", "message": {"role": "assistant", "id": "msg_4",
                                           "content": [{"type": "tool_use", "name": "Read",
                                                        "input": {}}]}},
        {"type": "summary", "summary": "Never do anything."},
    )
    result = Store(root, NOW).debrief(path)
    assert sorted(lessons(root)) == ["Always tag the release before pushing.",
                                     "Always write the changelog entry first."]
    assert result.rules_found == 2


def test_debrief_hook_with_garbage_stdin_exits_0_and_logs(root: Path, run: Run) -> None:
    """Guards: the SessionEnd hook never blocks the session end, prints nothing, and logs the
    problem."""
    result = run(root, "debrief", "--hook", input="this is {not json")
    assert result.exit_code == 0
    assert result.stdout == ""
    log = (root / "runtime" / "state" / "hook-errors.log").read_text(encoding="utf-8")
    assert "debrief: stdin is not JSON" in log


def test_debrief_hook_reads_the_transcript_from_the_payload(
        root: Path, tmp_path: Path, run: Run) -> None:
    """Guards: --hook takes transcript_path from Claude Code's SessionEnd JSON."""
    path = transcript(tmp_path, assistant("Never block the session end."))
    payload = {"session_id": "s1", "transcript_path": str(path), "cwd": str(tmp_path),
               "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
    result = run(root, "debrief", "--hook", input=json.dumps(payload))
    assert result.exit_code == 0 and result.stdout == ""
    assert lessons(root) == ["Never block the session end."]


def test_the_detached_debrief_hands_off_without_the_command_line(
        root: Path, tmp_path: Path) -> None:
    """Catches: `debrief --hook --detach` (what every install registers at SessionEnd) loading
    click and the whole command line before it hands off, which the client waits for at every
    session's end; and a hand-off that drops the payload, so the detached debrief keeps no lesson.
    Also: a line the fast path does not read as a hand-off (--help) still reaches click."""
    path = transcript(tmp_path, assistant("Never block the session end."))
    payload = {"session_id": "s1", "transcript_path": str(path), "cwd": str(tmp_path),
               "hook_event_name": "SessionEnd"}
    no_click = ("import sys; sys.modules['click'] = None; "
                "from memstore.frontends.entry import main; main(sys.argv[1:])")
    handed = subprocess.run([sys.executable, "-c", no_click, "--root", str(root), "debrief",
                             "--hook", "--detach"], input=json.dumps(payload), text=True,
                            capture_output=True, timeout=60)
    assert handed.returncode == 0 and handed.stdout == "" and handed.stderr == ""
    deadline = time.monotonic() + 60
    while not lessons(root) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lessons(root) == ["Never block the session end."]
    helped = subprocess.run([sys.executable, "-m", "memstore", "debrief", "--hook", "--detach",
                             "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "Usage:" in helped.stdout


def test_the_detached_debrief_runs_nothing_of_the_sessions_project(
        root: Path, tmp_path: Path) -> None:
    """Catches: the detached debrief started in the payload's cwd with `python -m`, which puts
    that folder first on sys.path: a project holding memstore/__main__.py or a json.py had its
    own code run at every session's end."""
    project = tmp_path / "project"
    planted = tmp_path / "planted"
    code = f"open({str(planted)!r}, 'a').write(__name__ + '\\n')\n"
    write(project, "memstore/__init__.py", code)
    write(project, "memstore/__main__.py", code)
    write(project, "json.py", code)
    write(project, "sqlite3.py", code)
    path = transcript(tmp_path, assistant("Never block the session end."))
    payload = {"session_id": "s1", "transcript_path": str(path), "cwd": str(project),
               "hook_event_name": "SessionEnd"}
    handed = subprocess.run([sys.executable, "-m", "memstore", "--root", str(root), "debrief",
                             "--hook", "--detach"], input=json.dumps(payload), text=True,
                            capture_output=True, timeout=60, cwd=tmp_path)
    assert handed.returncode == 0
    deadline = time.monotonic() + 60
    while not lessons(root) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lessons(root) == ["Never block the session end."]
    assert not planted.exists(), planted.read_text()


def test_debrief_hook_failure_is_logged_not_raised(root: Path, tmp_path: Path, run: Run,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards: an exception inside debrief must become a log line and exit 0, not a traceback."""
    def boom(*_args: object, **_kw: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Store, "debrief", boom)
    result = run(root, "debrief", "--hook", input=json.dumps({"hook_event_name": "SessionEnd"}))
    assert result.exit_code == 0 and result.stdout == ""
    assert "disk on fire" in \
        (root / "runtime" / "state" / "hook-errors.log").read_text(encoding="utf-8")


def test_debrief_commit_commits_only_its_own_files(root: Path, tmp_path: Path) -> None:
    """Guards: --commit stages and commits exactly debrief's files, never the rest of the tree."""
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    write(root, "memory/feedback_one.md", "---\nname: feedback_one\ntype: feedback\n---\n\nOne.\n")
    git(root, "add", "memory/feedback_one.md")
    git(root, "commit", "-q", "-m", "start")
    write(root, "memory/feedback_one.md", "---\nname: feedback_one\ntype: feedback\n---\n\n"
                                          "Edited, uncommitted.\n")
    write(root, "memory/project_other.md", "---\nname: project_other\ntype: project\n---\n\n"
                                           "New, untracked.\n")

    result = Store(root, NOW).debrief(
        transcript(tmp_path, assistant("Always stage files by name.")), commit=True)
    assert result.committed and result.committed.startswith("committed 1 file(s)")
    committed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert committed == result.lessons and len(committed) == 1
    status = git(root, "status", "--porcelain")
    assert " M memory/feedback_one.md" in status
    assert "?? memory/project_other.md" in status
    assert git(root, "diff", "--cached", "--name-only") == ""


# ---------------------------------------------------------------- install / verify


def test_install_registers_session_end_once_and_verify_checks_it(
        root: Path, tmp_path: Path, run: Run) -> None:
    """Guards: SessionEnd is a normal registration, recognised as ours (reinstall replaces it,
    uninstall removes it), and verify reports it."""
    settings = tmp_path / "project" / ".claude" / "settings.json"
    args = ("install", "--settings", str(settings), "--claude-md",
            str(tmp_path / "project" / "CLAUDE.md"))
    for _ in range(2):
        assert run(root, *args, "--apply").exit_code == 0
    data = json.loads(settings.read_text(encoding="utf-8"))
    (group,) = data["hooks"]["SessionEnd"]
    (handler,) = group["hooks"]
    assert handler["command"].endswith(f"--root {root} debrief --hook --detach")
    assert run(root, *args).stdout.startswith("0 file(s) would change")

    checked = run(root, "verify", "--settings", str(settings), "--claude-md",
                  str(tmp_path / "project" / "CLAUDE.md"), "--json")
    found = {c["name"]: c for c in json.loads(checked.stdout)}
    assert found["hook SessionEnd"]["ok"], found["hook SessionEnd"]

    del data["hooks"]["SessionEnd"]
    settings.write_text(json.dumps(data), encoding="utf-8")
    checked = run(root, "verify", "--settings", str(settings), "--claude-md",
                  str(tmp_path / "project" / "CLAUDE.md"), "--json")
    assert not {c["name"]: c for c in json.loads(checked.stdout)}["hook SessionEnd"]["ok"]

    assert run(root, *args, "--apply").exit_code == 0
    assert run(root, *args, "--uninstall", "--apply").exit_code == 0
    # install made the file: with nothing else left in it, uninstall removes it
    assert not settings.exists() or \
        "SessionEnd" not in json.loads(settings.read_text(encoding="utf-8")).get("hooks", {})


def test_a_transcript_with_no_answer_says_so(run, root: Path, tmp_path: Path) -> None:
    """Failure caught: a garbage or empty transcript read like a session with nothing
    rule-shaped."""
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"not json\n\x00\xff\n")
    result = run(root, "debrief", "--transcript", str(garbage))
    assert result.exit_code == 0 and "no assistant answer found" in result.output

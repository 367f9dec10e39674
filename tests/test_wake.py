"""`memstore wake`: two model calls when the cue has items, none otherwise; all or nothing.

The model is a stub: a tiny Python script passed with --model-cmd. It logs each prompt it
receives, so the tests can see what a call carried, and whether a call happened at all.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import Result

from memstore.api.store import Store
from memstore.life.wake import proposals
from tests.helpers import NOW, git, memory, write
from tests.wakestub import DAY, DREAM, PINNED, write_cue


def calls(tmp_path: Path) -> list[dict[str, object]]:
    log = tmp_path / "stub" / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def outside_wake(files: dict[str, bytes]) -> dict[str, bytes]:
    """Every file wake must never change: all but the dream journal, short-term and runtime/."""
    keep = ("memory/dream-journal/", "memory/short-term/", "runtime/")
    return {rel: data for rel, data in files.items() if not rel.startswith(keep)}


def outside_runtime(files: dict[str, bytes]) -> dict[str, bytes]:
    return {rel: data for rel, data in files.items() if not rel.startswith("runtime/")}


def front(path: Path) -> dict[str, object]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def wake(run: Callable[..., Result], root: Path, *args: str) -> Result:
    return run(root, "wake", *args)


# ---------------------------------------------------------------- success


def test_wake_writes_a_dream_a_sit_and_a_proposals_note_and_changes_no_memory(
        wake_root: Path, model: Callable[..., str], run: Callable[..., Result],
        tmp_path: Path) -> None:
    chosen = Store(wake_root, now=PINNED).meditate_next()
    before = snapshot(wake_root)

    result = wake(run, wake_root, "--model-cmd", model("ok"))

    assert result.exit_code == 0, result.output + result.stderr
    after = snapshot(wake_root)
    # no topic memory, lens, object or identity changed
    assert outside_wake(after) == outside_wake(before)
    for rel, data in before.items():
        if rel.startswith(("memory/dream-journal/", "memory/short-term/")):
            assert after[rel] == data, f"{rel} was rewritten"
    new = sorted(set(after) - set(before) - {"runtime/state/wake-status.json"})
    dream = f"memory/dream-journal/{DAY}-dream.md"
    sit = f"memory/dream-journal/{DAY}-meditation-{chosen.object}.md"
    note = f"memory/short-term/{DAY}-wake-proposals.md"
    assert [p for p in new if not p.startswith("runtime/")] == sorted([dream, sit, note])

    assert front(wake_root / dream) == {"date": PINNED.date(), "kind": "dream"}
    assert (wake_root / dream).read_text().endswith(DREAM)
    assert front(wake_root / sit) == {"date": PINNED.date(), "kind": "meditation",
                                      "object": chosen.object, "shelf": chosen.shelf}
    note_text = (wake_root / note).read_text()
    assert "merge memory/project_export-a.md into memory/project_export-b.md" in note_text
    assert "Carried over" not in note_text  # the section ends at the next heading of its level
    assert front(wake_root / note)["source"] == dream

    status = json.loads((wake_root / "runtime/state/wake-status.json").read_text())
    assert (status["dream"], status["meditation"], status["object"]) == (dream, sit, chosen.object)
    assert status["ran_at"] == NOW
    cue = json.loads((wake_root / "runtime/state/cue.json").read_text())
    assert cue["anything"] is False and cue["consumed_at"] == NOW
    assert result.stdout.splitlines()[0] == f"dream       {dream}"

    prompts = [c["prompt"] for c in calls(tmp_path)]
    assert len(prompts) == 2
    dreamt, sat = prompts
    assert ("near-duplicate: memory/project_export-a.md, "
            "memory/project_export-b.md: similarity 0.91" in dreamt)
    assert "The export dropped the last row." in dreamt  # a T1 fact inside the window
    assert "An ancient fact." not in dreamt  # outside the 7-day window
    assert "Export streams rows" in dreamt  # the text of a file the cue names
    assert "## Proposals" in dreamt
    assert chosen.object is not None and f"meditations/{chosen.object}.md" in sat
    assert (wake_root / f"meditations/{chosen.object}.md").read_text().strip() in sat
    assert "first person" in sat

    # The mirror saw the new entries without another sync.
    hits = Store(wake_root).search("reach for the next task", catch_up="none")
    assert sit in [hit.path for hit in hits]


def test_a_second_wake_on_the_same_day_gets_new_names(
        wake_root: Path, model: Callable[..., str], run: Callable[..., Result]) -> None:
    first = wake(run, wake_root, "--model-cmd", model("ok"))
    assert first.exit_code == 0
    write_cue(wake_root, anything=True)  # as if tick ran again
    second = wake(run, wake_root, "--model-cmd", model("ok"))
    assert second.exit_code == 0, second.stderr
    names = sorted(p.name for p in (wake_root / "memory/dream-journal").glob(f"{DAY}-*.md"))
    assert f"{DAY}-dream.md" in names and f"{DAY}-dream-2.md" in names
    # the same proposals dreamt again are not written again (the bundle once held one line 9 times)
    assert (wake_root / f"memory/short-term/{DAY}-wake-proposals.md").exists()
    assert not (wake_root / f"memory/short-term/{DAY}-wake-proposals-2.md").exists()
    sits = [n for n in names if "-meditation-" in n]
    assert len(sits) == 2 and sits[0] != sits[1]  # no immediate repeat across the two wakes


def test_a_tick_that_rewrote_the_cue_meanwhile_wins(
        wake_root: Path, model: Callable[..., str], run: Callable[..., Result]) -> None:
    cue = wake_root / "runtime/state/cue.json"
    result = wake(run, wake_root, "--model-cmd", model("tick-meanwhile", str(cue)))
    assert result.exit_code == 0, result.stderr
    # not marked consumed: it is the next night's
    assert json.loads(cue.read_text())["ran_at"] == "fresh"


# ------------------------------------------------------ failures: nothing written, cue kept, exit 1


@pytest.mark.parametrize(("mode", "says"), [
    ("fail", "dream call failed: {python} exited 3: boom: the model is overloaded"),
    ("sit-fails", "meditation ({object}) call failed: {python} exited 4: sit refused"),
    ("empty", "dream call returned no output ({python})"),
])
def test_a_failed_call_writes_nothing_keeps_the_cue_and_says_why_in_one_line(
        wake_root: Path, model: Callable[..., str], run: Callable[..., Result], mode: str,
        says: str) -> None:
    chosen = Store(wake_root, now=PINNED).meditate_next()
    before = snapshot(wake_root)
    result = wake(run, wake_root, "--model-cmd", model(mode))
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"memstore: error: {says.format(python=sys.executable, object=chosen.object)}")
    # a failure says what to do next (issue 31, item 8: wake's failure lines had no hint)
    assert len(lines) == 2 and lines[1].startswith(
        "memstore: hint: nothing was written and the cue is kept"), lines
    assert "memstore wake again" in lines[1]
    after = snapshot(wake_root)
    assert outside_runtime(after) == outside_runtime(before)
    assert after["runtime/state/cue.json"] == before["runtime/state/cue.json"]
    assert "runtime/state/wake-status.json" not in after


def test_a_call_past_its_timeout_is_killed_and_writes_nothing(
        wake_root: Path, model: Callable[..., str], run: Callable[..., Result],
        tmp_path: Path) -> None:
    cue = (wake_root / "runtime/state/cue.json").read_bytes()
    started = time.monotonic()
    result = wake(run, wake_root, "--model-cmd", model("sleep"), "--timeout", "1")
    assert time.monotonic() - started < 15
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"memstore: error: dream call timed out after 1 s ({sys.executable})",
        "memstore: hint: nothing was written and the cue is kept: run memstore "
        "wake again, with a --timeout above 1 if the model is slow"]
    assert sorted(p.name for p in (wake_root / "memory/dream-journal").iterdir()) == [
        "260728-dream.md"]
    assert (wake_root / "runtime/state/cue.json").read_bytes() == cue
    pid = int(calls(tmp_path)[0]["pid"])  # type: ignore[arg-type]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the sleeping model is gone, not left running


def test_a_missing_model_binary_says_how_to_get_one(
        wake_root: Path, run: Callable[..., Result]) -> None:
    cue = (wake_root / "runtime/state/cue.json").read_bytes()
    result = wake(run, wake_root, "--model-cmd", "no-such-model-binary-xyz -p")
    assert result.exit_code == 1
    assert "model command not found: no-such-model-binary-xyz" in result.stderr
    assert "install Claude Code" in result.stderr and "--model-cmd" in result.stderr
    assert (wake_root / "runtime/state/cue.json").read_bytes() == cue
    assert sorted(p.name for p in (wake_root / "memory/dream-journal").iterdir()) == [
        "260728-dream.md"]


# ---------------------------------------------------------------- nothing to wake for


@pytest.mark.parametrize("cue", ["missing", "nothing"])
def test_no_cue_or_an_empty_one_calls_no_model(
        wake_root: Path, model: Callable[..., str], run: Callable[..., Result], tmp_path: Path,
        cue: str) -> None:
    if cue == "missing":
        (wake_root / "runtime/state/cue.json").unlink()
    else:
        write_cue(wake_root, anything=False)
    before = snapshot(wake_root)
    quiet = wake(run, wake_root, "--model-cmd", model("ok"))
    # one line, even without -v (issue 31, item 8: it printed nothing; cron's log showed no night)
    assert (quiet.exit_code, quiet.stderr) == (0, "")
    assert (quiet.stdout.startswith("nothing to wake for")
            and quiet.stdout.count("\n") == 1), quiet.stdout
    assert not (tmp_path / "stub" / "calls.jsonl").exists()  # the stub logs every call it gets
    assert snapshot(wake_root) == before
    told = wake(run, wake_root, "--model-cmd", model("ok"), "-v")
    assert told.exit_code == 0 and told.stdout == quiet.stdout


# ---------------------------------------------------------------- --commit


@pytest.mark.usefixtures("git_identity")
def test_commit_takes_exactly_the_files_wake_wrote(
        wake_root: Path, model: Callable[..., str], run: Callable[..., Result]) -> None:
    git(wake_root, "init", "-q")
    git(wake_root, "add", "-A")
    git(wake_root, "commit", "-q", "-m", "start")
    write(wake_root, "memory/project_export-a.md",
          memory("project_export-a", "Edited by a person", body="A2."))
    # staged by someone else: must stay out of wake's commit
    git(wake_root, "add", "memory/project_export-a.md")
    write(wake_root, "memory/short-term/260730-untracked.md", "A new fact nobody staged.\n")

    result = wake(run, wake_root, "--model-cmd", model("ok"), "--commit")

    assert result.exit_code == 0, result.stderr
    committed = sorted(git(wake_root, "show", "--name-only", "--format=", "HEAD").split())
    written = json.loads((wake_root / "runtime/state/wake-status.json").read_text())
    assert committed == sorted([written["dream"], written["meditation"], written["proposals"]])
    assert git(wake_root, "diff", "--cached", "--name-only").split() == [
        "memory/project_export-a.md"]
    assert "memory/short-term/260730-untracked.md" in git(wake_root, "status", "--porcelain")
    head = git(wake_root, "rev-parse", "--short", "HEAD").strip()
    assert f"git         committed 3 file(s) as {head}" in result.stdout


def test_commit_outside_git_fails_before_any_model_call(
        wake_root: Path, model: Callable[..., str], run: Callable[..., Result],
        tmp_path: Path) -> None:
    result = wake(run, wake_root, "--model-cmd", model("ok"), "--commit")
    assert result.exit_code == 2
    assert "not inside a git work tree" in result.stderr
    assert calls(tmp_path) == []


# ---------------------------------------------------------------- the proposals section


def test_proposals_are_the_section_under_their_heading() -> None:
    assert proposals(DREAM) == (
        "- merge memory/project_export-a.md into memory/project_export-b.md: they say the same "
        "thing\n"
        "- mark memory/reference_old-api.md superseded: the API moved"
    )
    nested = "# Dream\n\n## Proposals\n\n### Merges\n- a into b\n\n# Next\nx\n"
    assert proposals(nested) == "### Merges\n- a into b"  # deeper headings stay inside
    assert proposals("## Proposals\n\n- none\n") is None
    assert proposals("## proposals:\n- drop memory/x.md\n") == "- drop memory/x.md"
    assert proposals("Just a dream.\n") is None

"""`memstore wake`: two model calls when the cue has items, none otherwise; all or nothing.

The model is a stub: a tiny Python script passed with --model-cmd. It logs each prompt it
receives, so the tests can see what a call carried, and whether a call happened at all.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import Result

from memstore.api.store import Store
from memstore.life.wake import proposals
from tests.conftest import NOW, memory, write

PINNED = dt.datetime.fromisoformat(NOW)  # the clock the `run` fixture pins
DAY = f"{PINNED:%y%m%d}"

DREAM = """# What the week suggests

The export keeps coming up: it wants to be one memory, not two.

## Proposals

- merge memory/project_export-a.md into memory/project_export-b.md: they say the same thing
- mark memory/reference_old-api.md superseded: the API moved

## Carried over

Nothing else.
"""

SIT = "What shifted: I noticed I reach for the next task before this one is done.\nWhat stayed open: why.\n"

STUB = """\
import json, os, sys, time
prompt = sys.stdin.read()
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "calls.jsonl"), "a") as log:
    log.write(json.dumps({"prompt": prompt, "pid": os.getpid()}) + "\\n")
mode = sys.argv[1]
dreaming = prompt.startswith("You are dreaming")
if mode == "ok":
    sys.stdout.write(DREAM if dreaming else SIT)
elif mode == "fail":
    sys.stderr.write("boom: the model is overloaded\\nsecond line\\n")
    sys.exit(3)
elif mode == "sit-fails":
    if dreaming:
        sys.stdout.write(DREAM)
    else:
        sys.stderr.write("sit refused\\n")
        sys.exit(4)
elif mode == "empty":
    sys.stdout.write("  \\n")
elif mode == "sleep":
    time.sleep(60)
    sys.stdout.write(DREAM)
elif mode == "tick-meanwhile":
    with open(sys.argv[2], "w") as cue:
        cue.write('{"anything": true, "items": [], "ran_at": "fresh"}')
    sys.stdout.write(DREAM if dreaming else SIT)
"""


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    """An initialised root with topic memories, a lens, T1 facts and a cue with items."""
    from memstore.life.scaffold import apply_plan

    plan = Store.plan_init(tmp_path / "agent")
    apply_plan(plan)
    root = plan.root
    write(root, "memory/project_export-a.md", memory("project_export-a", "Export streams rows", body="A."))
    write(root, "memory/project_export-b.md", memory("project_export-b", "Export is streamed", body="B."))
    write(root, "memory/reference_old-api.md", memory("reference_old-api", "The v1 API", body="Old."))
    write(root, "memory/short-term/260729-export-bug.md",
          "---\ndate: 2026-07-29\n---\nThe export dropped the last row.\n")
    write(root, "memory/short-term/260701-ancient.md", "---\ndate: 2026-07-01\n---\nAn ancient fact.\n")
    write(root, "memory/dream-journal/260728-dream.md", "---\ndate: 2026-07-28\nkind: dream\n---\nEarlier dream.\n")
    write_cue(root, anything=True)
    Store(root).rebuild()  # a mirror exists before wake, as after a nightly tick
    return root


def write_cue(root: Path, *, anything: bool) -> bytes:
    cue = {
        "ran_at": "2026-07-30T03:30:00Z",
        "live_session": False,
        "did": {"sync": "ok"},
        "anything": anything,
        "items": [
            {"kind": "near-duplicate", "paths": ["memory/project_export-a.md", "memory/project_export-b.md"],
             "detail": "similarity 0.91"},
            {"kind": "new-fact", "paths": ["memory/short-term/260729-export-bug.md"], "detail": "born yesterday"},
        ] if anything else [],
    }
    data = json.dumps(cue).encode()
    write(root, "runtime/state/cue.json", data)
    return data


@pytest.fixture
def model(tmp_path: Path) -> Callable[..., str]:
    """`--model-cmd` for the stub in a given mode."""
    script = tmp_path / "stub" / "model.py"
    script.parent.mkdir()
    script.write_text(f"DREAM = {DREAM!r}\nSIT = {SIT!r}\n" + STUB, encoding="utf-8")

    def command(mode: str, *extra: str) -> str:
        import shlex

        return shlex.join([sys.executable, str(script), mode, *extra])

    return command


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
        agent: Path, model: Callable[..., str], run: Callable[..., Result], tmp_path: Path) -> None:
    chosen = Store(agent, now=PINNED).meditate_next()
    before = snapshot(agent)

    result = wake(run, agent, "--model-cmd", model("ok"))

    assert result.exit_code == 0, result.output + result.stderr
    after = snapshot(agent)
    assert outside_wake(after) == outside_wake(before)  # no topic memory, lens, object or identity changed
    for rel, data in before.items():
        if rel.startswith(("memory/dream-journal/", "memory/short-term/")):
            assert after[rel] == data, f"{rel} was rewritten"
    new = sorted(set(after) - set(before) - {"runtime/state/wake-status.json"})
    dream = f"memory/dream-journal/{DAY}-dream.md"
    sit = f"memory/dream-journal/{DAY}-meditation-{chosen.object}.md"
    note = f"memory/short-term/{DAY}-wake-proposals.md"
    assert [p for p in new if not p.startswith("runtime/")] == sorted([dream, sit, note])

    assert front(agent / dream) == {"date": PINNED.date(), "kind": "dream"}
    assert (agent / dream).read_text().endswith(DREAM)
    assert front(agent / sit) == {"date": PINNED.date(), "kind": "meditation", "object": chosen.object,
                                  "shelf": chosen.shelf}
    note_text = (agent / note).read_text()
    assert "merge memory/project_export-a.md into memory/project_export-b.md" in note_text
    assert "Carried over" not in note_text  # the section ends at the next heading of its level
    assert front(agent / note)["source"] == dream

    status = json.loads((agent / "runtime/state/wake-status.json").read_text())
    assert (status["dream"], status["meditation"], status["object"]) == (dream, sit, chosen.object)
    assert status["ran_at"] == NOW
    cue = json.loads((agent / "runtime/state/cue.json").read_text())
    assert cue["anything"] is False and cue["consumed_at"] == NOW
    assert result.stdout.splitlines()[0] == f"dream       {dream}"

    prompts = [c["prompt"] for c in calls(tmp_path)]
    assert len(prompts) == 2
    dreamt, sat = prompts
    assert "near-duplicate: memory/project_export-a.md, memory/project_export-b.md: similarity 0.91" in dreamt
    assert "The export dropped the last row." in dreamt  # a T1 fact inside the window
    assert "An ancient fact." not in dreamt  # outside the 7-day window
    assert "Export streams rows" in dreamt  # the text of a file the cue names
    assert "## Proposals" in dreamt
    assert chosen.object is not None and f"meditations/{chosen.object}.md" in sat
    assert (agent / f"meditations/{chosen.object}.md").read_text().strip() in sat
    assert "first person" in sat

    # The mirror saw the new entries without another sync.
    hits = Store(agent).search("reach for the next task", catch_up="none")
    assert sit in [hit.path for hit in hits]


def test_a_second_wake_on_the_same_day_gets_new_names(
        agent: Path, model: Callable[..., str], run: Callable[..., Result]) -> None:
    first = wake(run, agent, "--model-cmd", model("ok"))
    assert first.exit_code == 0
    write_cue(agent, anything=True)  # as if tick ran again
    second = wake(run, agent, "--model-cmd", model("ok"))
    assert second.exit_code == 0, second.stderr
    names = sorted(p.name for p in (agent / "memory/dream-journal").glob(f"{DAY}-*.md"))
    assert f"{DAY}-dream.md" in names and f"{DAY}-dream-2.md" in names
    # the same proposals dreamt again are not written again (issue: the bundle held one line 9 times)
    assert (agent / f"memory/short-term/{DAY}-wake-proposals.md").exists()
    assert not (agent / f"memory/short-term/{DAY}-wake-proposals-2.md").exists()
    sits = [n for n in names if "-meditation-" in n]
    assert len(sits) == 2 and sits[0] != sits[1]  # no immediate repeat across the two wakes


def test_a_tick_that_rewrote_the_cue_meanwhile_wins(
        agent: Path, model: Callable[..., str], run: Callable[..., Result]) -> None:
    cue = agent / "runtime/state/cue.json"
    result = wake(run, agent, "--model-cmd", model("tick-meanwhile", str(cue)))
    assert result.exit_code == 0, result.stderr
    assert json.loads(cue.read_text())["ran_at"] == "fresh"  # not marked consumed: it is the next night's


# ---------------------------------------------------------------- failures: nothing written, cue kept, exit 1


@pytest.mark.parametrize(("mode", "says"), [
    ("fail", "dream call failed: {python} exited 3: boom: the model is overloaded"),
    ("sit-fails", "meditation ({object}) call failed: {python} exited 4: sit refused"),
    ("empty", "dream call returned no output ({python})"),
])
def test_a_failed_call_writes_nothing_keeps_the_cue_and_says_why_in_one_line(
        agent: Path, model: Callable[..., str], run: Callable[..., Result], mode: str, says: str) -> None:
    chosen = Store(agent, now=PINNED).meditate_next()
    before = snapshot(agent)
    result = wake(run, agent, "--model-cmd", model(mode))
    assert result.exit_code == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0] == f"memstore: error: {says.format(python=sys.executable, object=chosen.object)}"
    # a failure says what to do next (issue 31, item 8: wake's failure lines had no hint)
    assert len(lines) == 2 and lines[1].startswith("memstore: hint: nothing was written and the cue is kept"), lines
    assert "memstore wake again" in lines[1]
    after = snapshot(agent)
    assert outside_runtime(after) == outside_runtime(before)
    assert after["runtime/state/cue.json"] == before["runtime/state/cue.json"]
    assert "runtime/state/wake-status.json" not in after


def test_a_call_past_its_timeout_is_killed_and_writes_nothing(
        agent: Path, model: Callable[..., str], run: Callable[..., Result], tmp_path: Path) -> None:
    cue = (agent / "runtime/state/cue.json").read_bytes()
    started = time.monotonic()
    result = wake(run, agent, "--model-cmd", model("sleep"), "--timeout", "1")
    assert time.monotonic() - started < 15
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"memstore: error: dream call timed out after 1 s ({sys.executable})",
                                          "memstore: hint: nothing was written and the cue is kept: run memstore "
                                          "wake again, with a --timeout above 1 if the model is slow"]
    assert sorted(p.name for p in (agent / "memory/dream-journal").iterdir()) == ["260728-dream.md"]
    assert (agent / "runtime/state/cue.json").read_bytes() == cue
    pid = int(calls(tmp_path)[0]["pid"])  # type: ignore[arg-type]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the sleeping model is gone, not left running


def test_a_missing_model_binary_says_how_to_get_one(agent: Path, run: Callable[..., Result]) -> None:
    cue = (agent / "runtime/state/cue.json").read_bytes()
    result = wake(run, agent, "--model-cmd", "no-such-model-binary-xyz -p")
    assert result.exit_code == 1
    assert "model command not found: no-such-model-binary-xyz" in result.stderr
    assert "install Claude Code" in result.stderr and "--model-cmd" in result.stderr
    assert (agent / "runtime/state/cue.json").read_bytes() == cue
    assert sorted(p.name for p in (agent / "memory/dream-journal").iterdir()) == ["260728-dream.md"]


# ---------------------------------------------------------------- nothing to wake for


@pytest.mark.parametrize("cue", ["missing", "nothing"])
def test_no_cue_or_an_empty_one_calls_no_model(
        agent: Path, model: Callable[..., str], run: Callable[..., Result], tmp_path: Path, cue: str) -> None:
    if cue == "missing":
        (agent / "runtime/state/cue.json").unlink()
    else:
        write_cue(agent, anything=False)
    before = snapshot(agent)
    quiet = wake(run, agent, "--model-cmd", model("ok"))
    # one line, even without -v (issue 31, item 8: it printed nothing, and cron's log showed no night at all)
    assert (quiet.exit_code, quiet.stderr) == (0, "")
    assert quiet.stdout.startswith("nothing to wake for") and quiet.stdout.count("\n") == 1, quiet.stdout
    assert not (tmp_path / "stub" / "calls.jsonl").exists()  # the stub logs every call it gets
    assert snapshot(agent) == before
    told = wake(run, agent, "--model-cmd", model("ok"), "-v")
    assert told.exit_code == 0 and told.stdout == quiet.stdout


# ---------------------------------------------------------------- --commit


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(key, "test")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(key, "test@example.invalid")


@pytest.mark.usefixtures("git_identity")
def test_commit_takes_exactly_the_files_wake_wrote(
        agent: Path, model: Callable[..., str], run: Callable[..., Result]) -> None:
    git(agent, "init", "-q")
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "-m", "start")
    write(agent, "memory/project_export-a.md", memory("project_export-a", "Edited by a person", body="A2."))
    git(agent, "add", "memory/project_export-a.md")  # staged by someone else: must stay out of wake's commit
    write(agent, "memory/short-term/260730-untracked.md", "A new fact nobody staged.\n")

    result = wake(run, agent, "--model-cmd", model("ok"), "--commit")

    assert result.exit_code == 0, result.stderr
    committed = sorted(git(agent, "show", "--name-only", "--format=", "HEAD").split())
    written = json.loads((agent / "runtime/state/wake-status.json").read_text())
    assert committed == sorted([written["dream"], written["meditation"], written["proposals"]])
    assert git(agent, "diff", "--cached", "--name-only").split() == ["memory/project_export-a.md"]
    assert "memory/short-term/260730-untracked.md" in git(agent, "status", "--porcelain")
    head = git(agent, "rev-parse", "--short", "HEAD").strip()
    assert f"git         committed 3 file(s) as {head}" in result.stdout


def test_commit_outside_git_fails_before_any_model_call(
        agent: Path, model: Callable[..., str], run: Callable[..., Result], tmp_path: Path) -> None:
    result = wake(run, agent, "--model-cmd", model("ok"), "--commit")
    assert result.exit_code == 2
    assert "not inside a git work tree" in result.stderr
    assert calls(tmp_path) == []


# ---------------------------------------------------------------- the proposals section


def test_proposals_are_the_section_under_their_heading() -> None:
    assert proposals(DREAM) == (
        "- merge memory/project_export-a.md into memory/project_export-b.md: they say the same thing\n"
        "- mark memory/reference_old-api.md superseded: the API moved"
    )
    nested = "# Dream\n\n## Proposals\n\n### Merges\n- a into b\n\n# Next\nx\n"
    assert proposals(nested) == "### Merges\n- a into b"  # deeper headings stay inside
    assert proposals("## Proposals\n\n- none\n") is None
    assert proposals("## proposals:\n- drop memory/x.md\n") == "- drop memory/x.md"
    assert proposals("Just a dream.\n") is None

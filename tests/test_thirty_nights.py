"""Thirty simulated nights through the CLI, on a pinned clock, with a stand-in model command.

What a person who installs memstore and lives with it for a month must be able to count
on, each checked every night:

- the model is called only on nights with something new since the last wake (a fact
  noted that day, or a cue item no wake has dreamt about); wake's own proposals never
  wake it again, so an unused memory costs nothing night after night;
- the same proposal, dreamt on many nights, is written once and carried by the bundle
  once; the bundle stays within its budget;
- no file is ever deleted (rolled into archive/ at most).

The stand-in model logs each call and always proposes the same merge, as a real model
looking at the same near-duplicate pair would.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
from pathlib import Path

from memstore import Store
from tests.helpers import memory, write

STUB = """
import json, sys
prompt = sys.stdin.read()
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"dream": "## Proposals" in prompt or "Proposals" in prompt}) + "\\n")
print("# Dream\\n\\nThe two end-to-end rules say one thing.\\n\\n## Proposals\\n\\n"
      "- merge feedback_e2e-first into feedback_e2e-before-merge\\n")
"""
PROPOSAL = "merge feedback_e2e-first into feedback_e2e-before-merge"
NOTE_DAYS = {3, 4, 11, 19, 26}  # days on which the person notes a fact during the day


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.md") if "runtime" not in p.parts}


def still_there(before: set[str], after: set[str]) -> list[str]:
    """Files of `before` found neither where they were nor rolled into an archive/ beside them."""
    lost = []
    for rel in before:
        folder, _, name = rel.rpartition("/")
        if rel not in after and f"{folder}/archive/{name}" not in after:
            lost.append(rel)
    return lost


def test_thirty_nights_settle(tmp_path: Path, run, monkeypatch) -> None:
    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    write(root, "memory/feedback_e2e-first.md",
          memory("feedback_e2e-first", "Run the end-to-end suite before merging hook changes"))
    write(root, "memory/feedback_e2e-before-merge.md",
          memory("feedback_e2e-before-merge",
                 "Before merging hook changes run the end-to-end suite"))
    stub = tmp_path / "model.py"
    stub.write_text(STUB)
    log = tmp_path / "calls.jsonl"
    model_cmd = shlex.join([sys.executable, str(stub), str(log)])
    start = dt.datetime(2026, 8, 1, tzinfo=dt.UTC)
    seen = files(root)
    woke_on: list[int] = []
    for day in range(1, 31):
        noon = start + dt.timedelta(days=day - 1, hours=12)
        monkeypatch.setenv("MEMSTORE_NOW", noon.isoformat())
        if day in NOTE_DAYS:
            assert run(root, "note",
                       f"Day {day}: the staging database moved to host db{day}").exit_code == 0
        night = start + dt.timedelta(days=day, hours=3, minutes=30)
        monkeypatch.setenv("MEMSTORE_NOW", night.isoformat())
        assert run(root, "tick").exit_code == 0
        calls_before = len(log.read_text().splitlines()) if log.exists() else 0
        monkeypatch.setenv("MEMSTORE_NOW", (night + dt.timedelta(minutes=5)).isoformat())
        woke = run(root, "wake", "--model-cmd", model_cmd)
        assert woke.exit_code == 0, woke.output
        calls_after = len(log.read_text().splitlines()) if log.exists() else 0
        if calls_after > calls_before:
            woke_on.append(day)
        bundle = run(root, "context").stdout
        assert bundle.count(PROPOSAL) <= 1, (day, bundle)
        assert len(bundle) <= 10_000, (day, len(bundle))
        now_files = files(root)
        assert still_there(seen, now_files) == [], day
        seen = now_files

    # Night 1: the standing near-duplicate pair is new; then only the nights after a note.
    assert woke_on == [1, *sorted(NOTE_DAYS)], woke_on
    notes = sorted((root / "memory" / "short-term").rglob("*wake-proposals*.md"))
    # the same proposal, dreamt six times, written once
    assert len(notes) == 1, [n.name for n in notes]
    cue = json.loads((root / "runtime" / "state" / "cue.json").read_text())
    assert cue["anything"] is False
    # answering it takes it out of the bundle for good
    proposal = next(i for i in json.loads(run(root, "review", "--json").stdout)
                    if i["kind"] == "proposal")
    # the library's answer (the CLI's asks the person at a terminal), at the clock of the last wake
    assert Store(root, night + dt.timedelta(minutes=5)).review_answer(
        proposal["id"], accept=False) is not None
    assert PROPOSAL not in run(root, "context").stdout

"""The dream per project (issue 31, item 2), and what wake says on a quiet night (item 8).

A stub model echoes every short-term fact file its prompt names into its Proposals, so a
fact's file name (a slug of the fact) and text would show wherever a dream's entry or
proposal is shown. Real files, a real mirror, the real tick and wake.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
from pathlib import Path

import pytest

from memstore.api.store import Store
from memstore.core.config import Config
from memstore.hook.bundle import bundle
from tests.helpers import NOW, memory, write

PINNED = dt.datetime.fromisoformat(NOW)
DAY = f"{PINNED:%y%m%d}"
A, B = "github.com/me/proja", "github.com/me/projb"

# The stub dreams by naming every fact file the prompt shows, and logs each prompt it is given.
STUB = """\
import json, os, re, sys
prompt = sys.stdin.read()
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.jsonl"), "a") as log:
    log.write(json.dumps(prompt) + "\\n")
if not prompt.startswith("You are dreaming"):
    sys.stdout.write("What shifted: little.\\n")
    sys.exit(0)
facts = re.findall(r"^### (memory/short-term/\\S+)$", prompt, re.M)
print("# Dream\\n\\nI read " + ", ".join(facts) + ".\\n\\n## Proposals\\n")
for rel in facts:
    print(f"- fold {rel} into a topic memory")
"""


@pytest.fixture
def two_projects(tmp_path: Path) -> tuple[Path, str, Path]:
    """A root with one fact in each of two projects and one person-wide fact; the tick has run."""
    from memstore.life.scaffold import apply_plan

    plan = Store.plan_init(tmp_path / "agent")
    apply_plan(plan)
    root = plan.root
    write(root, f"memory/short-term/{DAY}-alpha-launch-codes-rotate.md",
          f"---\ndate: 2026-07-30\nproject: {A}\n---\n"
          "ALPHA-ONLY the launch codes rotate on Fridays.\n")
    write(root, f"memory/short-term/{DAY}-beta-cache-warmup.md",
          f"---\ndate: 2026-07-30\nproject: {B}\n---\nBETA-ONLY the cache needs a warm-up.\n")
    write(root, f"memory/short-term/{DAY}-person-likes-tea.md",
          "---\ndate: 2026-07-30\n---\nEVERYONE the person prefers short answers.\n")
    # two look-alike person-wide memories: a cue item that stands night after night
    write(root, "memory/feedback_suite-a.md", memory("feedback_suite-a",
                                                     "Run the end-to-end suite before merging"))
    write(root, "memory/feedback_suite-b.md", memory("feedback_suite-b",
                                                     "Before merging run the end-to-end suite"))
    stub = tmp_path / "stub" / "model.py"
    stub.parent.mkdir()
    stub.write_text(STUB, encoding="utf-8")
    Store(root, now=PINNED).tick()
    return root, shlex.join([sys.executable, str(stub)]), stub.parent / "calls.jsonl"


def test_a_dream_over_two_projects_never_reaches_the_other_project(
        two_projects: tuple[Path, str, Path]) -> None:
    """Failure caught: the dream read every project's facts and its entry and proposals (which name
    a fact's file, a slug of the fact) went into every project's bundle (26 of 30 mornings
    leaked)."""
    root, model, calls = two_projects
    woke = Store(root, now=PINNED).wake(model)
    assert woke.ran and len(woke.dreams) == 3, woke  # person-wide, then each project, in name order
    prompts = [json.loads(line) for line in calls.read_text().splitlines()]
    dreams = [p for p in prompts if p.startswith("You are dreaming")]
    assert len(dreams) == 3
    for prompt in dreams:  # each dream read one scope's facts only
        assert sum(mark in prompt for mark in ("ALPHA-ONLY", "BETA-ONLY", "EVERYONE")) == 1, prompt
    config = Config()
    later = PINNED + dt.timedelta(hours=8)
    in_a, in_b = bundle(root, later, config, A), bundle(root, later, config, B)
    nowhere = bundle(root, later, config, None)
    for text in (in_b, nowhere):
        assert "alpha-launch-codes" not in text and "ALPHA-ONLY" not in text, text
    for text in (in_a, nowhere):
        assert "beta-cache-warmup" not in text and "BETA-ONLY" not in text, text
    # its own project sees it
    assert "fold memory/short-term/260730-alpha-launch-codes-rotate.md" in in_a
    assert "fold memory/short-term/260730-beta-cache-warmup.md" in in_b
    for text in (in_a, in_b, nowhere):  # person-wide ones reach everyone
        assert "fold memory/short-term/260730-person-likes-tea.md" in text
    # each entry and proposals note carries the project of the facts it read
    fronts = {p.name: p.read_text()
              for p in (root / "memory/dream-journal").glob(f"{DAY}-dream*.md")}
    assert sorted(fronts) == [f"{DAY}-dream-proja.md", f"{DAY}-dream-projb.md", f"{DAY}-dream.md"]
    assert f'project: "{A}"' in fronts[f"{DAY}-dream-proja.md"] and \
        "project" not in fronts[f"{DAY}-dream.md"]

    # the person's view shows them all, each labelled with its project
    items = {i.text: i for i in Store(root, now=later).review() if i.kind == "proposal"}
    assert items["fold memory/short-term/260730-alpha-launch-codes-rotate.md into a topic "
                 "memory"].project == A
    assert items["fold memory/short-term/260730-person-likes-tea.md into a topic "
                 "memory"].project is None


def test_an_accepted_proposal_stays_in_its_own_project(
        two_projects: tuple[Path, str, Path]) -> None:
    """Failure caught: an accepted proposal carried as the person's instruction into every
    project."""
    from memstore.life.reviewing import answer

    root, model, _calls = two_projects
    Store(root, now=PINNED).wake(model)
    item = next(i for i in Store(root, now=PINNED).review()
                if i.kind == "proposal" and i.project == A)
    answer(root, item.id, True, NOW, {"front": "test"})
    later = PINNED + dt.timedelta(days=1)
    assert f"The person accepted: {item.text}" in bundle(root, later, Config(), A)
    assert item.text not in bundle(root, later, Config(), B)


def test_a_quiet_night_says_why_in_words_matching_the_tick(
        two_projects: tuple[Path, str, Path]) -> None:
    """Failure caught: `wake` said "the cue has nothing" right after a tick had reported 22 items
    (they were all dreamt on already)."""
    root, model, _calls = two_projects
    Store(root, now=PINNED).wake(model)
    status = Store(root, now=PINNED + dt.timedelta(days=1)).tick()
    idle = Store(root, now=PINNED + dt.timedelta(days=1)).wake(model)
    assert not idle.ran and status.cue_items >= 1, status
    assert f"listed {status.cue_items} cue item(s), all dreamt on" in idle.reason, \
        (status.cue_items, idle)


def test_nightly_sits_do_not_push_a_projects_dream_out_of_its_bundle(tmp_path: Path) -> None:
    """Failure caught (issue 31's newcomer walkthrough): with a sit every night, the bundle's latest
    three dream-journal entries were three meditations, and a project's dream two nights old never
    reached it."""
    root = tmp_path / "agent"
    write(root, "memory/dream-journal/260725-dream-proja.md",
          f"---\ndate: 2026-07-25\nproject: {A}\n---\nALPHADREAM\n")
    for day in (26, 27, 28, 29):
        write(root, f"memory/dream-journal/2607{day}-meditation-x.md",
              f"---\ndate: 2026-07-{day}\nkind: meditation\n---\nSIT{day}\n")
    text = bundle(root, PINNED, Config(), A)
    assert "ALPHADREAM" in text and "SIT29" in text and "SIT28" not in text, text

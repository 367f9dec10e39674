"""The near-duplicate part of the nightly cue: one item per cluster, never across projects, and an
answered cluster never back unless it gained a member (issue 31, item 6). Real tick, real mirror."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from memstore.api.store import Store
from memstore.life.reviewing import answer
from tests.helpers import NOW, memory, write

PINNED = dt.datetime.fromisoformat(NOW)
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet"]


def similar(root: Path, n: int, *, start: int = 0, project: str | None = None,
            prefix: str = "suite") -> list[str]:
    """n memories whose summaries share seven words and differ by one (token-set Jaccard 7/9)."""
    rels = []
    for i in range(start, start + n):
        extra = {"project": project} if project else {}
        rel = f"memory/feedback_{prefix}-{i}.md"
        write(root, rel, memory(f"feedback_{prefix}-{i}",
                                f"Run the end-to-end suite before merging hook changes {WORDS[i]}",
                                **extra))
        rels.append(rel)
    return rels


def dup_items(root: Path, days: int = 0) -> list[dict]:
    Store(root, now=PINNED + dt.timedelta(days=days)).tick()
    cue = json.loads((root / "runtime/state/cue.json").read_text())
    return [item for item in cue["items"] if item["kind"] == "near-duplicate"]


def test_nine_similar_memories_are_one_cue_item(root: Path) -> None:
    """Failure caught: one item per similar pair (36 pairs for 9 summaries, 25 after the cap): the
    cue grew with the square of the look-alikes."""
    rels = similar(root, 9)
    items = dup_items(root)
    assert len(items) == 1, items
    assert items[0]["paths"] == sorted(rels)
    assert items[0]["detail"].startswith("9 memories with summaries alike")


def test_pairs_across_projects_are_no_cue_item(root: Path) -> None:
    """Failure caught: a memory of one project was proposed for merging with another project's (or a
    person-wide one), which would carry one project's text into the other."""
    similar(root, 1, start=0, project="github.com/me/proja")
    similar(root, 1, start=1, project="github.com/me/projb")
    similar(root, 1, start=2)  # person-wide
    assert dup_items(root) == []
    similar(root, 1, start=3, project="github.com/me/proja")  # a look-alike in the same project
    items = dup_items(root)
    assert [item["paths"] for item in items] == [["memory/feedback_suite-0.md",
                                                  "memory/feedback_suite-3.md"]]


def test_an_answered_cluster_does_not_return_unless_it_grows(root: Path) -> None:
    """Failure caught: items the person already answered stayed in the cue every night."""
    rels = similar(root, 3)
    first = dup_items(root)
    assert len(first) == 1
    # accepted ("noted") counts as answered
    answer(root, first[0]["id"], True, NOW, {"front": "test"})
    assert dup_items(root, 1) == []
    (root / rels[0]).unlink()  # a smaller cluster is part of the answered one: still answered
    assert dup_items(root, 2) == []
    similar(root, 2, start=5)  # new members: a new question
    grown = dup_items(root, 3)
    assert len(grown) == 1 and len(grown[0]["paths"]) == 4 and grown[0]["id"] != first[0]["id"]
    answer(root, grown[0]["id"], False, NOW, {"front": "test"})  # rejected counts too
    assert dup_items(root, 4) == []

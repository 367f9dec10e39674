"""The season benchmark (scripts/bench_season.py) measures consistently: a quick run (a month)
through the real CLI and hook, scored per policy.

Each test names what it would let through: a channel union that covers less than one of its
parts (a scoring bug), a policy that pushes nothing yet counts false fires, a stream that
differs between two runs of one seed (the wall clock leaking in), a paraphrase turn that shares
a word with the memory it needs.
"""

from __future__ import annotations

from typing import Any

import pytest

from memstore_devtools.bench import season
from memstore_devtools.bench.season_score import POLICIES, START, metrics
from memstore_devtools.bench.season_world import build, shares_no_word

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SINGLE = ("memstore: MEMORY.md", "memstore: SessionStart bundle", "memstore: prompt pointers",
          "memstore: lenses")
ALL = "memstore: all channels"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Seed 1 lived twice, in two folders."""
    return [season.run_seed(1, True, str(tmp_path_factory.mktemp(f"season{i}")))
            for i in range(2)]


def _counts(run: dict[str, Any], label: str) -> dict[str, int]:
    counts: dict[str, int] = run["counts"]["policies"][label]
    return counts


def test_the_union_of_channels_covers_at_least_each_channel(runs: list[dict[str, Any]]) -> None:
    union = _counts(runs[0], ALL)
    assert union["need_pairs"] > 50
    for label in (*SINGLE, "memstore, no prompt push"):
        one = _counts(runs[0], label)
        assert one["need_pairs"] == union["need_pairs"]  # one stream, one set of needs
        assert one.get("covered", 0) <= union["covered"], label
        assert one.get("failed_turns", 0) >= union.get("failed_turns", 0), label
    for label, _channels in POLICIES:
        c = _counts(runs[0], label)
        assert 0 <= c.get("covered", 0) <= c["need_pairs"]
        assert c.get("failed_turns", 0) <= c["need_turns"]
        assert c.get("unneeded_bytes", 0) <= c.get("bytes", 0)
        assert c.get("pushed_hits", 0) <= c.get("pushed", 0)


def test_a_policy_that_pushes_nothing_fires_nothing(runs: list[dict[str, Any]]) -> None:
    for label, channels in POLICIES:
        c = _counts(runs[0], label)
        if set(channels) <= set(START):
            assert c.get("false_fires", 0) == 0, label
            assert c.get("pushed", 0) == 0 and c.get("repeats", 0) == 0, label
            assert metrics(c, channels)["precision"] is None
    no_push = _counts(runs[0], "memstore, no prompt push")
    assert no_push.get("false_fires", 0) == _counts(runs[0], "memstore: lenses").get(
        "false_fires", 0)


def test_stale_rows_are_counted_and_memstore_shows_none(runs: list[dict[str, Any]]) -> None:
    # Claude Code's index keeps superseded and expired rows; memstore's MEMORY.md drops them
    assert _counts(runs[0], "Claude Code MEMORY.md (rows as written)").get("stale", 0) > 0
    assert _counts(runs[0], "memstore: MEMORY.md").get("stale", 0) == 0


def test_the_stream_is_deterministic_for_a_seed(runs: list[dict[str, Any]]) -> None:
    assert build(1, quick=True).to_json() == build(1, quick=True).to_json()
    assert build(1, quick=True).to_json() != build(2, quick=True).to_json()
    assert runs[0]["digest"] == runs[1]["digest"]
    assert runs[0]["counts"] == runs[1]["counts"]


def test_the_run_went_through_cleanly(runs: list[dict[str, Any]]) -> None:
    stats = runs[0]["stats"]
    assert stats["command_failures"] == 0, stats.get("failures")
    assert stats["ticks_at_work"] == 0  # every memory file carries the world's time
    assert stats["reads"] > 0


def test_paraphrase_turns_share_no_word_with_their_memory() -> None:
    world = build(1)
    paraphrased = [(t, world.memories[g]) for s in world.sessions for t in s.turns
                   if t.kind == "para" for g in t.gold]
    assert len(paraphrased) > 100
    for turn, memory in paraphrased:
        assert turn.prompt is not None and shares_no_word(turn.prompt, memory.text()), turn


def test_the_report_has_every_policy(runs: list[dict[str, Any]]) -> None:
    text = season.report(runs[:1], set(), True, 1.0)
    for label, _channels in POLICIES:
        assert f"| {label} |" in text
    assert "Month by month" in text

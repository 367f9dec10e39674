"""Reinforcement: the score, the spacing gate, which tools count, the journal and its replay."""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
from pathlib import Path

import pytest

from memstore.core.config import Config, load_config
from memstore.core.policy import PolicyState, apply_touch, baseline, record_touch, score
from memstore.mirror.sync import rebuild, sync
from tests.helpers import memory, write

UTC = dt.UTC
CFG = Config()
T0 = dt.datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


def test_seed_worked_example() -> None:
    now = T0 + dt.timedelta(days=60)
    rehearsed = score(7, min(14 * 1.6**7, 365), T0, 0, now, CFG)
    crammed = score(1, 14, T0, 0, now, CFG)
    assert min(14 * 1.6**7, 365) == 365
    assert rehearsed == pytest.approx(6.79, abs=0.005)
    assert crammed == pytest.approx(0.0275, abs=0.00005)
    assert rehearsed / crammed == pytest.approx(247, rel=0.01)


def test_importance_is_a_floor_that_never_decays() -> None:
    far = T0 + dt.timedelta(days=3650)
    assert score(0, 14, T0, 5, far, CFG) == pytest.approx(3.0, abs=1e-9)


def test_gate_on_the_rule_one_read_from_defaults() -> None:
    state = apply_touch(baseline(None, None, None, None, CFG), T0, CFG)
    assert (state.access_count, state.stability) == (1, 22.4)
    assert state.last_accessed == state.last_reinforced == T0


def test_massed_reads_move_recency_only() -> None:
    state = apply_touch(baseline(None, None, None, None, CFG), T0, CFG)
    for minutes in range(1, 6):
        state = apply_touch(state, T0 + dt.timedelta(minutes=minutes), CFG)
    assert (state.access_count, state.stability) == (1, 22.4)
    assert state.last_accessed == T0 + dt.timedelta(minutes=5)
    assert state.last_reinforced == T0  # the gate's own timestamp did not move
    # 19h59m after the reinforcement: still closed; 20h: open.
    closed = apply_touch(state, T0 + dt.timedelta(hours=19, minutes=59), CFG)
    assert closed.access_count == 1
    opened = apply_touch(closed, T0 + dt.timedelta(hours=20), CFG)
    assert (opened.access_count, opened.stability) == (2, 35.84)


def test_stability_is_capped() -> None:
    state = PolicyState(9, 360.0, T0, T0)
    assert apply_touch(state, T0 + dt.timedelta(days=2), CFG).stability == 365


def test_constants_come_from_memstore_toml(root: Path) -> None:
    write(root, "memstore.toml", "spacing_hours = 1\nstability_growth = 2.0\nhot_budget = 500\n")
    config = load_config(root)
    state = apply_touch(baseline(None, None, None, None, config), T0, config)
    state = apply_touch(state, T0 + dt.timedelta(hours=1), config)
    assert (state.access_count, state.stability) == (2, 56.0) and config.hot_budget == 500


def test_unknown_setting_is_one_clear_error(root: Path, run) -> None:
    write(root, "memstore.toml", "hot_budjet = 5\n")
    result = run(root, "status")
    assert result.exit_code == 1 and "unknown setting 'hot_budjet'" in result.stderr


def test_a_bad_value_says_what_the_setting_takes(root: Path, run) -> None:
    """Catches: a value of the wrong kind answered with Python's own words (invalid literal for
    int() with base 10) and no hint."""
    write(root, "memstore.toml", 'hot_budget = "lots"\n')
    result = run(root, "status")
    assert result.exit_code == 1 and "bad value for hot_budget: 'lots'" in result.stderr
    assert "hot_budget takes a whole number" in result.stderr and "int()" not in result.stderr


@pytest.fixture
def corpus(root: Path) -> Path:
    write(root, "memory/feedback_a.md", memory("feedback_a", "alpha"))
    write(root, "memory/feedback_b.md", memory("feedback_b", "beta", access_count=2, stability=22.4,
                                                last_accessed="2026-06-01T00:00:00Z",
                                                last_reinforced="2026-06-01T00:00:00Z"))
    write(root, "identity.md", "# me\n")
    sync(root, CFG)
    return root


def policy(root: Path, rel: str) -> tuple:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        return conn.execute(
            "SELECT access_count, stability, last_accessed, last_reinforced "
            "FROM policy WHERE path = ?", (rel,)
        ).fetchone()
    finally:
        conn.close()


@pytest.mark.parametrize("tool", ["Read", "Edit", "Write", "MultiEdit"])
def test_reinforcing_tools(corpus: Path, tool: str) -> None:
    result = record_touch(corpus, str(corpus / "memory/feedback_a.md"), tool, T0, CFG)
    assert result.applied
    assert policy(corpus, "memory/feedback_a.md")[:2] == (1, 22.4)


@pytest.mark.parametrize("tool", ["Grep", "Glob", "Bash", ""])
def test_search_tools_never_reinforce(corpus: Path, tool: str) -> None:
    result = record_touch(corpus, str(corpus / "memory/feedback_a.md"), tool, T0, CFG)
    assert not result.recorded
    assert policy(corpus, "memory/feedback_a.md")[:2] == (0, 14)
    assert (not (corpus / "runtime" / "journal").exists()
            or not list((corpus / "runtime" / "journal").iterdir()))


def test_touch_cli_refuses_non_memories(corpus: Path, run) -> None:
    # The CLI says so and exits 1 (the hook, calling record_touch, silently does nothing).
    for target in ("identity.md", "memory/short-term/x.md", str(corpus.parent / "feedback_a.md")):
        result = run(corpus, "touch", target)
        assert result.exit_code == 1 and result.stderr.startswith("memstore: error: ")
    result = run(corpus, "touch", str(corpus / "memory/feedback_a.md"), "--tool", "Grep")
    assert result.exit_code == 2 and "does not reinforce" in result.stderr


def test_touch_cli_and_library_agree(corpus: Path, run) -> None:
    result = run(corpus, "touch", str(corpus / "memory/feedback_b.md"), "--tool", "Edit")
    assert result.exit_code == 0 and "reinforced" in result.stdout
    # 2 -> 3 reinforcements, 22.4 * 1.6 = 35.84, stamped at the pinned clock
    assert policy(corpus, "memory/feedback_b.md") == (3, 35.84, "2026-07-30T12:00:00Z",
                                                      "2026-07-30T12:00:00Z")
    line = json.loads(
        next((corpus / "runtime" / "journal").glob("*.jsonl")).read_text().splitlines()[0])
    assert (line["path"] == "memory/feedback_b.md" and line["tool"] == "Edit"
            and line["ts"] == "2026-07-30T12:00:00Z")


def _many_touches(root: Path) -> None:
    times = [T0, T0 + dt.timedelta(minutes=3), T0 + dt.timedelta(days=1),
             T0 + dt.timedelta(days=3, hours=2)]
    for when in times:
        record_touch(root, str(root / "memory/feedback_a.md"), "Read", when, CFG)
        record_touch(root, str(root / "memory/feedback_b.md"), "Edit", when, CFG)
    # out of order (another machine's clock was behind): applied by full replay
    record_touch(root, str(root / "memory/feedback_a.md"), "Read", T0 + dt.timedelta(hours=21), CFG)


def test_replay_after_deleting_mirror_gives_same_policy(corpus: Path) -> None:
    _many_touches(corpus)
    live = [policy(corpus, "memory/feedback_a.md"), policy(corpus, "memory/feedback_b.md")]
    # In time order: T0 (1), +3m (gated), +21h (2), +1d (gated: 3h after +21h), +3d2h (3).
    # The +21h read arrived last; a naive incremental update would have counted +1d instead.
    assert live[0][:2] == (3, 57.344)
    for suffix in ("", "-wal", "-shm"):
        (corpus / "runtime" / f"memstore.db{suffix}").unlink(missing_ok=True)
    rebuild(corpus, CFG)
    assert [policy(corpus, "memory/feedback_a.md"), policy(corpus, "memory/feedback_b.md")] == live
    sync(corpus, CFG)  # replaying the same journal again changes nothing
    sync(corpus, CFG)
    assert [policy(corpus, "memory/feedback_a.md"), policy(corpus, "memory/feedback_b.md")] == live


def test_out_of_order_event_gives_the_replay_state(corpus: Path) -> None:
    a = str(corpus / "memory/feedback_a.md")
    record_touch(corpus, a, "Read", T0, CFG)
    record_touch(corpus, a, "Read", T0 + dt.timedelta(days=1), CFG)
    # late arrival from a slow clock
    record_touch(corpus, a, "Read", T0 + dt.timedelta(hours=21), CFG)
    # In time order the +21h read passes the gate and the +1d read (3h later) does not.
    expected = (2, 35.84, "2026-07-02T09:00:00Z", "2026-07-02T06:00:00Z")
    assert policy(corpus, "memory/feedback_a.md") == expected
    for suffix in ("", "-wal", "-shm"):
        (corpus / "runtime" / f"memstore.db{suffix}").unlink(missing_ok=True)
    rebuild(corpus, CFG)
    assert policy(corpus, "memory/feedback_a.md") == expected


def test_journal_written_while_mirror_missing_is_folded_in(corpus: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (corpus / "runtime" / f"memstore.db{suffix}").unlink(missing_ok=True)
    result = record_touch(corpus, str(corpus / "memory/feedback_a.md"), "Read", T0, CFG)
    assert result.recorded and not result.applied
    sync(corpus, CFG)
    assert policy(corpus, "memory/feedback_a.md")[:2] == (1, 22.4)


def test_torn_and_garbage_journal_lines_are_skipped(corpus: Path) -> None:
    record_touch(corpus, str(corpus / "memory/feedback_a.md"), "Read", T0, CFG)
    journal = next((corpus / "runtime" / "journal").glob("*.jsonl"))
    with open(journal, "a") as handle:
        handle.write("not json\n{\"id\": 1}\n")
        # no newline
        handle.write(
            '{"id": "x-partial", "ts": "2026-07-05T00:00:00Z", "path": "memory/feedback_a.md"')
    sync(corpus, CFG)
    assert policy(corpus, "memory/feedback_a.md")[:2] == (1, 22.4)
    with open(journal, "a") as handle:  # the writer finishes its line
        handle.write(', "tool": "Read"}\n')
    sync(corpus, CFG)
    assert policy(corpus, "memory/feedback_a.md")[0] == 2


def test_score_of_stated_states_through_the_mirror(root: Path, run) -> None:
    write(root, "memory/feedback_rehearsed.md",
          memory("feedback_rehearsed", "r", access_count=7, stability=365,
                 last_accessed="2026-05-31T12:00:00Z"))
    write(root, "memory/feedback_crammed.md",
          memory("feedback_crammed", "c", access_count=1, stability=14,
                 last_accessed="2026-05-31T12:00:00Z"))
    rows = {r["name"]: r for r in json.loads(run(root, "list", "--json").stdout)}
    assert rows["feedback_rehearsed"]["score"] == pytest.approx(8 * math.exp(-60 / 365), abs=1e-6)
    assert rows["feedback_crammed"]["score"] == pytest.approx(2 * math.exp(-60 / 14), abs=1e-6)


def test_touch_inside_the_spacing_gate_says_it_did_not_reinforce(corpus: Path, run) -> None:
    """Failure caught: `touch` printing "reinforced" for a read the spacing gate held back."""
    target = str(corpus / "memory/feedback_b.md")
    first = run(corpus, "touch", target)
    assert first.exit_code == 0 and first.stdout.strip().endswith(": reinforced"), first.stdout
    again = run(corpus, "touch", target)  # the same pinned minute: inside the gate
    assert (again.exit_code == 0
            and "not reinforced (inside the spacing gate)" in again.stdout), again.stdout
    assert policy(corpus, "memory/feedback_b.md")[0] == 3  # counted once

"""The nightly tick (memstore/life/nightly.py, Store.tick): live-session awareness, window rolling,
the cue, and the pathspec-limited commit. Every root is synthetic, the clock pinned."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import random
import shutil
from pathlib import Path

import pytest

from memstore import Store
from memstore.core.timeutil import parse_when
from memstore.life import duplicates
from tests.helpers import NOW, git, memory, write

CLOCK = parse_when(NOW)
assert CLOCK is not None


def stamp(root: Path, when: dt.datetime, *rels: str) -> None:
    """Set the mtime of the named files (all files under root, outside runtime/ and .git/, if
    none)."""
    paths = [root / rel for rel in rels] or [
        p for p in root.rglob("*")
        if p.is_file() and not {"runtime", ".git"} & set(p.relative_to(root).parts)
    ]
    for path in paths:
        os.utime(path, (when.timestamp(), when.timestamp()))


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.md"))
            if p.is_file()}


def busy_root(root: Path) -> None:
    """A memory with reinforcement waiting to be flushed, a T1 fact past its window, an unrendered
    index."""
    write(root, "memory/feedback_testing.md",
          memory("feedback_testing", "Run the e2e test before merging"))
    write(root, "memory/short-term/260701-old-fact.md", "The staging host moved to port 8443.\n")
    write(root, "lenses/careful.md",
          "---\ntype: lens\ntrigger: {tool_match: Bash}\n---\nBe careful.\n")
    stamp(root, CLOCK - dt.timedelta(days=2))
    Store(root, CLOCK - dt.timedelta(days=1)).touch("memory/feedback_testing.md")


# ---------------------------------------------------------------- live-session awareness


@pytest.mark.parametrize("minutes_ago, live", [(3, True), (20, False)])
def test_live_session_scans_only_but_still_writes_the_cue(
        root: Path, minutes_ago: int, live: bool) -> None:
    """Failure caught: a tick that flushes, rolls and renders while a person is mid-session (a
    memory file changed 3 minutes ago), so it rewrites files under their editor; or one that treats
    any old change as live and never does its nightly work."""
    busy_root(root)
    # a lens counts as memory
    stamp(root, CLOCK - dt.timedelta(minutes=minutes_ago), "lenses/careful.md")
    status = Store(root, CLOCK).tick()

    assert status.live_session is live
    fact_rolled = (root / "memory/short-term/archive/260701-old-fact.md").exists()
    flushed = "access_count: 1" in (root / "memory/feedback_testing.md").read_text()
    rendered = (root / "memory/MEMORY.md").exists()
    assert (fact_rolled, flushed, rendered) == (not live, not live, not live)
    cue = json.loads((root / "runtime/state/cue.json").read_text())
    assert cue["live_session"] is live and cue["ran_at"] == "2026-07-30T12:00:00Z"
    assert cue["did"]["sync"] and cue["did"]["lint"]
    if live:
        assert (cue["did"]["flush"] is None and cue["did"]["render"] is None
                and cue["did"]["rolled"] == [])
        assert "lenses/careful.md changed 3 min ago" in (status.live_because or "")
    else:
        assert cue["did"]["rolled"] == ["memory/short-term/archive/260701-old-fact.md"]
        assert ("1 file(s) updated" in cue["did"]["flush"]
                and cue["did"]["render"].startswith("hot 1"))
    assert json.loads((root / "runtime/state/tick-status.json").read_text()) == status.to_json()


def test_derived_files_and_runtime_never_make_a_session_live(root: Path) -> None:
    """Failure caught: tick's own outputs (MEMORY.md, the journal, the cue) count as a person at
    work, so a tick run twice in ten minutes (or right after a render) never does its nightly
    work."""
    busy_root(root)
    Store(root, CLOCK - dt.timedelta(days=1)).render()
    for rel in ("memory/MEMORY.md", "memory/MEMORY-archive.md", "memory/current-state.md"):
        stamp(root, CLOCK - dt.timedelta(minutes=1), rel)
    write(root, "runtime/state/other.md", "machine state")
    stamp(root, CLOCK - dt.timedelta(minutes=1), "runtime/state/other.md")
    assert Store(root, CLOCK).tick().live_session is False


# ---------------------------------------------------------------- window rolling


def test_windows_roll_into_archive_and_nothing_is_deleted(root: Path, run) -> None:
    """Failure caught: old T1 facts and dream entries deleted, overwritten on a name clash, moved a
    second time, or moved where the mirror (and so search) loses them; or left where the
    SessionStart bundle keeps loading them."""
    facts = {
        "260730-today.md": "Deploys freeze on Friday.",
        "260723-edge.md": "Seven days ago, still in the window.",
        "260722-week-old.md": "The quokkaflux migration finished.",  # 8 days: rolls
        "260601-ancient.md": "Ancient fact, new copy.",
        "notes.md": "No date prefix: stays.",
        # a clash: must not be overwritten
        "archive/260601-ancient.md": "Ancient fact, archived earlier.",
        "archive/250101-archived.md": "Already archived: never moved again.",
    }
    for name, text in facts.items():
        write(root, f"memory/short-term/{name}", text + "\n")
    # the last is future-dated
    for day in ("260725", "260726", "260727", "260728", "260729", "260805"):
        write(root, f"memory/dream-journal/{day}-dream.md",
              f"---\ndate: {day}\nkind: dream\n---\nDream of {day}.\n")
    stamp(root, CLOCK - dt.timedelta(days=1))
    before = files_under(root / "memory")

    status = Store(root, CLOCK).tick()

    after = files_under(root / "memory")
    derived = {"MEMORY.md", "MEMORY-archive.md", "current-state.md"}
    assert len({k: v for k, v in after.items() if k not in derived}) == len(before)
    # bytes kept
    assert sorted(v for k, v in after.items() if k not in derived) == sorted(before.values())
    moved = {
        "short-term/archive/260722-week-old.md", "short-term/archive/260601-ancient-2.md",
        "dream-journal/archive/260725-dream.md", "dream-journal/archive/260726-dream.md",
    }
    assert moved <= set(after) and status.rolled == 4
    assert after["short-term/archive/260601-ancient.md"] == b"Ancient fact, archived earlier.\n"
    assert after["short-term/archive/260601-ancient-2.md"] == b"Ancient fact, new copy.\n"
    assert {"short-term/notes.md", "short-term/260723-edge.md", "dream-journal/260805-dream.md",
            "short-term/archive/250101-archived.md"} <= set(after)

    # the mirror already followed the move
    hits = Store(root, CLOCK).search("quokkaflux", catch_up="none")
    assert [h.path for h in hits] == ["memory/short-term/archive/260722-week-old.md"]
    context = run(root, "context").stdout
    assert "quokkaflux" not in context and "Dream of 260725" not in context
    assert "Seven days ago" in context and "Dream of 260729" in context

    # a day on, 260723-edge leaves the window
    later = Store(root, CLOCK + dt.timedelta(days=1)).tick()
    again = files_under(root / "memory")
    assert later.rolled == 1 and "short-term/archive/260723-edge.md" in again
    assert not any("archive/archive" in k for k in again)  # archive/ is never rolled again
    assert len({k for k in again if k not in derived}) == len(before)


# ---------------------------------------------------------------- the cue


def cue_corpus(root: Path) -> None:
    old = "2026-05-01"
    write(root, "memstore.toml", "hot_budget = 1\n")  # nothing fits Hot: old memories fall to Cold
    write(root, "memory/feedback_e2e-first.md",
          memory("feedback_e2e-first", "Run the end-to-end suite before merging hook changes",
                 created=old))
    write(root, "memory/feedback_e2e-before-merge.md",
          memory("feedback_e2e-before-merge",
                 "Before merging hook changes run the end-to-end suite", created=old))
    write(root, "memory/reference_ledger.md",
          memory("reference_ledger", "Where the invoice ledger lives and who owns it", created=old,
                 importance=8))
    write(root, "memory/project_export.md",
          memory("project_export", "Streaming export rewrite", created=old, in_flight="true",
                 state="migrating the export to streaming", last_accessed="2026-07-01T09:00:00Z"))
    write(root, "memory/project_search.md",
          memory("project_search", "Search ranking rework underway", created=old, in_flight="true",
                 state="tuning weights", last_accessed="2026-07-25T09:00:00Z"))
    write(root, "memory/short-term/260728-seen.md", "Seen at the last wake.\n")
    write(root, "memory/short-term/260729-fresh.md",
          "---\ndate: 2026-07-29\n---\n# The CI runner moved to arm64\n")
    stamp(root, CLOCK - dt.timedelta(days=40))
    stamp(root, dt.datetime(2026, 7, 28, 20, tzinfo=dt.UTC), "memory/short-term/260728-seen.md")
    stamp(root, dt.datetime(2026, 7, 29, 15, tzinfo=dt.UTC), "memory/short-term/260729-fresh.md")
    # the last wake dreamt of 260728-seen (by its path and text: never by mtime against the clock)
    from memstore.life.cue import fact_id

    seen = fact_id("memory/short-term/260728-seen.md", "Seen at the last wake.\n")
    write(root, "runtime/state/wake-status.json",
          json.dumps({"ran_at": "2026-07-29T06:05:00Z", "dreamt": [seen]}))


def test_cue_holds_one_item_of_each_kind_in_a_fixed_order(root: Path, run) -> None:
    """Failure caught: a cue that misses or misfiles an item kind, lists the fresh in-flight or the
    already-seen fact, or changes order between runs (the wake reads it as given)."""
    cue_corpus(root)
    result = run(root, "tick")
    assert result.exit_code == 0, result.output
    cue = json.loads((root / "runtime/state/cue.json").read_text())
    assert set(cue) == {"ran_at", "live_session", "did", "anything", "items"}
    assert set(cue["did"]) == {"sync", "lint", "flush", "rolled", "render", "embed", "warnings"}
    got = [(item["kind"], item["paths"]) for item in cue["items"]]
    assert got == [
        ("near-duplicate", ["memory/feedback_e2e-before-merge.md", "memory/feedback_e2e-first.md"]),
        ("important-gone-cold", ["memory/reference_ledger.md"]),
        ("stale-in-flight", ["memory/project_export.md"]),
        ("new-fact", ["memory/short-term/260729-fresh.md"]),
    ]
    assert cue["anything"] is True
    assert all(isinstance(i["detail"], str) and i["detail"] and "\n" not in i["detail"]
               for i in cue["items"])
    assert "migrating the export" in cue["items"][2]["detail"]
    assert cue["items"][3]["detail"] == "The CI runner moved to arm64"
    for kind in ("near-duplicate", "important-gone-cold", "stale-in-flight", "new-fact"):
        assert f"  cue: 1 {kind}" in result.stdout

    # no wake yet: every fact in the window is new
    (root / "runtime/state/wake-status.json").unlink()
    Store(root, CLOCK).tick()
    again = json.loads((root / "runtime/state/cue.json").read_text())
    assert [i["paths"] for i in again["items"] if i["kind"] == "new-fact"] == [
        ["memory/short-term/260729-fresh.md"], ["memory/short-term/260728-seen.md"]]


def test_empty_corpus_cues_nothing(root: Path) -> None:
    """Failure caught: `anything` true (a wasted model call every night) when there is nothing to
    look at."""
    write(root, "memory/feedback_alone.md",
          memory("feedback_alone", "A single unremarkable memory"))
    stamp(root, CLOCK - dt.timedelta(days=1))
    status = Store(root, CLOCK).tick()
    cue = json.loads((root / "runtime/state/cue.json").read_text())
    assert (cue["anything"] is False and cue["items"] == [] and status.cue_items == 0
            and status.cue_kinds == {})


def test_near_duplicates_matches_all_pairs_and_respects_the_budget() -> None:
    """Failure caught: prefix filtering (the shortcut that keeps 10k memories fast) drops real
    pairs, e.g. an off-by-one in the prefix length; or the comparison budget never stops a flood."""
    rng = random.Random(5)
    vocab = [f"tok{i}" for i in range(30)]
    summaries = {f"m{i:03}": " ".join(rng.sample(vocab, rng.randint(1, 8))) for i in range(250)}
    # Jaccard exactly 3/5, x's two own words rarer than the shared ones: only x's full prefix
    # (5 - ceil(0.6 * 5) + 1 = 3 words) reaches a shared word; one word shorter misses the pair.
    summaries |= {"edge-x": "alpha0 bravo0 charl0 delta0 echo0", "edge-y": "charl0 delta0 echo0"}
    found = duplicates.near_duplicates(summaries)
    sets = {k: duplicates.summary_tokens(v) for k, v in summaries.items()}
    brute = sorted(
        (a, b) for a, b in itertools.combinations(sorted(sets), 2)
        if 5 * len(sets[a] & sets[b]) >= 3 * len(sets[a] | sets[b])
    )
    assert [(a, b) for a, b, _ in found.pairs] == brute and len(brute) > 20
    assert ("edge-x", "edge-y") in brute
    assert found.compared < len(sets) * (len(sets) - 1) // 2  # it did not compare every pair
    assert duplicates.near_duplicates(summaries, budget=10).exhausted


# ---------------------------------------------------------------- --commit


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_commit_takes_only_the_files_tick_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught: a nightly commit that sweeps a peer session's work into it (an unstaged edit
    or a staged file elsewhere in the tree), or commits ignored runtime state."""
    for key in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{key}_NAME", "tick")
        monkeypatch.setenv(f"GIT_{key}_EMAIL", "tick@example.invalid")
    repo = tmp_path / "repo"
    root = repo / "agent"
    (root / "memory").mkdir(parents=True)
    busy_root(root)
    write(repo, ".gitignore", "runtime/\nMEMORY.md\nMEMORY-archive.md\ncurrent-state.md\n")
    write(repo, "notes.txt", "peer notes\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    write(repo, "notes.txt", "peer notes, edited and not staged\n")
    write(repo, "staged.txt", "a peer's staged file\n")
    git(repo, "add", "staged.txt")

    status = Store(root, CLOCK).tick(commit=True)

    assert status.committed and status.committed.startswith("committed 3 file(s)"), status.committed
    assert git(repo, "log", "-1", "--format=%s").strip() == "memstore tick 2026-07-30T12:00:00Z"
    assert sorted(git(repo, "show", "--name-status", "--no-renames", "--format=", "HEAD")
                  .splitlines()) == [
        "A\tagent/memory/short-term/archive/260701-old-fact.md",
        "D\tagent/memory/short-term/260701-old-fact.md",
        "M\tagent/memory/feedback_testing.md",
    ]
    assert git(repo, "status", "--porcelain").splitlines() == [" M notes.txt", "A  staged.txt"]

    again = Store(root, CLOCK + dt.timedelta(days=1)).tick(commit=True)
    assert again.committed and again.committed.startswith("nothing to commit")


def test_commit_outside_git_is_a_noop_with_a_note(
        root: Path, run, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught: --commit failing, or committing into some enclosing repository, where the
    root is not in git."""
    # never discover a repository above tmp
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(root.parent))
    busy_root(root)
    result = run(root, "tick", "--commit")
    assert result.exit_code == 0
    assert "git: not committed: the agent root is not inside a git work tree" in result.stdout


def test_a_second_entry_of_the_same_day_counts_as_the_newer(tmp_path: Path) -> None:
    """Failure caught: `261204-dream-2.md` sorted before `261204-dream.md` by name, so tick archived
    the newer of two same-day dreams and the bundle showed the older one as the latest."""
    from memstore.hook.bundle import _dated

    folder = tmp_path / "dream-journal"
    for name in ("261203-dream.md", "261204-dream.md", "261204-dream-2.md", "261204-dream-10.md"):
        write(folder, name, "x\n")
    assert [p.name for _day, p in _dated(folder)] == [
        "261204-dream-10.md", "261204-dream-2.md", "261204-dream.md", "261203-dream.md"]

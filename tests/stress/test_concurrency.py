"""Concurrency: many hook processes on one corpus while render, sync, flush and rebuild run beside
them.

Ten callers each run their share of hook calls one after another, so ten hook
processes are alive at any moment. Each call is a fresh process started exactly as
Claude Code starts it: `python -m memstore --root ROOT hook` with one JSON payload on
stdin, or (about a third of the calls) the registered form
`python -S <repo>/memstore/hookrun.py --root ROOT`. Payloads mix PostToolUse of
Read/Edit/Write/MultiEdit on T2 memories (reinforcements), PostToolUse that must not
reinforce (Grep, a short-term note, the derived index, a file outside memory/),
PreToolUse of Write/Edit on memories (must be approved) and of Bash (a lens may fire),
and a few SessionStart. Every call has its own MEMSTORE_NOW, all distinct and spread
over twenty days in random order, so the spacing gate opens and closes and most
events reach the mirror out of time order.

Beside them, until the hooks are done: a loop of `memstore render`, a loop of
`memstore sync`, one `memstore flush --force` (a third of the way in) and one
`memstore rebuild` (two thirds in); a slow writer that now and then holds the
mirror's write lock for longer than the hook's 250 ms budget, so some hooks give up
on SQLite and leave the touch to the journal alone; a reader thread that reads
MEMORY.md as fast as it can, and one that counts the mirror's files.

Afterwards:
- every hook call exited 0 and printed nothing or one JSON object; every PreToolUse
  Write/Edit of a memory was approved; the hook error log holds only "journaled only"
  and "lenses skipped" notes (the documented give-up under contention);
- every reinforcing touch is in the journal exactly once, with its path, tool and
  time, and nothing else is; the journal holds only whole lines;
- `PRAGMA integrity_check` is ok; after a final `memstore sync` the mirror's events are
  exactly the journal's, and its policy table equals (a) an independent replay of the
  journal over the files' frontmatter and (b) the policy table of a mirror rebuilt
  from scratch (db deleted, `memstore rebuild`), and a render before and after that
  rebuild gives the same bytes; a reader counting the mirror's files throughout always
  saw all of them (the rebuild swaps a whole mirror in);
- the flush changed the memory files only in their four policy fields;
- every one of the reader's reads was a whole MEMORY.md (see IndexShape).

Default run: 400 hook calls (about 25 s on two cores). MEMSTORE_LONG=1: the full
1,000 calls of the issue, and a larger corpus.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import _support as s

# about 40 s on two quiet cores; many processes, slow under load
pytestmark = pytest.mark.timeout(900)

CALLERS = 10
CALLS = 1000  # the issue asks for 1,000 hook calls in all; the long run scales the rest
T2 = s.scaled(300, 1000)
SPAN = dt.timedelta(days=20)
RENDER_NOW = s.BASE + SPAN + dt.timedelta(days=1)  # after every touch


@dataclass(frozen=True)
class Call:
    index: int
    payload: dict[str, object]
    now: str
    registered: bool
    journaled: str | None  # the root-relative path this call must journal, if any
    approve: bool  # a PreToolUse that must come back with permissionDecision allow


def plan(root: Path, rng: random.Random, count: int, seed: int) -> list[Call]:
    memory = root / "memory"
    t2 = s.t2_files(root)
    # most touches go to a few files: the gate matters
    favourites = rng.sample(t2, min(40, len(t2)))
    notes = sorted((memory / "short-term").glob("*.md"))
    offsets = rng.sample(range(int(SPAN.total_seconds())), count)  # distinct instants, random order
    calls = []
    for index in range(count):
        now = s.iso(s.BASE + dt.timedelta(seconds=3600 + offsets[index]))
        session = f"stress-{seed}-{index}"
        target = rng.choice(favourites) if rng.random() < 0.8 else rng.choice(t2)
        roll = rng.random()
        journaled = None
        approve = False
        if roll < 0.62:
            tool = rng.choices(["Read", "Edit", "Write", "MultiEdit"], [70, 20, 5, 5])[0]
            payload = post(root, session, tool, target)
            journaled = f"memory/{target.name}"
        elif roll < 0.72:
            kind = rng.randrange(4)
            if kind == 0:
                payload = post(root, session, "Grep", target)
            elif kind == 1:
                payload = post(root, session, "Read", rng.choice(notes))
            elif kind == 2:
                payload = post(root, session, "Read", memory / "MEMORY.md")
            else:
                payload = post(root, session, "Read", root / "identity.md")
        elif roll < 0.97:
            tool = rng.choice(["Write", "Edit", "Bash"])
            payload = {
                "hook_event_name": "PreToolUse",
                "session_id": session,
                "cwd": str(root),
                "tool_name": tool,
                "tool_input": {"command": "git push"} if tool == "Bash"
                else {"file_path": str(target)},
            }
            approve = tool != "Bash"
        else:
            payload = {"hook_event_name": "SessionStart", "session_id": session, "cwd": str(root),
                       "source": "startup"}
        calls.append(Call(index, payload, now, rng.random() < 0.33, journaled, approve))
    return calls


def post(root: Path, session: str, tool: str, path: Path) -> dict[str, object]:
    return {
        "hook_event_name": "PostToolUse",
        "session_id": session,
        "cwd": str(root),
        "tool_name": tool,
        "tool_input": {"file_path": str(path)},
        "tool_response": {"success": True},
    }


class Reader(threading.Thread):
    """Reads MEMORY.md over and over; keeps every distinct content it saw, with a count."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.stop = threading.Event()
        self.seen: Counter[bytes] = Counter()
        self.reads = 0
        self.missing = 0

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.seen[self.path.read_bytes()] += 1
            except FileNotFoundError:
                self.missing += 1
            self.reads += 1
            time.sleep(0.0002)


class SideLoop(threading.Thread):
    """Runs one memstore command over and over until told to stop; keeps every failure."""

    def __init__(self, root: Path, *args: str) -> None:
        super().__init__(daemon=True)
        self.root, self.args = root, args
        self.stop = threading.Event()
        self.runs = 0
        self.failures: list[str] = []

    def run(self) -> None:
        while not self.stop.is_set():
            done = s.cli(self.root, *self.args, now=RENDER_NOW)
            self.runs += 1
            if done.returncode != 0:
                self.failures.append(
                    f"{' '.join(self.args)} -> {done.returncode}: {done.stderr.strip()[-500:]}")


class LockHolder(threading.Thread):
    """A slow writer: now and then holds the mirror's write lock past the hook's 250 ms budget.

    Renders and syncs are quick on this corpus, so without it the hook would hardly ever
    give up on SQLite, and its journal-only path (the next sync folds the touch in) would
    go untested.
    """

    def __init__(self, db: Path, rng: random.Random) -> None:
        super().__init__(daemon=True)
        self.db, self.rng = db, rng
        self.stop = threading.Event()
        self.held = 0

    def run(self) -> None:
        while not self.stop.wait(self.rng.uniform(0.3, 1.2)):
            conn = s.open_db(self.db)
            try:
                conn.isolation_level = None
                conn.execute("BEGIN IMMEDIATE")
                time.sleep(self.rng.uniform(0.3, 0.6))
                conn.execute("ROLLBACK")
                self.held += 1
            except Exception:  # busy beyond 30 s, or the mirror being swapped: try again later
                pass
            finally:
                conn.close()


def test_hooks_render_sync_flush_concurrently(tmp_path: Path) -> None:
    seed = s.make_seed()
    rng = random.Random(seed)
    root = s.make_root(tmp_path, T2)
    s.cli_ok(root, "rebuild")
    s.cli_ok(root, "render", now=RENDER_NOW)
    original = s.memory_snapshot(root)
    shape = s.IndexShape(root / "runtime" / "memstore.db")
    calls = plan(root, rng, CALLS, seed)
    results: dict[int, subprocess.CompletedProcess[bytes]] = {}
    done_count = [0]
    lock = threading.Lock()

    def caller(mine: list[Call]) -> None:
        for call in mine:
            done = subprocess.run(
                s.hook_argv(root, call.registered),
                input=json.dumps(call.payload).encode(),
                env=s.env_for(call.now),
                capture_output=True,
                timeout=60,
            )
            with lock:
                results[call.index] = done
                done_count[0] += 1

    reader = Reader(root / "memory" / "MEMORY.md")
    files = json.loads(s.cli_ok(root, "status", "--json", now=RENDER_NOW))["files"]
    mirror_reader = s.MirrorReader(root / "runtime" / "memstore.db", pause=0.01)
    holder = LockHolder(root / "runtime" / "memstore.db", random.Random(seed + 1))
    renders = SideLoop(root, "render")
    syncs = SideLoop(root, "sync", "--quiet")
    callers = [threading.Thread(target=caller, args=(calls[i::CALLERS],), daemon=True)
               for i in range(CALLERS)]
    once: dict[str, subprocess.CompletedProcess[str]] = {}
    started = time.monotonic()
    for thread in (reader, mirror_reader, holder, renders, syncs, *callers):
        thread.start()
    for fraction, command in ((1 / 3, ("flush", "--force")), (2 / 3, ("rebuild",))):
        while done_count[0] < CALLS * fraction and any(c.is_alive() for c in callers):
            time.sleep(0.02)
        once[command[0]] = s.cli(root, *command, now=RENDER_NOW)
    for thread in callers:
        thread.join(timeout=600)
    hooks_seconds = time.monotonic() - started
    for loop in (renders, syncs, holder):
        loop.stop.set()
        loop.join(timeout=120)
    reader.stop.set()
    reader.join(timeout=30)
    mirror_reader.finish()
    log = root / "runtime" / "state" / "hook-errors.log"
    notes = log.read_text().splitlines() if log.exists() else []
    print(f"memstore from {s.REPO}: {CALLS} hook calls in {hooks_seconds:.1f} s ({len(notes)} gave "
          f"up on SQLite); renders {renders.runs}, syncs {syncs.runs}, lock held {holder.held} "
          f"times; reader {reader.reads} reads, {len(reader.seen)} versions; "
          f"mirror reads {dict(mirror_reader.counts)} {dict(mirror_reader.errors)}")
    where = f"(seed {seed})"

    # -- every process did its job
    assert len(results) == CALLS, f"{CALLS - len(results)} hook calls never finished {where}"
    for call in calls:
        done = results[call.index]
        assert done.returncode == 0, (
            f"hook call {call.index} exited {done.returncode}: {done.stderr!r} {where}")
        out = done.stdout.decode()
        response = json.loads(out) if out.strip() else None
        assert response is None or isinstance(response, dict), (
            f"hook call {call.index} printed {out[:200]!r}")
        if call.approve:
            decision = (response or {}).get("hookSpecificOutput", {}).get("permissionDecision")
            assert decision == "allow", (
                f"PreToolUse {call.payload['tool_name']} of a memory not approved: {out!r}")
    for name, done in once.items():
        assert done.returncode == 0, (
            f"memstore {name} failed beside the hooks: {done.stderr} {where}")
    assert not renders.failures and not syncs.failures, (
        f"{renders.failures[:3]} {syncs.failures[:3]} {where}")
    assert renders.runs >= 2 and syncs.runs >= 2, (
        "the side loops hardly ran; the test proved nothing")
    assert any("journaled only" in n for n in notes), (
        "no hook ever gave up on SQLite; that path went untested")
    for line in notes:
        text = line.split(" ", 1)[1]
        assert text.startswith(("touch of ", "lenses skipped: ")) and (
            "journaled only: journaled; mirror busy" in text
            or text.startswith("lenses skipped: database is locked")
        ), f"unexpected hook error: {line} {where}"

    # -- every touch is in the journal, exactly once, and nothing else is
    lines = s.journal_lines(root)
    expected = {str(c.payload["session_id"]): c for c in calls if c.journaled}
    sessions = Counter(str(e.get("session")) for e in lines)
    twice = [k for k, n in sessions.items() if n > 1]
    assert not twice, f"journaled more than once: {twice[:5]} {where}"
    assert set(sessions) == set(expected), (
        f"journal and touches disagree: missing {sorted(set(expected) - set(sessions))[:5]}, "
        f"extra {sorted(set(sessions) - set(expected))[:5]} {where}"
    )
    for event in lines:
        call = expected[event["session"]]
        assert (event["path"], event["ts"], event["tool"]) == (
            call.journaled, call.now, call.payload["tool_name"]), (
            f"journal line {event} for call {call}")
    assert len(lines) == sum(1 for c in calls if c.journaled)

    # -- the mirror equals a replay of the journal
    s.cli_ok(root, "sync", now=RENDER_NOW)
    db = root / "runtime" / "memstore.db"
    assert s.integrity(db) == "ok", where
    assert s.event_ids(db) == {e["id"] for e in lines}, f"mirror events != journal lines {where}"
    live = s.policy_table(db)
    replayed = s.replay(s.checkpoints(db), lines)
    assert live == replayed, (
        f"live mirror != replay of the journal {where}: {s.diff_tables(live, replayed)}")
    assert sum(v[4] for v in live.values()) > 0, "no touch reached the policy table"
    s.cli_ok(root, "render", now=RENDER_NOW)
    index_before = (root / "memory" / "MEMORY.md").read_bytes()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    s.cli_ok(root, "rebuild", now=RENDER_NOW)
    assert s.integrity(db) == "ok", where
    rebuilt = s.policy_table(db)
    assert live == rebuilt, f"live mirror != rebuilt mirror {where}: {s.diff_tables(live, rebuilt)}"
    s.cli_ok(root, "render", now=RENDER_NOW)
    assert (root / "memory" / "MEMORY.md").read_bytes() == index_before, (
        f"render differs after rebuild {where}")

    # -- the flush touched policy fields only
    after = s.memory_snapshot(root)
    assert set(after) == set(original)
    changed = {rel: s.policy_only_diff(original[rel], after[rel]) for rel in original
               if original[rel] != after[rel]}
    assert changed, "the flush wrote nothing; the test proved nothing"
    bad = {rel: p for rel, p in changed.items() if p}
    assert not bad, (
        f"memory files changed beyond their policy fields {where}: {dict(list(bad.items())[:3])}")

    # -- a reader of the mirror always saw all of it, through the rebuild's swap too
    half = {n: c for n, c in mirror_reader.counts.items() if n != files}
    assert not half, f"a mirror reader saw {half} (count: reads) instead of {files} files {where}"
    assert mirror_reader.counts, f"the mirror reader never read: {dict(mirror_reader.errors)}"

    # -- the reader never saw a partial MEMORY.md
    assert reader.missing == 0, f"MEMORY.md was missing for {reader.missing} reads {where}"
    assert len(reader.seen) >= 2, "the reader never saw MEMORY.md change; the test proved nothing"
    torn = {}
    for raw, times in reader.seen.items():
        problems = shape.problems(raw)
        if problems:
            torn[len(raw)] = (times, problems[:3])
    assert not torn, (
        f"the reader saw partial MEMORY.md files (size: (reads, problems)) {where}: {torn}")
    assert not shape.problems(index_before)
    shutil.rmtree(tmp_path / "agent", ignore_errors=True)

"""Crashes: `kill -9` a render, a flush and a rebuild at random moments, many times.

Each trial starts the real command as its own process and sends it SIGKILL at a
random moment: either after a uniform random delay over about the length of a full
run (calibrated in the same test), or just after its first write shows (a temp
file appears, a file or folder changes) plus a small random delay, so many kills land
in the middle of the writes. The seed is printed; MEMSTORE_STRESS_SEED repeats a run.

- render: each derived file (MEMORY.md, MEMORY-archive.md, current-state.md) is, right
  after the kill, byte for byte the old version or the new one, where "new" is what a
  clean render of a copy of the root, made before the kill, wrote. Memory files are not
  touched. The next `memstore render` exits 0, writes exactly the new version and
  leaves no temp file behind.
- flush (the corpus plus hand-written files with comments on policy lines, CRLF, a BOM,
  quoted dates, missing fields): right after the kill, every memory file is
  byte-identical to before or differs only in the values of the four policy fields
  (line by line; missing fields may be appended), nothing is truncated or lost. The
  next `memstore flush --force` exits 0 and sweeps the temp files, and a flush after it
  has nothing left to write. At the end the live mirror equals both a replay of the
  journal and a mirror rebuilt from scratch.
- rebuild (a 2,000-file corpus; 5,000 with MEMSTORE_LONG=1), with the live mirror
  healthy, missing or corrupt before the trial: right after the kill
  `memstore status --json` exits 0 and counts every file and journal event, the mirror
  passes `PRAGMA integrity_check` and its policy table equals a replay of the journal.
  While a rebuild runs over a healthy mirror, a reader of the live mirror always sees
  all of it (never half: the fresh mirror is built aside and swapped in whole). After a
  few kills in a row, the next full rebuild leaves no half-built mirror behind.

Default: 12 render, 10 flush and 9 rebuild trials, 30-45 s on two cores.
MEMSTORE_LONG=1: 150, 120 and 60.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from memstore.core.config import Config
from memstore.core.policy import record_touch

from . import _support as s

pytestmark = pytest.mark.timeout(900)  # up to 30 s each on two quiet cores; slow under load
CFG = Config()


@pytest.fixture(autouse=True)
def _host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTORE_HOST", s.HOST)  # in-process touches journal under the same host


def touch_some(root: Path, rng: random.Random, count: int, now: dt.datetime) -> list[Path]:
    """Reinforce `count` random T2 files exactly as the hook does (journal line + mirror)."""
    chosen = rng.sample(s.t2_files(root), count)
    for path in chosen:
        result = record_touch(root, str(path), "Read", now, CFG, session="crash")
        assert result.recorded, result.message
    return chosen


def derived(root: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for name in s.DERIVED:
        try:
            out[name] = (root / "memory" / name).read_bytes()
        except FileNotFoundError:
            out[name] = None
    return out


def render_watch(root: Path):
    memory = root / "memory"

    def signature() -> object:
        temps = tuple(sorted(n for n in os.listdir(memory) if n.startswith(".")))
        stats = []
        for name in s.DERIVED:
            try:
                st = os.stat(memory / name)
                stats.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except FileNotFoundError:
                stats.append(None)
        return temps, tuple(stats)

    return signature


def files_watch(folder: Path, files: list[Path]):
    """Changes when the folder's entries change (a temp file, a rename) or one of `files` is
    written."""

    def signature() -> object:
        out = []
        for path in (folder, *files):
            try:
                st = os.stat(path)
                out.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except FileNotFoundError:
                out.append(None)
        return out

    return signature


# ---------------------------------------------------------------------------------- render


def test_kill_render_at_random_moments(tmp_path: Path) -> None:
    seed = s.make_seed()
    rng = random.Random(seed)
    trials = s.scaled(12, 150)
    root = s.make_root(tmp_path, 300)
    clock = s.BASE
    s.cli_ok(root, "rebuild", now=clock)
    s.cli_ok(root, "render", now=clock)
    def having(pattern: str) -> list[Path]:
        found = sorted(p for p in s.t2_files(root)
                       if re.search(pattern, p.read_text(errors="replace")))
        assert found, f"the corpus has no file matching {pattern}"
        return found

    # One file of each kind whose edit is sure to change one derived file: a pinned row is
    # always in MEMORY.md, a superseded one always in the archive, an in-flight one in
    # current-state.md.
    edits = [
        (having(r"(?m)^pin: true$"), "summary"),
        (having(r"(?m)^status: superseded"), "summary"),
        (having(r"(?m)^in_flight: true$"), "state"),
    ]
    outcomes: Counter[str] = Counter()
    for trial in range(trials):
        where = f"(trial {trial}, seed {seed})"
        clock += dt.timedelta(days=1, minutes=rng.randrange(600))
        # Change the corpus so every derived file has a new version: touches move rows
        # between bands, and three edits make sure each file changes.
        touch_some(root, rng, 5, clock)
        for files, key in edits:
            target = rng.choice(files)
            text = target.read_bytes().decode("utf-8")
            value = f"Trial {trial} edit {rng.random():.6f}"
            target.write_bytes(
                re.sub(rf"(?m)^{key}: [^\r\n]*", f"{key}: {value}", text, count=1).encode("utf-8"))
        old = derived(root)
        memory_before = s.memory_snapshot(root)

        copy = tmp_path / f"copy-{trial}"
        shutil.copytree(root, copy)
        full = s.timed(lambda c=copy: s.cli_ok(c, "render", now=clock))  # noqa: B023
        new = derived(copy)
        shutil.rmtree(copy)
        assert all(new[n] is not None and new[n] != old[n] for n in s.DERIVED), (
            f"no new version to race {where}")

        how, delay, status = s.kill_at_random(
            s.cli_argv(root, "render"), s.env_for(clock), rng, full, watch=render_watch(root)
        )
        got = derived(root)
        versions = []
        for name in s.DERIVED:
            if got[name] == old[name]:
                versions.append("old")
            elif got[name] == new[name]:
                versions.append("new")
            else:
                size = None if got[name] is None else len(got[name])  # type: ignore[arg-type]
                raise AssertionError(
                    f"{name} is neither the old nor the new version after a kill ({how} at "
                    f"{delay * 1000:.0f} ms, {size} bytes; old {len(old[name] or b'')}, new "
                    f"{len(new[name] or b'')}) {where}"
                )
        assert s.memory_snapshot(root) == memory_before, (
            f"a killed render changed a memory file {where}")
        strays = s.stray_temp_files(root)
        outcomes[f"{'killed' if status == -9 else 'finished'}/{how}: {'+'.join(versions)}"
                 f"{' +tmp' if strays else ''}"] += 1

        s.cli_ok(root, "render", now=clock)
        assert derived(root) == new, (
            f"the render after the kill did not write the new version {where}")
        assert s.stray_temp_files(root) == [], f"temp files left after the next render {where}"
        assert s.integrity(root / "runtime" / "memstore.db") == "ok", where
    print(dict(outcomes))
    assert sum(n for k, n in outcomes.items() if k.startswith("killed")) >= 2, (
        "hardly any renders were killed")


# ---------------------------------------------------------------------------------- flush

# Hand-written memories a person might keep: comments on policy lines, odd key order,
# quoting, CRLF, a BOM, fields missing. Flush must keep every byte but the policy values.
HAND_WRITTEN = {
    "feedback_hand-kept-comments.md": (
        b"---\n"
        b"name: feedback_hand-kept-comments   # the stem\n"
        b"type: feedback\n"
        b"summary: 'Quoted: with a colon'\n"
        b"# policy below is maintained by memstore\n"
        b"access_count: 1    # spaced\n"
        b"stability: 22.4\n"
        b"tags: [x, y]\n"
        b"last_accessed: 2026-06-01T00:00:00Z\n"
        b"last_reinforced: 2026-06-01T00:00:00Z  # gate\n"
        b"---\n"
        b"\n"
        b"# Careful\n"
        b"\n"
        b"Body with --- and trailing spaces   \n"
    ),
    "process_hand-kept-crlf.md": (
        "\ufeff---\r\n"
        "name: process_hand-kept-crlf\r\n"
        "last_accessed: '2026-05-01T08:00:00Z'\r\n"
        "type: process\r\n"
        "summary: \"CRLF, a BOM and quoted dates\"\r\n"
        "access_count: 2\r\n"
        "---\r\n"
        "Steps:\r\n"
        "1. one\r\n"
    ).encode(),
    "reference_hand-kept-no-policy.md": (
        b"---\n"
        b"name: reference_hand-kept-no-policy\n"
        b"type: reference\n"
        b"summary: Never reinforced before\n"
        b"# a trailing comment in the block\n"
        b"---\n"
        b"Text.\n"
    ),
}


def add_hand_written(root: Path) -> list[Path]:
    paths = []
    for name, raw in HAND_WRITTEN.items():
        path = root / "memory" / name
        path.write_bytes(raw)
        os.utime(path, (s.BASE.timestamp() - 86400, s.BASE.timestamp() - 86400))
        paths.append(path)
    return paths


def test_kill_flush_at_random_moments(tmp_path: Path) -> None:
    seed = s.make_seed()
    rng = random.Random(seed)
    trials = s.scaled(10, 120)
    root = s.make_root(tmp_path, 300)
    hand = add_hand_written(root)
    clock = s.BASE
    s.cli_ok(root, "rebuild", now=clock)
    s.cli_ok(root, "flush", "--force", now=clock)  # start from a folded corpus

    # Calibrate: a full flush of a typical trial's work, on a copy.
    copy = tmp_path / "calibrate"
    shutil.copytree(root, copy)
    touch_some(copy, random.Random(seed), 25, clock + dt.timedelta(days=1))
    full = s.timed(lambda: s.cli_ok(copy, "flush", "--force", now=clock + dt.timedelta(days=1)))
    shutil.rmtree(copy)

    outcomes: Counter[str] = Counter()
    for trial in range(trials):
        where = f"(trial {trial}, seed {seed})"
        clock += dt.timedelta(days=1, minutes=rng.randrange(600))  # past the spacing gate
        touched = touch_some(root, rng, rng.randrange(10, 40), clock)
        for path in hand:  # always pending: each trial may rewrite them
            touched.append(path)
            assert record_touch(root, str(path), "Read", clock, CFG, session="crash").recorded
        before = s.memory_snapshot(root)

        how, delay, status = s.kill_at_random(
            s.cli_argv(root, "flush", "--force"), s.env_for(clock), rng, full,
            watch=files_watch(root / "memory", touched), watch_extra=full / 6, span=1.0,
        )
        after = s.memory_snapshot(root)
        assert set(after) == set(before), f"memory files appeared or vanished {where}"
        written = 0
        for rel in before:
            problems = s.policy_only_diff(before[rel], after[rel])
            assert not problems, (
                f"after a kill ({how} at {delay * 1000:.0f} ms) {rel} changed beyond its policy "
                f"fields: {problems} ({len(before[rel])} -> {len(after[rel])} bytes) {where}"
            )
            written += before[rel] != after[rel]
        strays = s.stray_temp_files(root)
        outcomes[f"{'killed' if status == -9 else 'finished'}/{how}: "
                 f"{'some' if written else 'none'} written{' +tmp' if strays else ''}"] += 1

        s.cli_ok(root, "flush", "--force", now=clock)
        assert s.stray_temp_files(root) == [], f"temp files left after the next flush {where}"
        final = s.memory_snapshot(root)
        for rel in before:
            assert not s.policy_only_diff(before[rel], final[rel]), (
                f"{rel} after the recovery flush {where}")
        again = s.cli_ok(root, "flush", "--force", now=clock)
        assert again.startswith("0 file(s) updated"), (
            f"a flush after recovery still had work: {again!r} {where}")
        assert s.integrity(root / "runtime" / "memstore.db") == "ok", where
    print(dict(outcomes))
    assert sum(n for k, n in outcomes.items() if k.startswith("killed")) >= 2, (
        "hardly any flushes were killed")
    for path in hand:
        assert path.read_bytes() != HAND_WRITTEN[path.name], f"{path.name} was never flushed"
        assert not s.policy_only_diff(HAND_WRITTEN[path.name], path.read_bytes()), path.name

    db = root / "runtime" / "memstore.db"
    s.cli_ok(root, "sync", now=clock)
    live = s.policy_table(db)
    replayed = s.replay(s.checkpoints(db), s.journal_lines(root))
    assert live == replayed, (
        f"mirror != replay of the journal (seed {seed}): {s.diff_tables(live, replayed)}")
    copy = tmp_path / "rebuilt"
    shutil.copytree(root, copy)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy / 'runtime' / 'memstore.db'}{suffix}").unlink(missing_ok=True)
    s.cli_ok(copy, "rebuild", now=clock)
    rebuilt = s.policy_table(copy / "runtime" / "memstore.db")
    assert live == rebuilt, (
        f"mirror != rebuilt mirror (seed {seed}): {s.diff_tables(live, rebuilt)}")


# ---------------------------------------------------------------------------------- rebuild


def test_kill_rebuild_at_random_moments(tmp_path: Path) -> None:
    seed = s.make_seed()
    rng = random.Random(seed)
    rounds, per_round = s.scaled(3, 20), 3
    root = s.make_root(tmp_path, s.scaled(2000, 5000))
    db = root / "runtime" / "memstore.db"
    clock = s.BASE
    full = s.timed(lambda: s.cli_ok(root, "rebuild", now=clock))
    s.cli_ok(root, "render", now=clock)  # the derived files are indexed too
    expected_files = json.loads(s.cli_ok(root, "status", "--json", now=clock))["files"]
    outcomes: Counter[str] = Counter()
    reads: Counter[str] = Counter()
    for round_ in range(rounds):
        for kill in range(per_round):
            where = f"(round {round_}, kill {kill}, seed {seed})"
            clock += dt.timedelta(hours=rng.randrange(1, 30))
            touch_some(root, rng, 3, clock)
            state = rng.choices(["healthy", "missing", "corrupt"], [3, 1, 1])[0]
            if state != "healthy":
                for suffix in ("-wal", "-shm"):
                    Path(f"{db}{suffix}").unlink(missing_ok=True)
                if state == "missing":
                    db.unlink()
                else:
                    db.write_bytes(os.urandom(8192))
            reader = s.MirrorReader(db)
            if state == "healthy":
                reader.start()
            _, delay, status = s.kill_at_random(
                s.cli_argv(root, "rebuild"), s.env_for(clock), rng, full)
            if state == "healthy":
                reader.finish()
                half = {n: c for n, c in reader.counts.items() if n != expected_files}
                assert not half, (
                    f"a reader saw half a mirror during a rebuild (count: reads): {half} {where}")
                assert reader.counts, f"the mirror reader never read: {dict(reader.errors)} {where}"
                reads["ok"] += sum(reader.counts.values())
                reads.update(reader.errors)
            strays = s.stray_temp_files(root)

            done = s.cli(root, "status", "--json", now=clock)
            assert done.returncode == 0, (
                f"status after a killed rebuild ({state}, {delay:.2f}s) {where}: {done.stderr}")
            view = json.loads(done.stdout)
            lines = s.journal_lines(root)
            assert view["files"] == expected_files, f"status counts {view['files']} files {where}"
            assert view["events"] == len(lines), (
                f"status counts {view['events']} of {len(lines)} events {where}")
            assert s.integrity(db) == "ok", where
            live = s.policy_table(db)
            replayed = s.replay(s.checkpoints(db), lines)
            assert live == replayed, (
                f"mirror != replay after a killed rebuild {where}: {s.diff_tables(live, replayed)}")
            outcomes[f"{state}/{'killed' if status == -9 else 'finished'}"
                     f"{' +stray' if strays else ''}"] += 1
        s.cli_ok(root, "rebuild", now=clock)
        s.cli_ok(root, "render", now=clock)
        assert s.stray_temp_files(root) == [], (
            f"half-built mirrors left after the next rebuild (seed {seed})")
        assert s.integrity(db) == "ok"
    print(dict(outcomes), "mirror reads during healthy rebuilds:", dict(reads))
    killed = sum(n for k, n in outcomes.items() if "/killed" in k)
    assert killed >= 2, "hardly any rebuild was killed"

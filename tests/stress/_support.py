"""Shared helpers of the stress suites: real processes, real SQLite files, exact checks.

Everything here runs memstore the way a user or Claude Code does: a fresh Python
process per command (`python -m memstore ...`), JSON on stdin for the hook, the clock
pinned per process through MEMSTORE_NOW. Nothing is imported into the test process
except to compute expectations (row texts, the policy arithmetic) and the corpus
generator.

Scale: the default counts keep each stress file well under a minute on two cores;
MEMSTORE_LONG=1 multiplies them (see `scaled`). The random seed comes from
MEMSTORE_STRESS_SEED when set, else from the clock; every test prints it and puts it
in its failure messages, so a failing run can be repeated exactly.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import memstore
from memstore_devtools.corpus import CorpusSpec, generate_corpus

PY = sys.executable
REPO = Path(memstore.__file__).resolve().parent.parent
HOOKRUN = REPO / "memstore" / "hookrun.py"
BASE = dt.datetime(2026, 7, 30, 12, 0, tzinfo=dt.UTC)  # the corpus generator's "now"
HOST = "stress-host"  # MEMSTORE_HOST: one stable journal file name per day
DERIVED = ("MEMORY.md", "MEMORY-archive.md", "current-state.md")
POLICY_KEYS = ("access_count", "last_accessed", "last_reinforced", "stability")


def long_run() -> bool:
    return os.environ.get("MEMSTORE_LONG", "") not in ("", "0")


def scaled(default: int, long: int) -> int:
    return long if long_run() else default


def make_seed() -> int:
    given = os.environ.get("MEMSTORE_STRESS_SEED")
    seed = int(given) if given else int.from_bytes(os.urandom(4), "big")
    print(f"stress seed: MEMSTORE_STRESS_SEED={seed}")  # pytest shows it with a failure
    return seed


def iso(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def env_for(now: dt.datetime | str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env["MEMSTORE_NOW"] = now if isinstance(now, str) else iso(now)
    env["MEMSTORE_HOST"] = HOST
    env["MEMSTORE_SEMANTIC"] = os.environ.get("MEMSTORE_SEMANTIC", "off")  # as conftest sets it
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def cli_argv(root: Path, *args: str) -> list[str]:
    return [PY, "-m", "memstore", "--root", str(root), *args]


def cli(
    root: Path, *args: str, now: dt.datetime | str = BASE, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli_argv(root, *args), env=env_for(now), capture_output=True, text=True,
                          timeout=timeout)


def cli_ok(root: Path, *args: str, now: dt.datetime | str = BASE, timeout: float = 120) -> str:
    done = cli(root, *args, now=now, timeout=timeout)
    assert done.returncode == 0, (
        f"memstore {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def hook_argv(root: Path, registered: bool) -> list[str]:
    """`memstore hook` as the CLI runs it, or the registered `python -S .../hookrun.py` form."""
    if registered:
        return [PY, "-S", str(HOOKRUN), "--root", str(root)]
    return [PY, "-m", "memstore", "--root", str(root), "hook"]


def make_root(folder: Path, t2: int, seed: int = 7) -> Path:
    root = folder / "agent"
    generate_corpus(root, CorpusSpec(t2=t2, seed=seed))
    return root


def t2_files(root: Path) -> list[Path]:
    from memstore.core.kinds import T2_NAME

    return sorted(p for p in (root / "memory").iterdir() if p.is_file() and T2_NAME.match(p.name))


def memory_snapshot(root: Path) -> dict[str, bytes]:
    """Every markdown file under memory/ except the derived ones, by relative path."""
    memory = root / "memory"
    out = {}
    for path in sorted(memory.rglob("*.md")):
        rel = path.relative_to(memory).as_posix()
        if rel in DERIVED or path.name.startswith("."):
            continue
        out[rel] = path.read_bytes()
    return out


def stray_temp_files(root: Path) -> list[str]:
    """Temp files of atomic writers under memory/ and half-built mirrors under runtime/."""
    found = [p.name for p in (root / "memory").iterdir() if re.match(r"^\..+\.\d+\.tmp$", p.name)]
    runtime = root / "runtime"
    if runtime.is_dir():
        found += [p.name for p in runtime.iterdir() if p.name.startswith("memstore.db.rebuild-")]
    return sorted(found)


# ------------------------------------------------------------------ the mirror


def open_db(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(db), timeout=30)
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def integrity(db: Path) -> str:
    conn = open_db(db)
    try:
        return "; ".join(r[0] for r in conn.execute("PRAGMA integrity_check").fetchall())
    finally:
        conn.close()


def policy_table(db: Path) -> dict[str, tuple[object, ...]]:
    conn = open_db(db)
    try:
        rows = conn.execute(
            "SELECT path, access_count, round(stability, 6), last_accessed, last_reinforced, "
            "touches FROM policy"
        ).fetchall()
    finally:
        conn.close()
    return {r[0]: tuple(r[1:]) for r in rows}


def event_ids(db: Path) -> set[str]:
    conn = open_db(db)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM events")}
    finally:
        conn.close()


def checkpoints(db: Path) -> dict[str, tuple[object, ...]]:
    """Each T2 file's starting point as the mirror parsed it: its policy fields and its
    policy_base."""
    conn = open_db(db)
    try:
        rows = conn.execute(
            "SELECT path, fm_access_count, fm_stability, fm_last_accessed, fm_last_reinforced, "
            "fm_base FROM files WHERE kind = 't2'"
        ).fetchall()
    finally:
        conn.close()
    return {r[0]: tuple(r[1:]) for r in rows}


def journal_lines(root: Path) -> list[dict[str, str]]:
    """Every journal line, parsed; a line that is not one whole JSON object fails the test."""
    out = []
    folder = root / "runtime" / "journal"
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        raw = path.read_bytes()
        assert raw.endswith(b"\n") or not raw, f"{path.name} ends in a partial line"
        for number, line in enumerate(raw.splitlines(), 1):
            try:
                event = json.loads(line)
            except ValueError:
                raise AssertionError(f"{path.name}:{number} is not JSON: {line[:200]!r}") from None
            assert isinstance(event, dict), f"{path.name}:{number} is not an object"
            out.append(event)
    return out


Table = dict[str, tuple[object, ...]]


def replay(checkpoint: Table, events: Iterable[dict[str, str]]) -> Table:
    """The policy state of every T2 file, replayed here from frontmatter and journal lines.

    Independent of memstore's replay code (recompute_policy, apply_event): only the
    spacing-gate arithmetic of memstore.core.policy is shared. A file with a policy_base
    ("COUNT STABILITY LAST_ACCESSED LAST_REINFORCED THROUGH", written by its first flush)
    starts from it and skips events at or before THROUGH; one without starts from its
    policy fields and skips events at or before their last_accessed.
    """
    from memstore.core.config import Config
    from memstore.core.policy import apply_touch, baseline
    from memstore.core.timeutil import fmt, parse_when

    config = Config()
    by_path: dict[str, list[dict[str, str]]] = {}
    for event in events:
        by_path.setdefault(event["path"], []).append(event)
    out = {}
    for path, (count, stability, last, reinforced, base) in checkpoint.items():
        if base:
            b_count, b_stability, b_last, b_reinforced, through = base.split()
            count, stability = int(b_count), float(b_stability)
            reinforced = None if b_reinforced == "-" else b_reinforced
            last = None if through == "-" else through
            state = baseline(count, stability, parse_when(None if b_last == "-" else b_last),
                             parse_when(reinforced), config)
        else:
            state = baseline(count, stability, parse_when(last), parse_when(reinforced), config)
        applied = 0
        for event in sorted(by_path.get(path, []), key=lambda e: (e["ts"], e["id"])):
            if last is not None and event["ts"] <= last:
                continue
            state = apply_touch(state, parse_when(event["ts"]), config)
            applied += 1
        out[path] = (
            state.access_count,
            round(state.stability, 6),
            fmt(state.last_accessed) if state.last_accessed else None,
            fmt(state.last_reinforced) if state.last_reinforced else None,
            applied,
        )
    return out


def diff_tables(
        a: dict[str, tuple[object, ...]], b: dict[str, tuple[object, ...]], limit: int = 8) -> str:
    lines = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            lines.append(f"  {key}: {a.get(key)} != {b.get(key)}")
    more = f"\n  ... {len(lines) - limit} more" if len(lines) > limit else ""
    return f"{len(lines)} rows differ:\n" + "\n".join(lines[:limit]) + more


# ------------------------------------------------------------------ what "whole" means


class IndexShape:
    """What every whole MEMORY.md of one corpus must look like.

    A read of MEMORY.md is *whole* when, byte for byte, it has the shape render gives:

    - valid UTF-8 that starts with render.HEADER and ends with a newline after its last row;
    - within the index guard (at most 200 lines and 25,000 bytes);
    - after the header, only the sections "\\n## Hot\\n\\n", "\\n## New\\n\\n", "\\n## Cold\\n\\n",
      in that order, each holding at least one row; Hot and Cold are always present
      (the corpus has pins and far more rows than the budgets hold);
    - every row is exactly the row of a live T2 file of the corpus (New's may be cut to
      160 characters as render cuts them), and no file has two rows;
    - every pinned live file has its row in Hot;
    - every band's fill agrees with the greedy passes: Hot and Cold within budget (pins
      aside) and, since rows rolled on to the archive, with less room left than the
      longest row takes; New within its budget.

    A torn read (an empty file, a file cut at any byte, a mix of two versions) breaks at
    least one of these.
    """

    def __init__(self, db: Path) -> None:
        from memstore.core.config import Config
        from memstore.mirror.render import HEADER, cut, row_for

        self.header = HEADER
        self.config = Config()
        conn = open_db(db)
        conn.row_factory = sqlite3.Row
        try:
            rows = conn.execute(
                "SELECT path, row_text, pin, status FROM files WHERE kind = 't2'").fetchall()
        finally:
            conn.close()
        self.full: dict[str, str] = {}
        self.pinned: set[str] = set()

        class _E:  # just what row_for reads
            def __init__(self, name: str, summary: str) -> None:
                self.name, self.filename, self.summary = name, name + ".md", summary

        for row in rows:
            if (row["status"] or "").strip().lower().startswith("superseded"):
                continue
            name = row["path"].rsplit("/", 1)[-1][:-3]
            self.full[name] = row_for(_E(name, row["row_text"] or ""))  # type: ignore[arg-type]
            if row["pin"]:
                self.pinned.add(name)
        self.cut = {name: cut(text, self.config.new_row_chars) for name, text in self.full.items()}
        self.longest = max(len(t) + 1 for t in self.full.values())

    def problems(self, raw: bytes) -> list[str]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return [f"not UTF-8 ({exc})"]
        if not text.startswith(self.header):
            return [f"does not start with the header ({len(raw)} bytes: {text[:60]!r})"]
        if not text.endswith("\n"):
            return [f"does not end with a newline (ends {text[-60:]!r})"]
        out = []
        if (len(text.splitlines()) > self.config.index_max_lines
            or len(raw) > self.config.index_max_bytes):
            out.append("over the index guard")
        lines = text[len(self.header) :].split("\n")[:-1]
        sections: dict[str, list[str]] = {}
        i = 0
        while i < len(lines):
            if (lines[i] != "" or i + 2 >= len(lines) or not lines[i + 1].startswith("## ")
                or lines[i + 2] != ""):
                return [*out, f"unexpected line {i} after the header: {lines[i][:80]!r}"]
            title = lines[i + 1][3:]
            if title not in ("Hot", "New", "Cold") or title in sections:
                return [*out, f"unexpected section {title!r}"]
            i += 3
            rows = []
            while i < len(lines) and lines[i] != "":
                rows.append(lines[i])
                i += 1
            if not rows:
                out.append(f"empty section {title}")
            sections[title] = rows
        order = [t for t in ("Hot", "New", "Cold") if t in sections]
        if list(sections) != order:
            out.append(f"sections out of order: {list(sections)}")
        for title in ("Hot", "Cold"):
            if title not in sections:
                out.append(f"no {title} section")
        seen: set[str] = set()
        for title, rows in sections.items():
            for row in rows:
                match = re.match(r"^- \[([^\]]+)\]\(\1\.md\)", row)
                name = match.group(1) if match else None
                if name is None or name not in self.full:
                    out.append(f"{title}: not a row of a live file: {row[:80]!r}")
                    continue
                if row != self.full[name] and not (title == "New" and row == self.cut[name]):
                    out.append(f"{title}: row of {name} is not its whole row: {row[:80]!r}")
                if name in seen:
                    out.append(f"{name} has two rows")
                seen.add(name)
        hot = sections.get("Hot", [])
        missing_pins = self.pinned - {r[3 : r.index("]")] for r in hot
                                      if r.startswith("- [") and "]" in r}
        if missing_pins:
            out.append(f"pinned files not in Hot: {sorted(missing_pins)}")
        budgets = {"Hot": self.config.hot_budget, "New": self.config.new_budget,
                   "Cold": self.config.cold_budget}
        for title, rows in sections.items():
            used = sum(len(r) + 1 for r in rows)
            unpinned = sum(len(r) + 1 for r in rows if r[3 : r.find("]")] not in self.pinned)
            if title == "Hot":
                if unpinned > budgets[title]:
                    out.append(f"Hot over budget ({used})")
                if used <= budgets[title] - self.longest:
                    out.append(f"Hot holds {used} of {budgets[title]}: rows are missing")
            elif used > budgets[title]:
                out.append(f"{title} over budget ({used})")
            if title == "Cold" and used <= budgets[title] - self.longest:
                out.append(f"Cold holds {used} of {budgets[title]}: rows are missing")
        return out


_POLICY_LINE = re.compile(
    r"^(access_count|last_accessed|last_reinforced|stability|policy_base)"
    r"[ \t]*:[ \t]*(.*?)[ \t]*(#.*)?$"
)
_STAMP_OR_DASH = r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z|-)"
_VALUE = {
    # the starting state a first flush appends (memstore.core.policy): quoted, five fields
    "policy_base": re.compile(
        rf'^"\d+ \d+(\.\d+)? {_STAMP_OR_DASH} {_STAMP_OR_DASH} {_STAMP_OR_DASH}"$'),
    "access_count": re.compile(r"^\d+$"),
    "stability": re.compile(r"^\d+(\.\d+)?$"),
    "last_accessed": re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)?$"),
    "last_reinforced": re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)?$"),
}


def policy_only_diff(before: bytes, after: bytes) -> list[str]:
    """What differs between two versions of a memory file beyond the policy fields' values.

    Compared line by line: every line of `before` must be in `after` unchanged, in the
    same order, except a policy-field line whose value (and only its value) changed;
    `after` may add policy-field lines (appended at the end of the frontmatter, or a new
    frontmatter block of them when the file had none). Each policy value written must be
    well formed. Returns the differences; empty means "only policy fields".
    """
    if before == after:
        return []
    if not after or before.startswith(after):
        return [f"truncated: {len(before)} bytes became {len(after)}"]
    try:
        a_text, b_text = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return ["a version is not UTF-8"]
    if a_text.startswith("\ufeff") != b_text.startswith("\ufeff"):
        return ["the byte-order mark changed"]
    a_text, b_text = a_text.lstrip("\ufeff"), b_text.lstrip("\ufeff")
    newline = "\r\n" if "\r\n" in a_text else "\n"
    a, b = a_text.split(newline), b_text.split(newline)
    problems: list[str] = []
    ia = ib = 0
    fences = 0  # "---" lines of a frontmatter block the flush put around appended fields
    while ia < len(a) or ib < len(b):
        la = a[ia] if ia < len(a) else None
        lb = b[ib] if ib < len(b) else None
        if la is not None and la == lb and not (ia == 0 and fences == 1):
            ia += 1
            ib += 1
            continue
        mb = _POLICY_LINE.match(lb) if lb is not None else None
        ma = _POLICY_LINE.match(la) if la is not None else None
        if ma and mb and ma.group(1) == mb.group(1):
            if (ma.group(3) or "") != (mb.group(3) or ""):
                problems.append(
                    f"line {ia + 1}: the comment of {ma.group(1)} changed: {la!r} became {lb!r}")
                break
            ia += 1
            ib += 1  # same key, same comment: only the value moved
        elif mb:
            ib += 1  # a policy line the flush appended
        elif lb == "---" and ia == 0 and fences < 2:
            fences += 1  # a new frontmatter block holding appended policy lines
            ib += 1
        else:
            problems.append(f"line {ia + 1}: {la!r} became {lb!r}")
            break
        if mb and not _VALUE[mb.group(1)].match(mb.group(2)):
            problems.append(f"malformed {mb.group(1)} value {mb.group(2)!r}")
    return problems


class MirrorReader(threading.Thread):
    """Counts the mirror's files table over and over, read-only, as a search would read it.

    `counts` holds every count a read returned; `errors` every failed read by message (a
    missing or replaced file may fail to open; that is not half a mirror).
    """

    def __init__(self, db: Path, pause: float = 0.003) -> None:
        super().__init__(daemon=True)
        self.db, self.pause = db, pause
        self.stop = threading.Event()
        self.counts: Counter[int] = Counter()
        self.errors: Counter[str] = Counter()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=5)
                try:
                    self.counts[conn.execute("SELECT count(*) FROM files").fetchone()[0]] += 1
                finally:
                    conn.close()
            except sqlite3.Error as exc:
                self.errors[str(exc)] += 1
            time.sleep(self.pause)

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=30)


# ------------------------------------------------------------------ killing at a random moment


def kill_at_random(
    argv: list[str],
    env: dict[str, str],
    rng: random.Random,
    full_seconds: float,
    watch: Callable[[], object] | None = None,
    watch_extra: float = 0.005,
    span: float = 1.2,
) -> tuple[str, float, int]:
    """Start argv, SIGKILL it at a random moment, reap it. Returns (how, delay, exit status).

    Half the time (when `watch` is given) the moment is "while it writes": `watch()` is
    polled until its value changes (the first sign of a write), then a random 0 to
    `watch_extra` seconds more; otherwise a uniform delay over `span` times a full run. A
    process that finished before the kill is not an error (its status says so).
    """
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    start = time.monotonic()
    how = "timer"
    try:
        if watch is not None and rng.random() < 0.5:
            how = "watch"
            first = watch()
            deadline = start + max(5.0, 4 * full_seconds)
            while proc.poll() is None and time.monotonic() < deadline and watch() == first:
                pass
            extra = rng.uniform(0, watch_extra)
            if extra:
                time.sleep(extra)
        else:
            time.sleep(rng.uniform(0, span * full_seconds))
        delay = time.monotonic() - start
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    finally:
        status = proc.wait(timeout=60)
    return how, delay, status


def timed(fn: Callable[[], object]) -> float:
    start = time.monotonic()
    fn()
    return time.monotonic() - start

#!/usr/bin/env python3
"""memstore benchmarks: every figure measured beside its baseline, in one run, as a ratio.

The machine this runs on is shared and small (2 cores), so absolute seconds drift from
run to run. Each section therefore times memstore and its yardstick alternately in the
same loop (A B A B ...), keeps the median of several repetitions, and reports the
ratio, which is what the goals are stated in and what stays stable across runs.

    .venv/bin/python scripts/bench.py                 # full run, rewrites BENCHMARKS.md
    .venv/bin/python scripts/bench.py --quick         # smoke run (1k and 5k files), prints only
    .venv/bin/python scripts/bench.py --only search   # one section; its block in BENCHMARKS.md is replaced

Sections are entries of SECTIONS (name, title, function). A section receives the shared
`Bench` (options, corpora generated once per size and reused, helpers for timing
child processes) and returns an `Outcome`: a plain-text block for stdout, a markdown
block for BENCHMARKS.md, and its goals with PASS/MISS. To add one, write a function
and append it to SECTIONS; `--only NAME[,NAME]` selects it, and BENCHMARKS.md keeps
the blocks of sections that were not run this time.

Corpora come from `memstore.corpus.generate_corpus` (seed 7), so every run and every
machine measures the same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import platform
import pstats
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "BENCHMARKS.md"
DEFAULT_SIZES = (1000, 10000, 100000)
QUICK_SIZES = (1000, 5000)
SEED = 7

# Goals from the issue.
GOAL_FILES_PER_S = 2000.0
GOAL_INCREMENTAL_RATIO = 0.1
GOAL_GREP_SPEEDUP = 3.0
GOAL_SEARCH_SIZE = 100000

# Search queries: plain words found in the generated corpus (anchor memories and the
# combinatorial topics). The second item is the word handed to `grep -ril`: the most
# distinctive word of the query, i.e. the one in the fewest files of the seed-7 corpus
# at 10k (checked with grep when the list was written).
QUERIES: tuple[tuple[str, str], ...] = (
    ("which timezone does Tallyhook use for invoice dates", "timezone"),
    ("never push directly to main", "directly"),
    ("reconcile invoices against the bank feed", "reconcile"),
    ("drafting preferences British spelling", "drafting"),
    ("Q2 close reconciliation handoff", "q2"),
    ("heron payouts backfill paused", "paused"),
    ("chargebacks", "chargebacks"),
    ("settlement_id", "settlement_id"),
    ("Kestrel Ads spend export", "spend"),
    ("verify a number before claiming it", "verify"),
)


# ----------------------------------------------------------------------------- helpers


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values)


def fmt_s(seconds: float) -> str:
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.01:
        return f"{seconds * 1000:.0f} ms"
    if seconds >= 0.001:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds * 1000:.2f} ms"


def fmt_rate(per_s: float) -> str:
    return f"{per_s:,.0f}"


def fmt_ratio(value: float) -> str:
    """A share (incremental sync over rebuild): a plain number."""
    return f"{value:.3f}" if value >= 0.001 else f"{value:.5f}"


def fmt_x(value: float) -> str:
    """A multiple (time over a baseline, or a baseline over memstore)."""
    if value >= 100:
        return f"{value:,.0f}x"
    if value >= 10:
        return f"{value:.1f}x"
    if value >= 1:
        return f"{value:.2f}x"
    return f"{value:.3f}x"


def fmt_mb(kib: int) -> str:
    return f"{kib / 1024:.0f} MB"


def fmt_n(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "MISS")


def md_table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """A markdown table; align is one char per column, 'l' or 'r' (default: first l, rest r)."""
    align = align or ("l" + "r" * (len(headers) - 1))
    marks = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    align = align or ("l" + "r" * (len(headers) - 1))
    cols = list(zip(headers, *rows, strict=False)) if rows else [(h,) for h in headers]
    widths = [max(len(str(c)) for c in col) for col in cols]

    def line(cells: list[str]) -> str:
        out = []
        for cell, width, a in zip(cells, widths, align, strict=False):
            out.append(cell.rjust(width) if a == "r" else cell.ljust(width))
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


@dataclass
class Child:
    seconds: float
    maxrss_kib: int
    returncode: int
    stdout: str
    stderr: str


def run_child(argv: list[str], env: dict[str, str] | None = None) -> Child:
    """Run a process to completion: wall time from fork to reap, and its own peak RSS.

    os.wait4 gives the rusage of exactly this child (RUSAGE_CHILDREN would be the
    maximum over every child this process ever waited for).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Child(
            seconds,
            usage.ru_maxrss,
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
        )


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def read_floor(root: Path) -> int:
    """Walk the root and read every markdown file's bytes, nothing else: the least any
    indexer has to do. Skips runtime/ and dot-folders, as memstore does. Returns a count."""
    count = 0
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith(".") and entry.name != "runtime":
                        stack.append(entry.path)
                elif entry.name.endswith(".md"):
                    with open(entry.path, "rb") as handle:
                        handle.read()
                    count += 1
    return count


def remove_mirror(root: Path) -> None:
    runtime = root / "runtime"
    if not runtime.exists():
        return
    for path in runtime.glob("memstore.db*"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def git_describe() -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "memstore", "migrations"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + (" + uncommitted changes in memstore/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def nproc() -> str:
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        return subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip()
    return str(os.cpu_count())


# ----------------------------------------------------------------------------- the bench


@dataclass
class Goal:
    text: str
    measured: str
    ok: bool | None
    note: str = ""


@dataclass
class Outcome:
    text: str
    markdown: str
    goals: list[Goal] = field(default_factory=list)


class Bench:
    """Options, the corpora (generated once per size, reused by every section), and
    measurements one section leaves for another (rebuild medians per size)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.sizes: list[int] = args.sizes
        self.quick: bool = args.quick
        self.workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="memstore-bench-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.owns_workdir = not args.workdir and not args.keep
        self.corpora: dict[int, Path] = {}
        self.gen_seconds: dict[int, float] = {}
        self.file_counts: dict[int, int] = {}
        self.rebuild_s: dict[int, float] = {}  # in-process rebuild median per size
        self.cli_rebuild_s: dict[int, float] = {}
        exe_dir = Path(sys.executable).parent
        script = exe_dir / "memstore"
        self.memstore_cmd = [str(script)] if script.exists() else [sys.executable, "-m", "memstore"]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
        # The in-process figures use the code imported at start; CLI children load what is
        # on disk when they start. Record the commit once, and say if it moved mid-run.
        self.commit = git_describe()

    # -- corpora

    def corpus(self, n: int) -> Path:
        if n in self.corpora:
            return self.corpora[n]
        from memstore.corpus import CorpusSpec, generate_corpus

        root = self.workdir / f"t2-{n}"
        marker = root / ".bench-corpus"
        spec = CorpusSpec(t2=n, seed=SEED)
        if marker.exists() and marker.read_text() == repr(spec):
            log(f"reusing corpus of {n} T2 files at {root}")
            self.gen_seconds[n] = float("nan")
        else:
            if root.exists():
                shutil.rmtree(root)
            log(f"generating corpus of {n} T2 files at {root}")
            seconds, _ = timed(lambda: generate_corpus(root, spec))
            marker.write_text(repr(spec))
            self.gen_seconds[n] = seconds
            log(f"  generated in {fmt_s(seconds)}")
        self.corpora[n] = root
        self.file_counts[n] = read_floor(root)
        return root

    # -- memstore through its command line

    def cli(self, root: Path, *args: str) -> Child:
        child = run_child([*self.memstore_cmd, "--root", str(root), *args], self.env)
        if child.returncode != 0:
            raise RuntimeError(f"memstore {' '.join(args)} exited {child.returncode}: {child.stderr.strip()[-500:]}")
        return child

    def reps_for(self, n: int) -> int:
        if self.args.reps:
            return self.args.reps
        if self.quick:
            return 3
        return 5 if n <= 1000 else 3

    def ensure_rebuild_medians(self, n: int) -> None:
        """Rebuild medians at size n, measured here if the throughput section did not run."""
        if n in self.rebuild_s and n in self.cli_rebuild_s:
            return
        from memstore.sync import rebuild

        root = self.corpus(n)
        inproc, cli = [], []
        for _ in range(self.reps_for(n)):
            inproc.append(timed(lambda: rebuild(root))[0])
            cli.append(self.cli(root, "rebuild").seconds)
        self.rebuild_s[n] = median(inproc)
        self.cli_rebuild_s[n] = median(cli)

    def close(self) -> None:
        if self.owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


# ----------------------------------------------------------------------------- sections


def section_throughput(b: Bench) -> Outcome:
    """First sync (no mirror) and rebuild (mirror present), in process and via the CLI."""
    from memstore.sync import rebuild, sync

    rows_txt: list[list[str]] = []
    rows_md: list[list[str]] = []
    mem_rows: list[list[str]] = []
    goals: list[Goal] = []
    # Peak RSS of a child that only imports the CLI: the floor of any `memstore` command.
    import_rss = [run_child([sys.executable, "-c", "import memstore.cli"], b.env).maxrss_kib for _ in range(3)]
    rss_floor = int(median([float(x) for x in import_rss]))

    for n in b.sizes:
        root = b.corpus(n)
        files = b.file_counts[n]
        reps = b.reps_for(n)
        log(f"throughput at {fmt_n(n)}: {files} files, {reps} repetitions")
        read_floor(root)  # warm the page cache once
        floor_s, first_s, rebuild_s, cli_s, cli_rss = [], [], [], [], []
        scanned = set()
        for rep in range(reps):
            floor_s.append(timed(lambda: read_floor(root))[0])  # noqa: B023
            remove_mirror(root)
            seconds, report = timed(lambda: sync(root))  # noqa: B023
            first_s.append(seconds)
            scanned.add(report.scanned)
            seconds, report = timed(lambda: rebuild(root))  # noqa: B023
            rebuild_s.append(seconds)
            scanned.add(report.scanned)
            child = b.cli(root, "rebuild")
            cli_s.append(child.seconds)
            cli_rss.append(child.maxrss_kib)
            log(
                f"  rep {rep + 1}: read floor {fmt_s(floor_s[-1])}, first sync {fmt_s(first_s[-1])}, "
                f"rebuild {fmt_s(rebuild_s[-1])}, CLI rebuild {fmt_s(cli_s[-1])} ({fmt_mb(cli_rss[-1])})"
            )
        if scanned != {files}:
            log(f"  note: memstore scanned {sorted(scanned)} files, the read floor found {files}")
        f_floor, f_first, f_rebuild, f_cli = (median(x) for x in (floor_s, first_s, rebuild_s, cli_s))
        b.rebuild_s[n] = f_rebuild
        b.cli_rebuild_s[n] = f_cli
        rss = max(cli_rss)
        rate = {k: files / v for k, v in (("first", f_first), ("rebuild", f_rebuild), ("cli", f_cli))}
        for label, seconds, key in (
            ("first sync (no mirror), in process", f_first, "first"),
            ("rebuild (mirror present), in process", f_rebuild, "rebuild"),
            ("`memstore rebuild` (CLI, whole process)", f_cli, "cli"),
        ):
            cells = [
                fmt_n(n),
                str(files),
                label,
                fmt_s(seconds),
                fmt_rate(rate[key]),
                fmt_s(f_floor),
                fmt_x(seconds / f_floor),
                verdict(rate[key] >= GOAL_FILES_PER_S),
            ]
            rows_md.append(cells)
            rows_txt.append([c.replace("`", "") for c in cells])
        mem_rows.append([fmt_n(n), str(files), fmt_mb(rss), fmt_mb(rss_floor), fmt_x(rss / rss_floor)])
        for key, what in (("first", "first sync"), ("rebuild", "rebuild")):
            goals.append(
                Goal(
                    f"{what} at {fmt_n(n)} files >= {GOAL_FILES_PER_S:,.0f} files/s (in process)",
                    f"{fmt_rate(rate[key])} files/s",
                    rate[key] >= GOAL_FILES_PER_S,
                )
            )

    headers = ["T2 files", "md files", "operation", "median", "files/s", "read floor", "x floor", "goal"]
    mem_headers = ["T2 files", "md files", "peak RSS of `memstore rebuild`", "RSS of `import memstore.cli`", "ratio"]
    gen = ", ".join(
        f"{fmt_n(n)}: {fmt_s(s)}"
        for n, s in sorted(b.gen_seconds.items())
        if s == s  # skip NaN (reused)
    )
    md = "\n\n".join(
        [
            "Files/s counts every markdown file memstore indexes (T2 memories plus identity, "
            "short-term notes, dream journal, bugs, lenses, meditations). The read floor walks "
            "the same tree and reads every file's bytes in Python, nothing more: the least any "
            "indexer must do; `x floor` is memstore's time over it. First sync deletes "
            "`runtime/memstore.db` and runs `sync` (which builds the missing mirror); rebuild "
            "runs with the mirror present (it builds a fresh database and copies it over the live "
            "one). The CLI row is the whole `memstore --root R rebuild` process, interpreter "
            "start-up included. Goal: >= 2,000 files/s. Peer (quoted in DESIGN.md, not measured "
            "here): basic-memory's first index of 6,000 files ran at about 6 files/s.",
            md_table(headers, rows_md, "rrlrrrrl"),
            "Peak memory (`ru_maxrss` of the `memstore rebuild` child, maximum over the "
            "repetitions), against a child that only imports the CLI:",
            md_table(mem_headers, mem_rows, "rrrrr"),
        ]
        + ([f"Corpus generation (not part of any figure): {gen}."] if gen else [])
    )
    text = "\n\n".join(
        [
            text_table(headers, rows_txt, "rrlrrrrl"),
            text_table([h.replace("`", "") for h in mem_headers], mem_rows, "rrrrr"),
        ]
    )
    return Outcome(text, md, goals)


def _touch_file(root: Path) -> Path:
    """A T2 memory in the middle of the sorted list, away from the anchors the queries hit."""
    names = sorted(p.name for p in (root / "memory").glob("*_*.md"))
    return root / "memory" / names[len(names) // 2]


def section_incremental(b: Bench) -> Outcome:
    """One changed file in the largest corpus, and no change at all, as ratios of a rebuild."""
    from memstore.sync import sync

    n = max(b.sizes)
    root = b.corpus(n)
    b.ensure_rebuild_medians(n)
    rebuild_s, cli_rebuild_s = b.rebuild_s[n], b.cli_rebuild_s[n]
    sync(root)  # mirror present and current
    target = _touch_file(root)
    original = target.read_bytes()
    reps = max(5, b.reps_for(n) * 2)
    log(f"incremental at {fmt_n(n)}: editing {target.name}, {reps} repetitions")
    one_s, none_s, cli_one_s, cli_none_s = [], [], [], []
    try:
        for rep in range(reps):
            target.write_bytes(original + f"\nBench edit {rep}a.\n".encode())
            seconds, report = timed(lambda: sync(root))
            if report.changed != 1:
                raise RuntimeError(f"expected 1 changed file, sync said: {report.summary()}")
            one_s.append(seconds)
            none_s.append(timed(lambda: sync(root))[0])
            target.write_bytes(original + f"\nBench edit {rep}b.\n".encode())
            cli_one_s.append(b.cli(root, "sync").seconds)
            cli_none_s.append(b.cli(root, "sync").seconds)
    finally:
        target.write_bytes(original)
        sync(root)
    one, none, cli_one, cli_none = (median(x) for x in (one_s, none_s, cli_one_s, cli_none_s))
    ratio = one / rebuild_s
    rows = [
        [
            "sync, one file changed (in process)",
            fmt_s(one),
            fmt_s(rebuild_s),
            fmt_ratio(one / rebuild_s),
            verdict(ratio <= GOAL_INCREMENTAL_RATIO),
        ],
        ["sync, nothing changed (in process)", fmt_s(none), fmt_s(rebuild_s), fmt_ratio(none / rebuild_s), ""],
        [
            "`memstore sync`, one file changed (CLI)",
            fmt_s(cli_one),
            fmt_s(cli_rebuild_s),
            fmt_ratio(cli_one / cli_rebuild_s),
            "",
        ],
        [
            "`memstore sync`, nothing changed (CLI)",
            fmt_s(cli_none),
            fmt_s(cli_rebuild_s),
            fmt_ratio(cli_none / cli_rebuild_s),
            "",
        ],
    ]
    headers = ["operation", "median", "rebuild (same way)", "ratio", "goal"]
    md = "\n\n".join(
        [
            f"Corpus: {fmt_n(n)} T2 files ({b.file_counts[n]} markdown files). One T2 memory "
            f"(`{target.name}`) gets a line appended before each timed sync; the no-change sync "
            "follows it. Baseline: the median rebuild at the same size, in process for the "
            "in-process rows and `memstore rebuild` for the CLI rows. Goal: one change <= 0.1 "
            "of a rebuild. Peer (quoted in DESIGN.md): basic-memory's no-change reindex of "
            "6,000 files took 9.5 s.",
            md_table(headers, rows, "lrrrl"),
        ]
    )
    text = f"largest corpus: {fmt_n(n)}\n" + text_table(
        headers, [[c.replace("`", "") for c in r] for r in rows], "lrrrl"
    )
    goal = Goal(
        f"incremental sync, 1 changed file in {fmt_n(n)}, <= {GOAL_INCREMENTAL_RATIO} of a rebuild",
        f"{fmt_ratio(ratio)} ({fmt_s(one)} / {fmt_s(rebuild_s)})",
        ratio <= GOAL_INCREMENTAL_RATIO,
        "" if n >= GOAL_SEARCH_SIZE else f"goal is stated at 100k; this run's largest corpus is {fmt_n(n)}",
    )
    return Outcome(text, md, [goal])


METHODS: tuple[tuple[str, str], ...] = (
    ("inproc", "in process, open connection"),
    ("root", "in process, `search_root` (syncs first)"),
    ("cli_nosync", "CLI `search --no-sync --json`"),
    ("cli", "CLI `search --json` (syncs first)"),
)


def _search_size(b: Bench, n: int, reps: int) -> dict[str, Any]:
    """Per-query medians of every method and of grep, timed interleaved."""
    from memstore.config import load_config
    from memstore.search import search, search_root
    from memstore.sync import open_mirror, sync

    root = b.corpus(n)
    sync(root)
    config = load_config(root)
    conn = open_mirror(root, config)
    memory = str(root / "memory")

    def run(method: str, query: str, word: str) -> tuple[float, Any]:
        if method == "inproc":
            return timed(lambda: search(conn, query, 10, None, config))
        if method == "root":
            return timed(lambda: search_root(root, query, 10))
        if method == "cli_nosync":
            child = b.cli(root, "search", query, "--json", "--limit", "10", "--no-sync")
            return child.seconds, json.loads(child.stdout)
        if method == "cli":
            child = b.cli(root, "search", query, "--json", "--limit", "10")
            return child.seconds, json.loads(child.stdout)
        if method == "grep":
            child = run_child(["grep", "-ril", word, memory], b.env)
            if child.returncode not in (0, 1):
                raise RuntimeError(f"grep exited {child.returncode}: {child.stderr.strip()}")
            return child.seconds, child.stdout.splitlines()
        raise ValueError(method)

    order = [m for m, _ in METHODS] + ["grep"]
    times: dict[tuple[int, str], list[float]] = {}
    hits: dict[int, dict[str, Any]] = {}
    try:
        # Warm-up: every method once per query (page cache, SQLite cache, imports).
        for qi, (query, word) in enumerate(QUERIES):
            results = {m: run(m, query, word)[1] for m in order}
            top = {m: (r[0]["path"] if r else None) for m, r in results.items() if m != "grep"}
            hits[qi] = {
                "hits": len(results["inproc"]),
                "top": top["inproc"],
                "grep_files": len(results["grep"]),
                "agree": len(set(top.values())) == 1,
            }
        for rep in range(reps):
            for qi, (query, word) in enumerate(QUERIES):
                shift = (rep + qi) % len(order)  # rotate so no method always runs first
                for method in order[shift:] + order[:shift]:
                    times.setdefault((qi, method), []).append(run(method, query, word)[0])
    finally:
        conn.close()
    med = {key: median(v) for key, v in times.items()}
    return {"med": med, "hits": hits, "n": n, "files": b.file_counts[n]}


def section_search(b: Bench) -> Outcome:
    """Search latency, in process and through the CLI, against `grep -ril` on the same files."""
    goals: list[Goal] = []
    per_size: list[dict[str, Any]] = []
    # What any CLI call pays before it searches: interpreter start-up, then the CLI's imports.
    bare, imports = [], []
    for _ in range(7):
        bare.append(run_child([sys.executable, "-c", "pass"], b.env).seconds)
        imports.append(run_child([sys.executable, "-c", "import memstore.cli"], b.env).seconds)
    startup = (
        f"Start-up floor of any CLI call (medians of 7, alternating): `python -c pass` "
        f"{fmt_s(median(bare))}, `python -c 'import memstore.cli'` {fmt_s(median(imports))}."
    )
    for n in b.sizes:
        reps = b.args.search_reps or (2 if b.quick else (3 if n >= 100000 else 5))
        log(f"search at {fmt_n(n)}: {len(QUERIES)} queries x 5 ways x {reps} repetitions")
        per_size.append(_search_size(b, n, reps))
        per_size[-1]["reps"] = reps

    def ratios(data: dict[str, Any], method: str) -> list[float]:
        med = data["med"]
        return [med[(qi, "grep")] / med[(qi, method)] for qi in range(len(QUERIES))]

    # Summary across sizes: median over queries of each method's median latency.
    sum_headers = [
        "T2 files",
        "md files",
        "way",
        "median latency",
        "grep -ril",
        "grep / memstore (median)",
        "worst query",
    ]
    sum_rows: list[list[str]] = []
    for data in per_size:
        med = data["med"]
        grep_lat = median([med[(qi, "grep")] for qi in range(len(QUERIES))])
        for method, label in METHODS:
            lat = median([med[(qi, method)] for qi in range(len(QUERIES))])
            r = ratios(data, method)
            sum_rows.append(
                [
                    fmt_n(data["n"]),
                    str(data["files"]),
                    label,
                    fmt_s(lat),
                    fmt_s(grep_lat),
                    fmt_x(median(r)),
                    fmt_x(min(r)),
                ]
            )

    largest = per_size[-1]
    med = largest["med"]
    q_headers = [
        "query",
        "grep word",
        "hits",
        "in process",
        "search_root",
        "CLI --no-sync",
        "CLI",
        "grep -ril",
        "grep files",
        "grep / CLI",
    ]
    q_rows = []
    for qi, (query, word) in enumerate(QUERIES):
        h = largest["hits"][qi]
        q_rows.append(
            [f"`{query}`", f"`{word}`", str(h["hits"]) + ("" if h["agree"] else "*")]
            + [fmt_s(med[(qi, m)]) for m, _ in METHODS]
            + [fmt_s(med[(qi, "grep")]), str(h["grep_files"]), fmt_x(med[(qi, "grep")] / med[(qi, "cli")])]
        )
    disagree = [QUERIES[qi][0] for qi, h in largest["hits"].items() if not h["agree"]]
    sync_cost = median([med[(qi, "cli")] - med[(qi, "cli_nosync")] for qi in range(len(QUERIES))])
    startup += (
        f" At {fmt_n(largest['n'])} files the sync before a CLI search costs {fmt_s(sync_cost)} "
        "(median over queries of `search --json` minus `search --no-sync --json`)."
    )

    n = largest["n"]
    note = "" if n >= GOAL_SEARCH_SIZE else f"goal is stated at 100k; this run's largest corpus is {fmt_n(n)}"
    for method, label in METHODS:
        r = ratios(largest, method)
        goals.append(
            Goal(
                f"search at {fmt_n(n)}, {label.replace('`', '')}: >= {GOAL_GREP_SPEEDUP:g}x faster than grep -ril"
                + (" (the goal's yardstick)" if method == "cli" else ""),
                f"{fmt_x(median(r))} median over queries, worst {fmt_x(min(r))}",
                median(r) >= GOAL_GREP_SPEEDUP,
                note,
            )
        )
    md_parts = [
        "Ten fixed queries (plain words from the generated corpus), `--limit 10`. memstore runs "
        "the whole query ranked (FTS5 bm25, coverage re-rank, snippets); `grep -ril WORD "
        "ROOT/memory` only lists the files holding the query's single most distinctive word, "
        "case-insensitively: **grep does not rank**, nor combine words, nor snippet. Every "
        "way runs once per query to warm caches, then all five alternate in one loop (order "
        "rotated per query and repetition); each figure is the median of its repetitions. "
        "The CLI rows and grep are whole processes (fork, exec, interpreter start-up); "
        "`search --json` syncs incrementally first, as an agent's call would. "
        f"Goal at 100k files: the CLI (syncing) >= {GOAL_GREP_SPEEDUP:g}x faster than grep, "
        "judged on the median over queries of grep's time over memstore's. Peer (quoted in "
        "DESIGN.md): basic-memory's CLI search over 6,000 files took 9.8 s where `grep -ril` "
        "took 28 ms.",
        md_table(sum_headers, sum_rows, "rrlrrrr"),
        startup,
        f"Per query at {fmt_n(n)} T2 files ({largest['files']} markdown files), medians of "
        f"{largest['reps']} repetitions; `hits` is what memstore returned (limit 10), `grep files` "
        "how many files grep listed:",
        md_table(q_headers, q_rows, "llrrrrrrrr"),
    ]
    if disagree:
        md_parts.append(
            "`*`: the top hit was not the same file in every way of searching for: "
            + ", ".join(f"`{q}`" for q in disagree)
            + " (ties, or an edit between runs)."
        )
    md = "\n\n".join(md_parts)
    text = "\n\n".join(
        [
            text_table(
                [h.replace("`", "") for h in sum_headers],
                [[c.replace("`", "") for c in r] for r in sum_rows],
                "rrlrrrr",
            ),
            startup.replace("`", ""),
            f"per query at {fmt_n(n)}:\n"
            + text_table(q_headers, [[c.replace("`", "") for c in r] for r in q_rows], "llrrrrrrrr"),
        ]
    )
    return Outcome(text, md, goals)


def section_profile(b: Bench) -> Outcome:
    """cProfile of one in-process rebuild: where the time goes."""
    from memstore.sync import rebuild

    n = b.args.profile_size or (1000 if b.quick else 10000)
    root = b.corpus(n)
    rebuild(root)  # warm
    plain = median([timed(lambda: rebuild(root))[0] for _ in range(2)])
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    rebuild(root)
    profiler.disable()
    profiled = time.perf_counter() - start
    stats = pstats.Stats(profiler)

    def top(key: str, count: int) -> list[list[str]]:
        entries = []
        for func, (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
            entries.append((func, nc, tt, ct))
        index = 3 if key == "cumulative" else 2
        entries.sort(key=lambda e: -e[index])
        rows = []
        for (filename, line, name), nc, tt, ct in entries[:count]:
            where = filename
            marker = f"{os.sep}memstore{os.sep}"
            if marker in filename:
                where = "memstore/" + filename.rsplit(marker, 1)[1]
            elif "site-packages" in filename:
                where = filename.split("site-packages" + os.sep, 1)[1]
            elif filename.startswith(sys.base_prefix):
                where = "stdlib:" + Path(filename).name
            label = f"{where}:{line}({name})" if line else name
            rows.append([str(nc), f"{tt:.3f}", f"{ct:.3f}", label])
        return rows

    headers = ["calls", "tottime s", "cumtime s", "function"]
    cum, tot = top("cumulative", 15), top("tottime", 10)
    files = b.file_counts[n]
    md = "\n\n".join(
        [
            f"One in-process `rebuild` of {fmt_n(n)} T2 files ({files} markdown files) under "
            f"cProfile: {fmt_s(profiled)} profiled, {fmt_s(plain)} without the profiler "
            f"({fmt_rate(files / plain)} files/s). Profiler overhead inflates many small calls, "
            "so read the shares, not the seconds.",
            "Top 15 by cumulative time:",
            md_table(headers, [[*r[:3], f"`{r[3]}`"] for r in cum], "rrrl"),
            "Top 10 by own time:",
            md_table(headers, [[*r[:3], f"`{r[3]}`"] for r in tot], "rrrl"),
        ]
    )
    text = "\n\n".join(
        [
            f"rebuild of {fmt_n(n)}: {fmt_s(profiled)} profiled, {fmt_s(plain)} plain",
            "top 15 by cumulative time:\n" + text_table(headers, cum, "rrrl"),
            "top 10 by own time:\n" + text_table(headers, tot, "rrrl"),
        ]
    )
    return Outcome(text, md, [])


@dataclass
class Section:
    name: str
    title: str
    run: Callable[[Bench], Outcome]


SECTIONS: list[Section] = [
    Section("throughput", "First sync and rebuild throughput", section_throughput),
    Section("incremental", "Incremental sync as a share of a rebuild", section_incremental),
    Section("search", "Search latency against grep -ril", section_search),
    Section("profile", "Where a rebuild spends its time", section_profile),
]


# ----------------------------------------------------------------------------- report


HEADER = """# memstore benchmarks

Generated by `scripts/bench.py`; do not edit by hand (the script rewrites the blocks
between its markers). Reproduce from the repository root:

```
.venv/bin/python scripts/bench.py                  # full run (1k, 10k, 100k files), 7 to 10 minutes on 2 cores
.venv/bin/python scripts/bench.py --quick          # smoke run (1k, 5k files), under a minute; prints only
.venv/bin/python scripts/bench.py --only search    # one section (names: {names}); its block here is replaced
```

How to read it. The machines are shared and small, so absolute seconds move from run
to run; each figure is therefore measured beside its baseline in the same run, with the
two alternating in one loop, and the figure that matters is the ratio. Every time is the
median of several repetitions (the count is given in each section). Corpora are
synthetic agent roots from `memstore.corpus.generate_corpus` (seed 7): N T2 memory files
plus a few dozen identity, short-term, dream-journal, bug, lens and meditation files, and
every corpus includes deliberately malformed files. Goals come from the issue; each
section ends with its goals marked PASS or MISS. Each section also says when, where and
on which commit it was measured, since sections can come from different runs.
"""


def machine_line(b: Bench, started: datetime, load: tuple[float, float, float]) -> str:
    import memstore

    return (
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {nproc()} CPUs ({cpu_model()}), "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"memstore {getattr(memstore, '__version__', '?')} at {b.commit}; "
        f"load average at start {load[0]:.2f}. Command: `{b.args.command_line}`."
    )


def goals_md(goals: list[Goal]) -> str:
    rows = [[g.text, g.measured, f"**{verdict(g.ok)}**", g.note] for g in goals]
    return md_table(["goal", "measured", "result", "note"], rows, "llll")


BLOCK = re.compile(r"<!-- bench:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /bench:(?P=name) -->\n", re.S)


def write_report(path: Path, blocks: dict[str, str]) -> None:
    """Replace the blocks of the sections run now, keep the others, order as SECTIONS."""
    kept: dict[str, str] = {}
    if path.exists():
        for m in BLOCK.finditer(path.read_text(encoding="utf-8")):
            kept[m.group("name")] = m.group(0)
    kept.update(blocks)
    names = [s.name for s in SECTIONS]
    ordered = [kept[n] for n in names if n in kept] + [v for k, v in kept.items() if k not in names]
    header = HEADER.format(names=", ".join(names))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(header + "\n" + "\n".join(ordered), encoding="utf-8")
    os.replace(tmp, path)


def parse_sizes(text: str) -> list[int]:
    sizes = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        mult = 1000 if part.endswith("k") else 1
        sizes.append(int(float(part.rstrip("k")) * mult))
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("sizes must be positive integers, e.g. 1000,10000,100000")
    return sorted(set(sizes))


def main(argv: list[str] | None = None) -> int:
    names = [s.name for s in SECTIONS]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=None,
        help="T2 corpus sizes (default 1000,10000,100000; 1k/10k/100k accepted)",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: sizes 1000,5000, fewer repetitions")
    parser.add_argument("--only", default=None, help=f"comma-separated sections to run: {', '.join(names)}")
    parser.add_argument("--reps", type=int, default=None, help="repetitions per figure (default by size)")
    parser.add_argument("--search-reps", type=int, default=None, help="repetitions per query and way of search")
    parser.add_argument("--profile-size", type=int, default=None, help="corpus size profiled (default 10000)")
    parser.add_argument(
        "--out", default=None, help=f"markdown report (default {DEFAULT_OUT.name} for full runs; --quick writes none)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only, write no report")
    parser.add_argument("--workdir", default=None, help="where corpora go (reused across runs if given)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary corpora")
    args = parser.parse_args(argv)
    # The command recorded in the report: where corpora live and where the report goes
    # change no figure, so --workdir, --keep and --out are left out of it.
    given = list(sys.argv[1:] if argv is None else argv)
    shown: list[str] = []
    skip = False
    for arg in given:
        if skip:
            skip = False
            continue
        if arg in ("--workdir", "--out"):
            skip = True
            continue
        if arg == "--keep" or arg.startswith(("--workdir=", "--out=")):
            continue
        shown.append(arg)
    args.command_line = " ".join([".venv/bin/python", "scripts/bench.py", *shown])
    if args.sizes is None:
        args.sizes = list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    chosen = names if args.only is None else [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [c for c in chosen if c not in names]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(names)}")
    out: Path | None = None
    if not args.no_write and (args.out or not args.quick):
        out = Path(args.out) if args.out else DEFAULT_OUT

    bench = Bench(args)
    started = datetime.now(UTC)
    load = os.getloadavg()
    wall = time.perf_counter()
    blocks: dict[str, str] = {}
    all_goals: list[tuple[str, Goal]] = []
    print(f"memstore bench: sizes {', '.join(fmt_n(s) for s in args.sizes)}; sections {', '.join(chosen)}")
    print(machine_line(bench, started, load))
    try:
        for section in SECTIONS:
            if section.name not in chosen:
                continue
            log(f"section {section.name}")
            t0 = time.perf_counter()
            section_started = datetime.now(UTC)
            section_load = os.getloadavg()
            outcome = section.run(bench)
            took = time.perf_counter() - t0
            print(f"\n== {section.title} [{section.name}] ({fmt_s(took)}) ==\n")
            print(outcome.text)
            for g in outcome.goals:
                all_goals.append((section.name, g))
            parts = [
                f"<!-- bench:{section.name} -->",
                f"## {section.title}",
                machine_line(bench, section_started, section_load) + f" Section wall time {fmt_s(took)}.",
                outcome.markdown,
            ]
            if outcome.goals:
                parts.append(goals_md(outcome.goals))
            blocks[section.name] = "\n\n".join(parts) + "\n<!-- /bench:" + section.name + " -->\n"
    finally:
        bench.close()
    moved = git_describe()
    if moved != bench.commit:
        print(f"\nnote: the repository moved from {bench.commit} to {moved} during the run")
        for name in blocks:
            blocks[name] = blocks[name].replace(
                f" at {bench.commit};", f" at {bench.commit} (moved to {moved} during the run);", 1
            )
    print("\n== Goals ==\n")
    rows = [[name, g.text, g.measured, verdict(g.ok), g.note] for name, g in all_goals]
    print(text_table(["section", "goal", "measured", "result", "note"], rows, "lllll") if rows else "(none)")
    print(f"\ntotal wall time {fmt_s(time.perf_counter() - wall)}; load average now {os.getloadavg()[0]:.2f}")
    if out is not None:
        write_report(out, blocks)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

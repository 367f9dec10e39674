"""What every section shares: formatting, tables, timing, child processes, the corpus cache.

`Bench` holds the options, the corpora (generated once per size and spec, reused by
every section, and across runs when `--workdir` is given) and measurements one section
leaves for another (rebuild medians per size). A section returns an `Outcome`: a
plain-text block for stdout, a markdown block for BENCHMARKS.md, and its goals.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstore_devtools import REPO

IN_PROCESS_MODULES = (
    "memstore.core.config",
    "memstore.wiring.install",
    "memstore.core.kinds",
    "memstore.core.policy",
    "memstore.mirror.render",
    "memstore.core.results",
    "memstore.mirror.search",
    "memstore.api.store",
    "memstore.mirror.sync",
    "memstore.core.timeutil",
    "memstore_devtools.corpus",
)
SEED = 7
BIG = 100000  # the size most goals are stated at


# ----------------------------------------------------------------------------- formatting


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


def plain(cells: list[str]) -> list[str]:
    """A markdown row for the terminal: without backticks."""
    return [c.replace("`", "") for c in cells]


def md_table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """A markdown table; align is one char per column, 'l' or 'r' (default: first l, rest r)."""
    align = align or ("l" + "r" * (len(headers) - 1))
    marks = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def text_table(headers: list[str], rows: list[list[str]], align: str | None = None) -> str:
    align = align or ("l" + "r" * (len(headers) - 1))
    headers, rows = plain(headers), [plain(r) for r in rows]
    cols = list(zip(headers, *rows, strict=False)) if rows else [(h,) for h in headers]
    widths = [max(len(str(c)) for c in col) for col in cols]

    def line(cells: list[str]) -> str:
        out = []
        for cell, width, a in zip(cells, widths, align, strict=False):
            out.append(cell.rjust(width) if a == "r" else cell.ljust(width))
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


# ----------------------------------------------------------------------------- timing


class OverBudget(Exception):
    """An operation ran past its time budget and was stopped."""


@contextlib.contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Raise OverBudget in this (main) thread once `seconds` have passed; None: no limit.

    A regression that makes an operation quadratic must cost a bounded wait and show as a
    MISS with a lower bound, not hang the run for hours."""
    if not seconds:
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise OverBudget(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Child:
    seconds: float
    maxrss_kib: int
    returncode: int
    stdout: str
    stderr: str
    over_budget: bool = False
    cpu_s: float = 0.0  # the child's own user + system CPU time


def run_child(
    argv: list[str], env: dict[str, str] | None = None, stdin: Path | None = None,
    limit: float | None = None
) -> Child:
    """Run a process to completion: wall time from fork to reap, and its own peak RSS.

    stdin is a file to read from (DEVNULL when None), opened before the clock starts, so
    every child in a comparison pays the same for its input. os.wait4 gives the rusage
    of exactly this child (RUSAGE_CHILDREN would be the maximum over every child this
    process ever waited for). A child still running after `limit` seconds is killed and
    reported with over_budget set.
    """
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(tempfile.TemporaryFile())
        err = stack.enter_context(tempfile.TemporaryFile())
        source: Any = (stack.enter_context(open(stdin, "rb")) if stdin is not None
                       else subprocess.DEVNULL)
        over = False
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=source, env=env)
        try:
            with budget(limit):
                _, status, usage = os.wait4(proc.pid, 0)
        except OverBudget:
            over = True
            proc.kill()
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
            over,
            usage.ru_utime + usage.ru_stime,
        )


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def timed_within(fn: Callable[[], Any], limit: float | None) -> tuple[float, Any, bool]:
    """timed(fn), stopped after `limit` seconds: (seconds, value or None, stopped)."""
    start = time.perf_counter()
    try:
        with budget(limit):
            value = fn()
    except OverBudget:
        return time.perf_counter() - start, None, True
    return time.perf_counter() - start, value, False


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


# ----------------------------------------------------------------------------- the machine


def git_describe() -> str:
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
            text=True, check=True
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
    """Options, the corpora (generated once per size and spec, reused by every section),
    and measurements one section leaves for another (rebuild medians per size)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.sizes: list[int] = args.sizes
        self.quick: bool = args.quick
        self.workdir = (Path(args.workdir) if args.workdir
                        else Path(tempfile.mkdtemp(prefix="memstore-bench-")))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.owns_workdir = not args.workdir and not args.keep
        self.corpora: dict[str, Path] = {}
        self.gen_seconds: dict[int, float] = {}  # default-spec corpora only
        self.file_counts: dict[int, int] = {}
        self.rebuild_s: dict[int, float] = {}  # in-process rebuild median per size
        self.cli_rebuild_s: dict[int, float] = {}
        self.rebuild_over: set[int] = set()  # sizes whose rebuild ran past its budget
        self.python = sys.executable
        exe_dir = Path(sys.executable).parent
        script = exe_dir / "memstore"
        self.memstore_cmd = [str(script)] if script.exists() else [sys.executable, "-m", "memstore"]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
        # Every section but `semantic` measures memstore without the embedding pass (with the
        # extra installed a sync or rebuild would embed for up to 8 s); `semantic` turns it on
        # explicitly. In process too: Store(root) reads $MEMSTORE_SEMANTIC.
        self.env["MEMSTORE_SEMANTIC"] = "off"
        os.environ["MEMSTORE_SEMANTIC"] = "off"
        # The in-process figures use the code imported at start (every module the sections use
        # is imported here, so an edit mid-run cannot mix old and new modules in this process);
        # CLI children load what is on disk when they start. Record the commit once, and say if
        # it moved mid-run.
        # A bench that times only child processes (bench_releases) imports none of memstore here.
        in_process = getattr(args, "in_process", True)
        wanted = IN_PROCESS_MODULES if in_process else ("memstore_devtools.corpus",)
        for module in wanted:
            importlib.import_module(module)
        self.commit = git_describe()
        self.baseline: Any = None  # a baseline.Baseline when --baseline-ref is given

    # -- corpora

    def corpus(self, n: int, **overrides: Any) -> Path:
        """The seed-7 corpus of n T2 files (CorpusSpec fields overridden by `overrides`,
        which gives it a folder of its own)."""
        from memstore_devtools.corpus import CorpusSpec, generate_corpus

        tag = "".join(f"-{k}{v}" for k, v in sorted(overrides.items()))
        key = f"t2-{n}{tag}"
        if key in self.corpora:
            return self.corpora[key]
        root = self.workdir / key
        marker = root / ".bench-corpus"
        spec = CorpusSpec(t2=n, seed=SEED, **overrides)
        if marker.exists() and marker.read_text() == repr(spec):
            log(f"reusing corpus of {n} T2 files at {root}")
            seconds = float("nan")
        else:
            if root.exists():
                shutil.rmtree(root)
            log(f"generating corpus of {n} T2 files at {root}")
            seconds, _ = timed(lambda: generate_corpus(root, spec))
            marker.write_text(repr(spec))
            log(f"  generated in {fmt_s(seconds)}")
        self.corpora[key] = root
        if not overrides:
            self.gen_seconds[n] = seconds
            self.file_counts[n] = read_floor(root)
        return root

    # -- memstore through its command line

    def cli(self, root: Path, *args: str, limit: float | None = None) -> Child:
        """`memstore --root ROOT ARGS` as a whole process; raises on failure, unless it was
        stopped for running past `limit` seconds (then over_budget is set)."""
        child = run_child([*self.memstore_cmd, "--root", str(root), *args], self.env, limit=limit)
        if child.over_budget:
            # the killed rebuild's
            for leftover in (root / "runtime").glob("memstore.db.rebuild-*"):
                leftover.unlink(missing_ok=True)
        elif child.returncode != 0:
            raise RuntimeError(f"memstore {' '.join(args)} exited {child.returncode}: "
                               f"{child.stderr.strip()[-500:]}")
        return child

    def reps_for(self, n: int) -> int:
        if self.args.reps:
            return self.args.reps
        if self.quick:
            return 3
        return 5 if n <= 1000 else 3

    def budget_for(self, n: int) -> float | None:
        """Seconds one full build of an n-file corpus may take before it is stopped: twice what
        the 2,000 files/s goal allows, at least 60 s; `--budget S` sets it (0: no limit)."""
        if self.args.budget is not None:
            return self.args.budget or None
        return max(60.0, 2 * n / 2000)

    def ensure_rebuild_medians(self, n: int) -> None:
        """Rebuild medians at size n, measured here if the throughput section did not run.
        A rebuild stopped at its budget counts as the budget (a lower bound; see rebuild_over)."""
        if n in self.rebuild_s and n in self.cli_rebuild_s:
            return
        from memstore.mirror.sync import rebuild

        root = self.corpus(n)
        limit = self.budget_for(n)
        inproc, cli = [], []
        for _ in range(self.reps_for(n)):
            seconds, _, stopped = timed_within(lambda: rebuild(root), limit)
            inproc.append(seconds)
            child = self.cli(root, "rebuild", limit=limit)
            cli.append(child.seconds)
            if stopped or child.over_budget:
                self.rebuild_over.add(n)
                break
        self.rebuild_s[n] = median(inproc)
        self.cli_rebuild_s[n] = median(cli)

    def close(self) -> None:
        if self.baseline is not None:
            self.baseline.close()
            self.baseline = None
        if self.owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

"""Any two releases side by side on the same roots, as ratios, against issue 43's goals (item 5).

    .venv/bin/python scripts/bench_releases.py                  # 81d0fb0 against the working tree
    .venv/bin/python scripts/bench_releases.py --quick          # small sizes; prints only
    .venv/bin/python scripts/bench_releases.py --base A --current B --only hook,search
    .venv/bin/python scripts/bench_releases.py --claude         # also one-Read `claude -p` sessions

Each figure is timed for both releases in one loop, the order rotated every repetition, so a
busy machine slows both alike; the rows give each release's figure, their ratio and the goal.
Figures: the hook's calls (its Read against a bare `python -c pass` at two sizes, its Write and
SessionStart), a first sync (files/s), `memstore search --json` against `grep -ril` over the same
files, search with a team beside the person's own memories against their own alone, render and
the nightly tick; with --claude, a one-Read `claude -p` session (the real binary, the stand-in
API) with no memstore, the settings install and the plugin. The table goes into BENCHMARKS.md
between `<!-- bench:releases -->` markers (a --quick run prints only, unless --out is given).
This module is the command line and the report; the figures are in release_figures, the two
releases' code, workers and roots in sides, the `claude -p` sessions in claude_session.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from memstore_devtools.bench.common import (
    REPO,
    Bench,
    cpu_model,
    fmt_s,
    log,
    md_table,
    nproc,
    text_table,
)
from memstore_devtools.bench.release_figures import (
    FULL,
    QUICK,
    Run,
    section_hook,
    section_render,
    section_search,
    section_sync,
    section_team,
    section_tick,
)
from memstore_devtools.bench.sides import WORKTREE

DEFAULT_BASE = "81d0fb0"  # the release before issue 43
SECTIONS = ("hook", "search", "render", "sync", "team", "tick", "claude")
USAGE = (  # the command lines BENCHMARKS.md shows
    "                       # full: hook at 1k and 20k, the rest at 20k",
    " --claude              # also the `claude -p` sessions (the real binary)",
    " --quick               # smoke run, small sizes, prints only",
    " --base REF --current REF   # any two releases (a ref, WORKTREE or a checkout's folder)",
)

# ----------------------------------------------------------------------------- the report


def table(run: Run) -> tuple[list[str], list[list[str]]]:
    a, b = run.a.label, run.b.label
    headers = ["figure", "goal", a, b, f"{b} / {a} (time)", f"goal met: {a}", f"goal met: {b}"]
    verdict = {None: "", True: "PASS", False: "MISS"}
    rows = [
        [r.figure, r.goal, r.a, r.b, r.ratio, verdict[r.ok_a], verdict[r.ok_b]] for r in run.rows
    ]
    return headers, rows


def write_block(path: Path, block: str) -> None:
    """Put the releases block into BENCHMARKS.md: in place of the old one, else at the end."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pattern = re.compile(r"<!-- bench:releases -->\n.*?<!-- /bench:releases -->\n", re.S)
    text = (
        pattern.sub(lambda _m: block, text, count=1)
        if pattern.search(text)
        else text.rstrip("\n") + "\n\n" + block
    )
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def report(run: Run, started: datetime, load: float, took: float, command: str) -> str:
    headers, rows = table(run)
    head = (
        f"Measured {started:%Y-%m-%d %H:%M} UTC on {nproc()} CPUs ({cpu_model()}), Python "
        f"{sys.version.split()[0]}; load average {load:.2f} at the start; wall time {fmt_s(took)}. "
        f"Command: `{command}`. First: {run.a.describe()}; second: {run.b.describe()}. "
        "MEMSTORE_SEMANTIC=off (FTS only, no embedding pass)."
    )
    parts = [
        "<!-- bench:releases -->",
        "## Two releases side by side (issue 43, item 5)",
        "Run it before a release, against the release before (the default base is 81d0fb0):\n\n"
        + "```sh\n"
        + "\n".join(f".venv/bin/python scripts/bench_releases.py{line}" for line in USAGE)
        + "\n```",
        "Both releases run on copies of the same corpora (seed 7), each with a mirror its own code "
        "built, alternating in one loop, so read the ratios: the machine is shared and small, and "
        "absolute times move with its load (a files/s goal cannot be met on a loaded machine). "
        "`x` under a hook figure is its time over `python -c pass`; the ratio column is the second "
        "release's time over the first's (below 1: faster). Not slower: within 5%.",
        head,
        md_table(headers, rows, "llrrrll"),
        "\n".join(f"- {line}" for line in run.details),
    ]
    return "\n\n".join(parts) + "\n<!-- /bench:releases -->\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--base", default=DEFAULT_BASE, help=f"the first release (default {DEFAULT_BASE})"
    )
    parser.add_argument(
        "--current", default=WORKTREE, help="the second release (default: the working tree)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, fewer repetitions; prints only"
    )
    parser.add_argument(
        "--only", default=None, help=f"sections, comma-separated: {', '.join(SECTIONS)}"
    )
    parser.add_argument(
        "--claude", action="store_true", help="also the `claude -p` sessions (real binary)"
    )
    parser.add_argument("--hook-calls", type=int, default=None, help="calls per way of the hook")
    parser.add_argument(
        "--reps", type=int, default=None, help="repetitions of first sync, render, tick"
    )
    parser.add_argument(
        "--out", default=None, help="where the markdown goes (default BENCHMARKS.md)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument(
        "--workdir", default=None, help="where corpora go (kept, and reused next time)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    sizes = replace(QUICK if args.quick else FULL)
    sizes.hook_calls = args.hook_calls or sizes.hook_calls
    sizes.reps = args.reps or sizes.reps
    chosen = (
        list(SECTIONS[:-1])
        if args.only is None
        else [x.strip() for x in args.only.split(",") if x.strip()]
    )
    if args.claude and "claude" not in chosen:
        chosen.append("claude")
    unknown = [c for c in chosen if c not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    shown: list[
        str
    ] = []  # where corpora and the report go change no figure: left out of the command shown
    given = iter(argv if argv is not None else sys.argv[1:])
    for arg in given:
        if arg in ("--workdir", "--out"):
            next(given, None)
        elif not arg.startswith(("--workdir=", "--out=", "--keep")):
            shown.append(arg)
    command = " ".join([".venv/bin/python", "scripts/bench_releases.py", *shown])
    # Bench's own options, for its corpus cache and temporary folder
    bench_args = argparse.Namespace(
        sizes=[sizes.big],
        quick=args.quick,
        workdir=args.workdir,
        keep=args.keep,
        reps=None,
        budget=None,
        in_process=False,
    )
    bench = Bench(bench_args)
    started, load, wall = datetime.now(UTC), os.getloadavg()[0], time.perf_counter()
    run = Run(args, bench, sizes)
    print(
        f"bench_releases: {run.a.describe()} against {run.b.describe()}; "
        f"sections {', '.join(chosen)}"
    )
    try:
        steps: dict[str, Callable[[Run], None]] = {
            "hook": section_hook,
            "search": section_search,
            "render": section_render,
            "sync": section_sync,
            "team": section_team,
            "tick": section_tick,
        }
        if "claude" in chosen:
            from memstore_devtools.bench.claude_session import section_claude

            steps["claude"] = section_claude
        for name in SECTIONS:
            if name in chosen:
                log(f"section {name}")
                steps[name](run)
    finally:
        run.close()
        bench.close()
    took = time.perf_counter() - wall
    headers, rows = table(run)
    print()
    print(text_table(headers, rows, "llrrrll"))
    print()
    print("\n".join(run.details))
    print(
        f"\nwall time {fmt_s(took)}; load average {load:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} now"
    )
    if not args.no_write and (args.out or not args.quick):
        out = Path(args.out) if args.out else REPO / "BENCHMARKS.md"
        write_block(out, report(run, started, load, took, command))
        print(f"wrote {out}")
    return 0

"""A year of sessions: the benchmark of the whole context (scripts/bench_season.py).

Deterministic, no model. For each seed a world is built (season_world: about 250 working days
of 1-4 sessions in five projects that start and end over the year, person-wide rules, project
facts, references the agent writes, memories superseded, forgotten or expired), then lived
through the real CLI and hook in a fresh root (season_sim: writes, reads, supersede, forget,
the nightly tick), then scored (season_score): per turn, which needed memories each channel had
put in front of the agent before the turn that needs them, and what it pushed that no turn
needed. memstore's channels are scored one by one and together, beside other policies computed
on the same stream: Claude Code's own MEMORY.md, recency alone, top-3 search on every prompt.

About 15% of the seeds are held out (the last ones): keep them out of any tuning; they are
reported apart. `--quick` (a smoke run) lives a month: the year's plan squeezed into 22 working
days, so every kind of event still happens, at a pace no person keeps.

    .venv/bin/python scripts/bench_season.py                  # 13 seeds, 2 held out, 2 workers
    .venv/bin/python scripts/bench_season.py --quick --seeds 2
    .venv/bin/python scripts/bench_season.py --out-md BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from memstore_devtools.bench.season_score import POLICIES, merge, metrics, score
from memstore_devtools.bench.season_world import World, build

COLUMNS = (  # (metric key, header, format)
    ("coverage", "coverage", "pct"), ("coverage_plain", "plain", "pct"),
    ("coverage_para", "para", "pct"), ("coverage_tool", "tool", "pct"),
    ("know_to_ask", "know-to-ask fail", "pct"), ("false_fire", "false fire", "pct"),
    ("precision", "push precision", "pct"), ("recall", "push recall", "pct"),
    ("kb_session", "KB/session", "num"), ("unneeded", "unneeded bytes", "pct"),
    ("stale", "stale/session", "num2"), ("dups", "dup/session", "num2"),
    ("repeats", "repeat/session", "num2"),
)
CHART = ("memstore: all channels", "Claude Code MEMORY.md (rows as written)", "recency alone")


def digest(world: World, stream: list[dict[str, Any]], base: Path) -> str:
    """The stream's fingerprint, with the work folder's path taken out."""
    text = json.dumps({"world": world.to_json(), "stream": stream}, sort_keys=True)
    return hashlib.sha256(text.replace(str(base), "<base>").encode()).hexdigest()[:16]


def run_seed(seed: int, quick: bool, workdir: str | None) -> dict[str, Any]:
    """One seed: build, live, score. Returns the counts and the run's figures."""
    from memstore_devtools.bench.season_sim import run

    world = build(seed, quick)
    base = Path(workdir or tempfile.mkdtemp(prefix="season-")) / f"seed-{seed}"
    try:
        stream, stats = run(world, base)
        counts = score(world, stream)
        kinds = Counter(t.kind for s in world.sessions for t in s.turns)
        return {"seed": seed, "counts": counts, "stats": stats,
                "digest": digest(world, stream, base),
                "world": {"sessions": len(world.sessions), "memories": len(world.memories),
                          "turns": dict(sorted(kinds.items())), "dropped_para": world.dropped_para,
                          "stepped_aside": sum(1 for m in world.memories.values()
                                               if m.aside_session is not None)}}
    finally:
        if workdir is None:
            shutil.rmtree(base.parent, ignore_errors=True)


def run_all(seeds: list[int], quick: bool, jobs: int, workdir: str | None
            ) -> list[dict[str, Any]]:
    if jobs <= 1 or len(seeds) == 1:
        return [run_seed(s, quick, workdir) for s in seeds]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_seed, s, quick, workdir) for s in seeds]
        return [f.result() for f in futures]


# ---------------------------------------------------------------------------- reporting


def _fmt(value: float | None, kind: str) -> str:
    if value is None:
        return "–"
    if kind == "pct":
        return f"{100 * value:.1f}%"
    return f"{value:.1f}" if kind == "num" else f"{value:.2f}"


def table(counts: dict[str, Any]) -> str:
    lines = ["| policy | " + " | ".join(h for _k, h, _f in COLUMNS) + " |",
             "|---|" + "---:|" * len(COLUMNS)]
    for label, channels in POLICIES:
        m = metrics(counts["policies"].get(label, {}), channels)
        lines.append(f"| {label} | " + " | ".join(_fmt(m[k], f) for k, _h, f in COLUMNS) + " |")
    return "\n".join(lines)


def _bar(value: float, top: float, width: int) -> str:
    cells = 0 if top <= 0 else value / top * width
    full = int(cells)
    return ("█" * full + ("▌" if cells - full >= 0.5 else "")).ljust(width)


def chart(counts: dict[str, Any]) -> str:
    """Coverage and KB per session month by month, as text bars (no matplotlib here)."""
    months = sorted(counts["months"].get(CHART[0], {}))
    per = {label: {mo: metrics(counts["months"][label][mo], ch) for mo in months}
           for label, ch in POLICIES if label in CHART}
    top = max((m["kb_session"] or 0) for series in per.values() for m in series.values())
    out = [f"coverage (bar: 0-100%) and KB per session (bar: 0-{top:.0f} KB), month by month;",
           "rows per month: " + "; ".join(f"{i + 1} = {c}" for i, c in enumerate(CHART)), ""]
    for mo in months:
        for i, label in enumerate(CHART):
            m = per[label][mo]
            cov, kb = m["coverage"] or 0.0, m["kb_session"] or 0.0
            out.append(f"{mo if i == 0 else '':7} {i + 1} |{_bar(cov, 1.0, 25)}| {100 * cov:5.1f}%"
                       f"  |{_bar(kb, top, 16)}| {kb:5.1f} KB")
    return "\n".join(out)


def _world_line(results: list[dict[str, Any]]) -> str:
    w = [r["world"] for r in results]
    turns: Counter[str] = Counter()
    for x in w:
        turns.update(x["turns"])
    stats: Counter[str] = Counter()
    for r in results:
        stats.update({k: v for k, v in r["stats"].items() if isinstance(v, int | float)})
    return (f"{len(results)} seed(s): {sum(x['sessions'] for x in w)} sessions, "
            f"{sum(x['memories'] for x in w)} memories written "
            f"({sum(x['stepped_aside'] for x in w)} stepped aside), turns "
            + ", ".join(f"{k} {v}" for k, v in sorted(turns.items()))
            + f"; {int(stats['reads'])} reads through the hook, {int(stats['ticks'])} ticks "
            f"({int(stats['ticks_at_work'])} saw someone at work), "
            f"{int(stats['command_failures'])} command failure(s), "
            f"{int(stats['hook_said_on_write'])} write(s) the hook found fault with")


def report(results: list[dict[str, Any]], held: set[int], quick: bool, seconds: float) -> str:
    tuning = [r for r in results if r["seed"] not in held]
    out = [f"## A year of sessions: the whole context ({'quick: a month' if quick else 'a year'})",
           "", "Run: `.venv/bin/python scripts/bench_season.py"
           + (" --quick" if quick else "") + f" --seeds {len(results)} --held-out {len(held)}`"
           f" ({seconds:.0f} s wall). Deterministic: seeded worlds, `--now` clocks, no model, "
           "MEMSTORE_SEMANTIC=off. Code: devtools/memstore_devtools/bench/season*.py.", "",
           "Per turn, a needed memory counts as in front when its file name was in a channel's "
           "text before the turn: MEMORY.md as Claude Code loads it (200 lines / 25 KB) and the "
           "SessionStart bundle at session start, prompt pointers and lenses up to this turn. "
           "Coverage: needed (turn, memory) pairs in front; plain, para, tool: the same by turn "
           "kind (para: a paraphrase sharing no content word with the memory). Know-to-ask fail: "
           "turns with none of their needed memories in front. False fire: silent turns "
           "(chatter) on which the policy pushed anything. Push precision: pushed memories a turn "
           "needed or accepted; push recall: needed pairs not in front at session start that a "
           "push then brought. Unneeded bytes: lines naming no memory any turn of the session "
           "needed. Stale: rows of memories stepped aside (superseded, forgotten, expired). Dup: "
           "a memory shown more than once in a session; repeat: pushed more than once.", "",
           f"### Tuning seeds ({', '.join(str(r['seed']) for r in tuning)})", "",
           _world_line(tuning), "", table(merge([r["counts"] for r in tuning]))]
    if held:
        held_r = [r for r in results if r["seed"] in held]
        out += ["", f"### Held-out seeds ({', '.join(str(s) for s in sorted(held))}): "
                "kept out of any tuning", "", _world_line(held_r), "",
                table(merge([r["counts"] for r in held_r]))]
    out += ["", "### Month by month (tuning seeds)", "", "```",
            chart(merge([r["counts"] for r in tuning])), "```", "",
            "Stream fingerprints (seed: digest): "
            + ", ".join(f"{r['seed']}: {r['digest']}" for r in results)]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=13, help="seeds 1..N (default 13)")
    ap.add_argument("--held-out", type=int, default=None,
                    help="the last K seeds are held out (default: about 15%%, at least 1 of 2+)")
    ap.add_argument("--quick", action="store_true", help="a month (the year squeezed in)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--workdir", help="keep each seed's root here (default: a temp folder)")
    ap.add_argument("--out-md", help="append the section to this markdown file (BENCHMARKS.md)")
    ap.add_argument("--json", help="write the raw counts and figures here")
    args = ap.parse_args(argv)
    seeds = list(range(1, args.seeds + 1))
    k = args.held_out if args.held_out is not None else (
        max(1, math.ceil(0.15 * len(seeds) - 0.5)) if len(seeds) > 1 else 0)
    held = set(seeds[len(seeds) - k:]) if k else set()
    started = time.monotonic()
    print(f"[season] {len(seeds)} seed(s), {len(held)} held out, {args.jobs} worker(s), "
          f"{'a month' if args.quick else 'a year'} each", file=sys.stderr, flush=True)
    results = run_all(seeds, args.quick, args.jobs, args.workdir)
    text = report(results, held, args.quick, time.monotonic() - started)
    print(text)
    if args.out_md:
        with open(args.out_md, "a", encoding="utf-8") as handle:
            handle.write("\n" + text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=dict), encoding="utf-8")
    return 0

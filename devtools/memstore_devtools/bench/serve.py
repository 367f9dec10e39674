"""Serve section: the web inspector's pages over HTTP on a large root, beside `memstore status`.

A real `memstore serve` (the console command, on a port the system picks) answers each page;
the time is the wall time of one HTTP GET from this process. The overview is timed cold (the
first request after the mirror changed: the bands are computed) and warm (they are kept per
minute and mirror version). `memstore status --json --no-sync`-like work through the CLI is the
yardstick a person already knows, measured in the same loop. Goal: a 20k-file root's overview
in well under a second (cold, under 1 s).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memstore_devtools.bench.common import (
    Bench,
    Goal,
    Outcome,
    fmt_n,
    fmt_s,
    fmt_x,
    log,
    md_table,
    median,
    text_table,
)

SIZES = (1000, 20000)
QUICK_SIZES = (1000,)
GOAL_OVERVIEW_S = 1.0
GOAL_SIZE = 20000
NOW = "2026-07-30T12:00:00Z"
READS = 400  # journal events spread over the corpus, so the timeline and charts have data


def _get(url: str) -> tuple[float, int, str]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read().decode("utf-8", "replace")
        status = response.status
    return time.perf_counter() - start, status, body


def _bump_mirror(db: Path) -> None:
    """Make the next overview cold: the inspector keys its cached bands on the mirror's mtime."""
    now = time.time()
    os.utime(db, (now, now))


def _size(b: Bench, n: int, reps: int) -> dict[str, Any]:
    root = b.corpus(n)
    b.cli(root, "--now", NOW, "sync", "--quiet")
    paths = sorted(p.relative_to(root).as_posix() for p in (root / "memory").glob("*_*.md"))
    step = max(len(paths) // READS, 1)
    for i, rel in enumerate(paths[::step][:READS]):  # one read each, over the last weeks
        b.cli(root, "--now", f"2026-07-{1 + i % 28:02d}T09:00:00Z", "touch", rel)
    proc = subprocess.Popen([*b.memstore_cmd, "--root", str(root), "--now", NOW, "serve",
                             "--port", "0"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=b.env)
    try:
        assert proc.stderr is not None
        url = None
        for _ in range(200):
            line = proc.stderr.readline()
            match = re.search(r"at (http://\S+/) ", line)
            if match:
                url = match.group(1)
                break
        if url is None:
            raise RuntimeError("memstore serve did not start")
        db = root / "runtime" / "memstore.db"
        memory = paths[0]
        pages = {
            "overview (cold)": "",
            "overview (warm)": "",
            "search": "search?q=" + quote("invoice export schedule") + "&mode=fts",
            "memory page": "memory/" + quote(memory),
            "timeline (30 days)": "timeline?days=30",
            "band page (archive)": "band/archive",
        }
        times: dict[str, list[float]] = {k: [] for k in [*pages, "memstore status (CLI)"]}
        sizes: dict[str, int] = {}
        for _ in range(reps):
            for label, path in pages.items():
                if label == "overview (cold)":
                    _bump_mirror(db)
                seconds, status, body = _get(url + path)
                if status != 200:
                    raise RuntimeError(f"{label}: HTTP {status}")
                times[label].append(seconds)
                sizes[label] = len(body)
            times["memstore status (CLI)"].append(
                b.cli(root, "--now", NOW, "status", "--json").seconds)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return {"n": n, "med": {k: median(v) for k, v in times.items()}, "bytes": sizes}


def section_serve(b: Bench) -> Outcome:
    sizes = QUICK_SIZES if b.quick else SIZES
    reps = 3 if b.quick else 5
    per_size = []
    for n in sizes:
        log(f"serve at {fmt_n(n)}: 6 pages and `memstore status` x {reps}")
        per_size.append(_size(b, n, reps))
    headers = ["T2 files", "request", "median", "page KB", "status CLI / this"]
    rows = []
    for data in per_size:
        med = data["med"]
        for label in med:
            rows.append([fmt_n(data["n"]), label, fmt_s(med[label]),
                         f"{data['bytes'][label] / 1024:.0f}" if label in data["bytes"] else "",
                         fmt_x(med["memstore status (CLI)"] / med[label])])
    goals = []
    big = next((d for d in per_size if d["n"] == GOAL_SIZE), None)
    if big is not None:
        cold = big["med"]["overview (cold)"]
        goals.append(Goal(f"overview of a {fmt_n(GOAL_SIZE)}-file root (cold) under "
                          f"{GOAL_OVERVIEW_S:g} s", fmt_s(cold), cold < GOAL_OVERVIEW_S))
    intro = (f"Each page fetched over HTTP from a running `memstore serve` (medians of {reps}, "
             "pages and the CLI alternating in one loop). Cold: the first overview after the "
             "mirror changed (bands computed); warm: the next one (bands kept per minute and "
             "mirror version). The last column is how many times longer `memstore status --json` "
             "(a whole process) takes than the page.")
    return Outcome(text=intro + "\n" + text_table(headers, rows, "lllrr"),
                   markdown=intro + "\n\n" + md_table(headers, rows, "lllrr"), goals=goals)

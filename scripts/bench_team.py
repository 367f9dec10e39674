"""A team's memory at scale (issue 33, item 6):
one person's root beside a big team, against the same root alone.

    .venv/bin/python scripts/bench_team.py            # team of 50, 20,000 team memories,
                                                      # 50 team lenses, 2,000 own
    .venv/bin/python scripts/bench_team.py --small    # the same shape, small (under a minute)
    .venv/bin/python scripts/bench_team.py --profile  # also cProfile the team root's full sync
                                                      # (top 20)

Everything happens in a temporary folder (--keep DIR keeps it there). Two agent roots are made from
the same synthetic corpus (memstore_devtools.corpus, seed 7): `alone` and `team`. The team
repository is a second corpus (seed 8, its T2 files without the hand-written anchors) written into
a git history by --people authors with git fast-import, plus --team-lenses lenses, and served from
a bare clone. `team` joins it with Store.teams.add; `alone` never does. Every comparison then times
the two roots in one loop, the order swapped each repetition, and prints the median and the ratio.
MEMSTORE_SEMANTIC=off: FTS only (no embedding pass), as every other section of BENCHMARKS.md but
`semantic`.

The promise of memstore.mirror.render._assign is asserted: the person's own Hot rows of MEMORY.md
are the same, in the same order, with and without the team; in New and Cold, where up to team_share
of the budget is kept for team rows, the person's own rows with the team are the first of their
rows alone.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import io
import json
import os
import pstats
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

os.environ["MEMSTORE_SEMANTIC"] = "off"  # before memstore reads it: FTS-only figures

from memstore import Store
from memstore.wiring.install_base import hook_command
from memstore_devtools.bench.common import (
    cpu_model,
    fmt_s,
    git_describe,
    md_table,
    median,
    nproc,
    run_child,
)
from memstore_devtools.corpus import ANCHOR_NAMES, CorpusSpec, generate_corpus
from memstore_devtools.teamrepo import build_team, du, push_new

NOW = dt.datetime(2026, 7, 30, 12, 0, tzinfo=dt.UTC)  # the corpus generator's `now`
NOW_ARG = "2026-07-30T12:00:00Z"
TEAM = "acme"
OWN_LENSES = 5  # the generator's fourth lens, git-push-guard, matches Bash
ROWS = ("hot", "new", "cold")
SETTINGS = "# the person's settings\n[memstore]\nhot_budget = 12000\n"


def log(message: str) -> None:
    print(f"[bench_team] {message}", file=sys.stderr, flush=True)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def ratio(team: float, alone: float) -> str:
    return f"{team / alone:.2f}x" if alone else "n/a"


# ------------------------------------------------------------------ the person's roots


def own_rows(root: Path) -> dict[str, list[str]]:
    """The person's own rows of MEMORY.md's Hot, New and Cold sections
    (team rows link into ../teams/)."""
    text = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    bands: dict[str, list[str]] = {}
    band = None
    for line in text.splitlines():
        heading = re.match(r"^#+\s*(\w+)", line)
        if heading:
            word = heading.group(1).lower()
            band = word if word in ROWS else None
            continue
        if band and line.startswith("- ") and "](../teams/" not in line:
            bands.setdefault(band, []).append(line)
    return bands


def team_rows(root: Path) -> dict[str, int]:
    text = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    counts: dict[str, int] = dict.fromkeys(ROWS, 0)
    band = None
    for line in text.splitlines():
        heading = re.match(r"^#+\s*(\w+)", line)
        if heading:
            band = heading.group(1).lower() if heading.group(1).lower() in ROWS else None
        elif band and line.startswith("- ") and "](../teams/" in line:
            counts[band] += 1
    return counts


def check_invariant(alone: dict[str, list[str]],
                    team: dict[str, list[str]]) -> dict[str, tuple[int, int, int]]:
    """render._assign's promise: Hot is the person's (their own rows exactly as alone); New and Cold
    keep at most team_share of their budget for team rows, so the own rows there are the first of
    the same rows alone. Returns band -> (own rows alone, own rows with the team, team rows), the
    latter filled in by the caller."""
    out = {}
    for band in ROWS:
        a, t = alone.get(band, []), team.get(band, [])
        if band == "hot":
            assert t == a, ("the person's own Hot rows changed when the team joined "
                            f"({len(a)} -> {len(t)})")
        else:
            assert t == a[: len(t)], (f"the person's own {band} rows are not the first of "
                                      "theirs alone")
        out[band] = (len(a), len(t), 0)
    return out


def sizes(store: Store) -> dict[str, int]:
    mem = store.root / "memory"
    index = (mem / "MEMORY.md").read_bytes()
    db = store.root / "runtime" / "memstore.db"
    return {"MEMORY.md bytes": len(index), "MEMORY.md lines": index.count(b"\n"),
            "bundle chars (store.context())": len(store.context()),
            "MEMORY-archive.md bytes": (mem / "MEMORY-archive.md").stat().st_size,
            "mirror db bytes (with -wal)": sum(p.stat().st_size
                                               for p in db.parent.glob("memstore.db*")
                                               if p.name in ("memstore.db", "memstore.db-wal"))}


def own_topic_queries(root: Path, count: int) -> list[tuple[str, str]]:
    """(query, the own memory it names): the topic words of `count` own topic files spread over the
    names (well-formed ones: a name with a -N suffix or a broken file is skipped)."""
    names = sorted(p.stem for p in (root / "memory").glob("*_*.md")
                   if not re.search(r"-\d+$", p.stem) and p.stem not in ANCHOR_NAMES)
    step = max(1, len(names) // count)
    picked = names[::step][:count]
    return [(name.split("_", 1)[1].replace("-", " "), f"memory/{name}.md") for name in picked]


def alternate(fns: Mapping[str, Callable[[], Any]], reps: int) -> dict[str, float]:
    """Median seconds of each fn, run in one loop, the order reversed every other repetition."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    keys = list(fns)
    for rep in range(reps):
        for key in keys if rep % 2 == 0 else reversed(keys):
            times[key].append(timed(fns[key])[0])
    return {k: median(v) for k, v in times.items()}


# ------------------------------------------------------------------ the hook


def hook_runs(cases: dict[str, tuple[Path, Callable[[int], dict[str, Any]], Callable[[str], bool]]],
              runs: int, work: Path) -> dict[str, tuple[float, int]]:
    """Each case's hook as a whole process (as `memstore install` registers it), cases alternating:
    (median seconds, answer bytes)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env.update(MEMSTORE_SEMANTIC="off", MEMSTORE_NOW=NOW_ARG)
    times: dict[str, list[float]] = {k: [] for k in cases}
    out_bytes: dict[str, int] = {}
    keys = list(cases)
    for rep in range(runs):
        for key in keys if rep % 2 == 0 else reversed(keys):
            root, payload, ok = cases[key]
            file = work / f"payload-{key}.json"
            file.write_text(json.dumps(payload(rep)))
            child = run_child(shlex.split(hook_command(root)), env, file)
            if child.returncode != 0 or not ok(child.stdout):
                raise RuntimeError(f"hook {key}: exit {child.returncode}, "
                                   f"out {child.stdout[:300]!r}, err {child.stderr[-300:]!r}")
            times[key].append(child.seconds)
            out_bytes[key] = len(child.stdout.encode())
    return {k: (median(v), out_bytes[k]) for k, v in times.items()}


def read_payload(root: Path, target: Path) -> Callable[[int], dict[str, Any]]:
    return lambda rep: {"session_id": "bench-team-read", "hook_event_name": "PostToolUse",
                        "cwd": str(root), "tool_name": "Read",
                        "tool_input": {"file_path": str(target)},
                        "tool_response": {"type": "text", "file": {"filePath": str(target)}}}


def bash_payload(root: Path, fresh: bool) -> Callable[[int], dict[str, Any]]:
    # fresh: a new session each call, so every matching lens fires (and prints); else one session,
    # where they fired already and the call pays only for the check
    return lambda rep: {"session_id": (f"bench-team-bash-{rep}" if fresh
                                       else "bench-team-bash-later"),
                        "hook_event_name": "PreToolUse", "cwd": str(root), "tool_name": "Bash",
                        "tool_input": {"command": "git push origin feature"}}


# ------------------------------------------------------------------ the run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true",
                        help="team 2,000, own 300, 10 people, 5 repetitions")
    parser.add_argument("--team", type=int, help="team memories (default 20,000)")
    parser.add_argument("--own", type=int, help="the person's own memories (default 2,000)")
    parser.add_argument("--people", type=int, help="authors of the team's history (default 50)")
    parser.add_argument("--team-lenses", type=int, default=50)
    parser.add_argument("--per-commit", type=int, default=20,
                        help="memories a merged pull request brings")
    parser.add_argument("--pull-new", type=int, default=100)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--reps", type=int,
                        help="repetitions of each in-process figure (default 5, --small 3)")
    parser.add_argument("--hook-runs", type=int,
                        help="hook processes per case (default 20, --small 6)")
    parser.add_argument("--profile", action="store_true", help="cProfile the team root's full sync")
    parser.add_argument("--keep", help="work in this folder and leave it there")
    args = parser.parse_args()
    args.team = args.team or (2000 if args.small else 20000)
    args.own = args.own or (300 if args.small else 2000)
    args.people = args.people or (10 if args.small else 50)
    args.reps = args.reps or (3 if args.small else 5)
    args.hook_runs = args.hook_runs or (6 if args.small else 20)

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="memstore-bench-team-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    load = os.getloadavg()[0]
    try:
        report = run(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    head = (f"Measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {nproc()} CPUs "
            f"({cpu_model()}), Python {sys.version.split()[0]}, memstore at {git_describe()}; "
            f"load average at start {load:.2f}; wall time {time.perf_counter() - started:.0f} s. "
            "Command: `.venv/bin/python scripts/bench_team.py"
            f"{' --small' if args.small else ''}`. MEMSTORE_SEMANTIC=off (FTS only).")
    print(head)
    print(report)


def run(args: argparse.Namespace, work: Path) -> str:
    out: list[str] = []
    log(f"the team repository: {args.team:,} memories by {args.people} people, "
        f"{args.team_lenses} lenses")
    team = build_team(work, args.team, args.pull_new, args.team_lenses, args.people,
                      args.per_commit)
    log(f"  {team['commits']} commits, bare clone {team['bare_bytes'] / 1e6:.1f} MB")

    log(f"the person's root: {args.own:,} own memories (twice: alone, team)")
    alone_root, team_root = work / "alone", work / "team"
    generate_corpus(alone_root, CorpusSpec(t2=args.own, seed=7, lenses=OWN_LENSES))
    # Both roots get the same memstore.toml (a setting at its default value), accepted as the
    # person's: joining writes one, and the hook pays for reading one, team or not.
    (alone_root / "memstore.toml").write_text(SETTINGS, encoding="utf-8")
    shutil.copytree(alone_root, team_root, symlinks=True)
    alone, mine = Store(alone_root, NOW), Store(team_root, NOW)
    first_alone = timed(lambda: (alone.sync(embed=False), alone.render()))[0]
    mine.sync(embed=False)
    mine.render()
    alone.trust(["memstore.toml"])
    mine.trust(["memstore.toml"])
    before = own_rows(team_root)

    # 2. joining: clone + sync + render, the parts timed by wrapping them (nothing is replaced)
    import memstore.team.clones as clones
    parts: dict[str, list[float]] = {"clone": [], "sync": [], "render": []}
    real_add, real_sync, real_render = clones.add, mine.sync, mine.render

    def wrap(key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def inner(*a: Any, **k: Any) -> Any:
            t, value = timed(lambda: fn(*a, **k))
            parts[key].append(t)
            return value
        return inner

    clones.add = wrap("clone", real_add)
    mine.sync = wrap("sync", real_sync)  # type: ignore[method-assign]
    mine.render = wrap("render", real_render)  # type: ignore[method-assign]
    try:
        add_s, _ = timed(lambda: mine.teams.add(str(team["bare"]), name=TEAM))
    finally:
        clones.add, mine.sync, mine.render = (  # type: ignore[method-assign]
            real_add, real_sync, real_render)
    clone_bytes = du(team_root / "teams" / TEAM)
    out.append("\n### Building and joining\n")
    out.append(md_table(["step", "time", "note"], [
        ["generate the team's memories (corpus generator)", fmt_s(team["generate"]),
         f"{team['memories']:,} + {args.pull_new} held back for the pull"],
        ["write the team's history (git fast-import)", fmt_s(team["history"]),
         f"{team['commits']:,} commits by {args.people} people, {args.per_commit} memories each"],
        ["`git clone --bare` (the remote)", fmt_s(team["clone_bare"]),
         f"{team['bare_bytes'] / 1e6:.1f} MB"],
        ["the person's root alone: first sync + render", fmt_s(first_alone),
         f"{args.own:,} own memories"],
        ["**`teams.add` (clone + sync + render)**", f"**{fmt_s(add_s)}**",
         f"clone on disk {clone_bytes / 1e6:.1f} MB (work tree + .git)"],
        ["  of which the clone (`git clone`, memstore.toml)", fmt_s(sum(parts["clone"])), ""],
        ["  of which the first sync (full walk, indexing)", fmt_s(sum(parts["sync"])), ""],
        ["  of which render (a full catch-up, then MEMORY.md)", fmt_s(sum(parts["render"])), ""],
    ], "llr"))

    if args.profile:
        alone.sync(embed=False)
        prof = cProfile.Profile()
        prof.enable()
        mine.sync(embed=False)
        prof.disable()
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(20)
        print(text.getvalue(), file=sys.stderr)

    # 3. sync, side by side
    log("sync: full and quick, alternating")
    full = alternate({"alone": lambda: alone.sync(embed=False),
                      "team": lambda: mine.sync(embed=False)}, args.reps)
    # A folder written in the last 2 s is not trusted by its mtime (sync.RACY_NS) and is listed
    # again by every quick sync: wait that out, and let one quick sync each record the folders.
    time.sleep(2.5)
    alone.sync(full=False, embed=False)
    mine.sync(full=False, embed=False)
    quick = alternate({"alone": lambda: alone.sync(full=False, embed=False),
                       "team": lambda: mine.sync(full=False, embed=False)}, args.reps * 2)
    render = alternate({"alone": alone.render, "team": mine.render}, args.reps)
    total = args.own + team["memories"]
    out.append(f"\n### A person's sync, {args.own:,} own memories alone and beside "
               f"{team['memories']:,} team memories (medians of {args.reps}; quick of "
               f"{args.reps * 2})\n")
    out.append(md_table(["operation (in process, nothing changed)", "alone", "with the team",
                         "team / alone"], [
        ["`store.sync()` (full walk)", fmt_s(full["alone"]), fmt_s(full["team"]),
         ratio(full["team"], full["alone"])],
        ["`store.sync(full=False)` (quick folder check)", fmt_s(quick["alone"]),
         fmt_s(quick["team"]), ratio(quick["team"], quick["alone"])],
        ["`store.render()` (full catch-up + MEMORY.md)", fmt_s(render["alone"]),
         fmt_s(render["team"]), ratio(render["team"], render["alone"])],
    ], "lrrr"))
    out.append(f"\nFiles: {total / args.own:.1f}x as many topic memories with the team ({total:,} "
               f"against {args.own:,}).")

    # 4. search
    log("search: latency and whether own memories come first")
    queries = own_topic_queries(alone_root, args.queries)
    lat: dict[str, list[float]] = {"alone": [], "team": [], "alone_none": [], "team_none": []}
    top_alone = top_same = own_first = own_in5 = 0
    for qi, (query, target) in enumerate(queries):
        ways = {"alone": lambda q=query: alone.search(q, 10),
                "team": lambda q=query: mine.search(q, 10),
                "alone_none": lambda q=query: alone.search(q, 10, catch_up="none"),
                "team_none": lambda q=query: mine.search(q, 10, catch_up="none")}
        for key, seconds in alternate(ways, args.reps).items():
            lat[key].append(seconds)
        hits_alone, hits_team = (alone.search(query, 10, catch_up="none"),
                                 mine.search(query, 10, catch_up="none"))
        top_alone += bool(hits_alone) and hits_alone[0].path == target
        top_same += (bool(hits_team) and bool(hits_alone)
                     and hits_team[0].path == hits_alone[0].path)
        own_first += bool(hits_team) and hits_team[0].team is None
        own_in5 += any(h.path == target for h in hits_team[:5])
        if qi == 0:
            log(f"  e.g. {query!r}: alone {[h.path for h in hits_alone[:3]]}, "
                f"team {[h.path for h in hits_team[:3]]}")
    n = len(queries)
    out.append(f"\n### Search, {n} own-topic queries (each an own memory's topic words; median "
               f"over queries of each query's median of {args.reps})\n")
    out.append(md_table(["search (limit 10)", "alone", "with the team", "team / alone"], [
        ["`store.search(q)` (quick catch-up first, as the CLI)", fmt_s(median(lat["alone"])),
         fmt_s(median(lat["team"])), ratio(median(lat["team"]), median(lat["alone"]))],
        ["`store.search(q, catch_up='none')` (the query alone)",
         fmt_s(median(lat["alone_none"])), fmt_s(median(lat["team_none"])),
         ratio(median(lat["team_none"]), median(lat["alone_none"]))],
        ["worst query, quick catch-up", fmt_s(max(lat["alone"])), fmt_s(max(lat["team"])),
         ratio(max(lat["team"]), max(lat["alone"]))],
    ], "lrrr"))
    out.append(f"\nRanking: alone, the named own memory is the top hit for {top_alone}/{n} "
               f"queries. With the team: the top hit is an own memory for {own_first}/{n}, the "
               f"same top hit as alone for {top_same}/{n}, and the named own memory is in the top "
               f"5 for {own_in5}/{n}.")

    # 6. sizes and the invariant (before any hook read reinforces anything)
    log("sizes and the invariant")
    alone.render()
    mine.render()
    after, alone_rows = own_rows(team_root), own_rows(alone_root)
    assert before == alone_rows, "the two roots differ before the team joined"
    kept = check_invariant(alone_rows, after)
    theirs = team_rows(team_root)
    kept = {b: (v[0], v[1], theirs[b]) for b, v in kept.items()}
    size_alone, size_team = sizes(alone), sizes(mine)
    out.append("\n### Sizes\n")
    out.append(md_table(["file", "alone", "with the team", "team / alone"],
                        [[k, f"{size_alone[k]:,}", f"{size_team[k]:,}",
                          ratio(size_team[k], size_alone[k])]
                         for k in size_alone], "lrrr"))
    out.append("\nThe person's own rows in MEMORY.md, alone and with the team (asserted: Hot "
               "identical, in order; New and Cold with the team the first rows of the same bands "
               "alone, in order):\n")
    out.append(md_table(["band", "own rows alone", "own rows with the team", "team rows",
                         "own identical"],
                        [[b, str(kept[b][0]), str(kept[b][1]), str(kept[b][2]),
                          "yes" if kept[b][0] == kept[b][1] else "a prefix"] for b in ROWS],
                        "lrrrl"))

    # extra: show of a team memory reads its history from git log
    team_file = sorted((team_root / "teams" / TEAM / "memory").glob("*_*.md"))[len(queries)]
    own_file = team_root / queries[0][1]
    show = alternate({"own": lambda: mine.show(own_file), "team": lambda: mine.show(team_file)},
                     args.reps)

    # 7. the hook
    log(f"the hook: {args.hook_runs} processes per case")
    plain_root = work / "alone-no-settings"  # the hook's cost of any memstore.toml, for the record
    shutil.copytree(alone_root, plain_root, symlinks=True)
    (plain_root / "memstore.toml").unlink()
    tfile = sorted((team_root / "teams" / TEAM / "memory").glob("*_*.md"))[len(queries) + 1]
    reads = hook_runs({
        "plain_own": (plain_root, read_payload(plain_root, plain_root / queries[1][1]),
                      lambda s: True),
        "alone_own": (alone_root, read_payload(alone_root, alone_root / queries[1][1]),
                      lambda s: True),
        "team_own": (team_root, read_payload(team_root, team_root / queries[1][1]), lambda s: True),
        "team_team": (team_root, read_payload(team_root, tfile), lambda s: True),
    }, args.hook_runs, work)
    fired = 1 + (args.team_lenses + 9) // 10

    def lens_out(count: int) -> Callable[[str], bool]:
        return lambda s: "git-push-guard" in s and s.count("[memstore lens:") == count

    bashes = hook_runs({
        "alone_fresh": (alone_root, bash_payload(alone_root, True), lens_out(1)),
        "team_fresh": (team_root, bash_payload(team_root, True), lens_out(fired)),
        "alone_later": (alone_root, bash_payload(alone_root, False), lambda s: True),
        "team_later": (team_root, bash_payload(team_root, False), lambda s: True),
    }, args.hook_runs + 1, work)  # the first "later" call fires the lenses; later ones only check
    out.append("\n### The hook, as `memstore install` registers it "
               "(`python -S memstore/hookrun.py`), a whole process per call "
               f"(median of {args.hook_runs})\n")
    out.append(md_table(["call", "alone", "with the team", "team / alone",
                         "answer bytes (alone / team)"], [
        ["PostToolUse Read of an own memory", fmt_s(reads["alone_own"][0]),
         fmt_s(reads["team_own"][0]), ratio(reads["team_own"][0], reads["alone_own"][0]), ""],
        ["PostToolUse Read of a team memory (against an own one, same root)", "",
         fmt_s(reads["team_team"][0]), ratio(reads["team_team"][0], reads["team_own"][0]), ""],
        [f"PreToolUse Bash, first in its session ({OWN_LENSES} own lenses; "
         f"+{args.team_lenses} team lenses, {fired - 1} of them fire)",
         fmt_s(bashes["alone_fresh"][0]), fmt_s(bashes["team_fresh"][0]),
         ratio(bashes["team_fresh"][0], bashes["alone_fresh"][0]),
         f"{bashes['alone_fresh'][1]:,} / {bashes['team_fresh'][1]:,}"],
        ["PreToolUse Bash, later in the session (lenses fired already: the check only)",
         fmt_s(bashes["alone_later"][0]), fmt_s(bashes["team_later"][0]),
         ratio(bashes["team_later"][0], bashes["alone_later"][0]),
         f"{bashes['alone_later'][1]:,} / {bashes['team_later'][1]:,}"],
    ], "lrrrr"))
    settings_cost = ratio(reads["alone_own"][0], reads["plain_own"][0])
    out.append(f"\nThe same Read of an own memory in the root alone without any memstore.toml: "
               f"{fmt_s(reads['plain_own'][0])} (the settings file costs {settings_cost}: tomllib "
               "and the check that it is as the person accepted it).")
    out.append(f"\n`store.show()` (median of {args.reps}): an own memory {fmt_s(show['own'])}, a "
               f"team memory {fmt_s(show['team'])} ({ratio(show['team'], show['own'])}; it reads "
               "who added it and its recent history from the clone's git log, "
               f"{team['commits']:,} commits).")

    # 5. a pull that brings new memories
    log(f"the pull: {args.pull_new} new memories")
    push_s = push_new(team["src"], team["bare"], team["held"], args.people)
    parts = {"clone": [], "sync": [], "render": []}
    real_pull = clones.pull
    clones.pull = wrap("clone", real_pull)
    mine.sync = wrap("sync", real_sync)  # type: ignore[method-assign]
    mine.render = wrap("render", real_render)  # type: ignore[method-assign]
    try:
        pull_s, pulled = timed(lambda: mine.teams.pull())
    finally:
        clones.pull, mine.sync, mine.render = (  # type: ignore[method-assign]
            real_pull, real_sync, real_render)
    assert pulled[0].state == "updated", pulled[0].to_json()
    nothing_s, nothing = timed(lambda: mine.teams.pull())
    assert nothing[0].state == "current", nothing[0].to_json()
    found = mine.search(team["held"][0][0][7:-3].split("_", 1)[1].replace("-", " "), 10,
                        catch_up="none")
    arrived = any(h.path == f"teams/{TEAM}/{team['held'][0][0]}" for h in found)
    out.append(f"\n### A pull that brings {args.pull_new} new memories "
               "(five merged pull requests)\n")
    out.append(md_table(["step", "time"], [
        ["the team's side: commit and push them (not memstore's)", fmt_s(push_s)],
        ["**`teams.pull()` (fetch + fast-forward, sync, render)**", f"**{fmt_s(pull_s)}**"],
        ["  of which fetch + fast-forward", fmt_s(sum(parts["clone"]))],
        ["  of which the sync", fmt_s(sum(parts["sync"]))],
        ["  of which render", fmt_s(sum(parts["render"]))],
        ["`teams.pull()` again, nothing new (fetch only)", fmt_s(nothing_s)],
    ], "lr"))
    out.append(f"\nA pulled memory is found by search right after: {'yes' if arrived else 'NO'}.")

    return "\n".join(out)


if __name__ == "__main__":
    main()

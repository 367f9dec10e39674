"""The figures bench_releases measures, each for two releases side by side: the hook's calls, search
against grep, render, a first sync, search beside a team, the nightly tick (memstore_devtools.bench
.claude_session has the `claude -p` sessions). A section adds its rows to the `Run`; every figure
alternates its ways in one loop (`rotate`), so a busy machine slows both releases alike.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstore_devtools.bench.common import (
    Bench,
    Child,
    fmt_n,
    fmt_rate,
    fmt_s,
    fmt_x,
    log,
    median,
    run_child,
)
from memstore_devtools.bench.search import QUERIES
from memstore_devtools.bench.sides import Side

NOW_ARG = "2026-07-30T12:00:00Z"  # the corpus generator's `now`
GOAL_HOOK = 1.10  # hook Read / `python -c pass`
GOAL_SYNC = 2400.0  # files/s of a first sync
GOAL_GREP = 1.0  # grep's time / ours
GOAL_TEAM = 1.5  # search beside a team / own alone
GOAL_CLAUDE = 1.3  # a one-Read session / the same with no memstore
TOLERANCE = 0.05  # "not slower than the base": within this share
TEAM_SETTINGS = "# the person's settings\n[memstore]\nhot_budget = 12000\n"
WRITE_NAME = "feedback_bench-write.md"
WRITE_TEXT = (
    "---\nname: feedback_bench-write\ntype: feedback\nsummary: what the agent wrote in this "
    "session\n---\n\n" + "Met Anna yesterday about the demo; she wants the numbers checked.\n" * 20
)


@dataclass
class Sizes:
    small: int  # the hook's first size
    big: int  # the hook's second size; sync, search, render, tick
    own: int  # the person's own memories beside the team
    team: int  # the team's memories
    hook_calls: int
    reps: int  # first syncs, renders, ticks
    search_reps: int  # per query and way
    team_queries: int


FULL = Sizes(1000, 20000, 2000, 20000, hook_calls=30, reps=3, search_reps=5, team_queries=20)
QUICK = Sizes(300, 2000, 300, 2000, hook_calls=8, reps=2, search_reps=2, team_queries=6)


@dataclass
class Row:
    """One line of the table: a figure of each release, their ratio, the goal and who meets it."""

    figure: str
    goal: str
    a: str
    b: str
    ratio: str  # the second release's time over the first's
    ok_a: bool | None
    ok_b: bool | None


class Run:
    """The two sides, the shared corpora and what each section measured."""

    def __init__(self, args: argparse.Namespace, bench: Bench, sizes: Sizes) -> None:
        self.args = args
        self.bench = bench
        self.sizes = sizes
        self.home = bench.workdir / "home"
        self.home.mkdir(exist_ok=True)
        bench.env["HOME"] = str(self.home)  # workers, hooks, CLIs and claude: never the real HOME
        # the hook and the CLI run with the corpus's clock, whichever release it is
        self.env = {**bench.env, "MEMSTORE_NOW": NOW_ARG}
        self.a = Side(bench, args.base, 0)
        self.b = Side(bench, args.current, 1)
        self.sides = (self.a, self.b)
        self.rows: list[Row] = []
        self.details: list[str] = []

    def row(self, *cells: Any) -> None:
        self.rows.append(Row(*cells))
        r = self.rows[-1]
        log(f"  {r.figure}: {r.a} | {r.b} | {r.ratio}")

    def row_not_slower(self, figure: str, ta: float, tb: float, base: float | None = None) -> None:
        """A row whose goal is the first release's own time; with `base`, each time over it too."""

        def cell(t: float) -> str:
            return fmt_s(t) if base is None else f"{fmt_s(t)} ({fmt_x(t / base)})"

        self.row(
            figure,
            f"not slower than {self.a.label}",
            cell(ta),
            cell(tb),
            fmt_x(tb / ta),
            None,
            not_slower(tb, ta),
        )

    def close(self) -> None:
        for side in self.sides:
            side.close()

    def big_root(self, side: Side) -> Path:
        return side.root(f"t2-{self.sizes.big}", self.bench.corpus(self.sizes.big))

    def settle(self, roots: list[Path]) -> None:
        """Wait out the 2 s in which a folder's mtime is not trusted (sync.RACY_NS), then sync each
        root again, so every quick sync after this lists no folder (as on a root left alone)."""
        time.sleep(2.5)
        for side in self.sides:
            for root in roots:
                if root.is_relative_to(self.bench.workdir / f"side-{side.index}"):
                    side.call("sync", root=str(root))


def rotate(ways: Mapping[str, Callable[[], float]], reps: int) -> dict[str, list[float]]:
    """Each way `reps` times in one loop, the order rotated by one every repetition."""
    names = list(ways)
    times: dict[str, list[float]] = {name: [] for name in names}
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(ways[name]())
    return times


def not_slower(b: float, a: float) -> bool:
    return b / a <= 1 + TOLERANCE


# ----------------------------------------------------------------------------- the hook


def _check(child: Child, what: str, ok: tuple[int, ...] = (0,)) -> float:
    if child.returncode not in ok:
        raise RuntimeError(f"{what} exited {child.returncode}: {child.stderr[-400:]}")
    return child.seconds


def process(
    argv: list[str], env: dict[str, str], stdin: Path | None = None, ok: tuple[int, ...] = (0,)
) -> Callable[[], float]:
    """A way that runs `argv` as a whole process: its wall time."""
    return lambda: _check(run_child(argv, env, stdin), argv[0], ok)


def in_worker(side: Side, op: str, **args: Any) -> Callable[[], float]:
    """A way that runs `op` in the side's worker: the time the worker measured."""
    return lambda: side.call(op, **args)[0]


def section_hook(run: Run) -> None:
    """Read, Write and SessionStart through each release's hook at two sizes; `python -c pass`."""
    s = run.sizes
    work = run.bench.workdir / "hook-payloads"
    work.mkdir(exist_ok=True)
    ways: dict[str, Callable[[], float]] = {}
    base_payload = work / "base.json"
    base_payload.write_text("{}")
    ways["base"] = process([run.bench.python, "-c", "pass"], run.env, base_payload)
    for side in run.sides:
        side.compile_bytecode()
        for n in (s.small, s.big):
            root = side.root(f"t2-{n}", run.bench.corpus(n))
            (root / "memory" / WRITE_NAME).write_text(WRITE_TEXT, encoding="utf-8")
            hook = side.hook_argv(root)
            names = sorted(p.name for p in (root / "memory").glob("*_*.md"))
            target = root / "memory" / names[len(names) // 2]
            read = work / f"read-{side.index}-{n}.json"
            read.write_text(
                json.dumps(
                    {
                        "session_id": "bench-read",
                        "hook_event_name": "PostToolUse",
                        "cwd": str(root),
                        "tool_name": "Read",
                        "tool_input": {"file_path": str(target)},
                        "tool_response": {"type": "text", "file": {"filePath": str(target)}},
                    }
                )
            )
            written = root / "memory" / WRITE_NAME
            write = work / f"write-{side.index}-{n}.json"
            write.write_text(
                json.dumps(
                    {
                        "session_id": "bench-write",
                        "hook_event_name": "PostToolUse",
                        "cwd": str(root),
                        "tool_name": "Write",
                        "tool_input": {"file_path": str(written), "content": WRITE_TEXT},
                        "tool_response": {
                            "type": "create",
                            "filePath": str(written),
                            "content": WRITE_TEXT,
                        },
                    }
                )
            )
            start = work / f"start-{side.index}-{n}.json"

            def session_start(
                hook: list[str] = hook, start: Path = start, root: Path = root
            ) -> float:
                # a new session each call: the whole bundle, every time
                start.write_text(
                    json.dumps(
                        {
                            "session_id": uuid.uuid4().hex,
                            "hook_event_name": "SessionStart",
                            "source": "startup",
                            "cwd": str(root),
                        }
                    )
                )
                child = run_child(hook, run.env, start)
                if not child.stdout.strip():
                    raise RuntimeError(f"SessionStart printed nothing: {child.stderr[-300:]}")
                return _check(child, "hook SessionStart")

            ways[f"read-{side.index}-{n}"] = process(hook, run.env, read)
            ways[f"write-{side.index}-{n}"] = process(hook, run.env, write)
            ways[f"start-{side.index}-{n}"] = session_start
    log(f"hook: {len(ways)} ways x {s.hook_calls} calls")
    for fn in ways.values():  # warm-up: page cache, bytecode, the first SessionStart's one-off work
        fn()
    times = rotate(ways, s.hook_calls)
    med = {k: median(v) for k, v in times.items()}
    base = med["base"]
    for n in (s.small, s.big):
        ra, rb = med[f"read-0-{n}"], med[f"read-1-{n}"]
        run.row(
            f"hook, PostToolUse Read, {fmt_n(n)} memories, against `python -c pass`",
            f"<= {GOAL_HOOK:.2f}x",
            f"{fmt_x(ra / base)} ({fmt_s(ra)})",
            f"{fmt_x(rb / base)} ({fmt_s(rb)})",
            fmt_x(rb / ra),
            ra / base <= GOAL_HOOK,
            rb / base <= GOAL_HOOK,
        )
    for key, label in (
        ("write", "PostToolUse Write of a memory"),
        ("start", "SessionStart (the bundle)"),
    ):
        for n in (s.small, s.big):
            run.row_not_slower(
                f"hook, {label}, {fmt_n(n)} memories",
                med[f"{key}-0-{n}"],
                med[f"{key}-1-{n}"],
                base,
            )
    run.details.append(
        f"Hook: `python -c pass` {fmt_s(base)}, median of {s.hook_calls} calls per way "
        f"({len(ways)} ways in one rotating loop, each a whole process, payload on stdin, "
        f"MEMSTORE_NOW fixed, bytecode compiled first as `install` does)."
    )


# ----------------------------------------------------------------------------- search against grep


def section_search(run: Run) -> None:
    """`memstore search --json` of each release against `grep -ril` over memory/, query by query."""
    roots = [run.big_root(side) for side in run.sides]
    run.settle(roots)
    memory = str(roots[0] / "memory")
    reps = run.sizes.search_reps
    per_query: dict[str, list[float]] = {"grep": [], "0": [], "1": []}
    for query, word in QUERIES:
        ways: dict[str, Callable[[], float]] = {
            "grep": process(["grep", "-ril", word, memory], run.env, ok=(0, 1)),
        }
        for side, root in zip(run.sides, roots, strict=True):
            argv = side.cli_argv(root, "search", query, "--json", "--limit", "10")
            env = {**run.env, "BENCH_MEMSTORE_CODE": str(side.code)}
            ways[str(side.index)] = process(argv, env)
        for fn in ways.values():
            fn()
        for key, values in rotate(ways, reps).items():
            per_query[key].append(median(values))
    grep, ta, tb = (median(per_query[k]) for k in ("grep", "0", "1"))
    run.row(
        f"`memstore search --json`, {fmt_n(run.sizes.big)} memories: `grep -ril`'s time / ours",
        f">= {GOAL_GREP:.2f}",
        f"{grep / ta:.2f} ({fmt_s(ta)})",
        f"{grep / tb:.2f} ({fmt_s(tb)})",
        fmt_x(tb / ta),
        grep / ta >= GOAL_GREP,
        grep / tb >= GOAL_GREP,
    )
    run.details.append(
        f"Search: `grep -ril WORD memory/` {fmt_s(grep)}; median over {len(QUERIES)} queries "
        f"of each query's median of {reps} (grep, and each release's "
        "`python -m memstore --root R search Q --json --limit 10`, rotating)."
    )


# ------------------------------------------------------------------------ first sync, render, tick


def _pair(run: Run, op: str, reps: int, roots: list[Path], **args: Any) -> tuple[float, float]:
    """Medians of `op` in each side's worker on its own root, alternating."""
    ways = {
        str(side.index): in_worker(side, op, root=str(root), **args)
        for side, root in zip(run.sides, roots, strict=True)
    }
    times = rotate(ways, reps)
    return median(times["0"]), median(times["1"])


def section_sync(run: Run) -> None:
    roots = [run.big_root(side) for side in run.sides]
    files = run.bench.file_counts.get(run.sizes.big) or sum(1 for _ in roots[0].rglob("*.md"))
    cpu: dict[int, list[tuple[float, float]]] = {0: [], 1: []}

    def first_sync(side: Side, root: Path) -> Callable[[], float]:
        def way() -> float:
            seconds, value = side.call("first_sync", root=str(root))
            cpu[side.index].append((value.get("cpu", 0.0), value.get("cpu_children", 0.0)))
            return float(seconds)

        return way

    times = rotate(
        {str(s.index): first_sync(s, r) for s, r in zip(run.sides, roots, strict=True)},
        run.sizes.reps,
    )
    ta, tb = median(times["0"]), median(times["1"])
    fa, fb = files / ta, files / tb
    run.row(
        f"first sync, {fmt_n(run.sizes.big)} memories ({files:,} files), in process",
        f">= {fmt_rate(GOAL_SYNC)} files/s",
        f"{fmt_rate(fa)} files/s ({fmt_s(ta)})",
        f"{fmt_rate(fb)} files/s ({fmt_s(tb)})",
        fmt_x(tb / ta),
        fa >= GOAL_SYNC,
        fb >= GOAL_SYNC,
    )
    said = []
    for side in run.sides:
        own, children = (median([c[i] for c in cpu[side.index]]) for i in (0, 1))
        free = max(own, (own + children) / 2)  # its wall time on two cores nobody else uses
        said.append(
            f"{side.label} {fmt_s(own)} in its process + {fmt_s(children)} in parsing processes, "
            f"so about {fmt_rate(files / free)} files/s on two free cores"
        )
    run.details.append(
        "First sync, CPU time (the machine's load takes cores from the wall-clock figure): "
        + "; ".join(said)
        + "."
    )


def section_render(run: Run) -> None:
    roots = [run.big_root(side) for side in run.sides]
    run.settle(roots)
    for side, root in zip(run.sides, roots, strict=True):
        side.call("store_render", root=str(root), now=NOW_ARG)  # warm-up
    ta, tb = _pair(run, "store_render", run.sizes.reps + 2, roots, now=NOW_ARG)
    run.row_not_slower(
        f"render (`Store.render()`, its full catch-up first), {fmt_n(run.sizes.big)} memories",
        ta,
        tb,
    )


def section_tick(run: Run) -> None:
    roots = [run.big_root(side) for side in run.sides]
    for side, root in zip(run.sides, roots, strict=True):
        # the first tick flushes and rolls: one-off work
        side.call("tick", root=str(root), now=NOW_ARG)
    ta, tb = _pair(run, "tick", run.sizes.reps, roots, now=NOW_ARG)
    run.row_not_slower(
        f"the nightly tick (`Store.tick()`, nothing new), {fmt_n(run.sizes.big)} memories",
        ta,
        tb,
    )


# ------------------------------------------------------------------------ a team beside the person


def own_topic_queries(root: Path, count: int) -> list[str]:
    """The topic words of `count` of the person's memories, spread over the names (well-formed)."""
    from memstore_devtools.corpus import ANCHOR_NAMES

    names = sorted(
        p.stem
        for p in (root / "memory").glob("*_*.md")
        if not re.search(r"-\d+$", p.stem) and p.stem not in ANCHOR_NAMES
    )
    step = max(1, len(names) // count)
    return [name.split("_", 1)[1].replace("-", " ") for name in names[::step][:count]]


def section_team(run: Run) -> None:
    """The person's own memories alone, and beside a joined team, in each release (Store.search)."""
    from memstore_devtools.teamrepo import build_team

    s = run.sizes
    folder = run.bench.workdir / "team"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    log(f"team: building a team repository of {s.team:,} memories")
    team = build_team(folder, s.team, 0, 50, 50 if s.team >= 20000 else 10, 20)
    source = run.bench.corpus(s.own, lenses=5)
    roots: dict[str, Path] = {}
    for side in run.sides:
        for key in ("alone", "team"):
            root = side.root(f"own-{s.own}-{key}", source, build=False)
            start = time.perf_counter()
            url = str(team["bare"]) if key == "team" else None
            side.call("team_prepare", root=str(root), settings=TEAM_SETTINGS, url=url, name="acme")
            log(f"  {side.label}: {key} root ready in {time.perf_counter() - start:.1f} s")
            roots[f"{key}-{side.index}"] = root
    run.settle(list(roots.values()))
    queries = own_topic_queries(source, s.team_queries)
    lat: dict[str, list[float]] = {k: [] for k in roots}
    for query in queries:
        ways = {}
        for key, root in roots.items():
            side = run.sides[int(key[-1])]
            ways[key] = in_worker(
                side, "store_search", root=str(root), query=query, limit=10, catch_up="quick"
            )
        for fn in ways.values():
            fn()
        for key, values in rotate(ways, s.search_reps).items():
            lat[key].append(median(values))
    med = {k: median(v) for k, v in lat.items()}
    ra, rb = med["team-0"] / med["alone-0"], med["team-1"] / med["alone-1"]
    run.row(
        f"search beside a team of {fmt_n(s.team)} against {fmt_n(s.own)} own alone "
        "(`Store.search`, quick catch-up)",
        f"<= {GOAL_TEAM:.2f}x",
        f"{fmt_x(ra)} ({fmt_s(med['team-0'])} / {fmt_s(med['alone-0'])})",
        f"{fmt_x(rb)} ({fmt_s(med['team-1'])} / {fmt_s(med['alone-1'])})",
        fmt_x(med["team-1"] / med["team-0"]),
        ra <= GOAL_TEAM,
        rb <= GOAL_TEAM,
    )
    cli: dict[str, list[float]] = {k: [] for k in roots}
    for query in queries[: max(1, len(queries) // 2)]:
        ways = {}
        for key, root in roots.items():
            side = run.sides[int(key[-1])]
            argv = side.cli_argv(root, "search", query, "--json", "--limit", "10")
            env = {**run.env, "BENCH_MEMSTORE_CODE": str(side.code)}
            ways[key] = process(argv, env)
        for key, values in rotate(ways, max(2, s.search_reps // 2)).items():
            cli[key].append(median(values))
    cm = {k: median(v) for k, v in cli.items()}
    ca, cb = cm["team-0"] / cm["alone-0"], cm["team-1"] / cm["alone-1"]
    run.row(
        "the same, through `memstore search --json` (whole processes; half the queries)",
        f"<= {GOAL_TEAM:.2f}x",
        f"{fmt_x(ca)} ({fmt_s(cm['team-0'])} / {fmt_s(cm['alone-0'])})",
        f"{fmt_x(cb)} ({fmt_s(cm['team-1'])} / {fmt_s(cm['alone-1'])})",
        fmt_x(cm["team-1"] / cm["team-0"]),
        ca <= GOAL_TEAM,
        cb <= GOAL_TEAM,
    )
    run.details.append(
        f"Team: {team['memories']:,} team memories in {team['commits']:,} commits, joined with "
        f"`Store.teams.add` by each release on its own copy; {len(queries)} own-topic queries, "
        f"median over queries of each query's median of {s.search_reps}, in each release's "
        "worker; the ratio column compares the searches beside the team."
    )

"""Render section: MEMORY.md from the mirror against parsing every file each run (the seed's way).

memstore renders from the SQLite mirror: one query over the T2 rows, a score per row,
the four band passes, three atomic writes (skipped when the bytes are unchanged). The
seed's way, reproduced in `seed_render`, parses every memory/<type>_*.md file with
python-frontmatter on every run, scores it from its frontmatter and writes the same
three files. Both use memstore's own `score`, `assign` and `compose_*`, so the
difference is the cost of reading and parsing every file.

With `--baseline-ref REF` the render of that commit's code is timed in the same loop:
in a worker process importing the baseline's checkout, on a copy of the corpus whose
mirror the baseline built, beside an identical worker on the current checkout (and the
CLI of each checkout, `python -m memstore render`). Goal: at 100k, >= 1.5x faster than REF.
"""

from __future__ import annotations

import cProfile
import datetime as dt
import pstats
from pathlib import Path
from typing import Any

from memstore_devtools.bench.baseline import TOLERANCE, not_slower
from memstore_devtools.bench.common import (
    BIG,
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
    timed,
)

GOAL_RENDER_SPEEDUP = 10.0
GOAL_RENDER_SIZE = 6000
GOAL_BASELINE_SPEEDUP = 1.5  # the current render against the baseline's (--baseline-ref), at BIG
OUTPUTS = ("MEMORY.md", "MEMORY-archive.md", "current-state.md")
FULL_SIZES = (6000, 100000)
QUICK_SIZES = (6000,)
NOW = dt.datetime(2026, 7, 30, 12, 0, tzinfo=dt.UTC)
NOW_ARG = "2026-07-30T12:00:00Z"


# ----------------------------------------------------------------------------- the seed's way


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return ""


def _seed_entry(path: Path, minute: dt.datetime, config: Any) -> tuple[Any, bool]:
    """One file into a render Entry, parsed with python-frontmatter. (entry, parsed ok)."""
    import frontmatter

    from memstore.core.policy import score
    from memstore.core.timeutil import parse_date, parse_when
    from memstore.mirror.render import Entry

    ok = True
    try:
        post = frontmatter.load(path, encoding="utf-8-sig")
        meta, body = post.metadata, post.content
    except Exception:  # broken YAML, a key named `content`, bad UTF-8: what can still be had
        ok = False
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
        try:
            meta, body = frontmatter.parse(text)  # no Post, so a `content` key does no harm
        except Exception:  # YAML that does not load: defaults, and the body after the fence
            parts = text.split("\n---", 1)
            meta, body = {}, parts[1].split("\n", 1)[-1] if len(parts) == 2 else text
    if not isinstance(meta, dict):
        meta, ok = {}, False
    count = _number(meta.get("access_count"))
    access_count = int(count) if count is not None and count >= 0 and count == int(count) else 0
    stab = _number(meta.get("stability"))
    stability = (min(stab, config.stability_cap) if stab is not None and stab > 0
                 else config.initial_stability)
    imp = _number(meta.get("importance"))
    importance = min(max(imp, 0.0), 10.0) if imp is not None else 0.0
    last = parse_when(meta.get("last_accessed"))
    if last is None:
        last = dt.datetime.fromtimestamp(path.stat().st_mtime_ns // 1_000_000_000, dt.UTC)
    summary = next(
        (" ".join(str(meta[k]).split()) for k in ("summary", "description")
         if meta.get(k) and str(meta[k]).strip()),
        _first_line(body),
    )
    pin = meta.get("pin")
    in_flight = meta.get("in_flight")
    entry = Entry(
        path=f"memory/{path.name}",
        name=path.name[:-3],
        filename=path.name,
        summary=summary,
        score=score(access_count, stability, last, importance, minute, config),
        created=parse_date(meta.get("created")),
        pin=pin is True or str(pin).strip().lower() in ("true", "yes", "on", "1"),
        superseded=str(meta.get("status") or "").strip().lower().startswith("superseded"),
        in_flight=in_flight is True or str(in_flight).strip().lower() in ("true", "yes", "on", "1"),
        state=str(meta["state"]) if meta.get("state") is not None else None,
        access_count=access_count,
        stability=stability,
        last_accessed=None,
        last_reinforced=None,
        importance=importance,
    )
    if hasattr(entry, "full_row"):  # the rendered row, which `assign` and `compose_*` take as given
        entry.full_row = entry.row = (f"- [{entry.name}]({entry.filename})"
                                      + (f": {summary}" if summary else ""))
    return entry, ok


def seed_render(root: Path, now: dt.datetime, config: Any, out: Path) -> tuple[Any, int]:
    """The seed's render: parse every T2 file, score, band, write three files to `out`.
    Returns (bands, files python-frontmatter could not parse)."""
    from memstore.core.kinds import MEMORY_TYPES
    from memstore.mirror.render import (
        assign,
        compose_archive,
        compose_index,
        compose_state,
        render_minute,
    )

    minute = render_minute(now)
    memory = root / "memory"
    entries, failed = [], 0
    for kind in MEMORY_TYPES:
        for path in memory.glob(f"{kind}_*.md"):
            entry, ok = _seed_entry(path, minute, config)
            entries.append(entry)
            failed += not ok
    entries.sort(key=lambda e: (-e.score, e.filename))
    bands = assign(entries, minute, config)
    out.mkdir(parents=True, exist_ok=True)
    (out / "MEMORY.md").write_text(compose_index(bands.hot, bands.new, bands.cold),
                                   encoding="utf-8")
    (out / "MEMORY-archive.md").write_text(compose_archive(bands), encoding="utf-8")
    (out / "current-state.md").write_text(compose_state(bands.entries), encoding="utf-8")
    return bands, failed


# ----------------------------------------------------------------------------- the section


def _profile_render(root: Path, config: Any) -> list[list[str]]:
    """cProfile of one in-process render from the mirror: the top functions by own time."""
    from memstore.mirror.render import render
    from memstore.mirror.sync import open_mirror

    conn = open_mirror(root, config)
    profiler = cProfile.Profile()
    try:
        profiler.enable()
        render(conn, root, NOW, config)
        profiler.disable()
    finally:
        conn.close()
    stats = pstats.Stats(profiler)
    rows = []
    items = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
    total = sum(v[2] for _, v in items) or 1.0
    for (filename, line, name), (_cc, nc, tt, ct, _callers) in items[:8]:
        where = (filename.rsplit("/memstore/", 1)[-1] if "/memstore/" in filename
                 else Path(filename).name)
        label = f"{where}:{line}({name})" if line else name
        rows.append([str(nc), f"{tt:.3f}", f"{tt / total:.0%}", f"{ct:.3f}", f"`{label}`"])
    return rows


def _render_size(b: Bench, n: int, reps: int) -> dict[str, Any]:
    from memstore.core.config import load_config
    from memstore.mirror.render import render
    from memstore.mirror.sync import open_mirror, sync

    root = b.corpus(n)
    sync(root)
    config = load_config(root)
    seed_out = root / "runtime" / "bench-seed"

    def mirror_render() -> Any:
        conn = open_mirror(root, config)
        try:
            return render(conn, root, NOW, load_config(root))
        finally:
            conn.close()

    def cli_render() -> float:
        return b.cli(root, "--now", NOW_ARG, "render").seconds

    # Warm-up, and the sanity check: do both ways put the same files in Hot?
    ours = mirror_render()
    cli_render()
    seed_bands, failed = seed_render(root, NOW, config, seed_out)
    same = [name for name in OUTPUTS
            if (root / "memory" / name).read_bytes() == (seed_out / name).read_bytes()]
    hot_ours = {e.filename for e in ours.bands.hot}
    hot_seed = {e.filename for e in seed_bands.hot}
    ways = {
        "mirror": lambda: timed(mirror_render)[0],
        "cli": cli_render,
        "seed": lambda: timed(lambda: seed_render(root, NOW, config, seed_out))[0],
    }
    versus: dict[str, Any] = {}
    bl = b.baseline
    if bl is not None:
        broot = bl.root(n)
        roots = {"current": root, "baseline": broot}
        for side in roots:
            ways[f"w_{side}"] = lambda side=side: bl.worker(side).call(
                "render", root=str(roots[side]), now=NOW_ARG)[0]
            ways[f"cli_{side}"] = lambda side=side: bl.cli(
                side, roots[side], "--now", NOW_ARG, "render").seconds
        hot = {side: set(bl.worker(side).call("render", root=str(r), now=NOW_ARG)[1]["hot"])
               for side, r in roots.items()}
        for side, r in roots.items():
            bl.cli(side, r, "--now", NOW_ARG, "render")
        versus = {
            "hot": (len(hot["current"]), len(hot["baseline"]),
                    len(hot["current"] & hot["baseline"])),
            "same": [name for name in OUTPUTS
                     if (root / "memory" / name).read_bytes()
                     == (broot / "memory" / name).read_bytes()],
        }
    times: dict[str, list[float]] = {k: [] for k in ways}
    for rep in range(reps):
        shift = rep % len(ways)
        names = list(ways)
        for name in names[shift:] + names[:shift]:
            times[name].append(ways[name]())
        log(f"  rep {rep + 1}: " + ", ".join(f"{k} {fmt_s(v[-1])}" for k, v in times.items()))
    return {
        "n": n,
        "root": root,
        "config": config,
        "t2": len(ours.bands.entries),
        "reps": reps,
        "med": {k: median(v) for k, v in times.items()},
        "hot": (len(hot_ours), len(hot_seed), len(hot_ours & hot_seed),
                sorted(hot_ours ^ hot_seed)),
        "same": same,
        "failed": failed,
        "versus": versus,
    }


def section_render(b: Bench) -> Outcome:
    """Render from the mirror, in process and through the CLI,
    against the seed's parse-every-file render."""
    sizes = b.args.render_sizes or list(QUICK_SIZES if b.quick else FULL_SIZES)
    results = []
    for n in sizes:
        reps = b.args.render_reps or (3 if b.quick or n >= BIG else 7)
        log(f"render at {fmt_n(n)}: {3 if b.baseline is None else 7} ways x {reps} repetitions")
        results.append(_render_size(b, n, reps))

    headers = ["T2 files", "(a) render from mirror, in process",
               "(b) CLI `render` (full sync, then render)", "(c) seed's way: parse every file",
               "(c) / (a)", "(c) / (b)", "goal"]
    rows, check_rows, goals = [], [], []
    for r in results:
        a, cli, seed = r["med"]["mirror"], r["med"]["cli"], r["med"]["seed"]
        goal_here = r["n"] == GOAL_RENDER_SIZE
        ok = seed / a >= GOAL_RENDER_SPEEDUP
        rows.append([fmt_n(r["n"]), fmt_s(a), fmt_s(cli), fmt_s(seed), fmt_x(seed / a),
                     fmt_x(seed / cli), ("PASS" if ok else "MISS") if goal_here else ""])
        ours, theirs, common, diff = r["hot"]
        check_rows.append([
            fmt_n(r["n"]), str(ours), str(theirs), str(common),
            "yes" if not diff else "no: " + ", ".join(f"`{d}`" for d in diff[:6]),
            "all three" if len(r["same"]) == 3 else (", ".join(r["same"]) or "none"),
            str(r["failed"]),
        ])
        if goal_here:
            goals.append(Goal(
                f"render at {fmt_n(r['n'])}: the seed's way (parse every file) / render from the "
                f"mirror >= {GOAL_RENDER_SPEEDUP:g}x",
                f"{fmt_x(seed / a)} ({fmt_s(seed)} / {fmt_s(a)})",
                ok,
            ))
            goals.append(Goal(
                f"render at {fmt_n(r['n'])}: Hot holds the same files both ways (sanity check)",
                f"{common} of {ours} in common"
                + ("" if not diff else f"; differ: {', '.join(diff[:4])}"),
                not diff,
            ))
    if not goals:
        goals.append(Goal(f"render at {fmt_n(GOAL_RENDER_SIZE)}: seed's way / mirror >= "
                          f"{GOAL_RENDER_SPEEDUP:g}x", "not measured", None,
                          f"this run's render sizes: {', '.join(fmt_n(n) for n in sizes)}"))
    bl = b.baseline
    vs_headers: list[str] = []
    vs_rows: list[list[str]] = []
    vs_check: list[str] = []
    if bl is not None:
        vs_headers = ["T2 files", "current: render from mirror (worker)",
                      f"{bl.ref}: same (worker)", f"{bl.ref} / current", "current: CLI `render`",
                      f"{bl.ref}: CLI `render`",
                      f"{bl.ref} / current (CLI)", "(a) for reference (bench process)", "goal"]
        for r in results:
            med = r["med"]
            cur, base = med["w_current"], med["w_baseline"]
            ccur, cbase = med["cli_current"], med["cli_baseline"]
            at_goal = r["n"] == BIG
            ok = base / cur >= GOAL_BASELINE_SPEEDUP if at_goal else not_slower(cur, base)
            vs_rows.append([fmt_n(r["n"]), fmt_s(cur), fmt_s(base), fmt_x(base / cur),
                            fmt_s(ccur), fmt_s(cbase), fmt_x(cbase / ccur), fmt_s(med["mirror"]),
                            "PASS" if ok else "MISS"])
            if at_goal:
                goals.append(Goal(
                    f"render at {fmt_n(BIG)} >= {GOAL_BASELINE_SPEEDUP:g}x faster than {bl.ref}",
                    f"{fmt_x(base / cur)} ({fmt_s(base)} / {fmt_s(cur)}, each in a worker process)",
                    ok,
                ))
            else:
                goals.append(Goal(
                    f"render at {fmt_n(r['n'])}: not slower than {bl.ref}",
                    f"{fmt_x(base / cur)} as fast ({fmt_s(base)} / {fmt_s(cur)}, each in a worker "
                    "process)",
                    ok,
                ))
            goals.append(Goal(
                f"`memstore render` (CLI) at {fmt_n(r['n'])}: not slower than {bl.ref}",
                f"{fmt_x(cbase / ccur)} as fast ({fmt_s(cbase)} / {fmt_s(ccur)})",
                not_slower(ccur, cbase),
            ))
            ours, theirs, common = r["versus"]["hot"]
            same = r["versus"]["same"]
            vs_check.append(
                f"at {fmt_n(r['n'])}: Hot {ours} rows (current) and {theirs} ({bl.ref}), "
                f"{common} in both; "
                + ("all three derived files byte-identical" if len(same) == 3
                   else f"byte-identical: {', '.join(same) or 'none'}")
            )
        if all(r["n"] != BIG for r in results):
            goals.append(Goal(f"render at {fmt_n(BIG)} >= {GOAL_BASELINE_SPEEDUP:g}x faster than "
                              f"{bl.ref}",
                              "not measured", None,
                              "this run's render sizes: "
                              f"{', '.join(fmt_n(r['n']) for r in results)}"))
    check_headers = ["T2 files", "Hot rows (a)", "Hot rows (c)", "in both", "same Hot set",
                     "byte-identical output files", "files `frontmatter.load` failed on"]
    largest = results[-1]
    log(f"render at {fmt_n(largest['n'])}: profiling one render from the mirror")
    prof_headers = ["calls", "tottime s", "share", "cumtime s", "function"]
    prof = _profile_render(largest["root"], largest["config"])
    reps_text = ", ".join(f"{fmt_n(r['n'])}: {r['reps']}" for r in results)
    md = "\n\n".join([
        "(a) opens the mirror, loads the config and calls `memstore.mirror.render.render(conn, "
        "root, now, config)`: one query over the T2 rows, a score each, the band passes, and the "
        "three derived files written atomically (each write skipped when its bytes are unchanged, "
        "as they are from the second run on). (b) is the whole `memstore --root R --now "
        "2026-07-30T12:00:00Z render` process: interpreter start-up, a **full sync** (it stats "
        "every file), then the same render. (c) is the seed's way, a function in this benchmark: "
        "every run it parses every `memory/<type>_*.md` with `frontmatter.load`, scores each file "
        "with `memstore.core.policy.score` (defaults for missing or invalid fields; "
        "`last_accessed` falls back to the file's mtime, as in memstore), sorts by (-score, "
        "filename), bands with `memstore.mirror.render.assign` and writes the three files (to "
        "`runtime/bench-seed/`). It reads no journal; the corpus has none, so both ways see the "
        f"same policy state. `now` is fixed at {NOW_ARG}. The three ways"
        f"{' and the four of the comparison below' if bl is not None else ''} "
        f"alternate in one loop; medians of {reps_text} repetitions, "
        f"after one warm-up run of each. Goal: (c) / (a) >= {GOAL_RENDER_SPEEDUP:g}x at "
        f"{fmt_n(GOAL_RENDER_SIZE)} T2 files.",
        md_table(headers, rows, "rrrrrrl"),
        *([
            f"Against {bl.describe() if bl else ''}, in the same loop. Each side renders its own "
            "copy of the corpus from a mirror its own code built (the schemas differ), in a worker "
            "process that imports only that checkout's memstore (two identical workers, one per "
            "checkout; the time is taken inside the worker around open mirror, load config, "
            "render, close, as (a)), and through that checkout's `python -m memstore --root R "
            f"--now {NOW_ARG} render` (full sync, then render). Goal from the issue: at "
            f"{fmt_n(BIG)}, render >= {GOAL_BASELINE_SPEEDUP:g}x faster than "
            f"{bl.ref if bl else ''}; elsewhere not slower (within {TOLERANCE:.0%}). Same work? "
            + "; ".join(vs_check) + ".",
            md_table(vs_headers, vs_rows, "rrrrrrrrl"),
        ] if bl is not None else []),
        "Sanity check (from the warm-up run): does the seed's way do comparable work? It should "
        "put the same files in Hot and, given the same policy state, write the same bytes. Files "
        "`frontmatter.load` fails on (YAML that does not load; a key named `content`, which "
        "collides with `Post.content`) fall back there to `frontmatter.parse`, else to defaults "
        "and the body after the fence, which is what memstore's parser makes of them too.",
        md_table(check_headers, check_rows, "rrrrlll"),
        f"Where (a) spends its time at {fmt_n(largest['n'])} (one render under cProfile, top 8 by "
        "own time):",
        md_table(prof_headers, prof, "rrrrl"),
    ])
    text = "\n\n".join([
        text_table(headers, rows, "rrrrrrl"),
        *([text_table(vs_headers, vs_rows, "rrrrrrrrl"), "; ".join(vs_check)]
          if bl is not None else []),
        text_table(check_headers, check_rows, "rrrrlll"),
        f"profile of (a) at {fmt_n(largest['n'])}:\n" + text_table(prof_headers, prof, "rrrrl"),
    ])
    return Outcome(text, md, goals)

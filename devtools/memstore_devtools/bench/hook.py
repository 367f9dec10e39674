"""Hook section: the Claude Code hook's wall time per call against a bare interpreter start.

The hook is timed exactly as `memstore install` registers it (`install_base.hook_command`:
`<python> -S <repo>/memstore/hookrun.py --root ROOT`), as a whole process with its
payload on stdin, alternating with `<python> -c pass` (the baseline) in one loop.
Two payloads: a PostToolUse Read of a T2 memory (reinforcement: a journal line and one
SQLite transaction) and a PreToolUse Bash that a lens matches (the lens path: the
lenses read from the mirror, the fired-once record written, the lens text printed).

With `--baseline-ref REF` the baseline's hook joins the same loop, registered the way that
commit registers it (its own `install_base.hook_command`: `python -S <its checkout>/memstore/
hookrun.py --root ROOT`), on its own copy of the corpus with a mirror its own code built.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from memstore_devtools.bench.baseline import TOLERANCE, not_slower
from memstore_devtools.bench.common import (
    REPO,
    Bench,
    Child,
    Goal,
    Outcome,
    fmt_n,
    fmt_s,
    fmt_x,
    log,
    md_table,
    median,
    run_child,
    text_table,
)

GOAL_HOOK_RATIO = 1.3  # hook / bare `python -c pass`
GOAL_SIZE_GROWTH = 1.10  # hook at the large size / hook at the small size
FULL_SIZES = (1000, 50000)
QUICK_SIZES = (1000, 5000)
NOW_ARG = "2026-07-30T12:00:00Z"
LENSES = 5  # the generator's fourth lens, git-push-guard, matches Bash (the default spec has 2)
# What a hook call imports (python -S -X importtime memstore/hookrun.py: a Read, a lens's Bash).


def hook_modules() -> list[Path]:
    """The modules on the hook's path: the package's own, core/ and hook/ (standard library)."""
    package = REPO / "memstore"
    return sorted([package / "__init__.py", package / "hookrun.py",
                   *package.glob("core/*.py"), *package.glob("hook/**/*.py")])

# (key, label, in the goal's comparison)
WAYS: tuple[tuple[str, str], ...] = (
    ("base", "`python -c pass` (baseline)"),
    ("read", "hook, PostToolUse Read of a T2 memory (reinforcement)"),
    ("bash", "hook, PreToolUse Bash with a matching lens"),
    ("base_s", "`python -S -c pass` (information)"),
    ("console", "`memstore --root R hook`, PostToolUse Read (console script; information)"),
    ("codex", "hook --client codex, PostToolUse of a shell `cat` of a T2 memory (reinforcement)"),
    ("gemini", "hook --client gemini, AfterTool read_file of a T2 memory (reinforcement, lenses)"),
)
GOAL_CLIENT_RATIO = 1.2  # another client's read, against Claude Code's Read, through the same hook


def compile_bytecode(b: Bench) -> str:
    """Compile memstore's bytecode as `memstore install` does, then say whether every module on
    the hook's path has bytecode matching its source (else each call compiles it afresh)."""
    subprocess.run([b.python, "-m", "compileall", "-q", "memstore"], cwd=REPO, check=True,
                   env=b.env)
    stale = []
    modules = hook_modules()
    for source in modules:
        name = source.relative_to(REPO).as_posix()
        cached = Path(importlib.util.cache_from_source(str(source)))
        info = source.stat()
        try:
            header = cached.read_bytes()[:16]
        except OSError:
            stale.append(name)
            continue
        mtime, size = (int.from_bytes(header[8:12], "little"),
                       int.from_bytes(header[12:16], "little"))
        if mtime != int(info.st_mtime) & 0xFFFFFFFF or size != info.st_size & 0xFFFFFFFF:
            stale.append(name)
    dont = os.environ.get("PYTHONDONTWRITEBYTECODE")
    text = (
        "Bytecode compiled first with `python -m compileall -q memstore`, as `memstore install` "
        "does (this environment has PYTHONDONTWRITEBYTECODE="
        + (f"set ({dont}), so without that step every call would compile the hook modules afresh"
           if dont else "unset")
        + "); "
    )
    text += (
        f"all {len(modules)} modules on the hook's path then had current bytecode."
        if not stale
        else f"**stale bytecode after compiling: {', '.join(stale)}** (edited during the run?)."
    )
    return text


def _prepare(b: Bench, n: int) -> tuple[Path, Path]:
    """A corpus of its own (more lenses, and a journal the hook appends to), with a fresh
    runtime/ and a mirror built by `memstore sync`. Returns (root, the T2 file read)."""
    root = b.corpus(n, lenses=LENSES)
    shutil.rmtree(root / "runtime", ignore_errors=True)  # forget the journal of earlier runs
    log(f"hook at {fmt_n(n)}: building the mirror with `memstore sync`")
    b.cli(root, "sync")
    names = sorted(p.name for p in (root / "memory").glob("*_*.md"))
    return root, root / "memory" / names[len(names) // 2]


def _hook_size(b: Bench, n: int, reps: int, work: Path) -> dict[str, Any]:
    from memstore.wiring.install_base import hook_command

    root, target = _prepare(b, n)
    env = dict(b.env, MEMSTORE_NOW=NOW_ARG)
    hook = shlex.split(hook_command(root))
    read_payload = work / f"read-{n}.json"
    read_payload.write_text(json.dumps({
        "session_id": "bench-hook-read", "hook_event_name": "PostToolUse", "cwd": str(root),
        "tool_name": "Read", "tool_input": {"file_path": str(target)},
        "tool_response": {"type": "text", "file": {"filePath": str(target)}},
    }))
    bash_payload = work / f"bash-{n}.json"
    calls = {"bash": 0}

    def bash() -> Child:
        # A new session each call, so the lens fires (and prints) every time: its whole path.
        calls["bash"] += 1
        bash_payload.write_text(json.dumps({
            "session_id": f"bench-hook-bash-{calls['bash']}", "hook_event_name": "PreToolUse",
            "cwd": str(root), "tool_name": "Bash",
            "tool_input": {"command": "git push origin main"},
        }))
        child = run_child(hook, env, bash_payload)
        if child.returncode != 0 or "git-push-guard" not in child.stdout:
            raise RuntimeError(f"hook (Bash) exited {child.returncode} without the lens: "
                               f"{child.stdout[:200]!r}")
        return child

    def proc(argv: list[str], payload: Path) -> Child:
        child = run_child(argv, env, payload)
        if child.returncode != 0:
            raise RuntimeError(f"{argv} exited {child.returncode}: {child.stderr[-300:]}")
        return child

    codex_payload = work / f"codex-{n}.json"
    codex_payload.write_text(json.dumps({
        "session_id": "bench-hook-codex", "hook_event_name": "PostToolUse", "cwd": str(root),
        "tool_name": "Bash", "tool_input": {"command": f"cat {shlex.quote(str(target))}"},
        "tool_response": "x",
    }))
    gemini_payload = work / f"gemini-{n}.json"
    gemini_payload.write_text(json.dumps({
        "session_id": "bench-hook-gemini", "hook_event_name": "AfterTool", "cwd": str(root),
        "tool_name": "read_file", "tool_input": {"file_path": str(target)},
        "tool_response": {"llmContent": "x"},
    }))
    ways = {
        "codex": lambda: proc([*hook, "--client", "codex"], codex_payload),
        "gemini": lambda: proc([*hook, "--client", "gemini"], gemini_payload),
        "base": lambda: proc([b.python, "-c", "pass"], read_payload),
        "read": lambda: proc(hook, read_payload),
        "bash": bash,
        "base_s": lambda: proc([b.python, "-S", "-c", "pass"], read_payload),
        "console": lambda: proc([*b.memstore_cmd, "--root", str(root), "hook"], read_payload),
    }
    bl = b.baseline
    broot = None
    if bl is not None:
        bl.compile_bytecode()
        broot = bl.root(n, lenses=LENSES)
        shutil.rmtree(broot / "runtime", ignore_errors=True)  # forget the journal of earlier runs
        log(f"hook at {fmt_n(n)}: building the baseline's mirror with its `memstore sync`")
        bl.cli("baseline", broot, "sync")
        bhook = shlex.split(bl.worker("baseline").call("hook_command", root=str(broot))[1])
        if not bhook[2].startswith(str(bl.code)):
            raise RuntimeError("the baseline's hook command does not run its own checkout: "
                               f"{bhook}")
        btarget = broot / "memory" / target.name
        bread_payload = work / f"read-{n}-baseline.json"
        bread_payload.write_text(json.dumps({
            "session_id": "bench-hook-read", "hook_event_name": "PostToolUse", "cwd": str(broot),
            "tool_name": "Read", "tool_input": {"file_path": str(btarget)},
            "tool_response": {"type": "text", "file": {"filePath": str(btarget)}},
        }))
        bbash_payload = work / f"bash-{n}-baseline.json"

        def bbash() -> Child:
            calls["bbash"] = calls.get("bbash", 0) + 1
            bbash_payload.write_text(json.dumps({
                "session_id": f"bench-hook-bash-{calls['bbash']}", "hook_event_name": "PreToolUse",
                "cwd": str(broot), "tool_name": "Bash",
                "tool_input": {"command": "git push origin main"},
            }))
            child = run_child(bhook, env, bbash_payload)
            if child.returncode != 0 or "git-push-guard" not in child.stdout:
                raise RuntimeError(f"baseline hook (Bash) exited {child.returncode} without the "
                                   f"lens: {child.stdout[:200]!r}")
            return child

        ways["read_ref"] = lambda: proc(bhook, bread_payload)
        ways["bash_ref"] = bbash
    journal = root / "runtime" / "journal"
    for fn in ways.values():  # warm-up
        fn()
    times: dict[str, list[float]] = {k: [] for k in ways}
    cpu: dict[str, list[float]] = {k: [] for k in ways}
    names = list(ways)
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            child = ways[name]()
            times[name].append(child.seconds)
            cpu[name].append(child.cpu_s)
    lines = sum(len(p.read_text().splitlines()) for p in journal.glob("*.jsonl"))
    errors = root / "runtime" / "state" / "hook-errors.log"
    err_text = errors.read_text().strip() if errors.exists() else ""
    ref_check = None
    if broot is not None:
        ref_lines = sum(len(p.read_text().splitlines())
                        for p in (broot / "runtime" / "journal").glob("*.jsonl"))
        ref_errors = broot / "runtime" / "state" / "hook-errors.log"
        ref_check = (ref_lines, reps + 1,
                     ref_errors.read_text().strip() if ref_errors.exists() else "")
    return {
        "n": n,
        "reps": reps,
        "med": {k: median(v) for k, v in times.items()},
        "p90": {k: sorted(v)[min(len(v) - 1, len(v) * 9 // 10)] for k, v in times.items()},
        "cpu": {k: median(v) for k, v in cpu.items()},
        "journal_lines": lines,
        # Read through hookrun.py and the console script, Codex, Gemini
        "expected_lines": 4 * (reps + 1),
        "errors": err_text,
        "ref_check": ref_check,
        "target": target.name,
        "command": shlex.join(hook).replace(str(root), "ROOT").replace(str(REPO), "<repo>"),
    }


def section_hook(b: Bench) -> Outcome:
    """The hook's wall time per call against `python -c pass`, alternating, at two corpus sizes."""
    sizes = b.args.hook_sizes or list(QUICK_SIZES if b.quick else FULL_SIZES)
    reps = b.args.hook_reps or (20 if b.quick else 100)
    bytecode = compile_bytecode(b)
    work = b.workdir / "hook-payloads"
    work.mkdir(parents=True, exist_ok=True)
    results = []
    for n in sizes:
        log(f"hook at {fmt_n(n)}: {len(WAYS)} ways x {reps} repetitions")
        results.append(_hook_size(b, n, reps, work))

    headers = ["T2 files", "way", "median", "p90", "x baseline", "goal", "CPU (user+sys)",
               "CPU x baseline"]
    rows = []
    for r in results:
        med, base = r["med"], r["med"]["base"]
        for key, label in WAYS:
            ok = med[key] / base <= GOAL_HOOK_RATIO if key in ("read", "bash") else None
            cpu, cpu_base = r["cpu"][key], r["cpu"]["base"]
            rows.append([fmt_n(r["n"]), label, fmt_s(med[key]), fmt_s(r["p90"][key]),
                         fmt_x(med[key] / base), "" if ok is None else ("PASS" if ok else "MISS"),
                         fmt_s(cpu),
                         fmt_x(cpu / cpu_base) if cpu_base else ""])
    goals = []
    for r in results:
        for key in ("read", "bash"):
            ratio = r["med"][key] / r["med"]["base"]
            goals.append(Goal(
                f"hook at {fmt_n(r['n'])}, {dict(WAYS)[key].split(', ', 1)[1]}: "
                f"<= {GOAL_HOOK_RATIO:g}x `python -c pass`",
                f"{fmt_x(ratio)} ({fmt_s(r['med'][key])} / {fmt_s(r['med']['base'])})",
                ratio <= GOAL_HOOK_RATIO,
            ))
    for r in results:
        for key in ("codex", "gemini"):
            ratio = r["med"][key] / r["med"]["read"]
            goals.append(Goal(
                f"hook at {fmt_n(r['n'])}, a {key} read: <= {GOAL_CLIENT_RATIO:g}x "
                "Claude Code's Read",
                f"{fmt_x(ratio)} ({fmt_s(r['med'][key])} / {fmt_s(r['med']['read'])})",
                ratio <= GOAL_CLIENT_RATIO,
            ))
    growth_rows = []
    if len(results) >= 2:
        small, large = results[0], results[-1]
        for key in ("read", "bash"):
            # Each size's hook time over its own baseline, so drift between the two loops cancels.
            rel = ((large["med"][key] / large["med"]["base"])
                   / (small["med"][key] / small["med"]["base"]))
            raw = large["med"][key] / small["med"][key]
            label = dict(WAYS)[key].split(", ", 1)[1]
            growth_rows.append([label, fmt_x(raw), fmt_x(rel),
                                "PASS" if rel <= GOAL_SIZE_GROWTH else "MISS"])
            goals.append(Goal(
                f"hook, {label}: at {fmt_n(large['n'])} within {GOAL_SIZE_GROWTH - 1:.0%} of "
                f"{fmt_n(small['n'])}",
                f"{fmt_x(rel)} (each over its own baseline; raw medians {fmt_x(raw)})",
                rel <= GOAL_SIZE_GROWTH,
            ))
    bl = b.baseline
    vs_headers: list[str] = []
    vs_rows: list[list[str]] = []
    if bl is not None:
        vs_headers = ["T2 files", "payload", "current", bl.ref, f"current / {bl.ref}",
                      "p90 current", f"p90 {bl.ref}", "CPU current", f"CPU {bl.ref}", "not slower"]
        for r in results:
            for key in ("read", "bash"):
                med, p90, cpu = r["med"], r["p90"], r["cpu"]
                ok = not_slower(med[key], med[f"{key}_ref"])
                label = dict(WAYS)[key].split(", ", 1)[1]
                vs_rows.append([fmt_n(r["n"]), label, fmt_s(med[key]), fmt_s(med[f"{key}_ref"]),
                                fmt_x(med[key] / med[f"{key}_ref"]), fmt_s(p90[key]),
                                fmt_s(p90[f"{key}_ref"]), fmt_s(cpu[key]), fmt_s(cpu[f"{key}_ref"]),
                                "PASS" if ok else "MISS"])
                goals.append(Goal(
                    f"hook at {fmt_n(r['n'])}, {label}: not slower than {bl.ref}",
                    f"{fmt_x(med[key] / med[f'{key}_ref'])} of its time ({fmt_s(med[key])} / "
                    f"{fmt_s(med[f'{key}_ref'])})",
                    ok,
                ))
    checks = []
    for r in results:
        if r["ref_check"] is not None:
            lines, expected, errs = r["ref_check"]
            checks.append(
                f"{bl.ref if bl else ''} at {fmt_n(r['n'])}: {lines} journal lines appended "
                f"({'as expected' if lines == expected else 'expected ' + str(expected)}), "
                + ("no hook errors logged" if not errs
                   else f"**hook errors logged**: `{errs[-200:]}`")
            )
        ok = r["journal_lines"] == r["expected_lines"]
        checks.append(
            f"at {fmt_n(r['n'])}: {r['journal_lines']} journal lines appended "
            f"({'as expected' if ok else 'expected ' + str(r['expected_lines'])}), "
            + ("no hook errors logged" if not r["errors"]
               else f"**hook errors logged**: `{r['errors'][-200:]}`")
        )
    growth_headers = ["payload",
                      f"{fmt_n(results[-1]['n'])} / {fmt_n(results[0]['n'])} (raw medians)",
                      "same, each over its baseline", "goal (<= 1.10x)"]
    md_parts = [
        f"Command timed, as `memstore install` registers it: `{results[0]['command']}`. Each call "
        "is a whole process (fork, exec, interpreter start-up, the hook's work, exit) with its "
        "payload on stdin from a file; the baseline `python -c pass` is the same interpreter given "
        "the same stdin. All five ways alternate in one loop, the order rotated each round; "
        f"medians and 90th percentiles of {reps} calls each, after one warm-up call. The Read "
        f"payload names `memory/{results[0]['target']}`; every call appends one journal line and "
        "runs one SQLite transaction (with `MEMSTORE_NOW` fixed at " + NOW_ARG + " only the first "
        "passes the spacing gate; the others move `last_accessed`, the same work). The Bash "
        "payload carries a new session id each call, so the `git-push-guard` lens fires and is "
        f"printed every time. Each size has a corpus of its own (seed 7, {LENSES} lenses), its "
        "mirror built by `memstore sync` first. `python -S -c pass` and the console-script form "
        "`memstore --root R hook` are for information. `CPU` is the child's own user + system time "
        "(its rusage): what the wall time holds beyond it is waiting: for a core on a busy "
        f"machine, or for the disk (fsync). Goals, on wall time: hook <= {GOAL_HOOK_RATIO:g}x the "
        f"baseline; the hook at {fmt_n(results[-1]['n'])} files within 10% of "
        f"{fmt_n(results[0]['n'])}.",
        bytecode,
        md_table(headers, rows, "rlrrrlrr"),
    ]
    if growth_rows:
        md_parts += [
            "Growth with the corpus (the second column compares each size's ratio to its own "
            "baseline, which cancels drift between the two sizes' loops; the goal is judged on "
            "it):",
            md_table(growth_headers, growth_rows, "lrrl"),
        ]
    if bl is not None:
        md_parts += [
            f"Against {bl.describe()}, in the same loop (so {len(WAYS) + 2} ways alternate): its "
            "hook as it registers it (`python -S <its checkout>/memstore/hookrun.py --root ROOT`, "
            "bytecode compiled the same way), same payloads, on its own copy of the corpus whose "
            f"mirror its own `memstore sync` built. Not slower: within {TOLERANCE:.0%}.",
            md_table(vs_headers, vs_rows, "rlrrrrrrrl"),
        ]
    md_parts.append("Checks: " + "; ".join(checks) + ".")
    text = "\n\n".join(
        [bytecode.replace("`", "").replace("**", ""), text_table(headers, rows, "rlrrrlrr")]
        + ([text_table(growth_headers, growth_rows, "lrrl")] if growth_rows else [])
        + ([text_table(vs_headers, vs_rows, "rlrrrrrrrl")] if bl is not None else [])
        + ["checks: " + "; ".join(checks).replace("`", "")]
    )
    return Outcome(text, "\n\n".join(md_parts), goals)

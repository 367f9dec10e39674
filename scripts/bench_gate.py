"""bench:gate: what a tool call that touches no memory costs under the plugin (issue 31, item 5).

    .venv/bin/python scripts/bench_gate.py [--calls 20] [--rounds 5] [--per-call 40]

1. Per call, one process as Claude Code starts it for a Bash `ls` payload: `true`, the gate
   (memstore/hookgate.sh, which lets this call go by) and `python3 -S hookrun.py --plugin` (what
   the plugin ran before the gate). Median wall ms.
2. The real Claude Code (.claude-bin/claude), the model replaced by tests/e2e/fake_anthropic.py,
   one `claude -p` session of N Bash `ls` calls, with the plugin loaded by --plugin-dir in three
   forms that differ only in PreToolUse: none ("no hook"), the gate (this checkout), and the old
   `python3 -S hookrun.py --plugin`. Runs alternate; median session seconds and the ratio to "no
   hook". Every other plugin hook (SessionStart, PostToolUse, SessionEnd) is there in all three.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.fake_anthropic import FakeAnthropic, text, tool_use  # noqa: E402

CLAUDE = REPO / ".claude-bin" / "claude"
HOOKRUN = REPO / "memstore" / "hookrun.py"
GATE = REPO / "memstore" / "hookgate.sh"
OLD_PRE = {"matcher": "*", "hooks": [{"type": "command", "command": "python3", "timeout": 10,
                                      "args": ["-S", "${CLAUDE_PLUGIN_ROOT}/memstore/hookrun.py",
                                               "--plugin"]}]}


def lay_out(base: Path) -> tuple[Path, Path, Path]:
    """(home, agent root, project): a root laid out and synced, a git project outside it."""
    home = base / "home"
    root, project = home / "agents" / "me", home / "code" / "proj"
    project.mkdir(parents=True)
    env = dict(os.environ, HOME=str(home))
    subprocess.run([str(REPO / ".venv/bin/memstore"), "init", str(root), "--apply"], env=env,
                   check=True, capture_output=True)
    subprocess.run([str(REPO / ".venv/bin/memstore"), "--root", str(root), "sync"], env=env,
                   check=True, capture_output=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return home, root, project


def plugin_copy(base: Path, name: str, pre: list | None) -> Path:
    """The plugin folder with its PreToolUse replaced (None: as it is); links made absolute."""
    target = base / name
    shutil.copytree(REPO / "plugin", target, symlinks=True,
                    ignore=shutil.ignore_patterns(".ruff_cache", "*.egg-info"))
    for link in target.iterdir():
        if link.is_symlink():
            dest = (REPO / "plugin" / os.readlink(link)).resolve()
            link.unlink()
            link.symlink_to(dest)
    if pre is not None:
        hooks = target / json.loads(
            (target / ".claude-plugin" / "plugin.json").read_text())["hooks"]
        data = json.loads(hooks.read_text())
        data["hooks"]["PreToolUse"] = pre
        if not pre:
            del data["hooks"]["PreToolUse"]
        hooks.write_text(json.dumps(data, indent=2))
    return target


def per_call(root: Path, project: Path, n: int) -> dict[str, float]:
    payload = json.dumps({"session_id": "bench",
                          "transcript_path": "/x/.claude/projects/p/bench.jsonl",
                          "cwd": str(project), "permission_mode": "default",
                          "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "ls", "description": "List"},
                          "tool_use_id": "toolu_1"}).encode()
    env = dict(os.environ, CLAUDE_PLUGIN_OPTION_ROOT=str(root))
    forms = {"true": ["true"],
             "gate (call let by)": ["bash", str(GATE), "python3", "-S", str(HOOKRUN), "--plugin"],
             "python3 -S hookrun.py --plugin": ["python3", "-S", str(HOOKRUN), "--plugin"]}
    times: dict[str, list[float]] = {k: [] for k in forms}
    for _ in range(n):
        for name, argv in forms.items():
            t0 = time.perf_counter()
            subprocess.run(argv, input=payload, capture_output=True, env=env, cwd=project,
                           check=True)
            times[name].append((time.perf_counter() - t0) * 1000)
    return {k: statistics.median(v) for k, v in times.items()}


def session(plugin: Path, home: Path, root: Path, project: Path, calls: int) -> float:
    steps = [[tool_use("Bash", command="ls", description="List")] for _ in range(calls)]
    settings = json.dumps({"pluginConfigs": {"memstore@inline": {"options": {"root": str(root)}}}})
    with FakeAnthropic([*steps, [text("done")]]) as fake:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "CLAUDE", "MEMSTORE_"))}
        env.update(HOME=str(home), ANTHROPIC_API_KEY="sk-ant-bench", ANTHROPIC_BASE_URL=fake.url,
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        t0 = time.perf_counter()
        proc = subprocess.run([str(CLAUDE), "-p", "list the folder", "--output-format", "json",
                               "--plugin-dir", str(plugin), "--settings", settings,
                              "--allowedTools", "Bash(ls)"],
                              cwd=project, env=env, capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        took = time.perf_counter() - t0
        ran = len(fake.main_requests) - 1
    if proc.returncode != 0 or ran < calls:
        raise SystemExit(f"session failed ({proc.returncode}, {ran} tool turns): "
                         f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-call", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        base = Path(tmp)
        home, root, project = lay_out(base)
        # the gate's list is missing here: written below
        costs = per_call(root, project, args.per_call)
        forms = {"no PreToolUse hook": plugin_copy(base, "none", []),
                 "the gate (hookgate.sh)": plugin_copy(base, "gate", None),
                 "python3 per call (before)": plugin_copy(base, "python", [OLD_PRE])}
        # SessionStart writes the gate's list
        session(forms["the gate (hookgate.sh)"], home, root, project, 1)
        costs = per_call(root, project, args.per_call)
        print(f"per call, median of {args.per_call} (ms):")
        for name, ms in costs.items():
            print(f"  {name:34s} {ms:7.1f}")
        seconds: dict[str, list[float]] = {k: [] for k in forms}
        for _ in range(args.rounds):
            for name, plugin in forms.items():
                seconds[name].append(session(plugin, home, root, project, args.calls))
        base_s = statistics.median(seconds["no PreToolUse hook"])
        print(f"claude -p, {args.calls} Bash `ls` calls, median of {args.rounds} alternating runs:")
        for name, values in seconds.items():
            med = statistics.median(values)
            print(f"  {name:28s} {med:6.2f} s  {med / base_s:5.3f}x   "
                  f"runs: {', '.join(f'{v:.2f}' for v in values)}")


if __name__ == "__main__":
    main()

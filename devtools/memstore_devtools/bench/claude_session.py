"""bench_releases --claude: a one-Read `claude -p` session without memstore and with each install.

The real Claude Code (.claude-bin/claude, `bash scripts/install_claude.sh`) talks to the stand-in
API of tests/e2e/fake_anthropic.py, which scripts one Read of a memory, then "done". Each way has
a HOME of its own and the same project (a git work tree) and flags:
- no memstore: nothing installed;
- the settings install, per release: that release's `memstore install --scope user --apply`;
- the plugin, per release: `--plugin-dir <its checkout>/plugin` with the root as the plugin's
  option. Its hooks run the system's python3 as a person's would; the venv its Setup builds (pip)
  is stood in for by a script that runs the release's own command line, so no network is needed.
All ways alternate in one loop; each session is a whole `claude -p` process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memstore_devtools.bench.baseline import BOOT, CLI_MAIN
from memstore_devtools.bench.common import REPO, fmt_s, fmt_x, log, median
from memstore_devtools.bench.release_figures import GOAL_CLAUDE

if TYPE_CHECKING:
    from memstore_devtools.bench.release_figures import Run
    from memstore_devtools.bench.sides import Side

CLAUDE = REPO / ".claude-bin" / "claude"
SYSTEM_PATH = (
    "/usr/bin:/bin"  # a person's shell without memstore: the system's python3, git and bash
)
ROUNDS = 5


def _claude_env(home: Path, url: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE", "MEMSTORE_", "VIRTUAL_ENV", "PYTHON"))
    }
    env.update(
        HOME=str(home),
        PATH=SYSTEM_PATH,
        ANTHROPIC_API_KEY="sk-ant-bench",
        ANTHROPIC_BASE_URL=url,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        MEMSTORE_SEMANTIC="off",
    )
    return env


def _settings_home(run: Run, side: Side, root: Path, project: Path) -> Path:
    """A HOME whose ~/.claude/settings.json is what this release's `install --scope user` wrote."""
    home = run.bench.workdir / "claude" / f"settings-{side.index}"
    home.mkdir(parents=True)
    env = {**run.bench.env, "HOME": str(home), "BENCH_MEMSTORE_CODE": str(side.code)}
    done = subprocess.run(
        [*side.cli_argv(root, "install", "--scope", "user", "--apply")],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{side.label}: install --scope user: {done.stdout[-400:]}{done.stderr[-400:]}"
        )
    # install names the console script beside the running python (SessionEnd's debrief), which runs
    # the working tree; the release's own command line stands in for it
    settings = home / ".claude" / "settings.json"
    script = str(Path(run.bench.python).parent / "memstore")
    settings.write_text(
        settings.read_text(encoding="utf-8").replace(script, str(_cli_script(run, side, home))),
        encoding="utf-8",
    )
    return home


def _cli_script(run: Run, side: Side, home: Path) -> Path:
    """A `memstore` that runs this release's command line (in place of a console script)."""
    script = home / "bin" / "memstore"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        f"#!/bin/sh\nBENCH_MEMSTORE_CODE={side.code} "
        f"exec {run.bench.python} -c '{BOOT + CLI_MAIN}' "
        '"$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def _plugin_home(run: Run, side: Side) -> Path:
    """A HOME whose plugin data folder holds a `memstore` running this release's command line."""
    home = run.bench.workdir / "claude" / f"plugin-{side.index}"
    _cli_script(run, side, home / ".claude" / "plugins" / "data" / "memstore-inline" / "venv")
    return home


def section_claude(run: Run) -> None:
    sys.path.insert(0, str(REPO))  # the stand-in API lives with the e2e tests
    from tests.e2e.fake_anthropic import FakeAnthropic, text, tool_use

    if not os.access(CLAUDE, os.X_OK):
        raise RuntimeError(
            f"no Claude Code binary at {CLAUDE}: run `bash scripts/install_claude.sh`"
        )
    if "'" in BOOT + CLI_MAIN:
        raise RuntimeError(
            "the bootstrap holds a quote: the plugin's stand-in script cannot carry it"
        )
    base = run.bench.workdir / "claude"
    shutil.rmtree(base, ignore_errors=True)
    project = base / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    ways: dict[
        str, tuple[Path, list[str], Path]
    ] = {}  # name -> (HOME, extra flags, the memory read)
    none_home = base / "none"
    none_home.mkdir()
    for side in run.sides:
        side.compile_bytecode()
        root = side.root(f"t2-{run.sizes.small}", run.bench.corpus(run.sizes.small))
        names = sorted(p.name for p in (root / "memory").glob("*_*.md"))
        target = root / "memory" / names[len(names) // 3]
        if side.index == 0:
            ways["none"] = (none_home, ["--add-dir", str(root)], target)
        ways[f"settings-{side.index}"] = (
            _settings_home(run, side, root, project),
            ["--add-dir", str(root)],
            target,
        )
        config = json.dumps(
            {"pluginConfigs": {"memstore@inline": {"options": {"root": str(root)}}}}
        )
        ways[f"plugin-{side.index}"] = (
            _plugin_home(run, side),
            [
                "--add-dir",
                str(root),
                "--plugin-dir",
                str(side.code / "plugin"),
                "--settings",
                config,
            ],
            target,
        )

    def session(name: str) -> float:
        home, flags, target = ways[name]
        steps = [[tool_use("Read", file_path=str(target))], [text("done")]]
        with FakeAnthropic(steps) as fake:
            start = time.perf_counter()
            done = subprocess.run(
                [
                    str(CLAUDE),
                    "-p",
                    "read that memory",
                    "--output-format",
                    "json",
                    "--allowedTools",
                    "Read",
                    *flags,
                ],
                cwd=project,
                env=_claude_env(home, fake.url),
                capture_output=True,
                text=True,
                timeout=300,
                stdin=subprocess.DEVNULL,
            )
            took = time.perf_counter() - start
            turns = len(fake.main_requests)
            first = json.dumps(fake.main_requests[0].body) if turns else ""
        if done.returncode != 0 or turns < 2:
            raise RuntimeError(
                f"claude -p ({name}) exited {done.returncode} after {turns} turns: "
                f"{done.stdout[-600:]}{done.stderr[-600:]}"
            )
        if (name != "none") != (
            "SessionStart hook additional context" in first
        ):  # memstore there, or not
            raise RuntimeError(
                f"claude -p ({name}): memstore's SessionStart bundle "
                f"{'is missing' if name != 'none' else 'came with no memstore'}"
            )
        return took

    rounds = 2 if run.args.quick else ROUNDS
    log(f"claude: {len(ways)} ways x {rounds} sessions")
    for name in ways:  # warm-up: the binary's own caches, each HOME's first start
        session(name)
    times: dict[str, list[float]] = {name: [] for name in ways}
    names = list(ways)
    for rep in range(rounds):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            times[name].append(session(name))
    med = {name: median(values) for name, values in times.items()}
    none = med["none"]
    for kind, label in (("settings", "the settings install"), ("plugin", "the plugin")):
        a, b = med[f"{kind}-0"], med[f"{kind}-1"]
        run.row(
            f"`claude -p`, one Read, under {label}, against no memstore",
            f"<= {GOAL_CLAUDE:.2f}x",
            f"{fmt_x(a / none)} ({fmt_s(a)})",
            f"{fmt_x(b / none)} ({fmt_s(b)})",
            fmt_x(b / a),
            a / none <= GOAL_CLAUDE,
            b / none <= GOAL_CLAUDE,
        )
    run.details.append(
        f"Claude: `claude -p` with no memstore {fmt_s(none)}; median of {rounds} sessions per way "
        f"({len(ways)} ways alternating), the real binary against tests/e2e/fake_anthropic.py; "
        "the plugin's venv stood in for by the release's own command line."
    )

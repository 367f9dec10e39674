"""The Claude Code plugin as a person installs it: the prerequisites, a fresh HOME, `claude` run in
it, and the install and Setup a person does. Shared by tests/e2e/test_plugin_claude.py and
tests/e2e/test_plugin_whole_claude.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

from .claude import CLAUDE_TIMEOUT, CLI_TIMEOUT, REPO, clean_env, find_claude
from .debriefs import wait_for_debriefs
from .fake_anthropic import FakeAnthropic, Recorded

PLUGIN = REPO / "plugin"
PLUGIN_ID = "memstore@memstore"
MCP_READ = "mcp__plugin_memstore_memstore__read"
# what a person's shell has without memstore: the system's python3 and git
SYSTEM_PATH = "/usr/bin:/bin"
SETUP_TIMEOUT = 900  # the plugin's own Setup hook timeout (hooks.json); pip dominates
API_KEY = "sk-ant-e2e-fake"
PIP_CACHE: list[str] = []  # set by the pip_cache fixture (tests/e2e/conftest.py)


# ---------------------------------------------------------------- prerequisites


def skip_or_fail(message: str) -> NoReturn:
    """A missing prerequisite skips the test, saying so; under CI it is a failure."""
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set: the e2e prerequisites must be installed)")
    pytest.skip(message)


def claude_binary() -> str:
    try:
        return find_claude()
    except pytest.skip.Exception as exc:
        skip_or_fail(str(exc))


def system_python_ok(env: dict[str, str], cwd: Path) -> None:
    """The system's python3 is what runs the plugin: it must be 3.11+ and must not see memstore."""
    python = shutil.which("python3", path=SYSTEM_PATH)
    if python is None:
        skip_or_fail(f"no python3 on {SYSTEM_PATH}: the plugin's hooks run the system's python3")
    probe = subprocess.run(
        [python, "-c", "import sys, importlib.util; print(sys.version_info >= (3, 11), "
         "importlib.util.find_spec('memstore') is not None)"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT,
    )
    new_enough, sees_memstore = probe.stdout.split()
    if new_enough != "True":
        skip_or_fail(f"{python} is older than 3.11: the plugin needs python3 >= 3.11")
    assert sees_memstore == "False", (
        f"{python} can import memstore: the test would not start from nothing")


def plugin_env(home: Path, **extra: str) -> dict[str, str]:
    """A person's environment: a fresh HOME, the system PATH, nothing of this checkout's venv."""
    env = clean_env(HOME=str(home), PATH=SYSTEM_PATH, ANTHROPIC_API_KEY=API_KEY,
                    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    for name in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "MEMSTORE_SEMANTIC"):
        env.pop(name, None)  # a person's python3 sees none of the test runner's
    if PIP_CACHE:
        # pip's downloads only; every venv is still built by the Setup hook
        env["PIP_CACHE_DIR"] = PIP_CACHE[0]
    env.update(extra)
    assert shutil.which("memstore", path=env["PATH"]) is None, f"memstore is on {env['PATH']}"
    return env


def fresh_home(tmp_path: Path) -> Path:
    home = (tmp_path / "person").resolve()
    home.mkdir()
    return home


def make_project(home: Path) -> Path:
    project = home / "code" / "proj"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=CLI_TIMEOUT,
                   env=plugin_env(home), capture_output=True)
    return project


# ---------------------------------------------------------------- driving the binary


class Claude:
    """`claude` as the person runs it, in one HOME; every run points at a fake API it should not
    need."""

    def __init__(self, binary: str, home: Path) -> None:
        self.binary, self.home = binary, home
        self.env = plugin_env(home)

    def __call__(self, *args: str, timeout: float = CLI_TIMEOUT, check: bool = True
                 ) -> subprocess.CompletedProcess[str]:
        with FakeAnthropic([]) as fake:
            try:
                proc = subprocess.run([self.binary, *args], cwd=self.home, capture_output=True,
                                      text=True, env=dict(self.env, ANTHROPIC_BASE_URL=fake.url),
                                      timeout=timeout, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired as exc:
                pytest.fail(f"claude {' '.join(args)} did not finish within {timeout}s\n"
                            f"{exc.stdout!r}\n{exc.stderr!r}")
        command = " ".join(args)
        if check:
            assert proc.returncode == 0, (
                f"claude {command} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        assert not fake.main_requests, (
            f"claude {command} asked the model something:\n{fake.summary()}")
        return proc

    def session(self, project: Path, steps: list[list[dict[str, Any]]], prompt: str
                ) -> tuple[subprocess.CompletedProcess[str], list[Recorded], str]:
        """`claude -p PROMPT --output-format json` in the project; (process, main requests,
        diagnostics)."""
        with FakeAnthropic(steps) as fake:
            try:
                proc = subprocess.run([self.binary, "-p", prompt, "--output-format", "json"],
                                      cwd=project, env=dict(self.env, ANTHROPIC_BASE_URL=fake.url),
                                      capture_output=True,
                                      text=True, timeout=CLAUDE_TIMEOUT, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired as exc:
                pytest.fail(f"claude -p did not finish within {CLAUDE_TIMEOUT}s\n{exc.stdout!r}\n"
                            f"{exc.stderr!r}\n"
                            f"{fake.summary()}")
        wait_for_debriefs(self.home.parent)
        detail = (f"exit {proc.returncode}\n--- stdout ---\n{proc.stdout[-6000:]}\n--- stderr ---\n"
                  f"{proc.stderr[-3000:]}\n--- requests ---\n{fake.summary()}")
        return proc, fake.main_requests, detail

    def settings(self) -> dict[str, Any]:
        path = self.home / ".claude" / "settings.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def install_and_set_up(claude: Claude, root: Path) -> tuple[Path, float]:
    """The two commands a person runs, checked: (the plugin's data folder, seconds Setup took)."""
    data = claude.home / ".claude" / "plugins" / "data" / "memstore-memstore"
    claude("plugin", "install", "memstore", "--marketplace", str(REPO), "--config", f"root={root}")
    settings = claude.settings()
    assert settings.get("enabledPlugins", {}).get(PLUGIN_ID) is True, settings
    assert settings["pluginConfigs"][PLUGIN_ID]["options"]["root"] == str(root), settings
    listed = {p["id"]: p for p in json.loads(claude("plugin", "list", "--json").stdout)}
    assert Path(listed[PLUGIN_ID]["readFromFolder"]).resolve() == PLUGIN.resolve(), (
        f"the plugin is not served from the checkout: {listed[PLUGIN_ID]}")
    assert not root.exists(), "install alone laid out the root (Setup should, under --init-only)"

    t0 = time.monotonic()
    claude("--init-only", timeout=SETUP_TIMEOUT)
    seconds = time.monotonic() - t0
    assert (data / "venv" / "bin" / "memstore").is_file(), (
        f"claude --init-only did not build the plugin's venv in {data} (the Setup hook's output is "
        "shown nowhere; run `claude --init-only --debug-file F` by hand to see it)")
    for laid_out in ("identity.md", "memory/MEMORY.md", "lenses"):
        assert (root / laid_out).exists(), f"claude --init-only did not lay out {root / laid_out}"
    return data, seconds


def plugin_runner(claude: Claude, root: Path) -> Callable[..., str]:
    """plugin/run.py as the plugin's hooks and MCP server run it: the venv's memstore on the
    option's root."""
    env = dict(claude.env, CLAUDE_PLUGIN_OPTION_ROOT=str(root))

    def run(*args: str) -> str:
        done = subprocess.run(["python3", str(PLUGIN / "run.py"), *args], cwd=claude.home, env=env,
                              capture_output=True, text=True, timeout=CLI_TIMEOUT)
        command = " ".join(args)
        assert done.returncode == 0, (
            f"plugin/run.py {command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    return run

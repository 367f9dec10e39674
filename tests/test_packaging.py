"""The command line alone, as the README says to get it: `pipx install` and `uv tool install` from
the repository. Failure caught: an install that pulls PyPI's unrelated `memstore` (the name this
project's distribution must not use), or a tool install whose `memstore` does not run.

pipx and uv come from the package index into a throwaway environment; each tool puts memstore
into its own folders under tmp_path, never the person's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(900)  # pip fetches pipx and uv; each tool builds memstore


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding pipx and uv."""
    venv = tmp_path_factory.mktemp("tools") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", "pipx", "uv"], capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        pytest.fail(f"could not install pipx and uv from the package index: {done.stderr[-1000:]}")
    return venv / "bin"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIPX_", "UV_", "MEMSTORE_", "VIRTUAL_ENV"))}
    env.update(HOME=str(tmp_path / "home"), **extra)
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def _works(memstore: Path, tmp_path: Path, env: dict[str, str]) -> None:
    assert memstore.is_file(), f"no memstore command at {memstore}"
    version = subprocess.run([str(memstore), "--version"], capture_output=True, text=True, env=env,
                             timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("memstore, version"), version
    root = tmp_path / "agent"
    made = subprocess.run([str(memstore), "init", str(root), "--apply"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert made.returncode == 0, made.stderr
    status = subprocess.run([str(memstore), "--root", str(root), "status", "--json"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert status.returncode == 0 and json.loads(status.stdout)["files"] > 0, status.stderr


def test_pipx_install_from_the_repository(tools: Path, tmp_path: Path) -> None:
    env = _env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
               PIPX_MAN_DIR=str(tmp_path / "man"))
    done = subprocess.run([str(tools / "pipx"), "install", str(REPO)], capture_output=True,
                          text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    listed = subprocess.run([str(tools / "pipx"), "list", "--json"], capture_output=True, text=True,
                            env=env, timeout=60)
    venvs = json.loads(listed.stdout)["venvs"]
    assert list(venvs) == ["memstore-md"], venvs  # this project's distribution, not PyPI's memstore
    _works(tmp_path / "bin" / "memstore", tmp_path, env)


def test_uv_tool_install_from_the_repository(tools: Path, tmp_path: Path) -> None:
    env = _env(tmp_path, UV_TOOL_DIR=str(tmp_path / "uvtools"),
               UV_TOOL_BIN_DIR=str(tmp_path / "bin"), UV_CACHE_DIR=str(tmp_path / "uvcache"),
               UV_PYTHON=sys.executable, UV_PYTHON_DOWNLOADS="never")
    done = subprocess.run([str(tools / "uv"), "tool", "install", str(REPO)], capture_output=True,
                          text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "uvtools" / "memstore-md").is_dir(), (
        sorted(p.name for p in (tmp_path / "uvtools").iterdir()))
    _works(tmp_path / "bin" / "memstore", tmp_path, env)
    shutil.rmtree(tmp_path / "uvcache", ignore_errors=True)

"""Shared test helpers: tiny agent roots in tmp folders and a CliRunner wrapper."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstore.frontends.cli import cli

NOW = "2026-07-30T12:00:00Z"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def memory(
    name: str,
    summary: str = "",
    body: str = "Body text.",
    **fields: object,
) -> str:
    """Text of a well-formed T2 memory file."""
    lines = ["---", f"name: {name}", f"type: {name.split('_', 1)[0]}"]
    if summary:
        lines.append(f"summary: {json.dumps(summary)}")
    for key, value in fields.items():
        lines.append(f"{key}: {value}")
    lines += ["---", "", f"# {name}", "", body, ""]
    return "\n".join(lines)


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME: no test may read or write the real ~/.claude or ~/.claude.json."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    from memstore.life.reviewing import AGENT_MARKS

    for name in (*AGENT_MARKS, "MEMSTORE_HOOKS"):  # tests play the person; a test that plays the agent sets them
        monkeypatch.delenv(name, raising=False)  # memstore's own config (the installed root) under HOME
    # Tests of FTS behaviour see FTS alone even where the semantic extra is installed (an
    # embedding pass would add seconds to every sync); tests/test_semantic.py turns it on.
    monkeypatch.setenv("MEMSTORE_SEMANTIC", "off")
    # no detached embedding pass behind a test's back (tests/test_embed_background.py starts one itself)
    monkeypatch.setenv("MEMSTORE_EMBED_BACKGROUND", "off")
    # Tests start in that HOME, outside any git work tree: what they note or capture is person-wide
    # unless a test makes a project (memstore.core.projects). (The checkout itself is a work tree.)
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty agent root (memory/ only)."""
    base = tmp_path / "agent"
    (base / "memory").mkdir(parents=True)
    return base


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Invoke the CLI in-process with the clock pinned; stdout and stderr kept apart."""
    monkeypatch.delenv("MEMSTORE_ROOT", raising=False)
    monkeypatch.setenv("MEMSTORE_NOW", NOW)

    def invoke(root: Path | None, *args: str, input: str | None = None) -> Result:
        argv = (["--root", str(root)] if root is not None else []) + list(args)
        return CliRunner().invoke(cli, argv, input=input, catch_exceptions=False)

    return invoke


def search_json(run: Callable[..., Result], root: Path, query: str, *extra: str) -> list[dict[str, object]]:
    result = run(root, "search", query, "--json", *extra)
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def claude_on_path(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `claude` on PATH: install bakes its absolute path into the wake job (cron's PATH is bare)."""
    folder = tmp_path_factory.mktemp("bin")
    stub = folder / "claude"
    stub.write_text("#!/bin/sh\necho a dream\n")
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return stub


# The tiers, in one place: plain `pytest` runs the fast tier (pyproject's addopts leave these out);
# scripts/test.sh, the README's test command and CI's, runs every tier with `-m ""`.
TIERS = {
    "e2e": ("tests/e2e/", "tests/test_serve_browser.py"),  # the real client binaries, the browser
    "quality": ("tests/test_recall_memories.py", "tests/test_search_quality.py"),  # LoCoMo, LongMemEval runs
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))
    for item in items:
        rel = Path(str(item.path)).relative_to(root).as_posix() if str(item.path).startswith(str(root)) else ""
        for marker, places in TIERS.items():
            if any(rel == place or (place.endswith("/") and rel.startswith(place)) for place in places):
                item.add_marker(getattr(pytest.mark, marker))

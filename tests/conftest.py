"""The fixtures every test module may use (plain helpers are in tests/helpers.py), and the tiers."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstore.frontends.cli import cli
from tests import wakestub
from tests.helpers import GIT_ID, NOW, agent_root, team_remote


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME: no test may read or write the real ~/.claude or
    ~/.claude.json."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    from memstore.life.reviewing import AGENT_MARKS

    # tests play the person; a test that plays the agent sets them
    for name in (*AGENT_MARKS, "MEMSTORE_HOOKS"):
        # memstore's own config (the installed root) under HOME
        monkeypatch.delenv(name, raising=False)
    # Tests of FTS behaviour see FTS alone even where the semantic extra is installed (an
    # embedding pass would add seconds to every sync); tests/test_semantic.py turns it on.
    monkeypatch.setenv("MEMSTORE_SEMANTIC", "off")
    # no detached embedding pass behind a test's back (test_embed_background.py starts its own)
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


@pytest.fixture
def agent(root: Path) -> Path:
    """A synced root: a memory, an identity, the Bash lens (LENSMARK), a lens on Edit of notes/ and
    a meditation (tests/helpers.py agent_root)."""
    return agent_root(root)


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits memstore makes (a team's share, the nightly commit) are by Ann Teammate
    (tests/helpers.py GIT_ID)."""
    for key, value in GIT_ID.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def remote(tmp_path: Path) -> tuple[Path, Path]:
    """A team's repository: (the clone the team commits in, the bare remote), with a memory and a
    lens."""
    return team_remote(tmp_path)


@pytest.fixture
def wake_root(tmp_path: Path) -> Path:
    """An initialised root with topic memories, a lens, T1 facts and a cue with items
    (tests/wakestub.py)."""
    return wakestub.initialised_root(tmp_path / "agent")


@pytest.fixture
def model(tmp_path: Path) -> Callable[..., str]:
    """`--model-cmd` for the wake's stand-in model in a given mode; it logs to
    tmp_path/stub/calls.jsonl."""
    return wakestub.stub_model(tmp_path / "stub")


@pytest.fixture
def claude_on_path(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `claude` on PATH: install bakes its absolute path into the wake job (cron's PATH
    is bare)."""
    folder = tmp_path_factory.mktemp("bin")
    stub = folder / "claude"
    stub.write_text("#!/bin/sh\necho a dream\n")
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return stub


# The tiers marked by file, in one place: plain `pytest` runs the fast tier (pyproject's addopts
# leave these out); scripts/test.sh, the README's test command and CI's, runs every tier.
# A single slow test elsewhere carries @pytest.mark.slow itself.
TIERS = {
    "e2e": ("tests/e2e/", "tests/test_serve_browser.py"),  # the real client binaries, the browser
    "slow": (
        "tests/stress/",  # concurrency and crash runs: many processes, killed at random moments
        "tests/test_packaging.py",  # pipx and uv build and install the package
        "tests/test_paraphrase.py",  # the model's second opinion on agent sets, small and large
        "tests/test_search_quality.py",  # the LoCoMo/LongMemEval guard (figures: scripts/eval_*)
    ),
}
# Tests that build memstore in the checkout itself (build/, egg-info) run one after another on
# one worker under `--dist loadgroup`: two builds at once in one tree trip over each other.
GROUPS = {
    "builds-in-the-checkout": (
        "tests/test_packaging.py",
        "tests/e2e/test_plugin_claude.py",  # the plugin's Setup: pip install -e plugin/
        "tests/e2e/test_plugin_whole_claude.py",
    ),
}
# An e2e test drives a real client through sessions of up to 90 s each; the default is 120 s.
E2E_TIMEOUT = 600


def _in(rel: str, places: tuple[str, ...]) -> bool:
    return any(rel == place or (place.endswith("/") and rel.startswith(place)) for place in places)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = Path(str(config.rootpath))
    for item in items:
        rel = Path(str(item.path)).relative_to(root).as_posix() \
            if str(item.path).startswith(str(root)) else ""
        for marker, places in TIERS.items():
            if _in(rel, places):
                item.add_marker(getattr(pytest.mark, marker))
        for group, places in GROUPS.items():
            if _in(rel, places):
                item.add_marker(pytest.mark.xdist_group(group))
        if item.get_closest_marker("e2e") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(E2E_TIMEOUT))

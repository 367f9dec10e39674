"""Every external process starts from a neutral environment (memstore.core.processes).

Failure caught: a variable of the caller's that makes a child run code nobody chose (LD_PRELOAD,
BASH_ENV for a shell, NODE_OPTIONS for the wake's Claude Code, GIT_DIR or GIT_CONFIG_* for git)
reaching the child: the nightly jobs and verify start git, the model command and the hook.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memstore.core import processes

INJECTING = {"LD_PRELOAD": "/tmp/evil.so", "BASH_ENV": "/tmp/evil.sh",
             "NODE_OPTIONS": "--require /tmp/evil.js",
             "PYTHONSTARTUP": "/tmp/evil.py", "PERL5OPT": "-Mevil"}
SHOW = ('for v in LD_PRELOAD BASH_ENV NODE_OPTIONS PYTHONSTARTUP PERL5OPT MINE; do printf "%s=%s;" '
        '"$v" "${!v-}"; done')


def test_a_child_gets_none_of_the_injecting_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in INJECTING.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LD_PRELOAD", "")  # set but empty: the dynamic loader would still read it
    ran = processes.run(["bash", "-c", SHOW], timeout=30, env={"MINE": "kept"})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == (
        "LD_PRELOAD=;BASH_ENV=;NODE_OPTIONS=;PYTHONSTARTUP=;PERL5OPT=;MINE=kept;"), ran.stdout
    child = processes.spawn(["bash", "-c", SHOW], stdout=processes.PIPE)
    out, _ = child.communicate(timeout=30)
    assert out.decode() == "LD_PRELOAD=;BASH_ENV=;NODE_OPTIONS=;PYTHONSTARTUP=;PERL5OPT=;MINE=;"


def test_git_ignores_the_callers_git_variables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIT_DIR pointing elsewhere, or GIT_CONFIG_* adding a setting, must not steer memstore's
    git."""
    mine, other = tmp_path / "root", tmp_path / "other"
    for repo in (mine, other):
        subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.pager")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "touch " + str(tmp_path / "ran"))
    found = processes.run_git(mine, "rev-parse", "--absolute-git-dir", timeout=30)
    assert found.stdout.strip() == str((mine / ".git").resolve())
    pager = processes.run_git(mine, "config", "--get", "core.pager", timeout=30)
    # the caller's GIT_CONFIG_* setting is not there; memstore's is
    assert pager.stdout.strip() == "cat"

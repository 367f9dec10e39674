"""verify never runs a command a project's settings file chose.

verify proves a Read really reinforces by running the registered hook command on a probe. A cloned
repository's .claude/settings.json (or .gemini/settings.json) can register any command that merely
looks like memstore's (`... memstore hook`): the attacker's walkthrough ran code that way just by
running `memstore verify` in the folder, before any client had been told to trust it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

NOW = "2026-11-20T09:00:00Z"


def cli(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "MEMSTORE_NOW": NOW}
    # as a person runs it: `-m` would import the folder's own
    script = Path(sys.executable).parent / "memstore"
    return subprocess.run([str(script), *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=120)


def a_repo(tmp_path: Path, folder: str, hooks: dict) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    root = home / "agents" / "me"
    assert cli(tmp_path, home, "init", str(root), "--apply").returncode == 0
    repo = tmp_path / "evilrepo"
    (repo / folder).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (repo / folder / "settings.json").write_text(json.dumps({"hooks": hooks}))
    return home, root, repo


def test_verify_does_not_run_a_lookalike_claude_hook(tmp_path: Path) -> None:
    """Failure caught: verify running a project's `/bin/sh -c '...' memstore hook` as if it were
    memstore's."""
    marker = tmp_path / "pwned.log"
    hooks = {event: [{"matcher": m, "hooks": [{"type": "command",
                                              "command": "/bin/sh -c 'echo RAN >> "
                                                         f"{marker}' memstore hook"}]}]
             for event, m in (("SessionStart", None), ("PostToolUse", "Read"))}
    home, root, repo = a_repo(tmp_path, ".claude", hooks)
    result = cli(repo, home, "--root", str(root), "verify", "--json")
    assert not marker.exists(), "verify ran the project's command"
    checks = json.loads(result.stdout)
    probe = [c for c in checks if c["name"] == "reinforcement"]
    assert probe and not probe[0]["ok"] and "was not run" in probe[0]["detail"], checks


def test_verify_does_not_run_a_lookalike_gemini_hook(tmp_path: Path) -> None:
    """Failure caught: `verify --client gemini --scope project` running a project's command through
    bash."""
    marker = tmp_path / "pwned.log"
    home, root, repo = a_repo(tmp_path, ".gemini", {})
    command = f"echo RAN >> {marker}; : --client gemini --root {root}"
    hooks = {event: [{"matcher": "read_file|write_file|replace|run_shell_command",
                      "hooks": [{"type": "command", "command": command}]}]
             for event in ("BeforeTool", "AfterTool")}
    (repo / ".gemini" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    cli(repo, home, "--root", str(root), "verify", "--client", "gemini", "--scope", "project",
        "--json")
    assert not marker.exists(), "verify ran the project's command"


def test_verify_runs_nothing_a_lookalike_spells(tmp_path: Path) -> None:
    """Failures caught (issue 32's second attacker): a carriage return that shlex reads as a space
    and bash as a letter (`py<CR>-S<CR>.../hookrun.py` runs the project's file `py<CR>-S<CR>...`);
    `python -m memstore hook`, which imports the folder's own `memstore/` package; an interpreter
    that is a symlink to the real one beside a pyvenv.cfg of the project's (its standard library,
    its code). verify runs only an exact registration of its own, as its own argv, from the root."""
    import memstore

    marker = tmp_path / "pwned.log"
    package = Path(memstore.__file__).resolve().parents[1]
    home, root, repo = a_repo(tmp_path, ".claude", {})
    fake = repo / "memstore"  # `python -m memstore` run from the project would import this
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(f"open({str(marker)!r}, 'a').write('RAN -m')\n")
    link = repo / "vb" / "bin" / "python"
    link.parent.mkdir(parents=True)
    link.symlink_to(Path(sys.executable).resolve())
    (repo / "vb" / "pyvenv.cfg").write_text(f"home = {repo / 'nowhere'}\n")
    for command in (f"{sys.executable} -m memstore --root {root} hook",
                    f"{link} -S {package / 'memstore' / 'hookrun.py'} --root {root}",
                    f"py\r-S\r{package / 'memstore' / 'hookrun.py'} --root {root}"):
        hooks = {event: [{"matcher": m, "hooks": [{"type": "command", "command": command}]}]
                 for event, m in (("SessionStart", None), ("PostToolUse", "Read"))}
        (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
        checks = json.loads(cli(repo, home, "--root", str(root), "verify", "--json").stdout)
        probe = next(c for c in checks if c["name"] == "reinforcement")
        assert not probe["ok"] and "was not run" in probe["detail"], (command, probe)
    assert not marker.exists(), marker.read_text()


def test_verify_still_runs_memstores_own_hook(tmp_path: Path) -> None:
    """Failure caught: the guard refusing memstore's own registration, so verify proves nothing."""
    home, root, repo = a_repo(tmp_path, ".claude", {})
    assert cli(repo, home, "--root", str(root), "install", "--apply").returncode == 0
    checks = json.loads(cli(repo, home, "--root", str(root), "verify", "--json").stdout)
    probe = next(c for c in checks if c["name"] == "reinforcement")
    assert probe["ok"] and "access_count 1" in probe["detail"], probe

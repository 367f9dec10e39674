"""An older install keeps working after an upgrade, and verify names what an upgrade left behind.

tests/data/previous-release/settings.json is the settings file that the release before the layers
moved (commit 3328154) wrote with `memstore install --scope user --apply`, its machine paths
replaced by {PACKAGE} (the folder holding the memstore package), {PYTHON}, {BIN}, {BASH}, {ROOT} and
{HOME}. An upgrade in place (pip in the same venv, or `git pull` in an editable clone) keeps the
package's folder, so the registered `python -S {PACKAGE}/memstore/hookrun.py` must still be this
memstore's hook: if that file moved, python exits 2 and Claude Code takes that for a blocking hook
error on every memory Read and Write.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.helpers import memory, previous_settings, write

NOW = "2026-11-20T09:00:00Z"


def memstore_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "MEMSTORE_NOW": NOW}
    return subprocess.run([sys.executable, "-m", "memstore", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def handler(settings: dict, event: str, matcher: str | None) -> str:
    for group in settings["hooks"][event]:
        if group.get("matcher") == matcher:
            return group["hooks"][0]["command"]
    raise AssertionError(f"no {event} {matcher} handler in the fixture")


def access_count(root: Path, rel: str) -> int:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        row = conn.execute("SELECT access_count FROM policy WHERE path = ?", (rel,)).fetchone()
    finally:
        conn.close()
    return int(row[0]) if row else 0


def a_person(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    root = home / "agents" / "me"
    assert memstore_cli("init", str(root), "--apply", home=home).returncode == 0
    write(root, "memory/feedback_deploys.md",
          memory("feedback_deploys", "never deploy on a Friday"))
    assert memstore_cli("--root", str(root), "sync", "--quiet", home=home).returncode == 0
    return home, root


def test_a_previous_release_registration_still_records_a_read(tmp_path: Path) -> None:
    """Failure caught: the registered hookrun.py path (or the lens gate's hookgate.sh) moved with
    the layers, so every session of a person who upgraded gets a blocking hook error and no Read is
    reinforced."""
    home, root = a_person(tmp_path)
    settings = previous_settings(home, root)
    read = handler(settings, "PostToolUse", "Read")
    payload = {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(home),
               "tool_name": "Read",
               "tool_input": {"file_path": str(root / "memory/feedback_deploys.md")},
               "tool_response": {}}
    env = {**os.environ, "HOME": str(home), "MEMSTORE_NOW": NOW}
    # Claude Code runs a command through the shell
    done = subprocess.run(["bash", "-c", read], input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert access_count(root, "memory/feedback_deploys.md") == 1

    start = subprocess.run(["bash", "-c", handler(settings, "SessionStart", None)],
                           capture_output=True, text=True, env=env,
                           input=json.dumps({"hook_event_name": "SessionStart", "session_id": "s1",
                                             "cwd": str(home), "source": "startup"}), timeout=60)
    # (identity comes by the rules file's imports)
    assert start.returncode == 0 and not start.stderr, start.stderr
    gate = handler(settings, "PreToolUse", "*")  # the lens gate, in front of the same hookrun.py
    lens = subprocess.run(["bash", "-c", gate], capture_output=True, text=True, env=env, timeout=60,
                          input=json.dumps({"hook_event_name": "PreToolUse", "session_id": "s1",
                                            "cwd": str(home), "tool_name": "Bash",
                                            "tool_input": {"command": "ls"}}))
    assert lens.returncode == 0, lens.stderr

    checks = json.loads(
        memstore_cli("--root", str(root), "verify", "--scope", "user", "--json", home=home).stdout)
    paths = next(c for c in checks if c["name"] == "hook paths")
    assert paths["ok"], paths
    # the previous release's debrief still runs, and verify says how to stop the client waiting
    end = next(c for c in checks if c["name"] == "hook SessionEnd")
    assert end["ok"] and "an older install's" in end["detail"] and "install" in end["detail"]
    # no prompt hook in the previous release: verify names the install that adds it
    prompt = next(c for c in checks if c["name"] == "hook UserPromptSubmit")
    assert not prompt["ok"] and "install --apply --scope user" in prompt["fix"], prompt


def test_verify_names_a_registration_whose_files_are_gone(tmp_path: Path) -> None:
    """Failure caught: a settings file naming a memstore that is no longer there (a deleted venv, a
    moved package) passes verify, and the person learns of it from hook errors in every session."""
    home, root = a_person(tmp_path)
    gone = tmp_path / "old-venv" / "lib" / "python3.11" / "site-packages"
    previous_settings(home, root, package=gone)
    result = memstore_cli("--root", str(root), "verify", "--scope", "user", "--json", home=home)
    assert result.returncode == 1
    paths = next(c for c in json.loads(result.stdout) if c["name"] == "hook paths")
    assert (not paths["ok"]
            and f"{gone}/memstore/hookrun.py, which no longer exists" in paths["detail"])
    assert f"{gone}/memstore/hookgate.sh" in paths["detail"] and "install" in paths["fix"]

    fixed = memstore_cli("--root", str(root), "install", "--scope", "user", "--apply", home=home)
    # the fix verify names rewrites memstore's registrations
    assert fixed.returncode == 0, fixed.stderr
    again = json.loads(
        memstore_cli("--root", str(root), "verify", "--scope", "user", "--json", home=home).stdout)
    assert next(c for c in again if c["name"] == "hook paths")["ok"]
    end = next(c for c in again if c["name"] == "hook SessionEnd")
    assert end["ok"] and "older" not in end["detail"] and "--detach" in (
        home / ".claude" / "settings.json").read_text()
    assert str(gone) not in (home / ".claude" / "settings.json").read_text()


def test_a_console_script_of_the_previous_release_still_runs(tmp_path: Path) -> None:
    """Failure caught: an editable clone's `memstore` script, which pip wrote before the layers
    moved (`from memstore.entry import main`), fails with ModuleNotFoundError after a `git pull`;
    the SessionEnd debrief is registered through that script."""
    script = tmp_path / "memstore"
    script.write_text(
        "import re\nimport sys\nfrom memstore.entry import main\nif __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(main())\n")
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "Usage: memstore" in done.stdout, done.stderr

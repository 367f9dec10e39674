"""The hook's shell check judges where a command's words land, not how they are spelled.

Failure caught: the six literal commands of the attacker's walkthrough that changed identity.md
or a lens in bypassPermissions (a path relative to the project, a chain of `cd`s, `cd ~ &&` then
a relative path, a folder above the root renamed and then written through), `mv ~/.claude
~/.claude.bak` (the next session had no hooks and no deny rules), and writes into runtime/ and the
rendered index; and, the other way, ordinary work being refused.

Each command goes through the hook itself (a PreToolUse payload for Bash), as Claude Code sends it.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from memstore.hook.handler import main as hook_main

REFUSED = [
    "echo PWNED >> ../../agents/me/identity.md",
    "cd ~; cd agents; echo PWNED > me/identity.md",
    "cd ~ && sed -i s/a/b/ agents/me/lenses/shell.md",
    "mv ~/agents ~/a2",
    "cd ~; mv agents a2",
    "cd ~ && mv agents a2 && sed -i s/a/b/ a2/me/lenses/shell.md",
    "cd .. && cd .. && rm -r agents",
    "pushd ~/agents; mv me you; popd",
    "env -u CLAUDECODE rm -rf ../../agents",
    "bash -c 'cd ~/agents/me && echo x > identity.md'",
    "mv ~/.claude ~/.claude.bak",
    "mv ~/.codex /tmp/c",
    "rm -rf ~/.gemini",
    "python3 -c \"import os; os.rename(os.path.expanduser('~/.claude'), '/tmp/c')\"",
    "rm -rf ~",
    "cp -r /tmp/evil/. ~/",
    "tar -C ~ -xf /tmp/evil.tar",
    "rm -rf ~/agents/me/runtime/journal",
    "printf x > ~/agents/me/runtime/state/stale.json",
    "echo '@/etc/passwd' >> ~/agents/me/memory/MEMORY.md",
    "cd ~/agents/me/memory && cp /tmp/x current-state.md",
    # quoting hides every word the cheap first look matches (the attacker's walkthrough)
    "mv HOMEDIR/ag''ents /tmp/moved-away",
    "rm -rf HOMEDIR/ag\\ents",
    "find HOMEDIR/\"agents\" -delete",
    "mv HOMEDIR/.cl''aude /tmp/cbak",
    "rm -rf HOMEDIR",
    "echo '[x]' > ~/.config/memstore/config.toml",
]
ALLOWED = [
    "ls ~/agents/me/memory",
    "cat ~/agents/me/identity.md",
    "echo fact >> ~/agents/me/memory/short-term/261201-x.md",
    "npm test",
    "rm -rf build dist",
    "cp -r ~/agents /tmp/backup",
    "mv a.txt b.txt",
    "touch ~/notes.txt",
    "cp notes.txt ~/",
    "git commit -am 'rm lenses from the docs'",
    "cd ~/agents/me && memstore status",
    "cd .. && ls",
    "git commit -m 'fix: rm the old cache'",
    "rm -rf node_modules",
    "cp -r src/ dist/",
]


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    home = Path(os.environ["HOME"])
    root = home / "agents" / "me"
    for folder in ("memory/short-term", "lenses", "runtime/journal", "runtime/state"):
        (root / folder).mkdir(parents=True)
    (root / "identity.md").write_text("me\n")
    for client in (".claude", ".codex", ".gemini"):
        (home / client).mkdir()
    project = home / "code" / "p"
    project.mkdir(parents=True)
    return root, project


def decision(root: Path, project: Path, command: str) -> str | None:
    command = command.replace("HOMEDIR", os.environ["HOME"])  # the home by its absolute spelling
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(project),
               "tool_name": "Bash", "tool_input": {"command": command}}
    out = io.StringIO()
    assert hook_main(["--root", str(root)], stdin=io.BytesIO(json.dumps(payload).encode()),
                     stdout=out) == 0
    answer = json.loads(out.getvalue()) if out.getvalue() else {}
    return answer.get("hookSpecificOutput", {}).get("permissionDecision")


@pytest.mark.parametrize("command", REFUSED)
def test_refused_however_the_path_is_spelled(layout, command: str) -> None:
    assert decision(*layout, command) == "deny"


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_work_is_not_refused(layout, command: str) -> None:
    assert decision(*layout, command) is None

"""The access table (memstore.core.access): every row the agent may not change is refused by all
three readers.

Failure caught: a protected path added to one reader and not the others (the last attacker found
runtime/ refused by the hook but with no deny rule in the client's settings). Each person-owned and
machine-owned row of the table is walked through:
- the client's deny rules (memstore.wiring.protect.deny_rules): some Edit rule covers the row;
- the real hook (`python -S memstore/hookrun.py --root ROOT`, the registered command), given an
  agent's PreToolUse Write and Edit of a file the row names: it denies both;
- the shell check (memstore.hook.shellcmd.names_person_file): `rm`, `mv` and a redirect naming it
  are flagged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memstore.core.access import MACHINE_OWNED, PERSON_OWNED
from memstore.hook.shellcmd import names_person_file
from memstore.wiring.protect import deny_rules

REPO = Path(__file__).resolve().parent.parent
HOOKRUN = REPO / "memstore" / "hookrun.py"
ROWS = [*PERSON_OWNED, *MACHINE_OWNED]


def target(row: str) -> str:
    """A root-relative file the row protects: the file itself, or one inside the folder."""
    return f"{row}probe.md" if row.endswith("/") else row


@pytest.fixture(scope="module")
def module_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("access") / "agent"
    (base / "memory").mkdir(parents=True)
    return base


def covers(rule: str, path: str) -> bool:
    """Does a permission rule `Edit(//abs/path)` or `Edit(//abs/folder/**)` apply to the absolute
    `path`?"""
    assert rule.startswith("Edit(") and rule.endswith(")"), rule
    pattern = rule[len("Edit("):-1]
    pattern = pattern[1:] if pattern.startswith("//") else pattern  # `//` marks an absolute path
    if pattern.endswith("/**"):
        return path.startswith(pattern[:-2])
    return path == pattern


@pytest.mark.parametrize("row", ROWS)
def test_the_deny_rules_name_every_row(module_root: Path, row: str) -> None:
    rules = deny_rules([module_root])
    path = (module_root / target(row)).as_posix()
    assert any(covers(rule, path) for rule in rules), f"no deny rule covers {row}: {rules}"


def hook(root: Path, payload: dict[str, object]) -> dict[str, object] | None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("MEMSTORE_ROOT", "MEMSTORE_HOOKS", "MEMSTORE_GATE")}
    proc = subprocess.run([sys.executable, "-S", str(HOOKRUN), "--root", str(root)],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


@pytest.mark.parametrize("row", ROWS)
def test_the_hook_refuses_an_agents_write_and_edit_of_every_row(
        module_root: Path, row: str) -> None:
    path = str(module_root / target(row))
    for tool, tool_input in (("Write", {"file_path": path, "content": "forged\n"}),
                             ("Edit", {"file_path": path, "old_string": "a", "new_string": "b"})):
        response = hook(module_root, {"hook_event_name": "PreToolUse", "session_id": "s-access",
                                      "cwd": "/", "tool_name": tool, "tool_input": tool_input})
        output = (response or {}).get("hookSpecificOutput")
        said = output.get("permissionDecision") if isinstance(output, dict) else None
        assert said == "deny", f"the hook let {tool} of {row} through: {response}"


@pytest.mark.parametrize("row", ROWS)
def test_the_shell_check_flags_rm_mv_and_a_redirect_naming_every_row(
        module_root: Path, row: str) -> None:
    path = str(module_root / target(row))
    for command in (f"rm {path}", f"mv {path} /tmp/elsewhere", f"echo forged > {path}"):
        assert names_person_file(command, str(module_root), "/") is not None, \
            f"the shell check passed `{command}`"

"""What the attacker's walkthrough of trust, round two found past the first fixes.

- A NotebookEdit names its file `notebook_path`, not `file_path`: the hook read only the latter, so
  a NotebookEdit of identity.md or MEMORY.md got no refusal from it.
- A mirror whose policy row holds text where a number belongs (a hand-edited or damaged
  runtime/memstore.db) ended status, tick, render and list in a TypeError traceback.
- memstore's own config (~/.config/memstore/config.toml, the root `install --scope user` recorded,
  which `memstore trust` and every root-less command act on) was writable by the agent.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
from pathlib import Path

from memstore.hook.handler import main as hook_main
from tests.helpers import memory, write


def pre(root: Path, tool: str, tool_input: dict) -> str | None:
    payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(root),
               "tool_name": tool, "tool_input": tool_input}
    out = io.StringIO()
    assert hook_main(["--root", str(root)], stdin=io.BytesIO(json.dumps(payload).encode()),
                     stdout=out) == 0
    return (json.loads(out.getvalue()) if out.getvalue() else {}).get("hookSpecificOutput", {}).get(
        "permissionDecision")


def test_notebook_edit_is_judged_by_its_own_field(root: Path) -> None:
    for rel in ("identity.md", "lenses/x.md", "memory/MEMORY.md", "runtime/journal/x.jsonl"):
        assert pre(root, "NotebookEdit", {"notebook_path": str(root / rel), "new_source": "x"}) == \
            "deny", rel


def test_a_damaged_policy_row_is_scored_as_defaults_not_a_traceback(root: Path, run) -> None:
    write(root, "memory/feedback_x.md", memory("feedback_x", "a memory"))
    assert run(root, "sync").exit_code == 0
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    conn.execute("UPDATE policy SET stability = 'abc', access_count = 'many'")
    conn.commit()
    conn.close()
    for command in (["status"], ["list"], ["render"], ["tick"]):
        result = run(root, *command)
        assert result.exit_code in (0, 1), (command, result.output)
    assert "feedback_x" in (root / "memory" / "MEMORY.md").read_text()


def test_memstores_own_config_is_not_the_agents(root: Path) -> None:
    config = Path(os.environ["HOME"]) / ".config" / "memstore" / "config.toml"
    assert pre(root, "Write", {"file_path": str(config), "content": 'root = "/tmp/elsewhere"'}) == \
        "deny"
    assert pre(root, "Bash", {"command": f"echo 'root = \"/x\"' > {config}"}) == "deny"

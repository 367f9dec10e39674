"""An install made by the previous release, upgraded in place, with the real Claude Code binary.

The person installed memstore before the layers moved (tests/data/previous-release/settings.json is
what that release's `install --scope user --apply` wrote), then upgraded the package where it was.
Their next session must work: the agent's Read of a memory is reinforced through the registered
`python -S .../memstore/hookrun.py`, the hook logs no error, and Claude Code reports no hook
failure.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.helpers import previous_settings

from .binaries import find_memstore
from .claude import find_claude, person_at_home, run_session, write
from .fake_anthropic import text, tool_use

pytestmark = pytest.mark.e2e


def test_the_previous_release_install_reinforces_a_read_in_a_real_session(tmp_path: Path) -> None:
    """Failure caught: after an upgrade the registered hook file is gone or broken, so Claude Code
    gets a blocking hook error on the agent's memory Read and the read is never reinforced."""
    claude, memstore = find_claude(), find_memstore()
    home, root, project, _env, ms = person_at_home(tmp_path, memstore)
    ms("init", str(root), "--apply")
    memory = root / "memory" / "feedback_deploys.md"
    write(memory, "---\nname: feedback_deploys\ntype: feedback\n"
          "summary: never deploy on a Friday\n---\nbody\n")
    ms("sync", "--quiet")
    previous_settings(home, root)
    steps = [[tool_use("Read", file_path=str(memory))], [text("Read it.")]]
    result, _requests = run_session(claude, project, home, steps, "default")
    assert not result.get("is_error"), result
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        count = conn.execute(
            "SELECT access_count FROM policy WHERE path = 'memory/feedback_deploys.md'").fetchone()
    finally:
        conn.close()
    assert count is not None and count[0] == 1, (
        "the agent's Read was not reinforced through the old registration")
    errors = root / "runtime" / "state" / "hook-errors.log"
    assert not errors.exists() or not errors.read_text().strip(), errors.read_text()

"""The prompt's pointers in a real Claude Code session (the stand-in API records each request).

A memory that has rolled out of MEMORY.md into the archive is pointed at when the person's prompt
names its subject, so its row is in the model's request before it plans; an off-topic prompt brings
nothing. Catches: the UserPromptSubmit registration missing from an install, Claude Code dropping
the hook's answer (a wrong shape), or pointers on every prompt.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .binaries import find_memstore
from .claude import CLAUDE_TIMEOUT, clean_env, find_claude, person_at_home, request_text, write
from .debriefs import wait_for_debriefs
from .fake_anthropic import FakeAnthropic, text

pytestmark = pytest.mark.e2e

HEADING = "memstore: memories this prompt may need"
TARGET = "reference_kestrel-restart"


def _memory(name: str, summary: str, body: str) -> str:
    return f"---\nname: {name}\ntype: {name.split('_')[0]}\nsummary: {summary}\n---\n\n{body}\n"


def _ask(claude: str, project: Path, home: Path, prompt: str) -> str:
    """One `claude -p` turn; the text of the model's first request."""
    with FakeAnthropic([[text("Noted.")]]) as fake:
        env = clean_env(HOME=str(home), ANTHROPIC_API_KEY="sk-ant-e2e-fake",
                        ANTHROPIC_BASE_URL=fake.url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                        IS_SANDBOX="1")
        proc = subprocess.run([claude, "-p", prompt, "--output-format", "json"], cwd=project,
                              env=env, capture_output=True, text=True, timeout=CLAUDE_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    wait_for_debriefs(home.parent)
    assert proc.returncode == 0, f"claude: exit {proc.returncode}\n{proc.stderr[-900:]}"
    main = [r for r in fake.requests if r.is_main]
    assert main, "the stand-in API saw no request from the session"
    return request_text(main[0].body)


def test_a_prompt_brings_an_archived_memorys_pointer_and_chatter_brings_none(
        tmp_path: Path) -> None:
    claude, memstore = find_claude(), find_memstore()
    home, root, project, _env, ms = person_at_home(tmp_path, memstore)
    # small bands: most memories roll into the archive, as in a root of thousands
    write(root / "memstore.toml",
          "[memstore]\nhot_budget = 400\nnew_budget = 200\ncold_budget = 200\n")
    ms("init", str(root), "--apply")
    for i in range(30):
        write(root / "memory" / f"project_note-{i:02d}.md",
              _memory(f"project_note-{i:02d}", f"weekly notes number {i} on the office",
                      "Ordinary words about the office and the weekly meeting."))
    write(root / "memory" / f"{TARGET}.md",
          _memory(TARGET, "restart the kestrel ledger service on host zephyr",
                  "Run systemctl restart kestrel on zephyr, then check the ledger queue."))
    ms("sync")
    ms("install", "--apply", "--scope", "user")
    ms("tick")  # the floor, measured on this root
    index = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert TARGET not in index, f"the memory should be in the archive, not MEMORY.md:\n{index}"

    asked = _ask(claude, project, home, "The kestrel ledger on zephyr hangs again; what now?")
    assert HEADING in asked, f"no pointers reached the model:\n{asked[-3000:]}"
    assert str(root / "memory" / f"{TARGET}.md") in asked

    chatter = _ask(claude, project, home, "Rename this variable to something clearer, please.")
    assert HEADING not in chatter, "an off-topic prompt brought pointers"
    pushes = list((root / "runtime" / "state" / "pushes").glob("*.jsonl"))
    assert len(pushes) == 1 and "zephyr" not in pushes[0].read_text(encoding="utf-8")

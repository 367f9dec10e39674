"""`memstore wake` with the real Claude Code binary as its model, the way cron runs it.

Failure caught: a default model command the real client rejects or runs interactively
(a flag it does not know, a prompt not read from stdin, tools offered to an unattended
model that the memory hooks would then approve). The binary talks to the scripted
stand-in for the Messages API; the test checks that the prompt reached the model with
no tools offered, and that both answers became dream-journal entries.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import subprocess
import uuid
from pathlib import Path

from memstore.wake import DEFAULT_MODEL_CMD

from .binaries import find_memstore
from .fake_anthropic import FakeAnthropic
from .test_claude_code import CLI_TIMEOUT, clean_env, find_claude, request_text


def test_wake_runs_the_default_model_command_on_the_real_binary(tmp_path: Path) -> None:
    claude = find_claude()
    memstore = find_memstore()
    home = tmp_path / "home"
    home.mkdir()
    root = home / "agents" / "me"
    now = dt.datetime.now(dt.UTC)
    marker = f"FACT-{uuid.uuid4().hex[:8]}"

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([memstore, *args], capture_output=True, text=True, timeout=CLI_TIMEOUT * 4,
                              env=env or clean_env(HOME=str(home)))

    assert run("init", str(root), "--apply").returncode == 0
    fact = root / "memory" / "short-term" / f"{now:%y%m%d}-deploy-window.md"
    fact.write_text(f"The deploy window moved to Thursdays ({marker}).\n", encoding="utf-8")
    ticked = run("--root", str(root), "tick")
    assert ticked.returncode == 0, ticked.stderr
    cue = json.loads((root / "runtime/state/cue.json").read_text())
    assert cue["anything"], cue

    # The default command, with only the program's path filled in.
    model_cmd = shlex.join([claude, *shlex.split(DEFAULT_MODEL_CMD)[1:]])
    with FakeAnthropic([]) as fake:
        env = clean_env(HOME=str(home), ANTHROPIC_API_KEY="sk-ant-e2e-fake", ANTHROPIC_BASE_URL=fake.url,
                        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        woke = run("--root", str(root), "wake", "--model-cmd", model_cmd, "--timeout", "120", env=env)
    assert woke.returncode == 0, f"{woke.stdout}\n{woke.stderr}\n{fake.summary()}"
    prompts = [r for r in fake.requests if r.body and r.body.get("messages")]
    assert len(prompts) >= 2, fake.summary()
    assert all(not r.body.get("tools") for r in prompts), "tools were offered to the unattended model"
    assert any(marker in request_text(r.body) for r in prompts), "the dream prompt (with the T1 fact) never arrived"

    journal = root / "memory" / "dream-journal"
    kinds = sorted(line.split(":", 1)[1].strip() for entry in journal.glob("*.md")
                   for line in entry.read_text().splitlines() if line.startswith("kind:"))
    assert kinds == ["dream", "meditation"], kinds
    assert json.loads((root / "runtime/state/cue.json").read_text())["anything"] is False  # consumed

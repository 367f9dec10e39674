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

from memstore.core.model_command import DEFAULT_MODEL_CMD

from .binaries import find_memstore
from .claude import CLI_TIMEOUT, clean_env, find_claude, request_text
from .fake_anthropic import FakeAnthropic


def test_wake_runs_the_default_model_command_on_the_real_binary(tmp_path: Path) -> None:
    claude = find_claude()
    memstore = find_memstore()
    home = tmp_path / "home"
    home.mkdir()
    root = home / "agents" / "me"
    now = dt.datetime.now(dt.UTC)
    marker = f"FACT-{uuid.uuid4().hex[:8]}"

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([memstore, *args], capture_output=True, text=True,
                              timeout=CLI_TIMEOUT * 4, env=env or clean_env(HOME=str(home)))

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
        env = clean_env(HOME=str(home), ANTHROPIC_API_KEY="sk-ant-e2e-fake",
                        ANTHROPIC_BASE_URL=fake.url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        woke = run("--root", str(root), "wake", "--model-cmd", model_cmd, "--timeout", "120",
                   env=env)
    assert woke.returncode == 0, f"{woke.stdout}\n{woke.stderr}\n{fake.summary()}"
    prompts = [r for r in fake.requests if r.body and r.body.get("messages")]
    assert len(prompts) >= 2, fake.summary()
    assert all(not r.body.get("tools") for r in prompts), (
        "tools were offered to the unattended model")
    assert any(marker in request_text(r.body) for r in prompts), (
        "the dream prompt (with the T1 fact) never arrived")

    journal = root / "memory" / "dream-journal"
    kinds = sorted(line.split(":", 1)[1].strip() for entry in journal.glob("*.md")
                   for line in entry.read_text().splitlines() if line.startswith("kind:"))
    assert kinds == ["dream", "meditation"], kinds
    # consumed
    assert json.loads((root / "runtime/state/cue.json").read_text())["anything"] is False


def test_wake_offers_no_tools_and_no_mcp_server_under_the_plugin(tmp_path: Path) -> None:
    """Failure caught (issue 31, item 7): `claude -p --tools ''` still offered the plugin's seven
    MCP tools (and any MCP server of the person's own) to the unattended dream, whose only stop was
    -p's default denial; and that server served the plugin's root, not the one being woken.

    The plugin is installed as a person installs it (`claude plugin install`, the checkout as its
    marketplace); its venv is this checkout's own memstore, linked where Setup would build it, so
    the plugin's MCP server really starts (no pip). A user-scope MCP server is registered as well. A
    control call with the old command shows both servers' tools are offered in this HOME, so the
    wake's empty tool list is the flags' doing, not a setup that offers nothing anyway.
    """
    import os
    import re

    claude = find_claude()
    memstore = find_memstore()
    home = (tmp_path / "home").resolve()
    home.mkdir()
    root = home / "agents" / "me"
    now = dt.datetime.now(dt.UTC)
    env = clean_env(HOME=str(home), PATH="/usr/bin:/bin", ANTHROPIC_API_KEY="sk-ant-e2e-fake",
                    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([memstore, *args], capture_output=True, text=True,
                              timeout=CLI_TIMEOUT * 4, env={**env, **extra}, cwd=home)
        assert done.returncode == 0, f"memstore {' '.join(args)}: {done.stdout}\n{done.stderr}"
        return done

    run("init", str(root), "--apply")
    repo = Path(__file__).resolve().parents[2]
    with FakeAnthropic([]) as fake:
        installed = subprocess.run(
            [claude, "plugin", "install", "memstore", "--marketplace", str(repo),
             "--config", f"root={root}"], capture_output=True, text=True, cwd=home,
            env={**env, "ANTHROPIC_BASE_URL": fake.url}, timeout=CLI_TIMEOUT * 4)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    venv = home / ".claude/plugins/data/memstore-memstore/venv/bin"
    venv.mkdir(parents=True)
    # what Setup's pip would build: this checkout's memstore
    os.symlink(memstore, venv / "memstore")
    config = home / ".claude.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    data.setdefault("mcpServers", {})["mine"] = {"command": memstore,
                                                 "args": ["--root", str(root), "mcp"]}
    config.write_text(json.dumps(data))

    def offered(argv: list[str]) -> tuple[list[str], set[str]]:
        """(tool names offered, mcp__ names in the text) of the first model request `argv` makes."""
        with FakeAnthropic([]) as fake:
            done = subprocess.run(argv, input="Say hello.", capture_output=True, text=True,
                                  cwd=home, timeout=120,
                                  env={**env, "ANTHROPIC_BASE_URL": fake.url,
                                       "MEMSTORE_HOOKS": "off"})
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{fake.summary()}"
        first = next(r for r in fake.requests if r.body and r.body.get("messages"))
        text = request_text(first.body)
        return [str(t.get("name")) for t in first.body.get("tools") or []], set(
            re.findall(r"mcp__\w+", text))

    # The old default command, the control. A server still starting when the first request goes out
    # is left out of it (seen: one of the two, now and then, on a busy machine; both, three times
    # running, at a load of 4), so up to six tries.
    servers: set[str] = set()
    for _try in range(6):
        tools, _names = offered([claude, "-p", "--tools", ""])
        servers |= {t.split("__")[1] for t in tools if t.startswith("mcp__")}
        if servers >= {"plugin_memstore_memstore", "mine"}:
            break
    assert "plugin_memstore_memstore" in servers or "mine" in servers, servers

    fact = root / "memory" / "short-term" / f"{now:%y%m%d}-deploy-window.md"
    fact.write_text("The deploy window moved to Thursdays.\n", encoding="utf-8")
    run("--root", str(root), "tick")
    model_cmd = shlex.join([claude, *shlex.split(DEFAULT_MODEL_CMD)[1:]])
    with FakeAnthropic([]) as fake:
        woke = subprocess.run(
            [memstore, "--root", str(root), "wake", "--model-cmd", model_cmd, "--timeout", "120"],
            capture_output=True, text=True, cwd=home, timeout=CLI_TIMEOUT * 8,
            env={**env, "ANTHROPIC_BASE_URL": fake.url})
    assert woke.returncode == 0, f"{woke.stdout}\n{woke.stderr}\n{fake.summary()}"
    prompts = [r for r in fake.requests if r.body and r.body.get("messages")]
    assert len(prompts) >= 2, fake.summary()
    for request in prompts:
        assert not request.body.get("tools"), [t.get("name") for t in request.body["tools"]]
        text = request_text(request.body)
        assert "mcp__" not in text, re.findall(r"mcp__\w+", text)
        assert "/memstore:" not in text  # nor the plugin's slash commands

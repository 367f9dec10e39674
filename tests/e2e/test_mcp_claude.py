"""The MCP server in the real Claude Code binary, registered the way `install --mcp` registers it.

Failure caught: a server Claude Code never starts (a .mcp.json it does not read, a project
server left unapproved), a tool call `claude -p` denies, or an MCP `read` that is not
recorded as a reinforcement. The scripted model calls `mcp__memstore__read`; the test
asserts from the result and the journal that the read went through and was reinforced.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

from .binaries import find_memstore
from .claude import CLAUDE_TIMEOUT, CLI_TIMEOUT, Markers, clean_env, find_claude, make_project
from .fake_anthropic import FakeAnthropic, text


def test_claude_code_reads_a_memory_through_the_mcp_server(tmp_path: Path) -> None:
    claude = find_claude()
    memstore = find_memstore()
    home = tmp_path / "home"
    home.mkdir()
    project = (tmp_path / "project").resolve()
    markers = Markers()
    make_project(project, markers, dt.datetime.now(dt.UTC))
    env = clean_env(HOME=str(home))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([memstore, "--root", str(project), *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=CLI_TIMEOUT)
        assert proc.returncode == 0, f"memstore {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
        return proc

    run("sync")
    run("install", "--apply", "--mcp")
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["memstore"]["args"][-1] == "mcp"

    steps = [
        [{"type": "tool_use", "name": "mcp__memstore__read", "input": {"name": "feedback_x"}}],
        [text("Read it through MCP.")],
    ]
    with FakeAnthropic(steps) as fake:
        session_env = clean_env(HOME=str(home), ANTHROPIC_API_KEY="sk-ant-e2e-fake",
                                ANTHROPIC_BASE_URL=fake.url,
                                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        proc = subprocess.run(
            [claude, "-p", "Read feedback_x from memory.", "--output-format", "json"], cwd=project,
            env=session_env, capture_output=True, text=True, timeout=CLAUDE_TIMEOUT,
            stdin=subprocess.DEVNULL)
    main = [r for r in fake.requests if r.is_main]
    detail = f"{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}\n{fake.summary()}"
    assert proc.returncode == 0, detail
    result = json.loads(proc.stdout)
    assert result["permission_denials"] == [], detail
    # (2.1.332 defers MCP tools behind tool search, so they are not in the request's tool list;
    # the result below is what proves the server ran.)
    # the tool result carried the memory's text
    assert markers.hot in json.dumps(main[-1].body["messages"]), detail

    events = [json.loads(line) for path in (project / "runtime/journal").glob("*.jsonl")
              for line in path.read_text().splitlines() if line.strip()]
    reads = [e for e in events if e["path"] == "memory/feedback_x.md" and e["tool"] == "Read"]
    assert len(reads) == 1, events
    run("sync")
    assert json.loads(run("show", "feedback_x", "--json").stdout)["access_count"] == 1

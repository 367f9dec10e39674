"""Driving the real Claude Code binary: finding it, its environment, a project's files, and reading
the requests it sent to the stand-in API (tests/e2e/fake_anthropic.py). Shared by the e2e tests."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .binaries import E2E_ENV, find_binary
from .debriefs import wait_for_debriefs
from .fake_anthropic import FakeAnthropic

REPO = Path(__file__).resolve().parents[2]
CLAUDE_TIMEOUT = 90  # seconds; a normal run takes 1-3 s
CLI_TIMEOUT = 30


# ---------------------------------------------------------------- locating the programs


def find_claude() -> str:
    """The Claude Code binary to drive, or pytest.skip with where we looked (also under $CI)."""
    packages = REPO / ".claude-bin" / "node_modules" / "@anthropic-ai"
    return find_binary(
        "claude",
        "CLAUDE_BIN",
        [REPO / ".claude-bin" / "claude", *sorted(packages.glob("claude-code-*/claude"))],
        f"run scripts/install_claude.sh (installs into {REPO / '.claude-bin'})",
        label="Claude Code",
        fail_in_ci=False,
    )


def clean_env(**extra: str) -> dict[str, str]:
    """The environment minus anything that could steer Claude Code or memstore elsewhere."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("ANTHROPIC_", "CLAUDE", "MEMSTORE_", "AWS_", "GOOGLE_", "VERTEX_", "XDG_CONFIG"))
        and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")
    }
    env.update(E2E_ENV)
    env.update(extra)
    return env


# ---------------------------------------------------------------- the project


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


class Markers:
    """Unique strings, so a hit can only come from the one place that holds them."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:10]
        self.hot = f"HOTROW-{tag}"
        self.t1 = f"SHORTTERM-{tag}"
        self.lens = f"LENSBODY-{tag}"
        self.identity = f"IDENTITY-{tag}"


def make_project(project: Path, markers: Markers, now: dt.datetime) -> None:
    """The agent root's files (the project itself in the "inside" layout)."""
    write(
        project / "identity.md",
        f"---\ntype: identity\n---\n\n# Identity\n\n- Name: e2e agent ({markers.identity})\n",
    )
    write(
        project / "memory" / "feedback_x.md",
        "---\n"
        "name: feedback_x\n"
        "type: feedback\n"
        f"summary: Always run the e2e test before merging ({markers.hot})\n"
        "importance: 5\n"
        "---\n\n"
        "# feedback_x\n\n"
        "The e2e test drives the real binary; unit tests alone missed a hook bug.\n",
    )
    write(
        project / "memory" / "short-term" / f"{now:%y%m%d}-e2e-fact.md",
        f"---\ntype: short-term\n---\n\nThe e2e run started today; remember {markers.t1}.\n",
    )
    write(
        project / "lenses" / "shell-discipline.md",
        "---\n"
        "name: shell-discipline\n"
        "type: lens\n"
        "trigger:\n"
        '  tool_match: "^Bash$"\n'
        "body_token_cap: 200\n"
        "---\n\n"
        f"# Before running shell commands\n\n- Quote every path. ({markers.lens})\n",
    )


# ---------------------------------------------------------------- reading request bodies


def block_texts(content: Any) -> Iterator[str]:
    """Every string a message's content carries (text blocks and tool_result contents)."""
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("text"), str):
            yield block["text"]
        if block.get("type") == "tool_result":
            yield from block_texts(block.get("content"))


def message_text(message: dict[str, Any]) -> str:
    return "\n".join(block_texts(message.get("content")))


def request_text(body: dict[str, Any]) -> str:
    parts = list(block_texts(body.get("system")))
    parts += [message_text(m) for m in body.get("messages", [])]
    return "\n".join(parts)


def result_index(messages: list[dict[str, Any]], tool_use_id: str) -> int:
    for i, m in enumerate(messages):
        content = m.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result"
            and b.get("tool_use_id") == tool_use_id
            for b in content
        ):
            return i
    raise AssertionError(f"no tool_result for {tool_use_id} in the conversation")


def after_result(messages: list[dict[str, Any]], tool_use_id: str) -> str:
    """Text from the tool_result's message up to (not including) the next assistant turn."""
    start = result_index(messages, tool_use_id)
    out = []
    for m in messages[start:]:
        if m.get("role") == "assistant":
            break
        out.append(message_text(m))
    return "\n".join(out)


# ---------------------------------------------------------------- a person's sessions


def run_session(
        claude: str, project: Path, home: Path, steps: list, mode: str) -> tuple[dict, list]:
    with FakeAnthropic(steps) as fake:
        env = clean_env(HOME=str(home), ANTHROPIC_API_KEY="sk-ant-e2e-fake",
                        ANTHROPIC_BASE_URL=fake.url,
                        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", IS_SANDBOX="1")
        proc = subprocess.run([claude, "-p", "Tidy up my notes.", "--output-format", "json",
                               "--permission-mode", mode],
                              cwd=project, env=env, capture_output=True, text=True,
                              timeout=CLAUDE_TIMEOUT, stdin=subprocess.DEVNULL)
    wait_for_debriefs(home.parent)
    assert proc.returncode == 0, (
        f"claude ({mode}): exit {proc.returncode}\n{proc.stdout[-900:]}\n{proc.stderr[-900:]}")
    return json.loads(proc.stdout), [r for r in fake.requests if r.is_main]



def person_at_home(tmp_path: Path, memstore: str, **extra: str
                   ) -> tuple[Path, Path, Path, dict[str, str],
                              Callable[..., subprocess.CompletedProcess[str]]]:
    """A person's set-up for these tests: (home, ~/agents/me, ~/code/p a git work tree, the
    environment, `ms(*args)`: memstore on that root from the project, which must exit 0)."""
    home = (tmp_path / "home").resolve()
    root = home / "agents" / "me"
    project = home / "code" / "p"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=CLI_TIMEOUT)
    env = clean_env(HOME=str(home), **extra)

    def ms(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([memstore, "--root", str(root), *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=CLI_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"memstore {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
        return proc

    return home, root, project, env, ms

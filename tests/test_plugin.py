"""The Claude Code plugin's parts that run without the client: the hook in plugin mode, verify's
recognition of a plugin install, the plugin's files and its runner. The real binary installs and
drives the plugin in tests/e2e/test_plugin_claude.py."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memstore.hook.handler import main as hook_main
from memstore.mirror.sync import sync
from tests.helpers import NOW, memory, write

REPO = Path(__file__).resolve().parents[1]
PLUGIN = REPO / "plugin"


@pytest.fixture
def plugin_root(root: Path) -> Path:
    write(root, "memory/feedback_x.md", memory("feedback_x", "the x rule"))
    write(root, "identity.md", "# me\nIDENTITYMARK\n")
    sync(root)
    return root


def plugin_hook(
        payload: dict, monkeypatch: pytest.MonkeyPatch, root: Path | str | None,
        *extra: str) -> dict | None:
    if root is None:
        monkeypatch.delenv("CLAUDE_PLUGIN_OPTION_ROOT", raising=False)
    else:
        monkeypatch.setenv("CLAUDE_PLUGIN_OPTION_ROOT", str(root))
    out = io.StringIO()
    assert hook_main(["--plugin", "--now", NOW, *extra],
                     stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out) == 0
    return json.loads(out.getvalue()) if out.getvalue() else None


START = {"hook_event_name": "SessionStart", "session_id": "p1", "cwd": "/", "source": "startup"}


def test_session_start_says_when_the_root_is_unset_or_not_laid_out(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """Failure caught: a plugin session silently without memory because its `root` option is unset,
    or names a folder `claude --init-only` has not laid out yet."""
    unset = plugin_hook(START, monkeypatch, None)["hookSpecificOutput"]["additionalContext"]
    assert "no agent root is set" in unset and "claude plugin configure memstore@memstore" in unset
    missing = plugin_hook(START, monkeypatch,
                          tmp_path / "nowhere")["hookSpecificOutput"]["additionalContext"]
    assert "not laid out yet" in missing and "claude --init-only" in missing
    # the identity parts say nothing (one message is enough), and a tool call is left alone
    assert plugin_hook(START, monkeypatch, None, "--part", "imports:1") is None
    assert plugin_hook({"hook_event_name": "PreToolUse", "tool_name": "Read", "cwd": "/",
                        "tool_input": {"file_path": "/etc/hosts"}}, monkeypatch, None) is None


def test_session_start_carries_identity_and_the_index(
        plugin_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught: a plugin (no `@` imports) starting without identity and the index."""
    from memstore.api.store import Store

    Store(plugin_root).render()
    answer = plugin_hook(START, monkeypatch, plugin_root, "--part", "imports:1")
    part = answer["hookSpecificOutput"]["additionalContext"]
    assert "IDENTITYMARK" in part and "feedback_x" in part


def test_only_the_plugins_own_mcp_tools_are_approved(
        plugin_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught: the plugin's MCP tools denied in `claude -p` (no hook approves them), or an
    approval wide enough to pass another server's tools."""
    def decision(tool: str, *extra: str) -> str | None:
        payload = {"hook_event_name": "PreToolUse", "session_id": "p1", "cwd": "/",
                   "tool_name": tool, "tool_input": {"name": "feedback_x"}}
        out = (plugin_hook(payload, monkeypatch, plugin_root, *extra) if "--root" not in extra
               else None)
        return (out or {}).get("hookSpecificOutput", {}).get("permissionDecision")

    assert decision("mcp__plugin_memstore_memstore__read") == "allow"
    assert decision("mcp__plugin_memstore_memstore__run_shell") is None
    assert decision("mcp__plugin_other_memstore__read") is None
    # outside plugin mode the plugin's names are not memstore's to approve
    out = io.StringIO()
    payload = {"hook_event_name": "PreToolUse", "session_id": "p1", "cwd": "/",
               "tool_name": "mcp__plugin_memstore_memstore__read", "tool_input": {}}
    hook_main(["--root", str(plugin_root)], stdin=io.BytesIO(json.dumps(payload).encode()),
              stdout=out)
    assert "allow" not in out.getvalue()


def _plugin_settings(home: Path, root: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledPlugins": {"memstore@memstore": True},
                                    "pluginConfigs": {
                                        "memstore@memstore": {"options": {"root": str(root)}}}}))


def test_verify_recognises_a_plugin_install_and_refuses_double_wiring(plugin_root: Path, run,
                                                                      private_home: Path) -> None:
    """Failure caught: verify failing a working plugin install (it looks for settings-file hooks),
    or passing one whose root is also wired by `install` (identity and the index would arrive
    twice)."""
    _plugin_settings(private_home, plugin_root)
    assert run(plugin_root, "render").exit_code == 0
    result = run(plugin_root, "verify", "--json")
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    assert result.exit_code == 0, checks
    assert "memstore@memstore" in checks["plugin"]["detail"]
    assert checks["reinforcement"]["ok"] and "access_count 1" in checks["reinforcement"]["detail"]

    # a settings-file install beside the plugin
    refused = run(plugin_root, "install", "--scope", "user", "--apply")
    assert refused.exit_code == 2 and "install --cron-only" in refused.stderr, refused.stderr
    # the double wiring as it still arises: a settings-file install made before enabling the plugin
    path = private_home / ".claude" / "settings.json"
    plugin_keys = json.loads(path.read_text())
    path.write_text("{}")
    assert run(plugin_root, "install", "--scope", "user", "--apply").exit_code == 0
    path.write_text(json.dumps({**json.loads(path.read_text()), **plugin_keys}))
    doubled = run(plugin_root, "verify", "--json")
    checks = {c["name"]: c for c in json.loads(doubled.stdout)}
    assert doubled.exit_code == 1 and not checks["one install"]["ok"], checks
    assert "claude plugin uninstall memstore@memstore" in checks["one install"]["fix"]


def test_the_plugin_files_hold_together() -> None:
    """Failure caught: a plugin whose hooks or MCP server name files that are not in it, or whose
    package link is broken (every hook would fail, silently)."""
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    assert entry["name"] == "memstore" and (REPO / entry["source"]).resolve() == PLUGIN.resolve()
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["userConfig"]["root"]["type"] == "directory"
    hooks = json.loads((PLUGIN / manifest["hooks"]).read_text())["hooks"]
    mcp = json.loads((PLUGIN / manifest["mcpServers"]).read_text())["mcpServers"]
    commands = ([h for groups in hooks.values() for g in groups for h in g["hooks"]]
                + list(mcp.values()))
    for command in commands:
        assert command["command"] in ("python3", "bash"), command  # exec form: no shell, no quoting
        # the PreToolUse gate, which execs the same hook on python3
        if command["command"] == "bash":
            assert (command["args"][0].endswith("/memstore/hookgate.sh")
                    and command["args"][1] == "python3")
        for arg in command["args"]:
            if arg.startswith("${CLAUDE_PLUGIN_ROOT}/"):
                assert (PLUGIN / arg.removeprefix("${CLAUDE_PLUGIN_ROOT}/")).is_file(), arg
    assert (PLUGIN / "memstore" / "hook.py").resolve() == (REPO / "memstore" / "hook.py").resolve()
    # what `pip install -e <plugin>` reads
    for name in ("setup.cfg", "pyproject.toml", "migrations"):
        assert (PLUGIN / name).exists(), name
    assert not (PLUGIN / "setup.py").exists()  # pip would run it as the build script
    for name in ("search", "note", "review", "status"):
        assert (PLUGIN / manifest["commands"] / f"{name}.md").is_file()


def test_runner_without_its_environment_says_what_to_do(tmp_path: Path) -> None:
    """Failure caught: the plugin's MCP server or command failing with a traceback before `claude
    --init-only` built its environment, or its SessionEnd hook failing the session."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_PLUGIN", "MEMSTORE_"))}
    env.update(HOME=str(tmp_path), CLAUDE_PLUGIN_DATA=str(tmp_path / "data"),
               CLAUDE_PLUGIN_OPTION_ROOT="/x")
    done = subprocess.run([sys.executable, str(PLUGIN / "run.py"), "status"], capture_output=True,
                          text=True, env=env, timeout=30)
    assert (done.returncode == 1 and "claude --init-only" in done.stderr
            and "Traceback" not in done.stderr)
    hook = subprocess.run([sys.executable, str(PLUGIN / "run.py"), "debrief", "--hook"],
                          capture_output=True, text=True, env=env, timeout=30, input="{}")
    assert hook.returncode == 0 and hook.stdout == "" and hook.stderr == ""


def test_a_failed_setup_is_said_at_session_start(plugin_root: Path, monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    """Failure caught: `claude --init-only` exits 0 and shows nothing when the plugin's Setup fails,
    so the person never learns why the MCP server and the debrief do not work."""
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path))
    (tmp_path / "setup-failed.txt").write_text(
        "memstore plugin: its setup (claude --init-only) failed: pip\n")
    text = plugin_hook(START, monkeypatch, plugin_root)["hookSpecificOutput"]["additionalContext"]
    assert text.startswith("memstore plugin: its setup (claude --init-only) failed")


def test_runner_finds_the_root_in_claude_codes_settings(plugin_root: Path, tmp_path: Path) -> None:
    """Failure caught (found by the plugin's end-to-end test): a slash command's shell gets none of
    the plugin's variables, so /memstore:status said no root was set while the option was."""
    home = tmp_path / "h"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(
        {"pluginConfigs": {"memstore@memstore": {"options": {"root": str(plugin_root)}}}}))
    data = home / ".claude" / "plugins" / "data" / "memstore-memstore" / "venv" / "bin"
    data.mkdir(parents=True)
    (data / "memstore").symlink_to(Path(sys.executable).parent / "memstore")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE_PLUGIN", "MEMSTORE_ROOT"))}
    env["HOME"] = str(home)
    done = subprocess.run([sys.executable, str(PLUGIN / "run.py"), "status", "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["root"] == str(plugin_root)


def test_runner_runs_no_program_planted_beside_the_plugins_data(
        plugin_root: Path, tmp_path: Path) -> None:
    """Failure caught (issue 31's attacker walkthrough): without ${CLAUDE_PLUGIN_DATA} (a slash
    command's shell) run.py ran the first of ~/.claude/plugins/data/memstore-*/venv/bin/memstore,
    alphabetically: a folder the agent made there (memstore-0) chose the program the person's
    commands ran."""
    home = tmp_path / "h"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps(
        {"pluginConfigs": {"memstore@memstore": {"options": {"root": str(plugin_root)}}}}))
    planted = home / ".claude" / "plugins" / "data" / "memstore-0" / "venv" / "bin" / "memstore"
    planted.parent.mkdir(parents=True)
    marker = tmp_path / "ran"
    planted.write_text(f"#!/bin/sh\ntouch {marker}\n")
    planted.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE_PLUGIN", "MEMSTORE_ROOT"))}
    env["HOME"] = str(home)
    done = subprocess.run([sys.executable, str(PLUGIN / "run.py"), "status"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert not marker.exists(), "run.py ran a program planted under plugins/data/"
    assert done.returncode == 1 and "not built yet" in done.stderr, done.stderr


@pytest.mark.parametrize("target", [".claude/plugins/data/memstore-memstore/venv/bin/memstore",
                                    ".claude/plugins/cache/memstore/memstore/0.1.0/memstore/hook/handler.py",
                                    ".local/bin/memstore"])
def test_the_agent_cannot_replace_the_code_memstore_runs(
        plugin_root: Path, monkeypatch, target: str) -> None:
    """Failure caught (issue 31's attacker walkthrough): the plugin's venv (which the cron jobs
    run), its copied code (which every hook runs) and the `memstore` Setup links were the agent's to
    overwrite."""
    path = str(Path(os.environ["HOME"]) / target)
    write_call = {"hook_event_name": "PreToolUse", "session_id": "s",
                  "cwd": str(plugin_root.parent), "tool_name": "Write",
                  "tool_input": {"file_path": path, "content": "#!/bin/sh\n"}}
    out = plugin_hook(write_call, monkeypatch, plugin_root)
    assert out and out["hookSpecificOutput"]["permissionDecision"] == "deny", out
    shell = {**write_call, "tool_name": "Bash", "tool_input": {"command": f"printf x > ~/{target}"}}
    out = plugin_hook(shell, monkeypatch, plugin_root)
    assert out and out["hookSpecificOutput"]["permissionDecision"] == "deny", out

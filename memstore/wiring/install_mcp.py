"""Wiring the MCP server (`install --mcp`): the project's .mcp.json, the approval of its tools,
and the user-scope case where the hooks are already wired and only the server is added."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from memstore.wiring import claude_code
from memstore.wiring.install_base import (
    HOOK_TIMEOUT_S,
    MCP_MATCHER,
    MCP_NAME,
    Change,
    InstallError,
    InstallPlan,
    has_mcp_approval,
    hook_command,
    hooks_of,
    is_ours,
    json_text,
    memstore_command,
    names_root,
    read_settings,
)
from memstore.wiring.layout import Layout


def mcp_server_entry(root: Path) -> dict[str, Any]:
    """How an MCP client starts this root's server: this installation's memstore, absolute paths."""
    program = memstore_command()
    return {"command": program[0], "args": [*program[1:], "--root", str(root), "mcp"]}


def mcp_add_command(root: Path) -> str:
    """The one-time command that registers the server for every project (Claude Code keeps
    user-scope MCP servers in its own state file, which memstore never writes)."""
    entry = mcp_server_entry(root)
    return shlex.join(["claude", "mcp", "add", "--scope", "user", MCP_NAME, "--", entry["command"],
                       *entry["args"]])


def plan_mcp(plan: InstallPlan, layout: Layout, settings: dict[str, Any]) -> dict[str, Any]:
    """Register the MCP server for this layout; returns settings with our server enabled and its
    tools allowed.

    Project scope: the server goes into the project's .mcp.json (other servers kept), and
    the settings file enables it by name (Claude Code asks before starting a project's
    servers otherwise). Its tool calls are approved by the PreToolUse hook (registered
    with the matcher MCP_MATCHER): `claude -p` denies a call nobody approved, and an
    allow rule in the project's settings.json is ignored until the folder is trusted.
    User scope: the person runs `claude mcp add` once (printed).
    """
    merged = json.loads(json.dumps(settings))
    if layout.project is None:
        plan.next_steps.append("register the MCP server once for every project: "
                               f"{mcp_add_command(layout.root)}")
        return merged
    enabled = merged.setdefault("enabledMcpjsonServers", [])
    if isinstance(enabled, list) and MCP_NAME not in enabled:
        enabled.append(MCP_NAME)
    target = layout.project / ".mcp.json"
    before, data = read_settings(target)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(f"{target}: 'mcpServers' is not an object",
                           hint="fix it by hand first")
    servers[MCP_NAME] = mcp_server_entry(layout.root)
    plan.changes.append(Change(target, before, json_text(data)))
    return merged



def wired_for_user(root: Path) -> bool:
    """Are memstore's hooks for this root already in the user's settings (install --scope user)?"""
    _, data = read_settings(claude_code.user_settings())
    hooks = hooks_of(data)
    return any(is_ours(h) and names_root(h["command"], root)
               for groups in hooks.values() if isinstance(groups, list)
               for g in groups if isinstance(g, dict) for h in g.get("hooks") or [])


def plan_mcp_only(layout: Layout) -> InstallPlan:
    """`install --mcp` in a project whose root is wired at user scope: the server for this
    project and its tools' approval in the user's settings, beside the hooks already there; no
    second set of hooks."""
    plan = InstallPlan(verify_with="--scope user")  # the wiring lives at user scope
    user = claude_code.user_settings()
    before, data = read_settings(user)
    if not has_mcp_approval(data):
        merged = json.loads(json.dumps(data))
        command = hook_command(layout.root)
        group = {"matcher": MCP_MATCHER,
                 "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]}
        merged.setdefault("hooks", {}).setdefault("PreToolUse", []).append(group)
        plan.changes.append(Change(user, before, json_text(merged)))
    project_before, project_data = read_settings(layout.settings)
    merged_project = plan_mcp(plan, layout, project_data)
    if merged_project != project_data:
        plan.changes.append(Change(layout.settings, project_before, json_text(merged_project)))
    plan.warnings.append(f"{layout.root} is already wired for every project in {user}: only the "
                         "MCP server is added here, and no hooks")
    return plan



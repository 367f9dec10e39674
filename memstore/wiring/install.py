"""Wire memstore into Claude Code: hook registrations, CLAUDE.md imports, the nightly cron jobs
(cron.py).

Everything is planned first and shown as a diff; --apply writes it. Merging is
idempotent: our earlier registrations are recognised by their command and replaced,
every other key and every other hook in settings.json is kept as it was, and running
install twice changes nothing the second time. `install --uninstall` (plan_uninstall)
takes out what install put in for one root, and nothing else.

Registrations (why each looks the way it does is in hook.py's docstring):
- PostToolUse Read/Edit/Write/MultiEdit, filtered with `if` to files under memory/, so
  a hook process starts only for memory files: reinforcement.
- PreToolUse Write/Edit/MultiEdit filtered the same way: approvals.
- PreToolUse `*` through hookgate.sh, which starts the hook only when a lens could match:
  lenses.
- SessionStart: the cold-start bundle.
- UserPromptSubmit: up to three pointers to memories the prompt points at, or nothing.
- SessionEnd: `memstore --root ROOT debrief --hook --detach`, the end-of-session debrief
  (capture.py), in a process of its own.

Where things go depends on where the agent root lies (Layout):
- user scope (one agent, every project): hooks and a read grant for the root in
  ~/.claude/settings.json, the identity and MEMORY.md imports in ~/.claude/rules/memstore.md,
  user memory, where Claude Code always expands them.
- project scope, root inside the project: hooks in .claude/settings.json, imports in
  ./CLAUDE.md; reads need no grant.
- project scope, root elsewhere: hooks in .claude/settings.json, the read grant in
  .claude/settings.local.json (kept out of git: Claude Code ignores it once tracked),
  reads also approved by a PreToolUse hook, and identity + MEMORY.md delivered by
  SessionStart handlers, since the project's CLAUDE.md cannot import files outside the
  project without a one-time approval that no setting can give.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memstore.core.agent_root import RootPaths
from memstore.core.kinds import REINFORCING_TOOLS
from memstore.core.model_command import resolve_model_cmd
from memstore.hook.session_imports import IMPORT_PARTS
from memstore.wiring import claude_code, protect
from memstore.wiring.cron import Source
from memstore.wiring.cron import plan as plan_crontab
from memstore.wiring.install_base import (
    BEGIN,
    DEBRIEF_TIMEOUT_S,
    END,
    HOOK_TIMEOUT_S,
    MCP_MATCHER,
    MCP_NAME,
    Change,
    InstallError,
    InstallPlan,
    approved_tools,
    debrief_command,
    has_mcp_approval,
    hook_command,
    hooks_of,
    is_ours,
    json_text,
    names_root,
    permission_list,
    plan_root_record,
    read_settings,
)
from memstore.wiring.install_mcp import plan_mcp, plan_mcp_only, wired_for_user
from memstore.wiring.install_record import created, only_memstores
from memstore.wiring.layout import Layout


def permission_glob(tool: str, root: Path) -> str:
    # Claude Code's permission-rule syntax: `//` marks an absolute path.
    return f"{tool}(/{root.as_posix()}/memory/**)"


def gate_command(command: str) -> str:
    """The hook command behind the lens gate: bash runs memstore/hookgate.sh, which execs `command`
    only when a lens could match the tool (or its list is missing or stale)."""
    gate = Path(__file__).resolve().parents[1] / "hookgate.sh"
    return f"{shlex.join([shutil.which('bash') or 'bash', str(gate), '--lenses-only'])} {command}"


def registrations(root: Path | Sequence[Path], command: str, lens_matcher: str | None, *,
                  approve_reads: bool = False, mcp: bool = False, import_parts: int = 0,
                  debrief: str | None = None, wiring: Sequence[Path] = ()
                  ) -> dict[str, list[dict[str, Any]]]:
    """The hook handlers for a root, under each of its spellings (forms: the real path first)."""
    forms = [root] if isinstance(root, Path) else list(root)
    def handler(extra: dict[str, Any] | None = None, cmd: str = command) -> dict[str, Any]:
        return {"type": "command", "command": cmd, "timeout": HOOK_TIMEOUT_S, **(extra or {})}

    approved = approved_tools(approve_reads)
    pre = [{"matcher": tool,
            "hooks": [handler({"if": permission_glob(tool, form)}) for form in forms]}
           for tool in approved]
    pre += protect.registrations(forms, handler, wiring)
    # Lenses: every tool call, through the gate (hookgate.sh), which starts the hook only for a tool
    # some lens could match, as the lenses are now: a lens on a new tool needs no reinstall.
    # `lens_matcher` (the union at install time) no longer shapes the registration.
    pre.append({"matcher": "*", "hooks": [handler(cmd=gate_command(command))]})
    if mcp:
        pre.append({"matcher": MCP_MATCHER, "hooks": [handler()]})
    # Claude Code keeps each handler's SessionStart output whole only up to 10,000
    # characters, so identity + MEMORY.md take several handlers.
    parts = [{"hooks": [handler(cmd=f"{command} --part imports:{n}")]}
             for n in range(1, import_parts + 1)]
    regs: dict[str, list[dict[str, Any]]] = {
        # the bundle after the last import part: a fixed order, the stablest text first
        # (session_start.py)
        "SessionStart": [{"hooks": [handler(cmd=f"{command} --after imports:{import_parts}"
                                            if import_parts else command)]}, *parts],
        # pointers to the memories a prompt points at, before the model plans (core.pointers)
        "UserPromptSubmit": [{"hooks": [handler()]}],
        "PreToolUse": pre,
        "PostToolUse": [
            {"matcher": tool,
             "hooks": [handler({"if": permission_glob(tool, form)}) for form in forms]
             # a joined team's memories (teams/<name>/memory/) are read only, and reinforced for
             # this person
             + ([handler({"if": f"Read(/{form.as_posix()}/teams/*/memory/**)"}) for form in forms]
                if tool == "Read" else [])}
            for tool in REINFORCING_TOOLS
        ],
    }
    if debrief:
        # The end-of-session debrief (sync, lint, render, the final answer's rules as T1 lessons).
        regs["SessionEnd"] = [{"hooks": [handler({"timeout": DEBRIEF_TIMEOUT_S}, cmd=debrief)]}]
    return regs


def _drop_handlers(hooks: dict[str, Any], drop: Callable[[Any], bool]) -> None:
    """Take the handlers `drop` picks out of every event, in place; groups left empty go, and
    events left empty become [] (where they stand, so a reinstall keeps the key order)."""
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                others = [h for h in group["hooks"] if not drop(h)]
                if not others and group["hooks"]:
                    continue  # the group held only handlers we drop
                group = {**group, "hooks": others}
            kept.append(group)
        hooks[event] = kept


def _drop_empty(hooks: dict[str, Any]) -> None:
    for event in [e for e, groups in hooks.items() if groups == []]:
        del hooks[event]


def merge_settings(existing: dict[str, Any], regs: dict[str, list[dict[str, Any]]],
                   disable_auto_memory: bool) -> dict[str, Any]:
    merged = json.loads(json.dumps(existing))  # a deep copy that keeps key order
    hooks = merged.get("hooks")
    if hooks is None:
        hooks = merged["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InstallError("settings.json has a 'hooks' value that is not an object",
                           hint="fix it by hand first")
    _drop_handlers(hooks, is_ours)
    for event, groups in regs.items():
        hooks[event] = [*hooks.get(event, []), *groups]
    _drop_empty(hooks)
    if disable_auto_memory:
        # One writer owns memory: Claude Code's own auto memory would be a second one.
        merged["autoMemoryEnabled"] = False
    return merged


def merge_grant(existing: dict[str, Any], root: Path) -> dict[str, Any]:
    """existing with the root in permissions.additionalDirectories (a copy; idempotent).

    additionalDirectories rather than a Read rule: it also lets the agent's shell `grep`
    reach the memory, and Claude Code confines Bash to the folders it was granted.
    """
    merged = json.loads(json.dumps(existing))
    folders = permission_list(merged, "additionalDirectories")
    if not claude_code.grants_read(merged, root):
        folders.append(str(root))
    return merged


def merge_gitignore(text: str, line: str) -> str:
    if line in text.splitlines():
        return text
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line + "\n"


def import_lines(root: Path, claude_md: Path) -> list[str]:
    lines = []
    for target in (Path(RootPaths(root).identity), Path(RootPaths(root).index)):
        try:
            rel = target.relative_to(claude_md.parent.resolve())
            lines.append(f"@{rel.as_posix()}")
        except ValueError:
            lines.append(f"@{target.as_posix()}")
    return lines


def merge_claude_md(text: str, lines: list[str]) -> str:
    block = "\n".join([BEGIN, *lines, END])
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if pattern.search(text):
        return pattern.sub(lambda _m: block, text, count=1)
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text else "") + block + "\n"


def remove_block(text: str) -> str:
    pattern = re.compile(r"\n?" + re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.S)
    return pattern.sub("\n", text, count=1).rstrip("\n") + "\n" if pattern.search(text) else text


def plan_install(
    layout: Layout,
    lens_matcher: str | None,
    *,
    disable_auto_memory: bool = True,
    cron: Source | None = None,
    cron_at: tuple[int, int] = (3, 30),
    model_cmd: str | None = None,
    mcp: bool = False,
) -> InstallPlan:
    """cron: also install the nightly tick and wake (cron.py) in that crontab, tick at cron_at
    (hour, minute)."""
    if mcp and layout.scope == "project" and wired_for_user(layout.root):
        return plan_mcp_only(layout)

    root = layout.root
    plan = InstallPlan(root=root)
    before, data = read_settings(layout.settings)
    if not mcp and has_mcp_approval(data):
        mcp = True  # installed with --mcp before: a re-install (after a lens change) keeps it
        plan.warnings.append("kept the MCP server's approval hook from an earlier install --mcp")
    for other in sorted(_other_roots(data, root)):
        plan.warnings.append(f"{layout.settings} wires another agent root, {other}: this install "
                             "replaces it (one root per settings file); its files stay as they are")
    regs = registrations(layout.forms, hook_command(root), lens_matcher, wiring=layout.wiring,
                         approve_reads=layout.external, mcp=mcp,
                         import_parts=IMPORT_PARTS if layout.session_imports else 0,
                         debrief=debrief_command(root))
    merged = protect.merge_deny(merge_settings(data, regs, disable_auto_memory), layout.forms,
                                layout.wiring)
    if layout.grant == layout.settings:
        merged = merge_grant(merged, root)
    if mcp:
        merged = plan_mcp(plan, layout, merged)
    plan.changes.append(Change(layout.settings, before, json_text(merged)))
    if layout.grant is not None and layout.grant != layout.settings:
        grant_before, grant_data = read_settings(layout.grant)
        plan.changes.append(Change(layout.grant, grant_before,
                                   json_text(merge_grant(grant_data, root))))
    if layout.scope == "project":
        for local in {p for p in (layout.settings, layout.grant)
                      if p is not None and p.name == LOCAL_SETTINGS}:
            _keep_out_of_git(plan, local, layout.project or local.parent)
    if layout.scope == "user":
        plan_root_record(plan, root)
    if layout.imports is not None:
        md = layout.imports
        md_before = md.read_text(encoding="utf-8") if md.exists() else None
        plan.changes.append(Change(md, md_before,
                                   merge_claude_md(md_before or "", import_lines(root, md))))
    elif layout.project is not None:
        # An import block an earlier install left in the project's CLAUDE.md would never be
        # expanded (and would double the index once approved): SessionStart carries it now.
        md = layout.project / "CLAUDE.md"
        md_before = md.read_text(encoding="utf-8") if md.exists() else None
        if md_before is not None and BEGIN in md_before:
            plan.changes.append(Change(md, md_before, remove_block(md_before)))
    if cron is not None:
        resolved, found = resolve_model_cmd(model_cmd)
        if not found:
            plan.warnings.append(f"the wake job's model command {resolved!r} is not on your PATH, "
                                 "and cron's PATH is bare: install Claude Code, or pass "
                                 "--model-cmd with an absolute path")
        _plan_cron(plan, cron, root, at=cron_at, model_cmd=resolved)
    return plan


def plan_cron_only(root: Path, source: Source, *, at: tuple[int, int] = (3, 30),
                   model_cmd: str | None = None, remove: bool = False) -> InstallPlan:
    """install --cron-only: the nightly tick and wake for root, and no other file touched."""
    plan = InstallPlan()
    resolved = None
    if not remove:
        resolved, found = resolve_model_cmd(model_cmd)
        if not found:
            plan.warnings.append(f"the wake job's model command {resolved!r} is not on your PATH, "
                                 "and cron's PATH is bare: install Claude Code, or pass "
                                 "--model-cmd with an absolute path")
    _plan_cron(plan, source, root, at=at, remove=remove, model_cmd=resolved)
    return plan


def _plan_cron(plan: InstallPlan, source: Source, root: Path, *, at: tuple[int, int] = (3, 30),
               remove: bool = False, model_cmd: str | None = None) -> None:
    edit = plan_crontab(source, root, at=at, remove=remove, model_cmd=model_cmd)
    # no crontab, none made: no change
    before = edit.before if edit.before is not None or edit.after else ""
    plan.changes.append(Change(source.file or Path("crontab"), before, edit.after,
                               write=edit.write))
    plan.warnings += edit.warnings


def _other_roots(settings: dict[str, Any], root: Path) -> set[str]:
    """Roots other than `root` that memstore's handlers in these settings name (--root DIR)."""
    found: set[str] = set()
    for groups in hooks_of(settings).values():
        for group in groups if isinstance(groups, list) else []:
            for handler in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if not is_ours(handler):
                    continue
                try:
                    words = shlex.split(handler["command"])
                except ValueError:
                    continue
                for flag, value in itertools.pairwise(words):
                    if flag == "--root" and os.path.realpath(value) != os.path.realpath(root):
                        found.add(value)
    return found


def remove_registrations(existing: dict[str, Any], root: Path) -> dict[str, Any]:
    """existing without our hook handlers for root (a copy); groups and events left empty go
    too."""
    merged = json.loads(json.dumps(existing))
    hooks = merged.get("hooks")
    if not isinstance(hooks, dict):
        return merged
    _drop_handlers(hooks, lambda h: is_ours(h) and names_root(h["command"], root))
    _drop_empty(hooks)
    if not hooks:
        del merged["hooks"]
    enabled = merged.get("enabledMcpjsonServers")
    if isinstance(enabled, list) and MCP_NAME in enabled:
        enabled.remove(MCP_NAME)
        if not enabled:
            del merged["enabledMcpjsonServers"]
    return merged


def _block_names_root(text: str, md: Path, root: Path) -> bool:
    match = re.search(re.escape(BEGIN) + r"(.*?)" + re.escape(END), text, re.S)
    targets = [line[1:] for line in (match[1].split("\n") if match else [])
               if line.startswith("@")]
    return any(claude_code.inside(md.parent / Path(t).expanduser(), root) for t in targets)


def plan_uninstall(layout: Layout, *, cron: Source | None = None) -> InstallPlan:
    """Take out what install put in for layout.root: its hook handlers, its import block, and
    (cron given) its cron jobs. Left as they are: the read grant, autoMemoryEnabled and the
    .gitignore line, which may have been there before install, and everything not ours."""
    root = layout.root
    plan = InstallPlan(root=root)
    made = created(root)
    before, data = read_settings(layout.settings)
    if before is not None:
        kept = protect.remove_deny(remove_registrations(data, root), layout.forms, layout.wiring)
        if kept != data:
            gone = str(layout.settings.absolute()) in made and only_memstores(kept, root)
            plan.changes.append(Change(layout.settings, before, json_text(kept), remove=gone))
    candidates = [layout.imports] if layout.imports is not None else []
    if layout.project is not None:
        candidates.append(layout.project / "CLAUDE.md")
    for md in dict.fromkeys(candidates):
        text = md.read_text(encoding="utf-8") if md.is_file() else None
        if text is None or BEGIN not in text:
            continue
        if _block_names_root(text, md, root):
            after = remove_block(text)
            plan.changes.append(Change(md, text, after,
                                       remove=str(md.absolute()) in made and not after.strip()))
        else:
            plan.warnings.append(f"{md} holds a memstore import block for another root; "
                                 "left as it is")
    if layout.project is None:
        plan.next_steps.append("if you registered the MCP server: "
                               f"claude mcp remove --scope user {MCP_NAME}")
        plan_root_record(plan, root, remove=True)
    else:
        target = layout.project / ".mcp.json"
        mcp_before, mcp_data = read_settings(target)
        server = ((mcp_data.get("mcpServers") or {}).get(MCP_NAME)
                  if isinstance(mcp_data.get("mcpServers"), dict) else None)
        if isinstance(server, dict) and str(root) in (server.get("args") or []):
            kept = json.loads(json.dumps(mcp_data))
            del kept["mcpServers"][MCP_NAME]
            plan.changes.append(Change(target, mcp_before, json_text(kept)))
    if cron is not None:
        _plan_cron(plan, cron, root, remove=True)
    return plan


LOCAL_SETTINGS = "settings.local.json"


def _keep_out_of_git(plan: InstallPlan, local: Path, project: Path) -> None:
    """Claude Code honours a settings.local.json only while git does not track it: ignore it, or
    warn."""
    if local.exists() and claude_code.git_tracks(local):
        plan.warnings.append(f"git tracks {local}, so Claude Code ignores the read grant in it; "
                             f"untrack it with: git -C {local.parent} rm --cached {local.name}")
    elif claude_code.git_ignores(local) is False:
        top = claude_code.git_toplevel(project)
        if top is not None:
            ignore = top / ".gitignore"
            rel = local.resolve().relative_to(top.resolve()).as_posix()
            before = ignore.read_text(encoding="utf-8") if ignore.exists() else None
            plan.changes.append(Change(ignore, before, merge_gitignore(before or "", rel)))

"""`install --client codex|gemini` and `verify --client ...`: the other clients' own config files.

The hook logic is the one in memstore.hook.handler (through memstore.hook.clients); what differs per
client is where its hooks are declared and what else it needs:

- Codex CLI: `$CODEX_HOME/hooks.json` (user scope only), plus in `$CODEX_HOME/config.toml`
  a trust entry per handler (Codex skips an untrusted hook silently; the hash is sha256 of
  the handler's normalised, key-sorted JSON, checked against `codex app-server`'s
  hooks/list) and the memory folder among the sandbox's writable roots (a hook's "allow"
  does not lift the sandbox). Its SessionEnd hook is killed after 1-3 s: the debrief detaches.
- Gemini CLI: `~/.gemini/settings.json` (user) or `.gemini/settings.json` (project: runs only
  in a trusted folder), plus the root in `context.includeDirectories` (files outside the
  workspace are refused before any hook). A hook command that cannot start (bash's exit 127)
  would block every tool it matches, so each command ends in `|| true`.

Both merge into the file as it is: every key that is not memstore's for this root stays, our
handlers are replaced where they stand (so the indices of other hooks, which Codex's trust
entries name, do not move), and a dry run prints the diff.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstore.core.results import Check
from memstore.wiring.install_base import (
    DEBRIEF_TIMEOUT_S,
    HOOK_TIMEOUT_S,
    Change,
    InstallError,
    InstallPlan,
    hook_command,
    hooks_of,
    json_text,
    memstore_command,
    plan_root_record,
    read_settings,
)

CODEX_SNAKE = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
               "PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "Stop": "stop",
               "SessionEnd": "session_end"}
# other events' matchers are ignored, not hashed
CODEX_MATCHED = ("PreToolUse", "PostToolUse", "SessionStart")
CODEX_SESSION_END_S = 3  # Codex caps a SessionEnd hook at 3 s (and warns above it)
# identity + index + the bundle: more than Codex's default cut of ~2,500 tokens
CODEX_CONTEXT_TOKENS = 40_000
GEMINI_TOOLS = "read_file|write_file|replace|run_shell_command"


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser()


def gemini_settings(scope: str, cwd: Path) -> Path:
    return (Path.home() / ".gemini" if scope == "user" else cwd / ".gemini") / "settings.json"


def client_wiring(client: str, scope: str, cwd: Path | None = None) -> list[Path]:
    """The files that hold memstore's wiring for another client (tamper evidence records them)."""
    if client == "codex":
        return [codex_home() / "hooks.json", codex_home() / "config.toml"]
    return [gemini_settings(scope, cwd or Path.cwd())]


def _names_root(command: str, root: Path) -> bool:
    try:
        words = shlex.split(command.removesuffix(" || true"))
    except ValueError:
        return False
    return any(a == "--root" and os.path.realpath(b) == os.path.realpath(root)
               for a, b in itertools.pairwise(words))


def _ours(handler: Any, root: Path) -> bool:
    command = handler.get("command") if isinstance(handler, dict) else None
    return (isinstance(command, str) and ("--client" in command or "debrief" in command)
            and _names_root(command, root))


# ---------------------------------------------------------------- the handlers each client gets


def codex_groups(root: Path) -> dict[str, dict[str, Any]]:
    hook = hook_command(root, "--client", "codex")
    debrief = shlex.join([*memstore_command(), "--root", str(root), "debrief", "--hook",
                          "--detach"])
    return {
        "SessionStart": {"matcher": "startup", "hooks": [
            {"type": "command", "command": hook, "timeout": HOOK_TIMEOUT_S,
             "additionalContextLimit": CODEX_CONTEXT_TOKENS}]},
        "UserPromptSubmit": {"hooks": [
            {"type": "command", "command": hook, "timeout": HOOK_TIMEOUT_S}]},
        "PreToolUse": {"matcher": "Bash|apply_patch", "hooks": [
            {"type": "command", "command": hook, "timeout": HOOK_TIMEOUT_S}]},
        "PostToolUse": {"matcher": "Bash|apply_patch", "hooks": [
            {"type": "command", "command": hook, "timeout": HOOK_TIMEOUT_S}]},
        "SessionEnd": {"hooks": [{"type": "command", "command": debrief,
                                  "timeout": CODEX_SESSION_END_S}]},
    }


def gemini_groups(root: Path) -> dict[str, dict[str, Any]]:
    # `|| true`: a command that cannot start (memstore gone) must not block every tool it matches
    hook = hook_command(root, "--client", "gemini") + " || true"
    debrief = (shlex.join([*memstore_command(), "--root", str(root), "debrief", "--hook"])
               + " || true")
    ms = 1000
    return {
        "SessionStart": {"hooks": [{"name": "memstore", "type": "command", "command": hook,
                                    "timeout": HOOK_TIMEOUT_S * ms}]},
        "BeforeAgent": {"hooks": [{"name": "memstore", "type": "command", "command": hook,
                                   "timeout": HOOK_TIMEOUT_S * ms}]},
        "BeforeTool": {"matcher": GEMINI_TOOLS,
                       "hooks": [{"name": "memstore", "type": "command", "command": hook,
                                  "timeout": HOOK_TIMEOUT_S * ms}]},
        "AfterTool": {"matcher": GEMINI_TOOLS,
                      "hooks": [{"name": "memstore", "type": "command", "command": hook,
                                 "timeout": HOOK_TIMEOUT_S * ms}]},
        "SessionEnd": {"hooks": [{"name": "memstore", "type": "command", "command": debrief,
                                  "timeout": DEBRIEF_TIMEOUT_S * ms}]},
    }


def merge_groups(hooks: dict[str, Any], wanted: dict[str, dict[str, Any]], root: Path, *,
                 remove: bool = False) -> dict[str, list[int]]:
    """Put `wanted` into `hooks` in place: a group of ours is replaced where it stands, a missing
    one appended. Returns, per event, the indices (as they were) of the groups of ours taken out:
    the groups after them move down by one each, and Codex's trust entries, which name positions,
    must move with them (`shift_trust`)."""
    removed: dict[str, list[int]] = {}
    # a stable order: the same file every run
    for event in [*hooks, *(e for e in wanted if e not in hooks)]:
        groups = hooks.get(event)
        if groups is None:
            groups = []
        if not isinstance(groups, list):
            raise InstallError(f"hooks.{event} is not a list",
                               hint="fix the file, then run install again")
        mine = [i for i, g in enumerate(groups)
                if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                and g["hooks"] and all(_ours(h, root) for h in g["hooks"])]
        if remove or event not in wanted:
            for i in reversed(mine):
                del groups[i]
            if event in hooks:
                hooks[event] = groups
            if not groups and event in hooks and event in wanted:
                del hooks[event]
            removed[event] = mine
            continue
        if mine:
            groups[mine[0]] = wanted[event]
            for i in reversed(mine[1:]):
                del groups[i]
            removed[event] = mine[1:]
        else:
            groups.append(wanted[event])
        hooks[event] = groups
    return removed


def shift_trust(state: dict[str, Any], hooks_json: Path, removed: dict[str, list[int]]) -> None:
    """Move the trust entries of the groups after a removed one down with them (same hash: the
    hash does not hold the position), so the person's own hooks stay trusted."""
    base = os.path.realpath(hooks_json)
    for event, gone in removed.items():
        if not gone or event not in CODEX_SNAKE:
            continue
        prefix = f"{base}:{CODEX_SNAKE[event]}:"
        moves = []
        for key in list(state):
            group, _, handler = (key[len(prefix):].partition(":") if key.startswith(prefix)
                                 else ("", "", ""))
            if group.isdigit() and handler.isdigit() and int(group) not in gone:
                shifted = int(group) - sum(1 for g in gone if g < int(group))
                if shifted != int(group):
                    moves.append((key, f"{prefix}{shifted}:{handler}"))
        # lowest first: a target is never still occupied
        for old, new in sorted(moves, key=lambda m: m[0]):
            state[new] = state[old]
            del state[old]


# ---------------------------------------------------------------- Codex: trust


def codex_timeout(event: str, timeout: object) -> int:
    value = max(600 if not isinstance(timeout, int) else timeout, 1)
    if event == "SessionEnd":
        value = 1 if not isinstance(timeout, int) else min(value, CODEX_SESSION_END_S)
    return value


def codex_trust_hash(event: str, handler: dict[str, Any], matcher: str | None) -> str:
    """The hash Codex expects in a handler's trust entry (as `codex app-server` hooks/list
    reports it)."""
    norm: dict[str, Any] = {"type": "command", "command": handler["command"],
                            "timeout": codex_timeout(event, handler.get("timeout")),
                            "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        norm["statusMessage"] = handler["statusMessage"]
    if handler.get("additionalContextLimit") is not None and event not in ("Stop", "SessionEnd"):
        norm["additionalContextLimit"] = handler["additionalContextLimit"]
    identity: dict[str, Any] = {"event_name": CODEX_SNAKE[event], "hooks": [norm]}
    if matcher is not None and event in CODEX_MATCHED:
        identity["matcher"] = matcher
    data = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


def codex_trust_key(hooks_json: Path, event: str, group: int, handler: int) -> str:
    return f"{os.path.realpath(hooks_json)}:{CODEX_SNAKE[event]}:{group}:{handler}"


def _trust_entries(hooks: dict[str, Any], hooks_json: Path, root: Path) -> dict[str, str]:
    """key -> trusted_hash for each of our handlers as they stand in `hooks`."""
    out = {}
    for event, groups in hooks.items():
        if event not in CODEX_SNAKE or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for h, handler in enumerate(group["hooks"]):
                if _ours(handler, root):
                    out[codex_trust_key(hooks_json, event, g, h)] = codex_trust_hash(
                        event, handler,
                        group.get("matcher") if isinstance(group.get("matcher"), str) else None)
    return out


# One `[hooks.state."KEY"]` table, up to the next table header: how Codex and memstore write
# trust entries.
_TRUST_TABLE = re.compile(r'^\[hooks\.state\."(?:[^"\\]|\\.)*"\][^\n]*\n'
                          r'(?:(?!\[)[^\n]*(?:\n|$))*', re.M)


def _toml(path: Path) -> tuple[str | None, Any]:
    import tomlkit

    if not path.exists():
        return None, tomlkit.document()
    text = path.read_text(encoding="utf-8")
    try:
        return text, tomlkit.parse(text)
    except Exception as exc:  # tomlkit's parse errors have no common base worth naming
        raise InstallError(f"{path} is not valid TOML ({exc})",
                           hint="fix it, then run install again") from None


def plan_codex(root: Path, *, uninstall: bool = False, home: Path | None = None) -> InstallPlan:
    import tomlkit

    home = home or codex_home()
    hooks_json, config = home / "hooks.json", home / "config.toml"
    before, data = read_settings(hooks_json)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{hooks_json}: 'hooks' is not an object",
                           hint="fix it, then run install again")
    old_trust = _trust_entries(hooks, hooks_json, root)
    removed = merge_groups(hooks, codex_groups(root), root, remove=uninstall)
    new_trust = {} if uninstall else _trust_entries(hooks, hooks_json, root)
    plan = InstallPlan()
    if before is not None or not uninstall:
        plan.changes.append(Change(hooks_json, before, json_text(data)))

    text, doc = _toml(config)
    found = doc.get("hooks", {}).get("state", {}) if isinstance(doc.get("hooks"), dict) else {}
    entries = {str(k): dict(v) for k, v in found.items() if isinstance(v, dict)}
    for key in old_trust:  # ours as they stood, before anything moved
        entries.pop(key, None)
    shift_trust(entries, hooks_json, removed)
    for key, digest in new_trust.items():
        entries[key] = {"trusted_hash": digest}
    # The trust tables are taken out of the text and written again at its end (tomlkit mishandles
    # deleting from a table whose parts lie apart in a file, as these do); everything else is
    # edited in place by tomlkit, comments and order kept.
    rest = _TRUST_TABLE.sub("", text or "")
    doc = tomlkit.parse(rest)
    leftover = doc.get("hooks", {}).get("state") if isinstance(doc.get("hooks"), dict) else None
    if leftover:
        raise InstallError(f"{config} writes hooks.state in a form memstore does not edit (not one "
                           '[hooks.state."KEY"] table per hook)',
                           hint="write each as its own table, then run again")
    memory = str(root / "memory")
    sandbox = doc.setdefault("sandbox_workspace_write", tomlkit.table())
    roots = sandbox.get("writable_roots")
    roots = list(roots) if isinstance(roots, list) else []
    if uninstall:
        roots = [r for r in roots if r != memory]
    elif memory not in roots:
        roots.append(memory)
    if roots:
        sandbox["writable_roots"] = roots
    elif "writable_roots" in sandbox:
        del sandbox["writable_roots"]
    # tables left empty go, so an install then an uninstall leaves the file as it was
    if not sandbox:
        del doc["sandbox_workspace_write"]
    if isinstance(doc.get("hooks"), dict) and not doc["hooks"]:
        del doc["hooks"]
    after = tomlkit.dumps(doc).rstrip("\n")
    for key, values in entries.items():
        lines = "".join(f"{tomlkit.key(k).as_string()} = {tomlkit.item(v).as_string()}\n"
                        for k, v in values.items())
        after += f"\n\n[hooks.state.{json.dumps(key)}]\n{lines}".rstrip("\n")
    after = after.lstrip("\n") + "\n" if after.strip() else ""
    if text is not None or not uninstall:
        plan.changes.append(Change(config, text, after))
    # `memstore status` then finds the root from any folder
    plan_root_record(plan, root, remove=uninstall)
    if not uninstall:
        plan.next_steps.append(f"check it: memstore --root {root} verify --client codex")
    return plan


# ---------------------------------------------------------------- Gemini


def plan_gemini(root: Path, scope: str, cwd: Path, *, uninstall: bool = False) -> InstallPlan:
    path = gemini_settings(scope, cwd)
    before, data = read_settings(path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: 'hooks' is not an object",
                           hint="fix it, then run install again")
    merge_groups(hooks, gemini_groups(root), root, remove=uninstall)
    if not hooks:
        del data["hooks"]
    context = data.setdefault("context", {})
    if not isinstance(context, dict):
        raise InstallError(f"{path}: 'context' is not an object",
                           hint="fix it, then run install again")
    dirs = context.get("includeDirectories")
    dirs = list(dirs) if isinstance(dirs, list) else []
    # memory/ only: the rest of the root (identity, lenses, runtime/, the rendered index) is no
    # workspace of the agent's; identity and the index reach it at session start.
    memory = str(root / "memory")
    if uninstall:
        dirs = [d for d in dirs if d != memory]
    elif memory not in dirs:
        dirs.append(memory)
    if dirs:
        context["includeDirectories"] = dirs
    else:
        context.pop("includeDirectories", None)
    if not context:
        del data["context"]
    plan = InstallPlan()
    plan.changes.append(Change(path, before, json_text(data)))
    if scope == "user":
        plan_root_record(plan, root, remove=uninstall)
    if scope == "project" and not uninstall:
        plan.warnings.append("Gemini CLI runs a project's hooks only in a trusted folder (and not "
                             "with --skip-trust): trust it once, or install with --scope user")
    if not uninstall:
        plan.next_steps.append(f"check it: memstore --root {root} verify --client gemini"
                               + (" --scope project" if scope == "project" else ""))
    return plan


# ---------------------------------------------------------------- verify


def _handler(hooks: dict[str, Any], event: str, root: Path
             ) -> tuple[int, int, dict[str, Any], str | None] | None:
    for g, group in enumerate(hooks.get(event) or []):
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            for h, handler in enumerate(group["hooks"]):
                if _ours(handler, root):
                    matcher = group.get("matcher")
                    return g, h, handler, matcher if isinstance(matcher, str) else None
    return None


def verify_codex(root: Path, probe: Callable[..., Check], *, home: Path | None = None
                 ) -> list[Check]:
    home = home or codex_home()
    hooks_json, config = home / "hooks.json", home / "config.toml"
    fix = f"memstore --root {root} install --client codex --apply"
    try:
        _, data = read_settings(hooks_json)
    except InstallError as exc:
        return [Check("codex hooks", False, str(exc), exc.hint or fix)]
    hooks = hooks_of(data)
    try:
        _, doc = _toml(config)
    except InstallError as exc:
        return [Check("codex trust", False, str(exc), exc.hint or fix)]
    state = (doc.get("hooks") or {}).get("state") or {}
    checks = []
    tool_hook = None
    for event, what in (("SessionStart", "identity, index and bundle at session start"),
                        ("UserPromptSubmit", "pointers to the memories a prompt points at"),
                        ("PreToolUse", "the person's files refused, lenses"),
                        ("PostToolUse", "reads and writes of memories reinforced"),
                        ("SessionEnd", "lessons from the session's final answer")):
        found = _handler(hooks, event, root)
        if found is None:
            checks.append(Check(f"codex {event}", False,
                                f"no memstore handler for this root in {hooks_json}", fix))
            continue
        g, h, handler, matcher = found
        key = codex_trust_key(hooks_json, event, g, h)
        want = codex_trust_hash(event, handler, matcher)
        got = ((state.get(key) or {}).get("trusted_hash") if isinstance(state.get(key), dict)
               else None)
        if got != want:
            why = ("no trust entry" if got is None
                   else "its trust entry is for another version of the handler")
            checks.append(Check(f"codex {event}", False,
                                f"{why} in {config}: Codex skips this hook, silently", fix))
            continue
        checks.append(Check(f"codex {event}", True, f"registered and trusted ({what})"))
        if event == "PostToolUse":
            tool_hook = handler["command"]
    sandbox = doc.get("sandbox_workspace_write") or {}
    roots = [str(r) for r in sandbox.get("writable_roots") or []]
    memory = root / "memory"
    covered = any(Path(memory).resolve().is_relative_to(Path(r).resolve()) for r in roots)
    checks.append(Check("codex sandbox", covered,
                        f"{memory} is {'among' if covered else 'not among'} the sandbox's "
                        "writable roots"
                        + ("" if covered else ": the agent's memory writes would be refused"), fix))
    if tool_hook is not None:
        checks.append(probe(tool_hook, lambda p: {
            "hook_event_name": "PostToolUse", "session_id": "memstore-verify", "cwd": str(root),
            "tool_name": "Bash", "tool_input": {"command": f"cat {shlex.quote(str(p))}"}},
            client="Codex shell"))
    return checks


def verify_gemini(root: Path, scope: str, cwd: Path, probe: Callable[..., Check]) -> list[Check]:
    path = gemini_settings(scope, cwd)
    fix = (f"memstore --root {root} install --client gemini --apply"
           + (" --scope project" if scope == "project" else ""))
    try:
        _, data = read_settings(path)
    except InstallError as exc:
        return [Check("gemini hooks", False, str(exc), exc.hint or fix)]
    hooks = hooks_of(data)
    checks = []
    tool_hook = None
    for event, what in (("SessionStart", "identity, index and bundle at session start"),
                        ("BeforeAgent", "pointers to the memories a prompt points at"),
                        ("BeforeTool", "the person's files refused"),
                        ("AfterTool", "reads and writes of memories reinforced, lenses"),
                        ("SessionEnd", "lessons from the session's final answer")):
        found = _handler(hooks, event, root)
        if found is None:
            checks.append(Check(f"gemini {event}", False,
                                f"no memstore handler for this root in {path}", fix))
            continue
        _, _, handler, matcher = found
        if event in ("BeforeTool", "AfterTool") and matcher != GEMINI_TOOLS:
            checks.append(Check(f"gemini {event}", False,
                                f"its matcher is {matcher!r}, not {GEMINI_TOOLS!r}", fix))
            continue
        checks.append(Check(f"gemini {event}", True, f"registered ({what})"))
        if event == "AfterTool":
            tool_hook = handler["command"]
    dirs = ((data.get("context") or {}).get("includeDirectories")
            if isinstance(data.get("context"), dict) else None)
    memory = (root / "memory").resolve()
    included = isinstance(dirs, list) and any(
        memory.is_relative_to(Path(str(d)).expanduser().resolve()) for d in dirs)
    checks.append(Check("gemini workspace", included,
                        f"{memory} is {'in' if included else 'not in'} context.includeDirectories"
                        + ("" if included else ": Gemini CLI refuses files outside the project"),
                        fix))
    if scope == "project":
        checks.append(Check("gemini trust", True,
                            "project hooks run only in a folder you trusted in Gemini CLI "
                            "(not under --skip-trust): not checked here"))
    if tool_hook is not None:
        checks.append(probe(tool_hook, lambda p: {
            "hook_event_name": "AfterTool", "session_id": "memstore-verify", "cwd": str(root),
            "tool_name": "read_file", "tool_input": {"file_path": str(p)}},
            client="Gemini read_file"))
    return checks

"""Codex CLI's hook payloads, as memstore.hook.handler's Claude Code shapes. Standard library only.

What Codex 0.171 sends (seen with the real binary): the Claude Code event names; reads are
shell commands (`tool_name: "Bash"`, `tool_input.command`), as Codex has no Read tool;
writes are `apply_patch` with the whole patch in `tool_input.command` and the paths in its
`*** Add File:` / `*** Update File:` / `*** Delete File:` / `*** Move to:` lines.

So a shell command that prints a memory (memstore.hook.shellreads) is a Read of it, and a patch
is a Write (added) or an Edit (updated) of each file it names. A deny must carry a
non-empty reason: Codex ignores a deny without one, silently, and runs the tool.
"""

from __future__ import annotations

import os
import re

from memstore.hook.clients import outputs, session_start

Payload = dict[str, object]

_PATCH_LINE = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): (.+?)\s*$", re.M)
_TOOL_OF = {"Add File": "Write", "Update File": "Edit", "Delete File": "Write", "Move to": "Write"}


def patch_files(patch: str) -> list[tuple[str, str]]:
    """(Claude Code tool, path as written) for each file a patch touches, in order, each once."""
    seen: set[str] = set()
    out = []
    for verb, path in _PATCH_LINE.findall(patch or ""):
        if path not in seen:
            seen.add(path)
            out.append((_TOOL_OF[verb], path))
    return out


def _command(payload: Payload) -> str:
    data = payload.get("tool_input")
    command = data.get("command") if isinstance(data, dict) else None
    return command if isinstance(command, str) else ""


def _as(payload: Payload, tool: str, file_path: str, added: str = "") -> Payload:
    said = {"content": added} if added else {}
    return {**payload, "tool_name": tool, "tool_input": {"file_path": file_path, **said}}


def patch_added(patch: str) -> dict[str, str]:
    """The lines a patch adds ("+" lines), joined, for each path as written: what the agent wrote
    there, which the hook keeps for dating (core.pending_dates)."""
    added: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (patch or "").splitlines():
        header = _PATCH_LINE.match(line)
        if header:
            current = (added.setdefault(header.group(2), []) if header.group(1) != "Delete File"
                       else None)
        elif line.startswith("*** "):
            current = None  # "*** End Patch" and the like
        elif current is not None and line.startswith("+"):
            current.append(line[1:])
    return {path: "\n".join(lines) for path, lines in added.items() if lines}


def canonical(payload: Payload) -> list[Payload]:
    """The Claude Code payloads this Codex payload stands for (empty: nothing to do)."""
    event = payload.get("hook_event_name")
    tool = payload.get("tool_name")
    if event in ("SessionStart", "UserPromptSubmit"):  # the same shapes as Claude Code's
        return [payload]
    if event not in ("PreToolUse", "PostToolUse"):
        return []
    cwd = given if isinstance(given := payload.get("cwd"), str) else None
    if tool == "Bash":
        from memstore.hook.shellreads import files_read

        reads = [_as(payload, "Read", path) for path in files_read(_command(payload), cwd)]
        # before it runs: the person's files guarded as for Claude Code's Bash, lenses for its reads
        return ([payload, *reads] if event == "PreToolUse" else reads)
    if tool == "apply_patch":
        base = cwd or os.getcwd()
        added = patch_added(_command(payload)) if event == "PostToolUse" else {}
        return [_as(payload, verb, os.path.normpath(os.path.join(base, path)), added.get(path, ""))
                for verb, path in patch_files(_command(payload))]
    return []


def answer(payload: Payload, responses: list[Payload | None],
           context: str | None = None) -> Payload | None:
    """One Codex answer from the hook's answers to the canonical payloads (None: print nothing)."""
    event = payload.get("hook_event_name")
    found = outputs(responses)
    if event == "SessionStart":
        return session_start(found, context)
    for output in found:
        if output.get("permissionDecision") == "deny":
            reason = output.get("permissionDecisionReason")
            # never empty (Codex runs the tool then); no final period (Codex adds ". Command: ...")
            reason = (reason.strip().rstrip(".") if isinstance(reason, str) and reason.strip()
                      else "memstore: refused")
            return {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny",
                                           "permissionDecisionReason": reason}}
    # "allow" is left out: it does not lift Codex's sandbox, and Codex decides approval itself
    texts = [text for o in found if isinstance(text := o.get("additionalContext"), str)]
    if texts:
        return {"hookSpecificOutput": {"hookEventName": event,
                                       "additionalContext": "\n\n".join(texts)}}
    return None

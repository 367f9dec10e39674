"""Gemini CLI's hook payloads, as memstore.hook.handler's Claude Code shapes. Standard library only.

What Gemini CLI 0.61 sends (seen with the real binary): BeforeTool / AfterTool around
`read_file`, `write_file`, `replace` (each with `file_path`, as the model wrote it: often
relative to `cwd`) and `run_shell_command` (`command`); SessionStart and SessionEnd as
Claude Code names them. A deny is `{"decision": "deny", "reason": ...}`.

Context: SessionStart's and BeforeAgent's (the prompt's pointers) `additionalContext` reach the
model; BeforeTool's is ignored, so a
lens fires after the tool (AfterTool's context is appended to the tool's result) and the
BeforeTool answer carries only refusals.
"""

from __future__ import annotations

import os

from memstore.hook.clients import outputs, session_start

Payload = dict[str, object]

TOOLS = {"read_file": "Read", "write_file": "Write", "replace": "Edit", "run_shell_command": "Bash"}
NO_LENSES = "memstore_no_lenses"  # a canonical payload whose lenses must not fire (hook reads it)


def _input(payload: Payload) -> dict[str, object]:
    data = payload.get("tool_input")
    return data if isinstance(data, dict) else {}


def canonical(payload: Payload) -> list[Payload]:
    """The Claude Code payloads this Gemini CLI payload stands for (empty: nothing to do)."""
    event = payload.get("hook_event_name")
    if event == "SessionStart":
        return [payload]
    if event == "BeforeAgent":  # the person's prompt, before the model plans: Claude Code's shape
        return [{**payload, "hook_event_name": "UserPromptSubmit"}]
    if event not in ("BeforeTool", "AfterTool"):
        return []
    tool = TOOLS.get(str(payload.get("tool_name")))
    if tool is None:
        return []
    cwd = given if isinstance(given := payload.get("cwd"), str) else None
    data = _input(payload)
    if tool == "Bash":
        from memstore.hook.shellreads import files_read

        command = said if isinstance(said := data.get("command"), str) else ""
        folder = data.get("dir_path")  # the shell runs there when given (relative to session cwd)
        if isinstance(folder, str) and folder:
            cwd = os.path.normpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(folder)))
            payload = {**payload, "cwd": cwd}
        shell = {**payload, "tool_name": "Bash", "tool_input": {"command": command}}
        reads = [{**payload, "tool_name": "Read", "tool_input": {"file_path": path}}
                 for path in files_read(str(command), cwd)]
    else:
        file_path = data.get("file_path")
        if not isinstance(file_path, str) or not file_path:
            return []
        path = os.path.normpath(os.path.join(cwd or os.getcwd(), file_path))
        shell = None
        # what it wrote goes along: the hook keeps its relative dates for the tick to date
        # (core.pending_dates)
        said = {key: data[key] for key in ("content", "new_string")
                if isinstance(data.get(key), str)}
        reads = [{**payload, "tool_name": tool, "tool_input": {"file_path": path, **said}}]
    if event == "BeforeTool":  # refusals only: context given here never reaches the model
        return [{**p, "hook_event_name": "PreToolUse", NO_LENSES: True}
                for p in ([shell] if shell else []) + reads]
    # after it ran: reinforce, then the lenses its files trigger (their refusal check is moot now)
    return [{**p, "hook_event_name": "PostToolUse"} for p in reads] + \
           [{**p, "hook_event_name": "PreToolUse"} for p in reads]


def answer(payload: Payload, responses: list[Payload | None],
           context: str | None = None) -> Payload | None:
    """One Gemini CLI answer from the hook's answers to the canonical payloads (None: print
    nothing)."""
    event = payload.get("hook_event_name")
    found = outputs(responses)
    if event == "SessionStart":
        return session_start(found, context)
    if event == "BeforeTool":
        for output in found:
            if output.get("permissionDecision") == "deny":
                reason = output.get("permissionDecisionReason")
                return {"decision": "deny",
                        "reason": reason if isinstance(reason, str) and reason.strip()
                        else "memstore: refused"}
        return None
    texts = [text for o in found if isinstance(text := o.get("additionalContext"), str)]
    if event in ("AfterTool", "BeforeAgent") and texts:  # plain stdout would be ignored
        return {"hookSpecificOutput": {"hookEventName": event,
                                       "additionalContext": "\n\n".join(texts)}}
    return None

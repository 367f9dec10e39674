"""The hook's adapters for clients other than Claude Code. Standard library only (the hook's path).

memstore.hook.handler speaks Claude Code's payloads. A client adapter turns its client's payload
into one or more of those (`canonical`) and the hook's answers back into what its client
understands (`answer`): the payload shapes are the client's, the logic is the one hook's.
"""

CLIENTS = ("claude", "codex", "gemini")


def outputs(responses: list[dict[str, object] | None]) -> list[dict[str, object]]:
    """The hookSpecificOutput of each of the hook's answers that has one."""
    return [output for r in responses
            if isinstance(r, dict) and isinstance(output := r.get("hookSpecificOutput"), dict)]


def session_start(found: list[dict[str, object]], context: str | None) -> dict[str, object] | None:
    """A SessionStart answer: identity and the index (context) first, then the bundle; None when
    empty. Codex and Gemini CLI both read Claude Code's shape here."""
    text = "\n\n".join(t for t in (context, *(o.get("additionalContext") for o in found))
                       if isinstance(t, str) and t.strip())
    return ({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
            if text else None)

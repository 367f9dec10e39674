"""The hook's answer to a PreToolUse: refuse, approve, or say nothing, and the lenses that fire.

Refused in every permission mode (a hook's deny outranks acceptEdits and bypass): writes to the
person's files, to what memstore alone writes and to the clients' wiring, by real path, and shell
commands that name them and do more than read (shellcmd.py). Approved: writes of memory files
(core.toolpath.may_write), memstore's own MCP tools by exact name, and, where the root lies outside
the project, reads of memory files (core.toolpath.may_read), a fallback to the read grant `install`
writes. Standard library only: the hook's path.
"""

from __future__ import annotations

import os

from memstore.core.toolpath import may_read, may_write, resolve
from memstore.hook.paths import machine_file, outside, person_file, wiring_file, within

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    import datetime as dt

    from memstore.core.config import Config

_UNQUOTE = {ord("'"): None, ord('"'): None, ord("\\"): None}


def answer(payload: dict[str, object], root: str, tool: str, file_path: str | None,
           cwd: str | None, session: str | None, now: dt.datetime, config: Config,
           plugin: bool) -> dict[str, object]:
    """The hookSpecificOutput for one PreToolUse (only its event name when there is nothing to say).
    `plugin`: run by the Claude Code plugin, whose MCP tools have the plugin's names."""
    from memstore.core.access import CLIENT_WIRING_WORDS, SHELL_VERBS, WIRING_WORDS, watch_words
    from memstore.core.kinds import EDIT_TOOLS, MCP_TOOLS, PLUGIN_MCP, WRITE_TOOLS

    real_root = os.path.realpath(root)
    away = tool == "Read" and outside(real_root, cwd)  # only then does a read need approving
    # the path resolved once, for every question below that needs it
    found = resolve(root, file_path, cwd, real_root=real_root) \
        if file_path and (tool in EDIT_TOOLS or away) else None
    output: dict[str, object] = {"hookEventName": "PreToolUse"}
    owned = None
    if tool in EDIT_TOOLS:
        owned = person_file(found) or wiring_file(found, cwd) or machine_file(found)
    command = _command(payload)
    # Bash, and any other tool that runs a shell command it is given (Claude Code's Monitor)
    if owned is None and (tool == "Bash" or command is not None):
        command = command or ""
        # A cheap look first: most commands name none of it, and shellcmd's import costs ms.
        plain = _plain_command(command)
        if any(word in plain for word in watch_words(root)) \
                or any(verb in plain for verb in SHELL_VERBS) \
                or root in plain or real_root in plain or within(cwd, real_root):
            from memstore.hook.shellcmd import names_person_file, names_wiring

            owned = names_person_file(command, root, cwd) or names_wiring(command, cwd)
        elif any(word in command for word in (*WIRING_WORDS, *CLIENT_WIRING_WORDS)):
            from memstore.hook.shellcmd import names_wiring

            owned = names_wiring(command, cwd)
    if owned is not None:
        output["permissionDecision"] = "deny"
        output["permissionDecisionReason"] = _refusal(owned)
    elif tool in WRITE_TOOLS and may_write(found):
        output["permissionDecision"] = "allow"
        output["permissionDecisionReason"] = "memstore: writes to memory files are pre-approved"
    elif (tool.startswith("mcp__memstore__") and tool[len("mcp__memstore__"):] in MCP_TOOLS) or (
            plugin and tool.startswith(PLUGIN_MCP) and tool[len(PLUGIN_MCP):] in MCP_TOOLS):
        # memstore's own MCP tools, by exact name: they enforce the same real-path rules themselves
        output["permissionDecision"] = "allow"
        output["permissionDecisionReason"] = "memstore: its MCP tools are pre-approved"
    elif away and may_read(found, [team.name for team in config.teams]):
        output["permissionDecision"] = "allow"
        output["permissionDecisionReason"] = "memstore: reads of memory files are pre-approved"
    # a client whose context before a tool never reaches the model asks for none (clients/gemini.py)
    if not payload.get("memstore_no_lenses"):
        texts = _lens_texts(root, tool, file_path, session, now, config)
        if texts:
            output["additionalContext"] = "\n\n".join(texts)
    return output


def _refusal(owned: str) -> str:
    if owned.startswith(("memstore review", "memstore trust")):
        return ("memstore: answering `memstore review` and `memstore trust`, sharing with a team "
                "and joining or leaving one are the person's; leave it to them")
    return (f"memstore: {owned} is not the agent's to change (identity.md, lenses/, meditations/, "
            "memstore.toml, review/ and teams/ are the person's; runtime/ and the clients' "
            "settings are memstore's). Propose the change to the person, or write a memory under "
            "memory/.")


def _command(payload: dict[str, object]) -> str | None:
    data = payload.get("tool_input")
    command = data.get("command") if isinstance(data, dict) else None
    return command if isinstance(command, str) else None


def _lens_texts(root: str, tool: str, file_path: str | None, session: str | None, now: dt.datetime,
                config: Config) -> list[str]:
    import sqlite3

    from memstore.core.agent_root import db_file
    from memstore.core.lenses import current_lenses, fire
    from memstore.core.tamper import lens_filter
    from memstore.core.transactions import hook_connect, transaction

    db = db_file(root)
    if not os.path.exists(db):
        return []
    try:
        conn = hook_connect(db, config.hook_lock_budget_ms)
    except sqlite3.Error as exc:
        _log(root, f"lenses skipped: {exc}")
        return []
    try:
        unread: list[str] = []
        stamps: dict[str, int] = {}
        with transaction(conn):
            # the lens files as they are now, not as the last sync saw them (due the next session)
            found = current_lenses(conn, root, unread, stamps, [team.name for team in config.teams])
            # a lens changed during an agent session and not yet trusted is held back (core.tamper)
            lenses = fire(conn, tool, file_path, session, now, lens_filter(root), found)
        from memstore.core.lenses import SLOW

        for rel in SLOW:
            _log(root, f"lens {rel} skipped: its pattern took too long to match "
                             "(a pattern with nested repeats?)")
        from memstore.hook.gate import REWRITE_ON, refresh

        # hookgate.sh could not answer from its file
        if os.environ.get("MEMSTORE_GATE") in REWRITE_ON:
            refresh(root, found, stamps, bool(unread), tool)
        return [lens.text() for lens in lenses]
    except sqlite3.Error as exc:
        _log(root, f"lenses skipped: {exc}")
        return []
    finally:
        conn.close()


def _log(root: str, message: str) -> None:
    from memstore.core.logs import hook_error  # imported only when there is something to say

    hook_error(root, message)


def _plain_command(command: str) -> str:
    """What the cheap look compares: quotes and backslashes out (`ag''ents` is `agents` to the
    shell), every run of whitespace one space (`rm<TAB>-rf` is `rm -rf`), and `//` and `/./` one
    slash (`/home//me` is `/home/me`). hookgate.sh spells the same steps in bash."""
    if "'" in command or '"' in command or "\\" in command:
        command = command.translate(_UNQUOTE)
    if not command.isprintable() or "  " in command:
        command = " ".join(command.split())
    while "//" in command or "/./" in command:
        command = command.replace("//", "/").replace("/./", "/")
    return command

"""`memstore hook`: the Claude Code command hook. Standard library only; always exits 0.

One JSON object arrives on stdin, as Claude Code sends it (`--client codex|gemini`: as that
client sends it; memstore.hook.clients turns it into Claude Code's shapes and the answer back).
By `hook_event_name`:

- PostToolUse of Read, Edit, Write, MultiEdit on a T2 memory: reinforcement, through
  policy.record_touch (a journal line, then one SQLite transaction). Post, not Pre, so
  only tool calls that really ran are counted; registered synchronously, because an
  async handler of the last tool call before a `claude -p` session ends never runs and
  that touch would be lost. Registration filters (`if`) start this process only for
  files under memory/, so other reads cost nothing. A Write or Edit of a memory whose frontmatter
  holds a usual slip (core.frontreader.told) is answered in the same call with what to mend.
- PreToolUse (pretool.py): deny writes to the person's files and to memstore's own by real
  path, and shell commands that name them and do more than read, in every permission mode;
  approve writes of memory files (core.toolpath.may_write) and memstore's own MCP tools; and
  deliver matching lenses as additionalContext, once per session each.
- UserPromptSubmit: up to three pointers to memories the person's prompt points at, or nothing
  (core.pointers: a confidence floor, once per session each, never what MEMORY.md shows).
- SessionStart: the cold-start bundle as additionalContext. With `--part imports:N`,
  part N of identity.md + MEMORY.md instead: for a root outside the project, whose
  `@` imports Claude Code would not expand (session_imports.py).

A tool's file_path is resolved once per call (core.toolpath.resolve) and handed down. Every
failure is written to runtime/state/hook-errors.log (core.logs, its one writer) and swallowed: a
memory bookkeeping bug must never stop the agent from working.

Start-up is most of a hook's cost, and every memory Read pays it, so this path avoids
pathlib, dataclasses, typing and friends; each import here is one the work needs.
"""

from __future__ import annotations

import json
import os
import sys

from memstore.core.toolpath import may_write, resolve, usable

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:  # annotations only: the hook's path imports nothing for them
    import datetime as dt
    from typing import Any, Protocol

    from memstore.core.config import Config

    class Reader(Protocol):
        """What the payload is read from: stdin's bytes, or a test's stream (bytes or text)."""

        def read(self, size: int, /) -> bytes | str: ...

    class Writer(Protocol):
        """Where the response goes: stdout, or a test's stream."""

        def write(self, text: str, /) -> object: ...

        def flush(self) -> object: ...


MAX_STDIN = 4 * 1024 * 1024  # a hook payload is small; anything larger is not ours to parse

Payload = dict[str, object]


def _args(argv: list[str]) -> dict[str, str | None]:
    """--root, --now, --part, --client and --after, each as `--opt V` or `--opt=V`; anything else
    is ignored."""
    found: dict[str, str | None] = {"root": None, "now": None, "part": None, "client": None,
                                    "after": None}
    items = iter(argv)
    for arg in items:
        for key in found:
            if arg == f"--{key}":
                found[key] = next(items, None)
            elif arg.startswith(f"--{key}="):
                found[key] = arg.split("=", 1)[1]
    return found


def _find_root(explicit: str | None, payload: Payload) -> str | None:
    from memstore.core.agent_root import locate

    cwd = payload.get("cwd")
    found = locate(explicit, os.environ.get("MEMSTORE_ROOT"), cwd if isinstance(cwd, str) else None)
    if found is None and explicit is None:  # run by hand: registered hooks always name their root
        from memstore.core.agent_root import installed_root, is_root, nearest_root

        here, recorded = nearest_root(os.getcwd()), installed_root()
        found = here or (recorded if recorded is not None and is_root(recorded) else None)
    return found


def _log(root: str | None, message: str) -> None:
    from memstore.core.logs import hook_error  # imported only when there is something to say

    hook_error(root, message)


def read_payload(stream: Reader) -> Payload | None:
    raw = stream.read(MAX_STDIN + 1)
    if len(raw) > MAX_STDIN:
        return None
    try:
        payload = json.loads(raw.decode("utf-8", errors="replace") if isinstance(raw, bytes)
                             else raw)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return None
    return payload if isinstance(payload, dict) else None


def _tool_input(payload: Payload) -> tuple[str, str | None]:
    tool = payload.get("tool_name")
    data = payload.get("tool_input")
    file_path = None
    if isinstance(data, dict):  # NotebookEdit names its file notebook_path
        file_path = (data.get("file_path") if data.get("file_path") is not None
                     else data.get("notebook_path"))
    return (tool if isinstance(tool, str) else ""), usable(file_path)


def _text(payload: Payload, key: str) -> str | None:
    return usable(payload.get(key))


def _plugin_root() -> tuple[str | None, str]:
    """(the plugin's agent root, or None and why not). A hook naming ${user_config.root} in its
    arguments would not run at all while the option is unset, so the root comes from the
    environment."""
    value = os.environ.get("CLAUDE_PLUGIN_OPTION_ROOT", "").strip()
    if not value:
        return None, "unset"
    root = os.path.expanduser(value)
    return (root, "") if os.path.isdir(os.path.join(root, "memory")) else (None, root)


def _plugin_unset(payload: Payload, missing: str) -> Payload | None:
    """At SessionStart, say plainly why the memory is not there (the model tells the person)."""
    if payload.get("hook_event_name") != "SessionStart":
        return None
    if missing == "unset":
        text = ("memstore plugin: no agent root is set, so this session has no memory. Tell the "
                "person to run `claude plugin configure memstore@memstore` (the `root` option: a "
                "folder for the agent's memory), then `claude --init-only` once.")
    else:
        text = (f"memstore plugin: the agent root {missing} is not laid out yet, so this session "
                "has no memory. Tell the person to run `claude --init-only` once: it builds "
                "memstore's environment and lays the root out.")
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def _with_setup_failure(payload: Payload, response: Payload | None) -> Payload | None:
    """At SessionStart, the plugin's failed setup said first (plugin/prepare.py leaves why)."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if payload.get("hook_event_name") != "SessionStart" or not data:
        return response
    try:
        with open(os.path.join(data, "setup-failed.txt"), encoding="utf-8") as handle:
            notice = handle.read(2000).strip()
    except OSError:
        return response
    said = (response or {}).get("hookSpecificOutput", {})
    # always a dict: handle built it
    text = said.get("additionalContext", "") if isinstance(said, dict) else ""
    return {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "\n\n".join(t for t in (notice, text) if t)}}


def _settings(root: str, now_opt: str | None) -> tuple[Config, dt.datetime]:
    """(the root's config, the clock's now): read once per hook call."""
    from memstore.core.config import Config, ConfigError, load_config
    from memstore.core.timeutil import parse_now

    try:
        config = load_config(root)
    except ConfigError as exc:
        _log(root, f"config: {exc}; using defaults")
        config = Config()
    try:
        now = parse_now(now_opt if now_opt is not None else os.environ.get("MEMSTORE_NOW"))
    except ValueError:
        now = parse_now(None)
    return config, now


def handle(payload: Payload, root: str, now_opt: str | None, part: str | None = None, *,
           plugin: bool = False, settings: tuple[Config, dt.datetime] | None = None,
           after: str | None = None,
           ) -> Payload | None:
    """The response object for one payload (None: print nothing). `plugin`: run by the Claude Code
    plugin, whose MCP tools have the plugin's names. `settings`: (config, now), when the caller read
    them already (a client adapter hands several payloads over for one call). `after`: the
    SessionStart handler the bundle's waits for (session_start.py)."""
    config, now = settings if settings is not None else _settings(root, now_opt)
    event = payload.get("hook_event_name")
    tool, file_path = _tool_input(payload)
    cwd = _text(payload, "cwd")
    session = _text(payload, "session_id")

    if event == "PostToolUse":
        return _post_tool_use(payload, root, tool, file_path, cwd, session, now, config)

    if event == "PreToolUse":
        from memstore.hook.pretool import answer

        output = answer(payload, root, tool, file_path, cwd, session, now, config, plugin)
        return {"hookSpecificOutput": output} if len(output) > 1 else None

    if event == "SessionStart":
        import time

        from memstore.hook import session_start as order

        started = time.time()
        if part is None and config.semantic != "off" and config.prompt_pointers:
            from memstore.core.meaning_client import start

            start(root)  # warm by the first prompt (its model takes a fifth of a second to load)
        text = _session_start(payload, root, now, config, part, cwd, session)
        source = _text(payload, "source") or ""
        if session:  # a fixed order of the parts, whatever order they finish in (session_start.py)
            if part is None:
                order.prune(root)
            before = order.predecessor(part, after)
            if before is not None:
                order.wait_turn(root, session, source, before, started)
            order.finished(root, session, source, part or "bundle")
        if not text:
            return None
        return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}

    if event == "UserPromptSubmit":
        return _prompt(payload, root, now, config, cwd, session)

    if event == "SessionEnd":
        from memstore.core.tamper_sessions import session_end

        session_end(root, session)
    return None


def _prompt(payload: Payload, root: str, now: dt.datetime, config: Config, cwd: str | None,
            session: str | None) -> Payload | None:
    """Pointers to the memories the person's prompt points at (core.pointers), or nothing."""
    if not config.prompt_pointers:
        return None
    from memstore.core.pointers import answer
    from memstore.core.projects import locate

    project = locate(cwd, root)[0]
    from memstore.core.timeutil import fmt

    text = answer(root, payload.get("prompt"), session, project, fmt(now),
                  config.hook_lock_budget_ms, meaning=config.semantic != "off")
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}


def _post_tool_use(payload: Payload, root: str, tool: str, file_path: str | None, cwd: str | None,
                   session: str | None, now: dt.datetime, config: Config) -> Payload | None:
    """Reinforce the memory a Read or an edit touched; for a memory the agent wrote, mark it for
    the next sync, keep its dates, and say at once what to mend in its frontmatter."""
    from memstore.core.kinds import REINFORCING_TOOLS, WRITE_TOOLS

    if tool not in REINFORCING_TOOLS or not file_path:
        return None
    found = resolve(root, file_path, cwd)  # once: every step below is handed this
    if found is None:
        return None
    from memstore.core.policy import record_touch

    written = tool in WRITE_TOOLS
    # Claude Code's Write result says whether it made the file ("create") or replaced it ("update")
    response = payload.get("tool_response")
    born = isinstance(response, dict) and response.get("type") == "create"
    result = record_touch(root, file_path, tool, now, config, session=session, cwd=cwd,
                          written=written, born=born, resolved=found)
    if result.recorded and not result.applied:
        _log(root, f"touch of {result.rel} journaled only: {result.message}")
    rel = may_write(found) if written else None
    if rel is None:
        return None
    if not (result.applied and result.rel == rel):  # else the touch's transaction marked it
        from memstore.core.policy import mark_dirty

        mark_dirty(root, rel, config)
    _remember_dates(root, rel, payload.get("tool_input"), response, now)
    said = _frontmatter_said(found.real, rel)
    if said:  # in the same call: the agent mends what it just wrote while it still holds it
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": said}}
    return None


def _remember_dates(root: str, rel: str, tool_input: object, tool_response: object,
                    now: dt.datetime) -> None:
    """What the agent wrote, kept for the tick to date its "yesterday"s from this instant
    (core.pending_dates)."""
    from memstore.core.pending_dates import remember, written_text

    try:
        remember(root, rel, written_text(tool_input, tool_response), now.isoformat())
    except OSError as exc:
        _log(root, f"the dates in {rel} were not kept for dating: {exc}")


_HEAD = 64 * 1024  # a frontmatter ends long before this


def _frontmatter_said(real: str, rel: str) -> str | None:
    """What is wrong with the frontmatter of the memory just written, and how to mend it (None:
    nothing)."""
    from memstore.core.frontreader import told

    try:
        with open(real, "rb") as handle:
            head = handle.read(_HEAD)
    except OSError:
        return None
    return told(head.decode("utf-8", errors="replace"), rel, whole=len(head) < _HEAD)


def _session_start(payload: Payload, root: str, now: dt.datetime, config: Config, part: str | None,
                   cwd: str | None, session: str | None) -> str:
    """The text of one SessionStart handler: part N of identity + MEMORY.md, or the cold-start
    bundle."""
    from pathlib import Path

    if part is not None:
        from memstore.hook.session_imports import import_part

        kind, _, number = part.partition(":")
        return (import_part(Path(root), int(number)) if kind == "imports" and number.isdigit()
                else "")
    from memstore.core import tamper, tamper_lines
    from memstore.core.agent_root import state_dir
    from memstore.core.projects import locate, remember_worktree
    from memstore.hook.bundle import bundle
    from memstore.hook.gate import session_refresh

    project, top = locate(cwd, root)
    remember_worktree(state_dir(root), project, top)  # where this project's code is, for the tick
    # the person's files and the wiring against what the person accepted, before this session counts
    # as live: a change since the last session ended is a hand edit (said once, in the bundle)
    found = tamper.check(root, cwd=cwd, start=session or "")
    # the gate's list, for these lenses
    for line in session_refresh(root, config.hook_lock_budget_ms):
        _log(root, line)
    # person-wide items and this session's project's own, never another project's
    return bundle(Path(root), now, config, project, evidence=tamper_lines.bundle_lines(root, found))


def for_client(client: str, payload: Payload, root: str, now_opt: str | None) -> Payload | None:
    """Another client's payload, through its adapter (memstore.hook.clients) and the one
    `handle`."""
    from memstore.hook.clients import CLIENTS

    if client not in CLIENTS:
        _log(root, f"unknown --client {client!r}; ignored")
        return None
    from importlib import import_module

    adapter = import_module(f"memstore.hook.clients.{client}")
    canonical = adapter.canonical(payload)
    settings = _settings(root, now_opt) if canonical else None
    if any(one.get("hook_event_name") == "PreToolUse" for one in canonical):
        from memstore.core.tamper_sessions import session_seen

        # a resumed session fires no SessionStart there (Codex's matcher is "startup"): live from
        # its first tool
        session_seen(root, _text(canonical[0], "session_id"), client)
    responses = [handle(one, root, now_opt, settings=settings) for one in canonical]
    context = None
    if any(one.get("hook_event_name") == "SessionStart" for one in canonical):
        # No `@` imports there: identity and the index travel with the cold-start bundle.
        from pathlib import Path

        from memstore.hook.session_imports import imports_text

        context = imports_text(Path(root))
    # each adapter's answer() (hook/clients)
    answer: Payload | None = adapter.answer(payload, responses, context)
    return answer


def _answer(response: dict[str, Any]) -> str:
    """The JSON to print, through the one writer of what the client loads (memstore.core.loaded)."""
    from memstore.core.loaded import answer

    return answer(response)


def main(argv: list[str] | None = None, stdin: Reader | None = None,
         stdout: Writer | None = None) -> int:
    """Entry point. Returns 0 whatever happens."""
    root: str | None = None
    try:
        opts = _args(list(sys.argv[1:] if argv is None else argv))
        payload = read_payload(stdin or sys.stdin.buffer)
        if payload is None:
            _log(_find_root(opts["root"], {}), "payload is not a JSON object; ignored")
            return 0
        plugin = "--plugin" in (sys.argv[1:] if argv is None else argv)
        if plugin:  # the Claude Code plugin: the root is its `root` option, as Claude Code hands it
            root, missing = _plugin_root()
            if root is None:
                response = _plugin_unset(payload, missing) if opts["part"] is None else None
                if response is not None:
                    out = stdout or sys.stdout
                    out.write(_answer(response))
                return 0
        else:
            root = _find_root(opts["root"], payload)
        if root is None or os.environ.get("MEMSTORE_HOOKS", "").lower() == "off":
            return 0  # no root, or a session memstore itself started (the wake's model calls)
        client = opts["client"] or "claude"
        if client == "claude":
            response = handle(payload, root, opts["now"], opts["part"], plugin=plugin,
                              after=opts["after"])
            if plugin and opts["part"] is None:
                response = _with_setup_failure(payload, response)
        else:
            response = for_client(client, payload, root, opts["now"])
        if response is not None:
            out = stdout or sys.stdout
            out.write(_answer(response))
            out.flush()
    except BaseException as exc:  # the hook must never fail the agent, whatever went wrong
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            return 0
        import traceback

        _log(root, f"{type(exc).__name__}: {exc} | {traceback.format_exc(limit=3)!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

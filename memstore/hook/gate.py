"""The word list of the PreToolUse gate (hookgate.sh), written from the hook's own lists.

Standard library only.

Claude Code starts a PreToolUse handler for every tool call (the plugin's matcher is `*`; the
settings install's lens handler is `*` too, so a lens on a new tool needs no reinstall). A
Python start costs 40-60 ms; hookgate.sh, a bash script with no program of its own, decides
first whether the call could need the hook at all, from runtime/state/hookgate.txt, which this
module writes (SessionStart, and the hook whenever the gate says the file is missing, stale, or
the tool is new to it). The words come from kinds.py, as the hook's cheap look takes them, so
the two never drift apart. A missing, stale or unreadable file means "start the hook": a check
is never skipped because the list is not there.

Lines are KEY<TAB>VALUE:
- format: GATE_FORMAT, the script's own; root and home: as the file was written for (else stale)
- real: the root's real path (a shell standing in the root; a Read whose real folder is in it)
- word: a word whose presence in a Bash command (quotes and backslashes taken out) or a Read's
  path starts the hook: watch_words, SHELL_VERBS, the wiring words, the root's spellings
- tool: a tool name the list has decided; a tool not named starts the hook, which adds it
- skip: a tool the plugin's gate may pass over (no lens can match it; not an edit tool, not
  memstore's MCP tool); free: one no lens can match (the settings install's gate, whose other
  handlers have `if` filters of their own)
- watch: a lens file or folder; one changed after the file was written makes it stale (the
  file's mtime is set to the newest mtime seen, so bash's `-nt` tells)
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds

if TYPE_CHECKING:
    from memstore.core.lenses import Lens

GATE_FORMAT = "memstore-gate 1"  # also in hookgate.sh: a file of another format is stale
GATE_NAME = "hookgate.txt"
# Claude Code's own tools (2.1.x): decided up front, so a Bash `ls` never waits for a first sight
KNOWN_TOOLS = ("Bash", "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead", "Glob",
               "Grep", "LS", "WebFetch", "WebSearch", "Task", "Agent", "TodoWrite", "TodoRead",
               "BashOutput", "KillShell", "KillBash", "ExitPlanMode", "SlashCommand", "Skill",
               "ToolSearch", "AskUserQuestion")
MAX_TOOLS = 300  # tools learned one by one: enough for many MCP servers, bounded against a flood
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,200}")
_UNSAFE = re.compile(r"[\"'\\\x00-\x1f\x7f]")  # a word the gate could not see as the hook does


def gate_file(root: str) -> str:
    from memstore.core.agent_root import state_dir

    return os.path.join(state_dir(root), GATE_NAME)


def words(root: str) -> list[str]:
    """What the hook's cheap look of a Bash command looks for (hook.py, PreToolUse), in one list."""
    from memstore.core.access import CLIENT_WIRING_WORDS, SHELL_VERBS, WIRING_WORDS, watch_words

    return list(dict.fromkeys((*watch_words(root), *SHELL_VERBS, *WIRING_WORDS,
                               *CLIENT_WIRING_WORDS, "memstore/config.toml", root,
                               os.path.realpath(root))))


def _ours(tool: str) -> bool:
    """An edit tool or memstore's MCP tool: the hook decides those whatever the payload says."""
    from memstore.core.kinds import EDIT_TOOLS, PLUGIN_MCP

    return tool in EDIT_TOOLS or tool.startswith(("mcp__memstore__", PLUGIN_MCP))


def read_tools(root: str) -> list[str]:
    """The tools the file names as decided (learned ones kept across rewrites); none when
    unreadable."""
    try:
        with open(gate_file(root), encoding="utf-8") as handle:
            text = handle.read(200_000)
    except (OSError, UnicodeDecodeError):
        return []
    return [line[5:] for line in text.split("\n")
            if line.startswith("tool\t") and _TOOL_NAME.fullmatch(line[5:])]


def gate_text(root: str, lenses: list[Lens], tools: list[str], stamps: dict[str, int],
              unread: bool) -> str:
    """The file's text. `stamps`: {lens file or folder (root-relative): mtime_ns}, as seen when the
    lenses were read; `unread`: some changed lens could not be read here, so no tool is known
    lens-free."""
    listed = list(dict.fromkeys(t for t in (*KNOWN_TOOLS, *tools)
                                if _TOOL_NAME.fullmatch(t)))[:MAX_TOOLS]
    patterns = [lens.tool_match for lens in lenses if lens.tool_match is not None]
    from memstore.core.lenses import in_time

    # a tool is free of lenses when no pattern matches it in time (one that runs out of time is a
    # match: the hook then starts for that tool, and its own check skips the slow lens)
    def matched(pattern: re.Pattern[str], tool: str) -> bool:
        return in_time(lambda: bool(pattern.search(tool))) is not False

    free = [] if unread else [t for t in listed if not any(matched(p, t) for p in patterns)]
    found = words(root)
    real = os.path.realpath(root)
    home = os.environ.get("HOME", "")
    watched = [os.path.join(root, rel) for rel in sorted(stamps)] or [root]
    if any(_UNSAFE.search(value) for value in (*found, *watched, root, real, home)):
        free = []  # a name bash would see escaped: nothing is passed over
    skip = [t for t in free if not _ours(t)]
    lines = [f"format\t{GATE_FORMAT}", f"root\t{root}", f"home\t{home}", f"real\t{real}",
             *(f"word\t{w}" for w in found), *(f"tool\t{t}" for t in listed),
             *(f"skip\t{t}" for t in skip), *(f"free\t{t}" for t in free),
             *(f"watch\t{w}" for w in watched),
             # a touched lens changes the text, so its mtime moves
             f"stamp\t{max(stamps.values(), default=0)}"]
    return "\n".join(lines) + "\n"


def refresh(root: str, lenses: list[Lens], stamps: dict[str, int], unread: bool,
            tool: str | None = None) -> bool:
    """Write the gate's file for these lenses (current_lenses, with its stamps), adding `tool` to
    the tools decided. Its mtime is then set to the newest lens mtime seen: a lens changed after
    that reading is newer than the file, which the gate takes as stale. False when it could not be
    written."""
    from pathlib import Path

    from memstore.core.locks import LockTimeout, atomic_write, file_lock

    path = gate_file(root)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # another hook writing it: theirs will do
        with file_lock(Path(path + ".lock"), timeout=0.2):
            tools = read_tools(root)
            if tool and _TOOL_NAME.fullmatch(tool) and tool not in tools:
                tools.append(tool)
            atomic_write(Path(path), gate_text(root, lenses, tools, stamps, unread).encode("utf-8"))
            # no lenses/ folder: the root's own mtime, which its making moves
            newest = max(stamps.values(), default=None) or os.stat(root).st_mtime_ns
            os.utime(path, ns=(newest, newest))
    except LockTimeout:
        return False  # another hook is writing it
    except OSError:
        # not writable as it should be (a lock path made a directory, a full disk): the old list
        # must not stand, since the gate would go on trusting it; without one the gate starts the
        # hook for every call
        try:
            os.unlink(path)
        except OSError:
            pass
        return False
    return True


# what the gate hands over in $MEMSTORE_GATE when its file could not answer: the hook rewrites it
REWRITE_ON = ("missing", "stale", "new")


def session_refresh(root: str, budget_ms: int) -> list[str]:
    """At SessionStart: the lenses as they are now, and the gate's file written from them. Returns
    what the hook should log: each changed lens file this reader could not take (it waits for a
    sync), or why the file could not be written (the gate then starts the hook for every call:
    slower, never unsafe)."""
    try:
        return [f"lens {rel} changed since the last sync in a form only sync reads; "
                "it waits for a sync"
                for rel in _session_refresh(root, budget_ms)]
    except Exception as exc:  # the bundle matters more than the gate's list
        return [f"the gate's list not written: {type(exc).__name__}: {exc}"]


def _teams(root: str) -> list[str]:
    """The joined teams' names, whose lenses fire too; none when memstore.toml cannot be read (or
    is held)."""
    from memstore.core.config import ConfigError, load_config

    try:
        return [team.name for team in load_config(root).teams]
    except ConfigError:
        return []


def _session_refresh(root: str, budget_ms: int) -> list[str]:
    import sqlite3

    from memstore.core.agent_root import db_file
    from memstore.core.lenses import current_lenses
    from memstore.core.transactions import hook_connect

    problems: list[str] = []
    stamps: dict[str, int] = {}
    teams = _teams(root)
    try:
        conn = hook_connect(db_file(root), budget_ms) if os.path.exists(db_file(root)) else None
    except sqlite3.Error:
        conn = None
    try:
        lenses = current_lenses(conn, root, problems, stamps, teams)
    except sqlite3.Error:  # a mirror mid-rebuild: the files alone
        problems, stamps = [], {}
        lenses = current_lenses(None, root, problems, stamps, teams)
    finally:
        if conn is not None:
            conn.close()
    refresh(root, lenses, stamps, bool(problems))
    return problems

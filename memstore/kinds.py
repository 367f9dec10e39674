"""What kind of file a path is in an agent root (T2 memory, lens, derived, ...). Standard library only."""

from __future__ import annotations

import re

from memstore.agent_root import ARCHIVE, CURRENT_STATE, INDEX

MEMORY_TYPES = ("feedback", "project", "reference", "user", "process", "handoff")

# The underscore after a known type is what makes a file a T2 memory.
T2_NAME = re.compile(r"^({})_([^/\\]+)\.md$".format("|".join(MEMORY_TYPES)))
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

DERIVED = (INDEX, ARCHIVE, CURRENT_STATE)
# Folders never walked: machine state, VCS metadata, virtualenvs.
SKIP_DIRS = frozenset({"runtime", ".git", ".hg", ".svn", ".venv", "node_modules", "__pycache__"})

# Which tool calls count. Here, not in policy, so the hook can tell without importing policy.
# The one list of tools whose use of a T2 file reinforces it (Grep/Glob hits never do).
REINFORCING_TOOLS = ("Read", "Edit", "Write", "MultiEdit")
# The tools that change a file: the hook approves them for memory files, and a write marks the file dirty.
WRITE_TOOLS = ("Write", "Edit", "MultiEdit")

# Files a person places and the agent never changes (root-relative; a folder ends in "/");
# review/ holds the person's answers to what the memory proposes (memstore.review).
# install denies Edit/Write on them in the client's own permission rules, and the hook
# denies writes to them (Write/Edit tools by real path; shell commands that name them).
PERSON_OWNED = ("identity.md", "memstore.toml", "lenses/", "meditations/", "review/")
# Files and folders memstore alone writes (root-relative, as above): the mirror, the journal and state
# under runtime/ (the journal cannot be rebuilt: a forged line there fakes reinforcement), and the
# derived files the client loads (an agent that wrote MEMORY.md itself would skip the inert render).
# The agent may read them; install denies writes to them, and so does the hook.
MACHINE_OWNED = ("runtime/", "memory/MEMORY.md", "memory/MEMORY-archive.md", "memory/current-state.md",
                 # where forget, the nightly roll and deleted memories' copies go: taking a file out of an
                 # archive is the one real deletion, so only memstore moves files in and out
                 "memory/archive/", "memory/short-term/archive/", "memory/dream-journal/archive/")
# The one table of what the agent may not change: deny rules, the hook's refusals by real path and
# the shell check all read it.
AGENT_DENIED = (*PERSON_OWNED, *MACHINE_OWNED)
# Words a shell command must hold before the hook's shell check looks at it (the hook's cheap
# first look, and install's `if` filters for Bash): the person-owned names, undecorated.
PERSON_WORDS = ("identity", "memstore.toml", "lenses", "meditations", "review")
# The files that hold memstore's wiring in Claude Code, which the agent's shell may not rewrite
# either (with them gone, the deny rules and the refusing hook would be gone next session).
WIRING_WORDS = ("settings.json", "settings.local.json", "rules/memstore.md", "plugins/", ".local/bin/memstore")
# The same for Codex ($CODEX_HOME/hooks.json, config.toml) and Gemini CLI (.gemini/settings.json).
CLIENT_WIRING_WORDS = ("hooks.json", "config.toml")
CLIENT_DIRS = (".claude", ".codex", ".gemini")
# Words that make the shell check look at a command at all (the hook's cheap first look, and
# install's `if` filters for Bash): the person's names, memstore's own, the clients' folders, and
# the spellings that reach the root from elsewhere (a home, a climb); watch_words adds the root's.
SHELL_WORDS = (*PERSON_WORDS, "trust", "runtime", "MEMORY", "current-state", *CLIENT_DIRS, "~", "HOME", "..")
# Commands that move, delete or copy over whatever they name: each starts the shell check whatever it names,
# since quoting (`ag''ents`) or a plain absolute path above the root hides every word above.
SHELL_VERBS = ("mv ", "rm ", "rmdir ", "rsync ", "cp ", "tar ", "ln ", "find ", "unlink ", "shred ")
# Tools that change a file, for the refusal of person-owned files (NotebookEdit included).
EDIT_TOOLS = (*WRITE_TOOLS, "NotebookEdit")

# memstore's own MCP tools, exactly: the hook approves these names and no other (a server
# registered as "memstore" by someone else could offer "mcp__memstore__run_shell").
MCP_TOOLS = ("search", "read", "note", "new_memory", "bug_add", "bug_list", "bug_close")

KINDS = ("t2", "short-term", "dream", "bug", "lens", "meditation", "identity", "derived", "other")


def memory_type(name: str) -> str | None:
    """The T2 type encoded in a bare file name, or None when it is not a T2 name."""
    match = T2_NAME.match(name)
    return match.group(1) if match else None


def watch_words(root: str) -> tuple[str, ...]:
    """SHELL_WORDS, and the names of the folders between the home and the root (`agents` for
    ~/agents/me): a command that moves one of them moves the root. Plain os.path: the hook's path."""
    import os

    home = os.path.expanduser("~")
    words: dict[str, None] = dict.fromkeys(SHELL_WORDS)
    for form in dict.fromkeys((os.path.normpath(root), os.path.realpath(root))):
        inner = form[len(home):] if home not in ("", "/") and form.startswith(home + os.sep) else form
        for part in inner.split(os.sep)[:-1]:
            if len(part) >= 3:  # shorter names would start the hook for most commands
                words[part] = None
    return tuple(words)


def person_owned(rel: str) -> bool:
    """Is this root-relative posix path one the person owns (case-insensitively: macOS)?"""
    folded = rel.casefold()
    return any(folded == owned or folded.startswith(owned) if owned.endswith("/") else folded == owned
               for owned in PERSON_OWNED)


def machine_owned(rel: str) -> bool:
    """Is this root-relative posix path one memstore alone writes (runtime/, the derived files)?"""
    folded = rel.casefold()
    return any(folded == owned.rstrip("/") or folded.startswith(owned) if owned.endswith("/")
               else folded == owned.casefold() for owned in MACHINE_OWNED)


def classify(rel: str) -> str:
    """The kind of a markdown file from its path relative to the root (posix form)."""
    parts = rel.split("/")
    if rel == "identity.md":
        return "identity"
    if parts[0] == "memory":
        if len(parts) == 2:
            if parts[1] in DERIVED:
                return "derived"
            return "t2" if T2_NAME.match(parts[1]) else "other"
        sub = parts[1]
        if sub == "short-term":
            return "short-term"
        if sub == "dream-journal":
            return "dream"
        if sub == "bugs":
            return "bug"
        return "other"
    if parts[0] == "lenses":
        return "lens"
    if parts[0] == "meditations":
        return "meditation"
    return "other"

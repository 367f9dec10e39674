"""What kind of file a path is in an agent root (T2 memory, lens, derived, ...).

Standard library only.

What the agent may touch is not here: memstore.core.access holds that table.
"""

from __future__ import annotations

import re

from memstore.core.agent_root import ARCHIVE, CURRENT_STATE, INDEX
from memstore.core.teams import READ_KINDS, split

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
# The tools that change a file: the hook approves them for memory files, and a write marks it dirty.
WRITE_TOOLS = ("Write", "Edit", "MultiEdit")

# Tools that change a file, for the refusal of person-owned files (NotebookEdit included).
EDIT_TOOLS = (*WRITE_TOOLS, "NotebookEdit")

# memstore's own MCP tools, exactly: the hook approves these names and no other (a server
# registered as "memstore" by someone else could offer "mcp__memstore__run_shell").
MCP_TOOLS = ("search", "read", "note", "new_memory", "bug_add", "bug_list", "bug_close")
# The same tools as the plugin's MCP server offers them: mcp__plugin_<plugin>_<server>__NAME.
PLUGIN_MCP = "mcp__plugin_memstore_memstore__"

KINDS = ("t2", "short-term", "dream", "bug", "lens", "meditation", "identity", "derived", "other")


def memory_type(name: str) -> str | None:
    """The T2 type encoded in a bare file name, or None when it is not a T2 name."""
    match = T2_NAME.match(name)
    return match.group(1) if match else None


def classify(rel: str) -> str:
    """The kind of a markdown file from its path relative to the root (posix form).

    A file of a team clone (teams/<name>/...) is classified by its path inside the clone, and only
    its topic memories, lenses and meditations count (memstore.core.teams.READ_KINDS)."""
    if rel.startswith("teams/"):
        inner = split(rel)
        if inner is None:
            return "other"
        kind = classify(inner[1])
        return kind if kind in READ_KINDS and not inner[1].startswith("teams/") else "other"
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

"""Where things live in an agent root, and what kind of file a path is. Standard library only."""

from __future__ import annotations

import os
import re
from pathlib import Path

from memstore.errors import RootNotFound

MEMORY_TYPES = ("feedback", "project", "reference", "user", "process", "handoff")

# The underscore after a known type is what makes a file a T2 memory.
T2_NAME = re.compile(r"^({})_([^/\\]+)\.md$".format("|".join(MEMORY_TYPES)))
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

DERIVED = ("MEMORY.md", "MEMORY-archive.md", "current-state.md")
# Folders never walked: machine state, VCS metadata, virtualenvs.
SKIP_DIRS = frozenset({"runtime", ".git", ".hg", ".svn", ".venv", "node_modules", "__pycache__"})

KINDS = ("t2", "short-term", "dream", "bug", "lens", "meditation", "identity", "derived", "other")


def memory_type(name: str) -> str | None:
    """The T2 type encoded in a bare file name, or None when it is not a T2 name."""
    match = T2_NAME.match(name)
    return match.group(1) if match else None


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


def find_root(explicit: str | os.PathLike[str] | None, env: str | None, cwd: Path) -> Path:
    """--root, else $MEMSTORE_ROOT, else the nearest folder at or above cwd holding memory/."""
    if explicit:
        root = Path(explicit).expanduser()
        if not root.is_dir():
            raise RootNotFound(f"root {root} does not exist", hint=f"create it with: memstore init {root} --apply")
        return root.resolve()
    if env:
        root = Path(env).expanduser()
        if not root.is_dir():
            raise RootNotFound(f"$MEMSTORE_ROOT={env} does not exist", hint="fix MEMSTORE_ROOT or pass --root")
        return root.resolve()
    here = cwd.resolve()
    for candidate in (here, *here.parents):
        if (candidate / "memory").is_dir():
            return candidate
    raise RootNotFound(
        f"no agent root at or above {here} (no memory/ folder found)",
        hint="pass --root DIR, set MEMSTORE_ROOT, or create one with: memstore init DIR --apply",
    )


def runtime_dir(root: Path) -> Path:
    return root / "runtime"


def state_dir(root: Path) -> Path:
    return root / "runtime" / "state"


def journal_dir(root: Path) -> Path:
    return root / "runtime" / "journal"


def db_path(root: Path) -> Path:
    return root / "runtime" / "memstore.db"


def relpath(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()

"""A path a tool call names, by its real path, and what it is to the memory. Standard library only.

`resolve` is the one resolver: it turns the path into its real path (symlinks and `..` resolved)
and the root's, once per call, and every question below is answered from that value:

- `reinforces`: the memory a read or an edit of the path counts as an access to;
- `may_write`: the memory file the write gate approves;
- `may_read`: the memory file a read from outside the root's project is approved for.

One set of rules holds for all three. A path is taken as the mirror's walk takes it (a name the walk
never indexes is not a memory, and approving a write to one would hide it): `.md` and the folder
names as written, no hidden name and no folder the walk skips (kinds.SKIP_DIRS) at any depth. Only
the names memstore alone writes are matched without case (memory.md is MEMORY.md on macOS), since
there a match refuses. A topic memory lies right in memory/ (or a joined team's memory/); a file
the agent may write lies anywhere the walk reaches in memory/, never in a team's clone.
"""

from __future__ import annotations

import os

from memstore.core.access import machine_owned
from memstore.core.kinds import SKIP_DIRS, T2_NAME

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    from collections.abc import Collection

PATH_MAX = 4096  # Linux's limit for a whole path; longer is never a real file


class Resolved:
    """A tool's path resolved once: its real path and the root's. A plain class: the hook's path."""

    __slots__ = ("real", "root")

    def __init__(self, real: str, root: str) -> None:
        self.real = real
        self.root = root

    def rel(self) -> str | None:
        """The posix path relative to the root when the real path lies inside it, else None."""
        if not self.real.startswith(self.root.rstrip(os.sep) + os.sep):
            return None
        return self.real[len(self.root.rstrip(os.sep)) + 1 :].replace(os.sep, "/")


def usable(value: object) -> str | None:
    """A non-empty string a path and a journal line can carry: no NUL, no lone surrogate, not longer
    than a path can be (realpath's cost grows with the square of a path's depth)."""
    if not isinstance(value, str) or not value or "\x00" in value or len(value) > PATH_MAX:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def resolve(root: str | os.PathLike[str], file_path: object, cwd: str | os.PathLike[str] | None,
            *, real_root: str | None = None) -> Resolved | None:
    """The real path of `file_path` (relative to `cwd`, else the process's folder) and of the root;
    None when it cannot be a usable path. `real_root`: the root already resolved by the caller."""
    path = usable(os.fspath(file_path) if isinstance(file_path, os.PathLike) else file_path)
    if path is None:
        return None
    try:
        # an absolute file_path wins over the folder
        candidate = os.path.join(os.fspath(cwd) if cwd else os.getcwd(), path)
        if len(candidate) > PATH_MAX:  # refused before realpath, whose cost is quadratic in depth
            return None
        real = os.path.realpath(candidate)
        if real_root is None:
            real_root = os.path.realpath(os.fspath(root))
        return Resolved(real, real_root)
    except (OSError, ValueError):
        return None


def reinforces(found: Resolved | None, teams: Collection[str] = ()) -> str | None:
    """The root-relative path of the topic memory (a T2 name right in memory/, or in a joined team's
    memory/) that a read or an edit of this path counts as an access to; None for anything else."""
    rel = found.rel() if found is not None else None
    if rel is None:
        return None
    parts = rel.split("/")
    if len(parts) == 2 and parts[0] == "memory":
        return rel if T2_NAME.match(parts[1]) else None
    if len(parts) == 4 and parts[0] == "teams" and parts[1] in teams and parts[2] == "memory":
        return rel if T2_NAME.match(parts[3]) else None
    return None


def may_write(found: Resolved | None) -> str | None:
    """The root-relative path of the memory file the write gate approves (markdown the walk indexes
    anywhere in memory/, none that memstore alone writes); None for anything else."""
    rel = _memory_file(found, ())
    return rel if rel is not None and not machine_owned(rel) else None


def may_read(found: Resolved | None, teams: Collection[str] = ()) -> str | None:
    """The root-relative path of the memory file a read is approved for: what may_write takes, with
    the derived files and archives, and the joined teams' memory/ too; None for anything else."""
    return _memory_file(found, teams)


def _memory_file(found: Resolved | None, teams: Collection[str]) -> str | None:
    rel = found.rel() if found is not None else None
    if rel is None:
        return None
    parts = rel.split("/")
    if parts[0] == "memory":
        inner = parts[1:]
    elif len(parts) > 3 and parts[0] == "teams" and parts[1] in teams and parts[2] == "memory":
        inner = parts[3:]
    else:
        return None
    if not inner or not inner[-1].endswith(".md"):
        return None
    if any(part.startswith(".") for part in inner) or any(part in SKIP_DIRS for part in inner[:-1]):
        return None  # never walked, so never indexed: approving it would hide a write
    return rel

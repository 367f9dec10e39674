"""The walk of an agent root: every regular markdown file with its stat, and every folder's mtime.

Sync compares the walk with the mirror; lint and the nightly tick read what it skipped. Links
are listed, never followed, and only regular files are taken (memstore.core.fsguard says why).
"""

from __future__ import annotations

import os
import stat as statmod
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from memstore.core.kinds import SKIP_DIRS, classify
from memstore.core.teams import READ_KINDS, TEAMS_DIR

Stat = tuple[int, int, int]  # mtime_ns, size, inode


@dataclass
class Walk:
    files: dict[str, Stat] = field(default_factory=dict)
    dirs: dict[str, int] = field(default_factory=dict)  # folder -> mtime_ns, taken before listing
    blocked_dirs: list[str] = field(default_factory=list)
    blocked_files: set[str] = field(default_factory=set)
    # Skipped, never read (memstore.core.fsguard): links to a markdown file or to a folder, and
    # markdown names that are not regular files (a FIFO, a device, a socket). Lint names them.
    links: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)

    def shielded(self, rel: str) -> bool:
        """Is this path's absence unknown rather than real (unlistable folder, unstattable file)?"""
        return rel in self.blocked_files or any(d == "" or rel.startswith(d + "/")
                                                for d in self.blocked_dirs)


def skip_dir(name: str) -> bool:
    """A folder no walk enters: hidden ones and memstore.core.kinds.SKIP_DIRS."""
    return name.startswith(".") or name in SKIP_DIRS


def team_skipped(rel_dir: str, name: str, teams: Collection[str]) -> bool:
    """A folder under teams/ that is not a joined team's clone: never walked (core.teams)."""
    return rel_dir == TEAMS_DIR and name not in teams


def team_ignored(rel: str) -> bool:
    """A markdown file of a team clone that is not one of its memories, lenses or meditations (its
    README, its own MEMORY.md): the team's business, never indexed here."""
    return rel.startswith("teams/") and classify(rel) not in READ_KINDS


def walk(root: Path, start: str = "", into: Walk | None = None, teams: Collection[str] = ()
         ) -> Walk:
    """Every regular markdown file under root/start, with its stat, and every folder's mtime.

    Under teams/ only the clones of `teams` (the joined teams' names) are walked.

    Links are neither read nor walked (a link to a file or a folder is listed in `links`),
    nor is anything that is not a regular file: see memstore.core.fsguard. The entry types come
    from the listing itself, so this costs no system call more than before.
    """
    result = into or Walk()
    stack = [start]
    while stack:
        rel_dir = stack.pop()
        abs_dir = os.path.join(root, rel_dir)
        try:
            mtime = os.stat(abs_dir).st_mtime_ns
            entries = list(os.scandir(abs_dir))
        except OSError:
            result.blocked_dirs.append(rel_dir)
            continue
        result.dirs[rel_dir] = mtime
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not skip_dir(name) and not team_skipped(rel_dir, name, teams):
                        stack.append(rel)
                    continue
                markdown = (name.endswith(".md") and not name.startswith(".")
                            and not team_ignored(rel))
                if entry.is_symlink():
                    if markdown or (not skip_dir(name) and entry.is_dir()):
                        result.links.append(rel)
                    continue
                if not markdown:
                    continue
                if not entry.is_file(follow_symlinks=False):
                    result.special.append(rel)
                    continue
                info = entry.stat(follow_symlinks=False)
                if statmod.S_ISREG(info.st_mode):
                    result.files[rel] = (info.st_mtime_ns, info.st_size, info.st_ino)
            except OSError:
                result.blocked_files.add(rel)
    return result


def joined(config: object) -> frozenset[str]:
    """The names of the teams a Config has joined (its `teams`), for walk."""
    return frozenset(team.name for team in getattr(config, "teams", ()))

"""What a command tells sync changed, so that no step of it walks the tree again.

A command that syncs, writes and syncs again (the nightly tick, the debrief, flush) lists the
root once (`listing`) and hands that listing to each sync (memstore.mirror.sync.sync_into) and
to lint; a step that writes or moves files says which, and `follow` brings the listing up to
date with one stat per file and per folder. A single file a verb just wrote is `mark_written`:
the next quick sync reads it again.
"""

from __future__ import annotations

import os
import sqlite3
import stat as statmod
from collections.abc import Iterable
from pathlib import Path

from memstore.core.config import Config
from memstore.mirror.walking import Walk, joined, team_ignored, walk


def listing(root: Path, config: Config) -> Walk:
    """The command's one walk of the root: every file sync mirrors, and every folder's mtime."""
    return walk(root, teams=joined(config))


def follow(root: Path, tree: Walk, paths: Iterable[str]) -> None:
    """Bring `tree` up to date with files a step wrote, moved or removed (root-relative paths)."""
    folders: set[str] = set()
    for rel in paths:
        try:
            info = os.lstat(os.path.join(root, rel))
        except OSError:
            info = None
        name = rel.rsplit("/", 1)[-1]
        wanted = name.endswith(".md") and not name.startswith(".") and not team_ignored(rel)
        if info is not None and wanted and statmod.S_ISREG(info.st_mode):
            tree.files[rel] = (info.st_mtime_ns, info.st_size, info.st_ino)
        else:
            tree.files.pop(rel, None)
        folders.add(rel.rpartition("/")[0])
    for folder in folders:
        _follow_folder(root, tree, folder)


def _follow_folder(root: Path, tree: Walk, folder: str) -> None:
    """A folder's new mtime; a folder the step made (archive/) makes its parent's change too."""
    while True:
        try:
            mtime = os.stat(os.path.join(root, folder)).st_mtime_ns
        except OSError:
            tree.dirs.pop(folder, None)
            return
        known = folder in tree.dirs
        tree.dirs[folder] = mtime
        if known or not folder:
            return
        folder = folder.rpartition("/")[0]


def mark_written(conn: sqlite3.Connection, rel: str) -> None:
    """A file a verb just wrote: the next quick sync reads it whatever its folder says."""
    conn.execute("INSERT OR IGNORE INTO dirty (path) VALUES (?)", (rel,))
    conn.commit()

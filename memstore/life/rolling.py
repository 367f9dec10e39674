"""Window rolling, the nightly tick's one move of files: T1 facts past their window and
dream-journal entries past the newest few go into an `archive/` folder beside them. Nothing is
deleted: the SessionStart bundle reads only the top folder, while the mirror (and so search) still
holds them. A rejected lesson leaves short-term/ the same way (reviewing.answer).

`now` comes from the caller; nothing here reads the clock.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from memstore.core.agent_root import RootPaths
from memstore.core.config import Config
from memstore.core.frontreader import front_values, split_front
from memstore.core.fsguard import read_text
from memstore.core.holds import HOLD_DAYS, holds_until
from memstore.hook.bundle import _dated
from memstore.life.dreaming import scope_of

ARCHIVE_DIR = "archive"


@dataclass
class Rolled:
    moves: list[tuple[str, str]] = field(default_factory=list)  # (old, new), root-relative
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why): left in place

    @property
    def paths(self) -> list[str]:
        """Where the rolled files are now."""
        return [new for _old, new in self.moves]


def _free_name(folder: Path, name: str) -> Path:
    """`folder/name`, or `folder/<stem>-2.md`, -3, ... : the first that does not exist."""
    target = folder / name
    stem, suffix = os.path.splitext(name)
    n = 2
    while os.path.lexists(target):
        target = folder / f"{stem}-{n}{suffix}"
        n += 1
    return target


def move_to_archive(root: Path, path: Path, rolled: Rolled) -> None:
    """`path` into archive/ beside it under a free name; the move (or why not) noted in `rolled`."""
    folder = path.parent / ARCHIVE_DIR
    try:
        folder.mkdir(exist_ok=True)
        target = _free_name(folder, path.name)
        os.replace(path, target)  # same file system: a rename, bytes and mtime kept
    except OSError as exc:  # a file that cannot move (permissions, archive/ a file) stops nothing
        rolled.failed.append((path.relative_to(root).as_posix(), str(exc)))
        return
    rolled.moves.append((path.relative_to(root).as_posix(), target.relative_to(root).as_posix()))


def roll_windows(root: Path, now: dt.datetime, config: Config) -> Rolled:
    """Move T1 facts past `short_term_days` and dream entries past the newest `dream_entries`
    into archive/ beside them. Never deletes, never overwrites, never touches archive/.

    Which files count follows the SessionStart bundle (context.sections) exactly: a file
    this moves is one the bundle had stopped showing. Undated or future-dated files stay, and so
    does a fact whose end date is still ahead (memstore.core.holds).
    """
    paths = RootPaths(root)
    today = now.date()
    rolled = Rolled()
    for day, path in reversed(_dated(Path(paths.short_term))):  # oldest first: a stable order
        if (today - day).days > config.short_term_days and not _still_holds(path, day, today):
            move_to_archive(root, path, rolled)
    # The newest few of each scope (person-wide, each project's dreams): a busy project never rolls
    # away the entries another project's sessions are shown.
    by_scope: dict[str | None, list[Path]] = {}
    for day, path in _dated(Path(paths.dream_journal)):
        if day <= today:
            by_scope.setdefault(_scope_of(read_text(path)), []).append(path)
    old = [path for kept in by_scope.values() for path in kept[config.dream_entries:]]
    for path in sorted(old, key=lambda p: p.name):
        move_to_archive(root, path, rolled)
    return rolled


def _still_holds(path: Path, day: dt.date, today: dt.date) -> bool:
    """A fact whose end date is still ahead stays where the bundle shows it (core.holds)."""
    return (today - day).days <= HOLD_DAYS and holds_until(read_text(path), today) is not None


def _scope_of(text: str) -> str | None:
    return scope_of(front_values(split_front(text)[0]).get("project"))

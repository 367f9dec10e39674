"""`note`: one fact into memory/short-term/ (memstore.life.capture.note), taken into the mirror at
once, and the line saying where it went and who sees it (this project's sessions, or all)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memstore.core.errors import MemstoreError
from memstore.core.results import NoteResult
from memstore.life import capture

if TYPE_CHECKING:
    from memstore.core.config import Config


def note(root: Path, config: Config, now: dt.datetime, text: str, *, kind: str | None,
         project: str | None, take_in: Callable[[], object], notify: Callable[[str], None]
         ) -> NoteResult:
    """Store.note (see its docstring). take_in: the quick sync after a write; if it fails, that is
    said and the note stands."""
    done = capture.note(root, text, now, kind=kind, project=project,
                        lock_timeout=config.lock_timeout_s)
    rel = done.path.relative_to(root).as_posix()
    if not done.written:
        return NoteResult(rel, False, f"already noted today: {rel}")
    try:
        take_in()
    except MemstoreError as exc:
        notify(f"wrote {rel}, but the mirror did not take it in yet ({exc}); the next sync will")
    return NoteResult(rel, True, f"noted: {rel}" + (
        f" (project {project}: its sessions see it; "
        "`memstore note --global` notes for every project)"
        if project else " (every project)"))

"""`note`: one fact into memory/short-term/ (memstore.life.capture.note), and the line saying
where it went and who sees it (this project's sessions, or all). The api takes it into the
mirror."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from memstore.core.results import NoteResult
from memstore.life import capture

if TYPE_CHECKING:
    from memstore.core.config import Config


def note(root: Path, config: Config, now: dt.datetime, text: str, *, kind: str | None,
         project: str | None) -> NoteResult:
    """Store.note's write (see its docstring)."""
    done = capture.note(root, text, now, kind=kind, project=project,
                        lock_timeout=config.lock_timeout_s)
    rel = done.path.relative_to(root).as_posix()
    if not done.written:
        return NoteResult(rel, False, f"already noted today: {rel}")
    return NoteResult(rel, True, f"noted: {rel}" + (
        f" (project {project}: its sessions see it; "
        "`memstore note --global` notes for every project)"
        if project else " (every project)"))

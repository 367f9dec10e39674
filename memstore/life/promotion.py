"""`promote`: a memory, note or lesson made person-wide (`project: global`), edited in place, byte
for byte but for that one field (mirror.fmedit), and written only over the bytes it read."""

from __future__ import annotations

from pathlib import Path

from memstore.core.errors import Busy
from memstore.core.locks import atomic_write
from memstore.core.projects import GLOBAL
from memstore.mirror.fmedit import set_fields


def promote(root: Path, target: Path) -> tuple[str, bool]:
    """The file's root-relative path, and whether it was written (False: person-wide already)."""
    rel = target.relative_to(root).as_posix()
    raw = target.read_bytes()
    edited = set_fields(raw, {"project": GLOBAL})
    if edited == raw:
        return rel, False
    if not atomic_write(target, edited, expect=raw):
        raise Busy(f"{target} changed while it was being promoted", hint="run it again")
    return rel, True

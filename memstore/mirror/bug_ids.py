"""A bug file's id, read from its frontmatter `id` or the number its file name starts with.

The bug ledger (memstore.life.ledgers) files and closes bugs by it; lint (views) reads it to
name two bug files that share one id. Both read the same rule from here.
"""

from __future__ import annotations

import re
from pathlib import Path

ID_PREFIX = re.compile(r"^(\d+)-")
# A bug id: its number, and (bugs filed since ids became unique across clones) a dash and the
# first three hex digits of the filing clone's id: two machines filing bug 2 offline give
# 0002-3f9 and 0002-a07, which merge without a clash. `bug close 2` still works while 2 is unique.
BUG_ID = re.compile(r"^#?0*(\d+)(?:-([0-9a-f]{3,8}))?$")


def bug_id(path: Path, meta_id: object = None) -> str | None:
    """The bug's id as shown (0002, or 0002-3f9): its frontmatter id, else its file name's start."""
    if isinstance(meta_id, bool):
        meta_id = None
    if isinstance(meta_id, int):
        return f"{meta_id:04d}"
    if isinstance(meta_id, str):
        match = BUG_ID.match(meta_id.strip())
        if match:
            return f"{int(match.group(1)):04d}" + (f"-{match.group(2)}" if match.group(2) else "")
    named = ID_PREFIX.match(path.name)  # the number only: "0003-add-x.md" has no clone mark "add"
    return f"{int(named.group(1)):04d}" if named else None

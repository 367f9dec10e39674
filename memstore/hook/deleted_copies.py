"""The copies of memories deleted outside memstore, as the archive holds them. Standard library
only: the SessionStart bundle says how many wait (notice), so this is on the hook's path;
deletions.py keeps and restores them.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARCHIVE = "memory/archive"
SEEN_FILE = "deletions-seen.json"  # under runtime/state/
ADDED = "deleted_block"  # the whole first block is the deletion's own
REBUILT = "deleted_copy"
MARK_KEYS = ("deleted_at", "deleted_from", REBUILT, ADDED)
FORGET_KEYS = ("forgotten_on", "forgotten_why")
HEAD_BYTES = 8192  # a deletion's marks are read from the start of a file only
_KEY = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$")



def _block(text: str) -> list[str]:
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return []
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return lines[1:index]
    return []


def _unquote(value: str) -> str:
    from memstore.core.frontreader import unquote  # the flat reader of one value, without YAML

    return unquote(value)


@dataclass(frozen=True)
class Kept:
    path: str  # the copy, root-relative (memory/archive/...)
    was: str  # where the memory was (deleted_from; for a forgotten one, memory/<name>.md)
    at: str  # when it went (deleted_at, or forgotten_on)
    how: str  # "deleted" or "forgotten"


def _head_values(path: Path) -> dict[str, str]:
    from memstore.core.fsguard import read_regular

    try:
        raw = read_regular(path, HEAD_BYTES)
    except OSError:
        return {}
    values: dict[str, str] = {}
    for line in _block(raw.decode("utf-8", "replace").lstrip("\ufeff").replace("\r\n", "\n")):
        match = _KEY.match(line)
        if match:
            values.setdefault(match.group(1), _unquote(match.group(2)))
    return values


def archived(root: Path, *, forgotten: bool = False) -> list[Kept]:
    """The copies in memory/archive/ of memories deleted outside memstore (and, with `forgotten`,
    those `forget` put there), oldest first."""
    from memstore.core.fsguard import md_files

    try:
        files = md_files(root / ARCHIVE)
    except OSError:
        return []
    out: list[Kept] = []
    for path in files:
        values = _head_values(path)
        rel = path.relative_to(root).as_posix()
        if values.get("deleted_from") and values.get("deleted_at"):
            out.append(Kept(rel, values["deleted_from"], values["deleted_at"], "deleted"))
        elif forgotten and values.get("status", "").lower().startswith("forgotten"):
            name = values.get("name", "")
            from memstore.core.kinds import T2_NAME

            stem = name if T2_NAME.match(f"{name}.md") else re.sub(r"-\d+$", "", path.stem)
            out.append(Kept(rel, f"memory/{stem}.md", values.get("forgotten_on", ""), "forgotten"))
    out.sort(key=lambda k: (k.at, k.path))
    return out


def seen_at(root: Path) -> str:
    from memstore.core.agent_root import state_dir

    try:
        with open(os.path.join(state_dir(root), SEEN_FILE), encoding="utf-8") as handle:
            value = json.load(handle).get("seen_at", "")
    except (OSError, ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def unseen(root: Path) -> list[Kept]:
    """The deleted memories' copies the person has not acknowledged (deleted after `restore
    --ack`)."""
    since = seen_at(root)
    return [k for k in archived(root) if k.at > since]


def summary(root: Path) -> dict[str, Any]:
    """What `status` says: how many unacknowledged deletions, since when, and their copies."""
    waiting = unseen(root)
    return {"count": len(waiting), "since": waiting[0].at[:10] if waiting else None,
            "kept": [{"path": k.path, "was": k.was, "deleted_at": k.at} for k in waiting]}


def notice(root: Path) -> str | None:
    """The bundle's one line about unacknowledged deletions (names made inert), or None."""
    from memstore.core.inert import safe_name

    waiting = unseen(root)
    if not waiting:
        return None
    # a file name (or a copy's fields) can be hostile: controls, bidi spelled out; no import, no tag
    names = ", ".join(safe_name(Path(k.was).stem[:80]) for k in waiting[:5])
    more = f" and {len(waiting) - 5} more" if len(waiting) > 5 else ""
    since = safe_name(waiting[0].at[:10])
    many = f"{len(waiting)} memories were" if len(waiting) > 1 else "1 memory was"
    return (f"{many} deleted outside memstore since {since}: kept in memory/archive/ "
            f"({names}{more}); `memstore restore NAME` puts one back, `memstore restore --ack` "
            "stops this note\n")

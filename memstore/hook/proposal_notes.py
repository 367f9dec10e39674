"""Which short-term notes are the wake's own proposals. Standard library only (the bundle reads it).

A note's frontmatter saying `kind: wake-proposals` proves nothing: the agent can write
memory/short-term/, so it could forge a "proposal" that, once the person accepts it, every
session carries as the person's instruction. So `memstore wake` records what it wrote: the
sha256 of each proposals note's bytes, by file name, in runtime/state/wake-proposals.json
(runtime/ is refused to the agent by the hook and the deny rules). A note counts as the wake's
only when its bytes match its recorded digest, in short-term/ or in short-term/archive/ where
the tick rolls it (a roll is a rename: the bytes stay). Any other note is an ordinary fact.

The record is also the list of names to read: no folder the agent can flood is listed to find them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

RECORD = ("runtime", "state", "wake-proposals.json")
MAX_NOTES = 1_000  # newest first; the wake writes a few a night, so years of nights fit
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.md$")  # one file name, never a path
ROLLED_SUFFIXES = 4  # a roll onto a taken archive name picks stem-2.md, -3 (rolling._free_name)

T1 = tuple[str, str, dict[str, str], str]  # (rel path, name, frontmatter values, body): review._t1


def record_path(root: str | os.PathLike[str]) -> Path:
    return Path(root, *RECORD)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def recorded(root: str | os.PathLike[str]) -> dict[str, str]:
    """name -> sha256 of every proposals note the wake wrote; {} when there is no record (or it is
    unreadable)."""
    from memstore.core.fsguard import read_regular

    try:
        data = json.loads(read_regular(record_path(root)))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    notes = data.get("notes") if isinstance(data, dict) else None
    if not isinstance(notes, dict):
        return {}
    return {name: sha for name, sha in notes.items()
            if isinstance(name, str) and _NAME.match(name) and isinstance(sha, str)}


def remember(root: str | os.PathLike[str], notes: list[tuple[str, bytes]]) -> None:
    """Add (file name, bytes) of notes the wake is about to write to the record (temp + rename,
    under a lock)."""
    from memstore.core.locks import atomic_write, file_lock

    if not notes:
        return
    target = record_path(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.with_name(target.name + ".lock")):
        known = recorded(root)
        known.update({name: digest(data) for name, data in notes})
        atomic_write(target, (json.dumps({"notes": dict(sorted(known.items()))}, indent=1)
                              + "\n").encode())


def _candidates(short_term: Path, name: str) -> list[Path]:
    stem, suffix = os.path.splitext(name)
    archive = short_term / "archive"
    return [short_term / name, archive / name,
            *(archive / f"{stem}-{n}{suffix}" for n in range(2, 2 + ROLLED_SUFFIXES))]


def genuine(root: str | os.PathLike[str]) -> tuple[list[T1], int]:
    """(the wake's proposals notes whose bytes match the record, newest name first; how many
    recorded notes were not looked at, past MAX_NOTES). A recorded note gone or changed is simply
    not one."""
    from memstore.core.frontreader import front_values, split_front
    from memstore.core.fsguard import read_regular

    base = Path(root)
    short_term = base / "memory" / "short-term"
    known = recorded(root)
    names = sorted(known, reverse=True)
    found: list[T1] = []
    for name in names[:MAX_NOTES]:
        for path in _candidates(short_term, name):
            if os.path.islink(path.parent) or os.path.islink(short_term):
                continue  # a folder a pull replaced by a link out: not the memory's
            try:
                data = read_regular(path)
            except OSError:
                continue
            if digest(data) != known[name]:
                continue
            text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").lstrip("\ufeff")
            front, body = split_front(text)
            found.append((path.relative_to(base).as_posix(), path.name, front_values(front), body))
            break
    return found, max(0, len(names) - MAX_NOTES)


def genuine_names(notes: list[T1]) -> set[str]:
    """The root-relative paths of `notes` (genuine's list): what the facts section leaves to the
    proposals."""
    return {rel for rel, _name, _values, _body in notes}


def forged(root: str | os.PathLike[str], rows: list[tuple[str, str | None]]
           ) -> list[tuple[str, str]]:
    """(path, warning) for each short-term note that says `kind: wake-proposals` but is not the
    wake's.

    `rows`: (root-relative path, the mirror's frontmatter JSON) of the short-term files (lint reads
    the mirror).
    """
    mine = genuine_names(genuine(root)[0])
    out = []
    for rel, meta in rows:
        try:
            kind = json.loads(meta or "{}").get("kind")
        except (ValueError, AttributeError):
            continue
        if isinstance(kind, str) and kind.strip().lower() == "wake-proposals" and rel not in mine:
            out.append((rel, (
                "says kind: wake-proposals, but memstore's wake did not write these bytes: it is "
                "shown as an ordinary note, never as the dream's proposals (written by the agent, "
                "edited, or from before wake kept its record)")))
    return out

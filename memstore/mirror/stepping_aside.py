"""Memories that step aside: superseded, forgotten, or outside their valid dates. Nothing here
deletes a file.

- supersede: OLD's frontmatter gets `status: superseded`, `superseded_by: NEW` and the day (edited
  byte-preservingly, memstore.mirror.fmedit). render puts it in the superseded band, default search
  leaves it out, `search --all` finds it. A chain (A by B, B by C) resolves to C.
- forget: `status: forgotten`, the day and why, then the file moves to memory/archive/: its text and
  its journal history stay.
- valid_from / valid_until (dates): outside them a memory steps aside as if superseded, and the
  nightly tick puts it up for review.
- a team's copy: once a team holds a memory the person shared, the person's own copy is superseded
  by it (`superseded_by: teams/<team>/memory/<file>`, memstore.team.handover); when the team takes
  it out, the own copy is forgotten with the team's reason.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

from memstore.core import statements
from memstore.core.errors import BadUsage, NotFound
from memstore.core.locks import atomic_write
from memstore.core.teams import TeamMemory, team_of
from memstore.mirror.fmedit import set_fields
from memstore.mirror.lookup import find_file

ASIDE_STATUSES = ("superseded", "forgotten")
ARCHIVE = "memory/archive"
MAX_CHAIN = 50
ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")  # valid_from/valid_until count only as dates


def today(now: dt.datetime) -> str:
    return now.date().isoformat()


# ---------------------------------------------------------------- stepping aside


def stepped_aside(conn: sqlite3.Connection, now: dt.datetime) -> set[str]:
    """Paths of the files that stepped aside at `now` (superseded, forgotten, out of their time)."""
    day = today(now)
    return {row[0] for row in conn.execute(statements.STEPPED_ASIDE, (day, day))}


def out_of_time(meta: dict[str, Any], now: dt.datetime) -> str | None:
    """Why a memory's valid_from/valid_until puts it aside at `now`, or None."""
    day = today(now)
    until, since = (value if ISO_DAY.fullmatch(value) else "" for value in
                    (str(meta.get("valid_until") or "")[:10],
                     str(meta.get("valid_from") or "")[:10]))
    if until and until < day:
        return f"valid until {until}"
    if since and since > day:
        return f"valid from {since}"
    return None


def chain(conn: sqlite3.Connection, name: str) -> list[str]:
    """The names a superseded memory leads through, to the one that holds now (its last). A step
    may be a root-relative path (a team's copy, teams/<team>/memory/<file>); a name is the person's
    own file first."""
    out: list[str] = []
    current = name
    seen = {name}
    while len(out) < MAX_CHAIN:
        by = "path" if "/" in current else "name"
        row = conn.execute(f"SELECT json_extract(meta, '$.superseded_by') FROM files "
                           f"WHERE {by} = ? AND kind = 't2' ORDER BY path LIMIT 1",
                           (current,)).fetchone()
        nxt = row[0] if row else None
        if not isinstance(nxt, str) or not nxt or nxt in seen:
            break
        out.append(nxt)
        seen.add(nxt)
        current = nxt
    return out


def replaced(conn: sqlite3.Connection, name: str) -> list[str]:
    """The memories `name` superseded."""
    return [r[0] for r in conn.execute(
        "SELECT name FROM files WHERE json_extract(meta, '$.superseded_by') = ? ORDER BY name",
        (name,))]


def edits_for_supersede(new_name: str, now: dt.datetime) -> dict[str, Any]:
    return {"status": "superseded", "superseded_by": new_name, "superseded_on": today(now)}


def edits_for_team_copy(team_rel: str, day: str) -> dict[str, Any]:
    """The person's own copy of a memory a team now holds steps aside for the team's
    (root-relative) file."""
    return {"status": "superseded", "superseded_by": team_rel, "superseded_on": day}


def edits_for_team_retired(team: str, why: str, day: str) -> dict[str, Any]:
    """The person's own copy of a memory the team took out: forgotten with the team's reason (no
    chain left)."""
    text = " ".join(why.split())[:300] or "no reason given"
    return {"status": "forgotten", "forgotten_on": day,
            "forgotten_why": f"team {team} took it out: {text}", "superseded_by": None}


def edits_for_forget(why: str, now: dt.datetime) -> dict[str, Any]:
    text = " ".join(why.split())
    if not text:
        raise BadUsage("--why is empty",
                       hint="say in a few words why the memory goes, "
                            "e.g. --why 'the export was removed'")
    return {"status": "forgotten", "forgotten_on": today(now), "forgotten_why": text}


def archive_target(root: Path, rel: str) -> Path:
    """Where a forgotten memory goes: memory/archive/<its name>, never over another file."""
    folder = root / ARCHIVE
    target = folder / Path(rel).name
    n = 2
    while target.exists():
        target = folder / f"{Path(rel).stem}-{n}{Path(rel).suffix}"
        n += 1
    return target


def find_t2(conn: sqlite3.Connection, name: str) -> sqlite3.Row:
    row = find_file(conn, name)
    if row["kind"] != "t2":
        raise NotFound(f"{row['path']} is not a topic memory",
                       hint="supersede and forget take a memory/<type>_<topic>.md")
    return row


# ---------------------------------------------------------------- the two verbs, on the files


def _edit(path: Path, updates: dict[str, Any]) -> None:

    atomic_write(path, set_fields(path.read_bytes(), updates))


def supersede(conn: sqlite3.Connection, root: Path, old: str, new: str, now: dt.datetime
              ) -> tuple[str, str, list[str]]:
    """OLD steps aside for NEW: (OLD's path, NEW's name, the chain from NEW to the memory that
    holds now)."""
    old_row, new_row = find_t2(conn, old), find_t2(conn, new)
    if team_of(old_row["path"]):
        # a team memory superseded by anything is the team's call
        raise TeamMemory(old_row["path"], "supersede")
    if old_row["path"] == new_row["path"]:
        raise BadUsage("a memory cannot supersede itself",
                       hint="name the memory that replaces it with --by")
    onward = chain(conn, new_row["name"])
    if old_row["name"] in onward:
        raise BadUsage(f"{new_row['name']} is itself superseded, by way of {old_row['name']}: "
                       "that would be a loop",
                       hint=f"supersede by the memory that holds now: {onward[-1]}")
    _edit(root / old_row["path"], edits_for_supersede(new_row["name"], now))
    return old_row["path"], new_row["name"], onward


def forget(conn: sqlite3.Connection, root: Path, name: str, why: str, now: dt.datetime
           ) -> tuple[str, str]:
    """The memory steps aside into memory/archive/, its why recorded: (old path, new path)."""
    row = find_t2(conn, name)
    if team_of(row["path"]):
        raise TeamMemory(row["path"], "forget")
    updates = edits_for_forget(why, now)
    source = root / row["path"]
    _edit(source, updates)
    target = archive_target(root, row["path"])
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)
    return row["path"], target.relative_to(root).as_posix()

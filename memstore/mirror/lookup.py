"""Finding a file in the mirror by the name a person or the agent gives (name, path, file name)."""

from __future__ import annotations

import json
import sqlite3

from memstore.core.errors import NotFound

NAME_MAX = 4096  # PATH_MAX on Linux


def find_file(conn: sqlite3.Connection, name: str) -> sqlite3.Row:
    """The file a name or root-relative path names; a T2 memory wins over other kinds."""
    if len(name) > NAME_MAX:  # longer than any path: no file has it (and LIKE would refuse it)
        raise NotFound(f"no memory named {name[:80]!r}... ({len(name)} characters)")
    key = name[:-3] if name.endswith(".md") else name
    # a name, not a pattern
    literal = key.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    row = conn.execute(
        "SELECT * FROM files WHERE path = ? OR path = ? OR name = ? OR path LIKE ? ESCAPE '\\' "
        "ORDER BY kind = 't2' DESC, path LIMIT 1",
        (name, name + ".md", key, f"%/{literal}.md"),
    ).fetchone()
    if row is None:
        raise NotFound(f"no memory named {name!r}", hint="try: memstore search " + json.dumps(key))
    return row


def memory_names(conn: sqlite3.Connection) -> dict[str, str]:
    """name -> path of every T2 memory the mirror holds."""
    rows = conn.execute("SELECT name, path FROM files WHERE kind = 't2'")
    return {row[0]: row[1] for row in rows}

"""Read-only views of the mirror for the front ends (CLI tables and JSON)."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path
from typing import Any

from memstore.config import Config
from memstore.paths import KINDS, db_path
from memstore.ranking import score
from memstore.timeutil import UTC, parse_when, to_utc


def effective_last_accessed(last_accessed: str | None, mtime_ns: int) -> dt.datetime:
    """last_accessed, else the file's mtime (DESIGN's default for a never-touched file)."""
    when = parse_when(last_accessed) if last_accessed else None
    return when or to_utc(dt.datetime.fromtimestamp(mtime_ns / 1e9, UTC))


def file_view(conn: sqlite3.Connection, row: sqlite3.Row, now: dt.datetime, config: Config) -> dict[str, Any]:
    view: dict[str, Any] = {
        "path": row["path"],
        "name": row["name"],
        "kind": row["kind"],
        "type": row["type"],
        "summary": row["row_text"],
        "created": row["created"],
        "status": row["status"],
        "pin": bool(row["pin"]),
        "importance": row["importance"],
    }
    pol = conn.execute("SELECT * FROM policy WHERE path = ?", (row["path"],)).fetchone()
    if pol is not None:
        last = effective_last_accessed(pol["last_accessed"], row["mtime_ns"])
        view.update(
            access_count=pol["access_count"],
            stability=round(pol["stability"], 4),
            last_accessed=pol["last_accessed"],
            last_reinforced=pol["last_reinforced"],
            journal_touches=pol["touches"],
            score=round(score(pol["access_count"], pol["stability"], last, row["importance"], now, config), 6),
        )
    view["problems"] = json.loads(row["problems"] or "[]")
    view["body"] = row["body"] or ""
    return view


def lint_view(conn: sqlite3.Connection) -> list[dict[str, str]]:
    found = []
    for row in conn.execute("SELECT path, problems FROM files WHERE problems != '[]' ORDER BY path"):
        for problem in json.loads(row["problems"]):
            found.append({"path": row["path"], **problem})
    return found


def status_view(conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config) -> dict[str, Any]:
    kinds = {kind: 0 for kind in KINDS}
    for row in conn.execute("SELECT kind, count(*) AS n FROM files GROUP BY kind"):
        kinds[row["kind"]] = row["n"]
    errors = warnings = 0
    for row in conn.execute("SELECT problems FROM files WHERE problems != '[]'"):
        for problem in json.loads(row["problems"]):
            if problem["level"] == "error":
                errors += 1
            else:
                warnings += 1
    path = db_path(root)
    return {
        "root": str(root),
        "mirror": str(path),
        "mirror_bytes": sum(p.stat().st_size for p in path.parent.glob("memstore.db*") if p.is_file()),
        "files": sum(kinds.values()),
        "kinds": kinds,
        "errors": errors,
        "warnings": warnings,
        "events": conn.execute("SELECT count(*) FROM events").fetchone()[0],
        "t2_touched": conn.execute("SELECT count(*) FROM policy WHERE touches > 0").fetchone()[0],
    }

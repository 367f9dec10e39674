"""Read-only views of the mirror for the front ends (CLI tables and JSON)."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path
from typing import Any

from memstore.agent_root import RootPaths
from memstore.config import Config
from memstore.kinds import KINDS
from memstore.policy import score
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
    from memstore.lenses import load_lenses

    found = []
    for row in conn.execute("SELECT path, problems FROM files WHERE problems != '[]' ORDER BY path"):
        for problem in json.loads(row["problems"]):
            found.append({"path": row["path"], **problem})
    for lens in load_lenses(conn):
        if lens.problem:
            found.append({"path": lens.path, "level": "error", "message": f"lens: {lens.problem}"})
    found.sort(key=lambda item: item["path"])
    return found


def list_view(
    conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config, band: str | None = None
) -> list[dict[str, Any]]:
    from memstore.render import compute_bands

    bands = compute_bands(conn, now, config)
    rows = []
    for entry in bands.entries:
        if band is not None and entry.band != band:
            continue
        rows.append(
            {
                "path": entry.path,
                "name": entry.name,
                "type": entry.name.split("_", 1)[0],
                "band": entry.band,
                "score": round(entry.score, 6),
                "access_count": entry.access_count,
                "stability": entry.stability,
                "last_accessed": entry.last_accessed,
                "last_reinforced": entry.last_reinforced,
                "importance": entry.importance,
                "pin": entry.pin,
                "created": entry.created.isoformat() if entry.created else None,
                "summary": entry.summary,
            }
        )
    return rows


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
    from memstore.render import compute_bands

    bands = compute_bands(conn, now, config)
    budgets = {"hot": config.hot_budget, "new": config.new_budget, "cold": config.cold_budget}
    band_rows = [
        {
            "band": name,
            "rows": len(getattr(bands, name)),
            "chars": bands.used.get(name),
            "budget": budgets.get(name),
            "use": f"{100 * bands.used[name] / budgets[name]:.0f}%" if name in budgets else "",
        }
        for name in ("hot", "new", "cold", "archive", "superseded")
    ]
    path = Path(RootPaths(root).db)
    return {
        "bands": band_rows,
        "rolled_by_guard": sum(1 for e in bands.entries if e.rolled),
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

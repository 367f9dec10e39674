"""Read-only views of the mirror for the front ends (CLI tables and JSON)."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core import journal, processes
from memstore.core.agent_root import RootPaths, hook_log
from memstore.core.config import Config, semantic_source
from memstore.core.fsguard import describe_link
from memstore.core.kinds import KINDS
from memstore.core.lenses import load_lenses
from memstore.core.teams import team_of
from memstore.core.timeutil import parse_when
from memstore.meaning import embedding
from memstore.meaning.vectors import embedded_count, pending_count, searchable_count
from memstore.mirror.bug_ids import bug_id
from memstore.mirror.embed_background import running
from memstore.mirror.indexing import body_of
from memstore.mirror.pushes import pushes_view
from memstore.mirror.render import compute_bands, score_of
from memstore.mirror.stale_refs import read_stale
from memstore.mirror.stepping_aside import chain, out_of_time, replaced
from memstore.mirror.walking import walk

if TYPE_CHECKING:
    from memstore.mirror.walking import Walk


def file_view(conn: sqlite3.Connection, row: sqlite3.Row, now: dt.datetime, config: Config
              ) -> dict[str, Any]:
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
        "team": team_of(row["path"]),
    }
    pol = conn.execute("SELECT * FROM policy WHERE path = ?", (row["path"],)).fetchone()
    if pol is not None:
        view.update(
            access_count=pol["access_count"],
            stability=round(pol["stability"], 4),
            last_accessed=pol["last_accessed"],
            last_reinforced=pol["last_reinforced"],
            journal_touches=pol["touches"],
            # the very computation render and `list` use, so the three agree to the digit
            score=round(score_of(conn, row["path"], now, config) or 0.0, 6),
        )
    view["problems"] = json.loads(row["problems"] or "[]")
    view["body"] = body_of(conn, row["id"])
    meta = json.loads(row["meta"] or "{}") if isinstance(row["meta"], str) else {}
    meta = meta if isinstance(meta, dict) else {}
    status = (row["status"] or "").strip().lower()
    project = meta.get("project")
    view["project"] = str(project) if project not in (None, "") else None  # None: person-wide
    view["aside"] = ((status if status.startswith(("superseded", "forgotten")) else None)
                     or out_of_time(meta, now))
    if status.startswith("forgotten") and meta.get("forgotten_why"):
        view["aside"] = (f"forgotten {meta.get('forgotten_on') or ''}: {meta['forgotten_why']}"
                         .replace("  ", " "))
    if meta.get("deleted_from"):  # mirror.deletions' copy of a memory deleted outside memstore
        view["aside"] = (f"deleted outside memstore {meta.get('deleted_at') or ''}, "
                         f"from {meta['deleted_from']}")
    view["superseded_by"] = chain(conn, row["name"]) if row["name"] else []
    view["supersedes"] = replaced(conn, row["name"]) if row["name"] else []
    view["stale_references"] = read_stale(
        os.path.join(root_of(conn), "runtime", "state")).get(row["path"], [])
    return view


def root_of(conn: sqlite3.Connection) -> str:
    """The agent root a mirror connection belongs to (the mirror is root/runtime/memstore.db)."""
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    return os.path.dirname(os.path.dirname(path)) if path else ""


def lint_view(conn: sqlite3.Connection, root: Path | None = None, tree: Walk | None = None
              ) -> list[dict[str, str]]:
    """Problems of the mirrored files and lenses; with `root`, also every link and non-regular
    file sync skipped (memstore.core.fsguard), read from `tree` (the command's listing of the
    root) or a fresh walk: the mirror never holds them."""
    found = []
    if root is not None:
        tree = tree if tree is not None else walk(root)
        inside_team = re.compile(r"teams/[^/]+/")  # a team's clone is mended in its own repository
        for rel in tree.links:
            if inside_team.match(rel):
                continue
            level, message = describe_link(root, rel)
            found.append({"path": rel, "level": level, "message": message})
        for rel in tree.special:
            if inside_team.match(rel):
                continue
            found.append({"path": rel, "level": "warning",
                          "message": "not a regular file (a FIFO, socket or device): never read"})
    for row in conn.execute(
            "SELECT path, problems FROM files WHERE problems != '[]' ORDER BY path"):
        for problem in json.loads(row["problems"]):
            found.append({"path": row["path"], **problem})
    for lens in load_lenses(conn):
        if lens.problem:
            found.append({"path": lens.path, "level": "error", "message": f"lens: {lens.problem}"})
    # a warning: nothing to repair, the events are lost
    for name, count in journal.bad_line_counts(conn):
        found.append({"path": f"runtime/journal/{name}", "level": "warning",
                      "message": journal.bad_lines_advice(name, count)})
    found += duplicate_bug_ids(conn)
    found.sort(key=lambda item: item["path"])
    return found


def duplicate_bug_ids(conn: sqlite3.Connection) -> list[dict[str, str]]:
    """Two bug files with one id (numbered on two machines before ids carried a clone mark)."""
    by_id: dict[str, list[str]] = {}
    for row in conn.execute("SELECT path, meta FROM files WHERE kind = 'bug' ORDER BY path"):
        try:
            meta = json.loads(row["meta"] or "{}")
        except ValueError:
            meta = {}
        ident = bug_id(Path(row["path"]), meta.get("id") if isinstance(meta, dict) else None)
        if ident:
            by_id.setdefault(ident, []).append(row["path"])
    return [{"path": paths[1], "level": "warning",
             "message": f"bug id {ident} is also the id of {paths[0]} (filed on two machines): "
                        "close or edit either by its file name, and give one a new id by hand"}
            for ident, paths in by_id.items() if len(paths) > 1]


def list_view(
    conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config, band: str | None = None
) -> list[dict[str, Any]]:
    bands = compute_bands(conn, now, config)
    rows = []
    for entry in bands.entries:
        # nothing replaced an expired or a forgotten memory: say which, not "superseded"
        shown = entry.out_of_time or ("forgotten" if entry.forgotten else entry.band)
        if band is not None and shown != band:
            continue
        rows.append(
            {
                "path": entry.path,
                "name": entry.name,
                "type": entry.name.split("_", 1)[0],
                "band": shown,
                "score": round(entry.score, 6),
                "access_count": entry.access_count,
                "stability": entry.stability,
                "last_accessed": entry.last_accessed,
                "last_reinforced": entry.last_reinforced,
                "importance": entry.importance,
                "pin": entry.pin,
                "created": entry.created.isoformat() if entry.created else None,
                "summary": entry.summary,
                "team": entry.team or None,
            }
        )
    return rows


def status_view(conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config,
                bands: Any = None) -> dict[str, Any]:
    """`status`: counts, band use, semantic state, machines. `bands`: compute_bands' answer, when
    the caller has it already (the web inspector keeps it between requests)."""
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
    warnings += len(journal.bad_line_counts(conn))  # as lint_view counts them: one per journal file
    bands = compute_bands(conn, now, config) if bands is None else bands
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
        "mirror_bytes": sum(p.stat().st_size for p in path.parent.glob("memstore.db*")
                            if p.is_file()),
        "files": sum(kinds.values()),
        "kinds": kinds,
        "errors": errors,
        "warnings": warnings,
        "events": conn.execute("SELECT count(*) FROM events").fetchone()[0],
        "t2_touched": conn.execute("SELECT count(*) FROM policy WHERE touches > 0").fetchone()[0],
        "semantic": semantic_view(conn, config),
        "journal": journal_view(conn, root, now, config),
        "pointers": pushes_view(conn, root, now,
                                meaning_on=config.semantic != "off" and config.prompt_pointers),
    }


def _machine_rows(conn: sqlite3.Connection) -> list[tuple[str, int, str]]:
    """(identity, events, newest ts) of each clone whose journal the mirror holds, newest first.

    The verify probe's own events are left out.
    """
    return conn.execute(
        "SELECT host, count(*), max(ts) FROM events "
        "WHERE host IS NOT NULL AND host != ? AND host NOT LIKE ? "
        "GROUP BY host ORDER BY max(ts) DESC, host",
        (journal.PROBE_HOST, f"{journal.PROBE_HOST}-%"),
    ).fetchall()


def known_machines(conn: sqlite3.Connection) -> list[str]:
    """Identities of the clones whose journal lines this mirror holds."""
    return [row[0] for row in _machine_rows(conn)]


def journal_view(conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config
                 ) -> dict[str, Any]:
    """Which clones' journals this mirror has read, the newest event from each, and who flushes.

    A machine that stopped syncing shows as one whose newest event is old: its reads are
    not reaching the others.
    """
    me = journal.identity(root)
    machines: list[dict[str, Any]] = []
    for name, events, newest in _machine_rows(conn):
        host, clone = journal.split_identity(name)
        when = parse_when(newest)
        machines.append({"identity": name, "host": host, "clone": clone, "events": events,
                         "newest": newest,
                         "days_since": (round((now - when).total_seconds() / 86400, 1) if when
                                        else None),
                         "this": name == me})
    if not any(m["this"] for m in machines):  # this clone has read nothing yet: still a machine
        host, clone = journal.split_identity(me)
        machines.append({"identity": me, "host": host, "clone": clone, "events": 0, "newest": None,
                         "days_since": None, "this": True})
    wanted = config.flush_host.strip()
    bad = journal.bad_line_counts(conn)
    gaps = conn.execute("SELECT count(*) FROM policy WHERE journal_gap").fetchone()[0]
    hook = hook_errors(root)
    lost = journal.lost_touches(root)
    return {
        "this_machine": me,
        "machines": machines,
        "flush_host": wanted or None,
        "this_machine_flushes": not wanted or journal.names_clone(wanted, me),
        # journal lines ingest could not read: each file and how many (the lines stay in it)
        "bad_lines": [{"file": f"runtime/journal/{name}", "lines": count} for name, count in bad],
        # memories whose own flushed values say more than the journal here explains
        "journal_gaps": gaps,
        "hook_errors": hook,
        # touches whose journal line could not be written (a full disk): taken back whole, counted
        "journal_lost": lost,
        "warnings": journal.flush_host_warnings(wanted, me, [m["identity"] for m in machines])
        + _deleted_journal_files(root)
        + [journal.bad_lines_advice(name, count) for name, count in bad]
        + ([f"{gaps} memories say more (access_count, last read) than their policy_base and the "
            "journal here explain: the journal behind their last flush is missing (runtime/ "
            "deleted, or a journal never committed). Their own values were kept, never lowered; "
            "the reads behind them are gone."]
           if gaps else [])
        + ([f"the hook logged {hook['lines']} error line(s) in {hook['file']}, "
            f"the newest: {hook['newest']}"]
           if hook["lines"] else [])
        + ([journal.lost_advice(lost)] if lost else []),
    }


def hook_errors(root: Path) -> dict[str, Any]:
    """How many lines the hook logged (its log and the one rotated before it), and the newest."""
    path = Path(hook_log(root))
    lines: list[str] = []
    for part in (Path(f"{path}.1"), path):
        try:
            lines += part.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    newest = lines[-1][:300] if lines else None
    rel = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    return {"file": rel, "lines": len(lines), "newest": newest}


def _deleted_journal_files(root: Path) -> list[str]:
    """Journal files git tracks that the work tree lacks: `git add -A` would delete them."""
    try:
        done = processes.run_git(root, "ls-files", "--deleted", "--", "runtime/journal", timeout=10)
    except (OSError, processes.TimeoutExpired):
        return []
    gone = ([line for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0
            else [])
    if not gone:
        return []
    return [f"{len(gone)} journal file(s) git tracks are missing here (e.g. {gone[0]}): "
            "restore them with `git checkout -- runtime/journal` before committing, "
            "or every machine loses those reads"]


def semantic_view(conn: sqlite3.Connection, config: Config) -> dict[str, Any]:
    """Whether search uses vectors, how many files have a current one (the model is not loaded)."""
    key = embedding.model_key() if embedding.installed() else None
    if config.semantic == "off":
        state = "off"
    elif key is None:
        state = "not installed"
    else:
        state = "on"
    return {
        "state": state,
        "switch": semantic_source() if state == "off" else None,
        "model": key,
        "embedded": embedded_count(conn, key) if key else 0,
        "pending": pending_count(conn, key) if key else 0,
        "searchable": searchable_count(conn),
        "background": background_running(conn),
    }


def background_running(conn: sqlite3.Connection) -> bool:
    """Is this mirror's root's background embedding pass alive (mirror.embed_background)?"""
    found = conn.execute("PRAGMA database_list").fetchone()
    db = Path(found[2]) if found and found[2] else None
    return db is not None and running(db.parent.parent) is not None  # <root>/runtime/memstore.db


"""Bring the mirror in line with the files: incremental sync, full rebuild, self-repair.

Sync compares each file's (mtime, size) with the mirror and reads only what moved;
a content digest then decides whether it really changed. A file that disappeared
leaves the mirror; a file that cannot be read keeps its row, and a folder that cannot
be listed keeps the rows under it, so a permissions hiccup never becomes a mass
deletion. Rebuild builds a fresh mirror beside the live one and swaps it in whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat as statmod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memstore import mirror
from memstore.config import Config, load_config
from memstore.locations import db_path, state_dir
from memstore.locks import file_lock
from memstore.parsing import WARNING, Parsed, Problem, parse_bytes
from memstore.paths import SKIP_DIRS, classify
from memstore.policy import recompute_policy
from memstore.timeutil import fmt

Progress = Callable[[int, int], None]
Notify = Callable[[str], None]

BATCH = 500


@dataclass
class SyncReport:
    scanned: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    touched_only: int = 0  # stat moved, bytes did not
    unreadable: list[str] = field(default_factory=list)
    events: int = 0

    def summary(self) -> str:
        text = (
            f"{self.scanned} files: {self.added} added, {self.changed} changed, "
            f"{self.removed} removed, {self.unchanged + self.touched_only} unchanged"
        )
        if self.events:
            text += f"; {self.events} journal events"
        if self.unreadable:
            text += f"; {len(self.unreadable)} unreadable (rows kept)"
        return text


def walk(root: Path) -> tuple[dict[str, tuple[int, int]], list[str], list[str]]:
    """Every markdown file under root: rel path -> (mtime_ns, size).

    Returns also the folders that could not be listed (rows under them are kept) and
    the files that could not be stat'ed.
    """
    found: dict[str, tuple[int, int]] = {}
    blocked_dirs: list[str] = []
    blocked_files: list[str] = []
    stack = [("", str(root))]
    while stack:
        rel_dir, abs_dir = stack.pop()
        try:
            entries = list(os.scandir(abs_dir))
        except OSError:
            blocked_dirs.append(rel_dir)
            continue
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name.startswith(".") or (name in SKIP_DIRS):
                        continue
                    stack.append((rel, entry.path))
                    continue
                if not name.endswith(".md") or name.startswith("."):
                    continue
                info = entry.stat()  # follows a symlinked file
                if not statmod.S_ISREG(info.st_mode):
                    continue
                found[rel] = (info.st_mtime_ns, info.st_size)
            except OSError:
                blocked_files.append(rel)
    return found, blocked_dirs, blocked_files


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _iso(value: object) -> str | None:
    return value.isoformat() if value is not None else None  # type: ignore[attr-defined]


def build_row(rel: str, raw: bytes, mtime_ns: int, size: int, config: Config) -> dict[str, object]:
    kind = classify(rel)
    stem = rel.rsplit("/", 1)[-1][:-3]
    parsed: Parsed = parse_bytes(raw, stem, config, is_t2=(kind == "t2"))
    if size > config.lint_max_bytes and kind == "t2":
        parsed.problems.append(
            Problem(WARNING, f"{size} bytes; a memory over {config.lint_max_bytes} stops being retrievable")
        )
    return {
        "path": rel,
        "kind": kind,
        "type": parsed.type,
        "name": parsed.name,
        "summary": parsed.summary,
        "description": parsed.description,
        "body": parsed.body,
        "row_text": parsed.row_text,
        "created": _iso(parsed.created),
        "last_updated": _iso(parsed.last_updated),
        "status": parsed.status,
        "in_flight": int(parsed.in_flight),
        "state": parsed.state,
        "pin": int(parsed.pin),
        "importance": parsed.importance,
        "fm_access_count": parsed.access_count,
        "fm_stability": parsed.stability,
        "fm_last_accessed": fmt(parsed.last_accessed) if parsed.last_accessed else None,
        "fm_last_reinforced": fmt(parsed.last_reinforced) if parsed.last_reinforced else None,
        "meta": json.dumps(parsed.meta, default=str, ensure_ascii=False, sort_keys=True),
        "problems": json.dumps([p.as_dict() for p in parsed.problems]),
        "mtime_ns": mtime_ns,
        "size": size,
        "digest": digest(raw),
    }


COLUMNS = (
    "path",
    "kind",
    "type",
    "name",
    "summary",
    "description",
    "body",
    "row_text",
    "created",
    "last_updated",
    "status",
    "in_flight",
    "state",
    "pin",
    "importance",
    "fm_access_count",
    "fm_stability",
    "fm_last_accessed",
    "fm_last_reinforced",
    "meta",
    "problems",
    "mtime_ns",
    "size",
    "digest",
)
_INSERT = f"INSERT INTO files ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
_UPDATE = f"UPDATE files SET {', '.join(f'{c} = ?' for c in COLUMNS[1:])} WHERE path = ?"


def sync_into(
    conn: sqlite3.Connection,
    root: Path,
    config: Config,
    progress: Progress | None = None,
) -> SyncReport:
    """Incremental sync of `conn` against the files under `root`.

    The walk, the reads and the parsing happen outside any write transaction, and the
    writes go in short transactions of BATCH files, so a hook recording a touch meanwhile
    waits milliseconds, not the length of the sync. Each file's row is always whole.
    """
    from memstore import journal  # local: journal ingestion is a separate concern

    report = SyncReport()
    found, blocked_dirs, blocked_files = walk(root)
    report.scanned = len(found)
    known = {r[0]: (r[1], r[2], r[3]) for r in conn.execute("SELECT path, mtime_ns, size, digest FROM files")}
    todo = sorted(rel for rel, st in found.items() if known.get(rel, (None, None))[:2] != st)
    report.unchanged = len(found) - len(todo)
    blocked = set(blocked_files)

    def shielded(rel: str) -> bool:
        return rel in blocked or any(d == "" or rel.startswith(d + "/") for d in blocked_dirs)

    removed = [rel for rel in known if rel not in found and not shielded(rel)]
    report.unreadable.extend(rel for rel in known if rel not in found and shielded(rel))

    inserts: list[tuple[object, ...]] = []
    updates: list[tuple[object, ...]] = []
    stat_only: list[tuple[int, int, str]] = []
    policy_paths: list[str] = []

    def write_batch() -> None:
        with mirror.transaction(conn):
            if inserts:
                conn.executemany(_INSERT, inserts)
            if updates:
                conn.executemany(_UPDATE, updates)
            if stat_only:
                conn.executemany("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", stat_only)
            if policy_paths:
                recompute_policy(conn, policy_paths, config)
        inserts.clear()
        updates.clear()
        stat_only.clear()
        policy_paths.clear()

    total = len(todo)
    for index, rel in enumerate(todo, 1):
        mtime_ns = found[rel][0]
        try:
            raw = (root / rel).read_bytes()
        except OSError:
            report.unreadable.append(rel)
            continue
        old = known.get(rel)
        if old is not None and old[2] == digest(raw):
            stat_only.append((mtime_ns, len(raw), rel))
            report.touched_only += 1
        else:
            row = build_row(rel, raw, mtime_ns, len(raw), config)
            values = tuple(row[c] for c in COLUMNS)
            if old is None:
                inserts.append(values)
                report.added += 1
            else:
                updates.append((*values[1:], rel))
                report.changed += 1
            if row["kind"] == "t2" or old is not None:
                policy_paths.append(rel)
        if len(inserts) + len(updates) + len(stat_only) >= BATCH:
            write_batch()
        if progress and (index % 1000 == 0 or index == total):
            progress(index, total)
    with mirror.transaction(conn):
        if inserts or updates or stat_only:
            conn.executemany(_INSERT, inserts)
            conn.executemany(_UPDATE, updates)
            conn.executemany("UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", stat_only)
        if removed:
            conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in removed])
            report.removed = len(removed)
            policy_paths.extend(removed)
        touched = journal.ingest(conn, root)
        report.events = touched.new_events
        recompute_policy(conn, sorted(set(policy_paths) | touched.paths), config)
    return report


def _lock_path(root: Path) -> Path:
    return state_dir(root) / "mirror.lock"


def rebuild(
    root: Path,
    config: Config | None = None,
    progress: Progress | None = None,
    *,
    only_if_unhealthy: bool = False,
) -> SyncReport | None:
    """Build a fresh mirror from the files and journal beside the live one, then swap it in.

    With only_if_unhealthy, a mirror that another process repaired while we waited for
    the lock is left alone (returns None).
    """
    config = config or load_config(root)
    live = db_path(root)
    with file_lock(_lock_path(root)):
        try:
            mirror.open_checked(live).close()
            live_healthy = True
        except mirror.MirrorUnhealthy:
            live_healthy = False
        if live_healthy and only_if_unhealthy:
            return None
        fresh_path = live.with_name(f"memstore.db.rebuild-{os.getpid()}")
        fresh = mirror.create_fresh(fresh_path)
        try:
            report = sync_into(fresh, root, config, progress)
            mirror.swap_in(fresh, fresh_path, live, live_healthy)
        except BaseException:
            fresh.close()
            mirror.discard(fresh_path)
            raise
    return report


def open_mirror(root: Path, config: Config | None = None, notify: Notify | None = None) -> sqlite3.Connection:
    """The live mirror, rebuilt first (and said in one line) if it is missing, corrupt or foreign."""
    config = config or load_config(root)
    live = db_path(root)
    try:
        return mirror.open_checked(live)
    except mirror.MirrorUnhealthy as exc:
        report = rebuild(root, config, only_if_unhealthy=True)
        if notify and report is not None:
            notify(f"{exc.reason}; rebuilt it from the files ({report.scanned} files)")
    return mirror.open_checked(live)


def sync(
    root: Path, config: Config | None = None, progress: Progress | None = None, notify: Notify | None = None
) -> SyncReport:
    """Open (repairing if needed) and sync incrementally, under the mirror lock."""
    config = config or load_config(root)
    conn = open_mirror(root, config, notify)
    try:
        return sync_locked(conn, root, config, progress)
    finally:
        conn.close()


def sync_locked(conn: sqlite3.Connection, root: Path, config: Config, progress: Progress | None = None) -> SyncReport:
    """sync_into under the mirror lock, so two syncs never interleave."""
    with file_lock(_lock_path(root)):
        return sync_into(conn, root, config, progress)

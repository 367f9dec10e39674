"""The SQLite mirror at runtime/memstore.db: connection, schema state, atomic swap.

The mirror is derived from the files and the journal, so every way it can go wrong
(missing, corrupt, another schema) is answered the same way: build a fresh one beside
it and swap it in. The swap copies the new database into the live one with SQLite's
backup API, inside one write transaction, so a reader sees the old mirror or the new
one and never half of either, and no stale -wal file can be paired with a new file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

BUSY_TIMEOUT_MS = 10_000


class MirrorUnhealthy(Exception):
    """Internal: the mirror must be rebuilt. `reason` is said to the user in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def connect(path: Path, *, timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """A connection in autocommit mode (we BEGIN explicitly), WAL, relaxed fsync."""
    conn = sqlite3.connect(str(path), timeout=timeout_ms / 1000, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout={int(timeout_ms)}")
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except UnicodeDecodeError:  # damaged schema text (sqlite3 decodes it): the file is damaged
        conn.close()
        raise sqlite3.DatabaseError(
            "database disk image is malformed (undecodable schema text)") from None
    # NORMAL is durable against application crashes in WAL mode; a power cut may lose
    # the last transactions, which the journal replays.
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


# The names of the migrations in migrations/, kept here so that opening the mirror does
# not import sqlite-utils (a test holds the two lists equal).
KNOWN_MIGRATIONS = (
    "m001_files_and_search", "m002_quick_freshness", "m003_unspaced_scripts",
    "m004_bodies_out_of_files",
    "m005_vectors",
    "m006_policy_base",
    "m007_journal_integrity",
    "m008_inert_rows",
    "m009_journal_gap",
    "m010_vector_parts",
    "m011_raw_texts",
    "m012_births",
    "m013_latents",
    "m014_context",
    "m015_stepping_aside",
    "m016_list_items",
)


def connect_frozen(path: Path) -> sqlite3.Connection:
    """The mirror opened read-only and immutable: no lock, no -wal or -shm file is made, nothing
    written."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True,
                           check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def connect_read_only(path: Path, *, timeout_s: float = 5) -> sqlite3.Connection:
    """The mirror opened read-only, for a reader on any thread: SQLite refuses any write on it."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False,
                           timeout=timeout_s)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def quick_check(conn: sqlite3.Connection) -> str:
    """SQLite's quick integrity check of the mirror: "ok", or the first problem it found."""
    return str(conn.execute("PRAGMA quick_check").fetchone()[0])


def migration_names() -> list[str]:
    return list(KNOWN_MIGRATIONS)


def applied_migrations(conn: sqlite3.Connection) -> list[str]:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' "
                          "AND name='_sqlite_migrations'").fetchone()
    if not exists:
        return []
    rows = conn.execute("SELECT name FROM _sqlite_migrations WHERE migration_set='memstore' "
                        "ORDER BY id").fetchall()
    return [r[0] for r in rows]


# Migrations that leave much of an existing mirror's file free (m004 copies `files` without
# its bodies: at 100,000 files, 40% of the file); the pages go back to the file system.
VACUUM_AFTER = frozenset({"m004_bodies_out_of_files"})


def apply_migrations(conn: sqlite3.Connection) -> None:
    # Imported here: the hook opens the mirror through connect() and must not load sqlite-utils.
    from sqlite_utils import Database

    from memstore.migrations import migrations

    before = applied_migrations(conn)
    migrations.apply(Database(conn))
    if before and VACUUM_AFTER.difference(before):
        # Best effort, outside any transaction: a writer holding the lock past the busy
        # timeout only means the space comes back at the next rebuild.
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute("VACUUM")


def open_checked(path: Path) -> sqlite3.Connection:
    """Open the live mirror and check its schema; raise MirrorUnhealthy when it must be rebuilt.

    Pending migrations of a schema we know are applied in place; anything else
    (missing, unreadable, foreign or newer schema) asks for a rebuild.
    """
    if path.is_dir():  # never rebuilt over, never removed: it is not ours
        from memstore.core.errors import MirrorBlocked

        raise MirrorBlocked(f"{path} is a folder, not the mirror",
                            hint=f"move it away (mv {path} {path}.moved), "
                            "then run: memstore rebuild (the memory files are untouched)")
    if not path.exists():
        raise MirrorUnhealthy("mirror missing")
    if path.stat().st_size == 0:
        raise MirrorUnhealthy("mirror is an empty file")
    # The header is left to SQLite to judge: never open() the database file from Python.
    # POSIX advisory locks belong to the process, and closing *any* descriptor of a file
    # drops all of them, so a header read here would strip the locks of every other
    # connection this process holds on the mirror. Another process closing its last
    # connection would then think it the only one, checkpoint and delete -wal and -shm
    # under those connections (sqlite.org/howtocorrupt.html, 2.2): disk I/O errors, or worse.
    try:
        conn = connect(path)
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc):
            raise MirrorUnhealthy("mirror is not an SQLite database (corrupt)") from exc
        raise MirrorUnhealthy(f"mirror is corrupt or unreadable ({exc})") from exc
    try:
        applied = applied_migrations(conn)
        known = migration_names()
        if applied != known[: len(applied)] or not applied:
            conn.close()
            raise MirrorUnhealthy("mirror has another schema version")
        if len(applied) < len(known):
            apply_migrations(conn)
        # A cheap touch of the main tables: corruption of their roots shows here.
        conn.execute("SELECT count(*) FROM files").fetchone()
        conn.execute("SELECT count(*) FROM policy").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise MirrorUnhealthy(f"mirror is corrupt ({exc})") from exc
    return conn


def create_fresh(path: Path) -> sqlite3.Connection:
    """A new, empty mirror with the current schema at `path` (which must not exist)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    apply_migrations(conn)
    return conn


def discard(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


def swap_in(fresh: sqlite3.Connection, fresh_path: Path, live_path: Path, live_healthy: bool
            ) -> None:
    """Make the freshly built mirror the live one, atomically for readers."""
    fresh.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if live_healthy:
        live = connect(live_path)
        try:
            # One step (pages=-1): the whole copy is one write transaction on the live file.
            fresh.backup(live, pages=-1)
        finally:
            live.close()
        fresh.close()
        discard(fresh_path)
        return
    fresh.execute("PRAGMA journal_mode=DELETE")  # leave no -wal beside the file we move
    fresh.close()
    # The live file is missing or corrupt: nothing readable is lost by removing it.
    for suffix in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{live_path}{suffix}")
    os.replace(fresh_path, live_path)


def corrupt_error(exc: BaseException) -> bool:
    """Does this sqlite error mean the file itself is damaged (rather than busy or misused)?"""
    if not isinstance(exc, sqlite3.DatabaseError) or (
        isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))
    ):
        return False
    text = str(exc).lower()
    return any(
        marker in text for marker in ("malformed", "not a database", "corrupt", "no such table",
                                      "disk i/o error")
    )

"""The one way memstore writes SQLite: short explicit transactions. Standard library only.

The hook and the library share it. Connections are opened in autocommit mode
(isolation_level=None) so that nothing begins a transaction behind our back; each
write is `with transaction(conn): ...`, which takes the write lock up front (BEGIN
IMMEDIATE) rather than upgrading a read lock later, the upgrade being where two
writers deadlock into SQLITE_BUSY.

A plain class rather than contextlib: this module is on the hook's path.
"""

from __future__ import annotations

import sqlite3


class transaction:
    __slots__ = ("conn", "immediate")

    def __init__(self, conn: sqlite3.Connection, *, immediate: bool = True) -> None:
        self.conn = conn
        self.immediate = immediate

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE" if self.immediate else "BEGIN")
        return self.conn

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        self.conn.execute("ROLLBACK" if kind is not None else "COMMIT")


def hook_connect(db: str, budget_ms: int) -> sqlite3.Connection:
    """A connection for the hook's short writes: waits at most `budget_ms` for a lock, never fsyncs.

    No fsync: the journal line is the durable record and the mirror is rebuilt from it;
    fsyncs here made the hook slow whenever the disk was busy.
    """
    conn = sqlite3.connect(db, timeout=budget_ms / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout={int(budget_ms)}")
        conn.execute("PRAGMA synchronous=OFF")
    except sqlite3.Error:
        conn.close()
        raise
    return conn

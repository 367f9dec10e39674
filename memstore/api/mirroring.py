"""The mirror's life cycle, for the api: open it, repair a corrupt or missing mirror and retry once,
catch it up with the files before a read, fall back to a read-only look where the root cannot be
written, and close it; take in a file a verb just wrote; say who may flush.

`Mirror` is made for one call from the root's state (memstore.api.state: root, config, notices,
progress, the clock at one instant). The flows (memstore.api.flows) open it once per command and
hand the connection, never the Mirror, to the layers below.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from memstore.core.agent_root import RootPaths
from memstore.core.config import Config
from memstore.core.errors import BadUsage, Busy, MemstoreError, read_only_failure

T = TypeVar("T")
CATCH_UPS = ("quick", "full", "none")


class NotFlushHost(MemstoreError):
    """memstore.toml names another clone as the one that flushes."""


@dataclass(frozen=True)
class Mirror:
    root: Path
    config: Config
    now: dt.datetime
    notify: Callable[[str], None]
    progress: Callable[[int, int], None] | None

    @property
    def paths(self) -> RootPaths:
        return RootPaths(self.root)

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """fn on the live mirror (rebuilt first if missing, corrupt or foreign).

        A mirror found corrupt half-way is rebuilt from the files and fn runs once more:
        the mirror is derived, so nothing is lost by rebuilding it.
        """
        from memstore.core.locks import LockTimeout
        from memstore.mirror import db as mirror
        from memstore.mirror.sync import open_mirror, rebuild

        try:
            conn = open_mirror(self.root, self.config, self.notify, self.progress)
            try:
                return fn(conn)
            except sqlite3.DatabaseError as exc:
                if not mirror.corrupt_error(exc):
                    raise
                conn.close()
                self.notify(f"mirror is corrupt ({exc}); rebuilding it from the files")
                rebuild(self.root, self.config, self.progress)
                conn = open_mirror(self.root, self.config, self.notify, self.progress)
                return fn(conn)
            finally:
                conn.close()
        except LockTimeout as exc:
            raise Busy(f"another memstore process holds the mirror lock ({exc})",
                       hint="wait for it to finish (a rebuild of a large root takes a while), "
                            "then try again") from None
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise Busy(f"the mirror is busy ({exc})", hint="try again in a moment") from None
            raise MemstoreError(f"database: {exc}", hint="run: memstore rebuild") from None
        except sqlite3.DatabaseError as exc:
            raise MemstoreError(f"database: {exc}", hint="run: memstore rebuild") from None

    def read(self, fn: Callable[[sqlite3.Connection], T], catch_up: str = "quick") -> T:
        """fn after catching the mirror up with the files: 'quick', 'full' or 'none'."""
        from memstore.mirror.sync import sync_under_lock

        if catch_up not in CATCH_UPS:
            raise BadUsage(f"catch_up must be quick, full or none, not {catch_up!r}")

        def run(conn: sqlite3.Connection) -> T:
            if catch_up != "none":
                sync_under_lock(conn, self.root, self.config, self.progress,
                                quick=catch_up == "quick", now=self.now)
            return fn(conn)

        try:
            return self.run(run)
        except (OSError, sqlite3.OperationalError, MemstoreError) as exc:
            if not read_only_failure(exc):
                raise
        return self.frozen(fn)

    def frozen(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """fn on the mirror as it stands, opened read-only: for a root this process cannot write
        (a read-only mount, another user's root). Nothing is caught up, locked or written."""
        from memstore.mirror.db import connect_frozen

        db = Path(self.paths.db)
        if not db.is_file():
            raise MemstoreError(f"{self.root} cannot be written here and has no mirror to read",
                                hint=f"run memstore sync once where {self.root}/runtime/ is "
                                     "writable")
        self.notify("the root is read-only here: answering from the mirror as it stands "
                    "(files changed since its last sync are not seen)")
        conn = connect_frozen(db)
        try:
            return fn(conn)
        finally:
            conn.close()

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The mirror lock, so that two passes that write the mirror never interleave."""
        from memstore.core.locks import file_lock

        return file_lock(Path(self.paths.mirror_lock), timeout=self.config.lock_timeout_s)

    def take_in(self, rel: str, *, render_index: bool = False) -> None:
        """Take a file a verb just wrote into the mirror now; render_index: MEMORY.md follows at
        once, on the same connection. The file stands even if either fails (the notice says so)."""
        from memstore.mirror.changes import mark_written
        from memstore.mirror.render import render
        from memstore.mirror.sync import sync_under_lock

        said = "the mirror did not take it in yet ({}); the next sync will"

        def run(conn: sqlite3.Connection) -> None:
            nonlocal said
            mark_written(conn, rel)
            sync_under_lock(conn, self.root, self.config, quick=True)
            if render_index:  # the new row is in MEMORY.md at once, not at the next render
                said = "MEMORY.md was not rendered yet ({}); the next render will"
                sync_under_lock(conn, self.root, self.config, self.progress, now=self.now)
                render(conn, self.root, self.now, self.config)

        try:
            self.run(run)
        except MemstoreError as exc:
            self.notify(f"wrote {rel}, but " + said.format(exc))


def flush_refusal(root: Path, config: Config) -> str | None:
    """Why this clone must not flush (memstore.toml's flush_host names another one), or None."""
    from memstore.core import journal

    wanted = config.flush_host.strip()
    if not wanted:
        return None
    me = journal.identity(root)
    if journal.names_clone(wanted, me):
        return None
    return f"flush_host is {wanted!r} in memstore.toml, and this machine is {me!r}"


def flush_warnings(conn: sqlite3.Connection, root: Path, config: Config) -> list[str]:
    """What is off about who flushes, given the machines whose journals the mirror has read."""
    from memstore.core import journal
    from memstore.mirror.views import known_machines

    return journal.flush_host_warnings(config.flush_host.strip(), journal.identity(root),
                                       known_machines(conn))

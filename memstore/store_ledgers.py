"""Store's ledger methods: new topic memories and the open-bug ledger. A part of the Store class
(mixed in), kept apart by meaning from store.py's mirror life cycle, reading and writing.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from memstore.errors import MemstoreError

if TYPE_CHECKING:
    from memstore.results import Bug, NewMemory


class LedgerMixin:
    """new, bug add/list/close; the Store supplies root, config, now and its mirror helpers."""

    def new(self, type: str, topic: str, *, summary: str, importance: float | None = None, pin: bool = False,
            body: str | None = None, everywhere: bool = False, cwd: str | os.PathLike[str] | None = None
            ) -> NewMemory:
        """Write a T2 memory `memory/<type>_<kebab-topic>.md` with full frontmatter, then sync it in.

        Refused (exit 1): an unknown type, a topic with nothing to name the file with, an
        empty summary, importance outside 0-10, or a name already taken.
        """
        from memstore import ledgers
        from memstore.results import NewMemory

        target, name, line = ledgers.write_new(self.paths, self.now, self.config, type, topic, summary, importance,
                                               pin, body, self._project(cwd, everywhere))
        rel = target.relative_to(self.root).as_posix()
        self._sync_written(rel)
        try:  # the new row is in MEMORY.md at once, not at the next render
            self.render()
        except MemstoreError as exc:
            self.notify(f"wrote {rel}, but MEMORY.md was not rendered yet ({exc}); the next render will")
        return NewMemory(path=rel, name=name, type=type, summary=line)

    def bug_add(self, title: str, *, body: str | None = None, by: str | None = None) -> Bug:
        """File a bug: memory/bugs/<id>-<slug>.md, id = the highest existing + 1, picked under a lock."""
        from memstore import ledgers

        target = ledgers.file_bug(self.paths, self.now, self.config, title, body, by)
        rel = target.relative_to(self.root).as_posix()
        self._sync_written(rel)
        return ledgers.read_bug(target, self.root, self.config)

    def bug_list(self, all: bool = False) -> list[Bug]:
        """Every open bug (every bug with all=True), sorted by id; never filtered by run, session or filer.

        A folder that cannot be listed raises (an unreadable ledger must not look empty);
        a malformed file is listed with what could be read and its problems.
        """
        from memstore import ledgers

        try:
            paths = ledgers.list_folder(Path(self.paths.bugs))
        except OSError as exc:
            raise MemstoreError(f"the bug ledger could not be read: {exc.strerror or exc} ({self.paths.bugs})",
                                hint="fix the folder's permissions; no bug is listed rather than a wrong list"
                                ) from None
        bugs = [ledgers.read_bug(path, self.root, self.config) for path in paths]
        return sorted((b for b in bugs if all or b.status == "open"), key=ledgers.sort_key)

    def bug_close(self, bug: str, why: str | None = None) -> Bug:
        """Close a bug named by 1, 0001 or its file name: only status, closed_at and why change."""
        from memstore import ledgers

        found, target = ledgers.close_bug(self.paths, self.now, self.config, lambda: self.bug_list(all=True), bug, why)
        self._sync_written(found.path)
        return ledgers.read_bug(target, self.root, self.config)

    def _sync_written(self, rel: str) -> None:
        """Take a file a ledger verb just wrote into the mirror now; the file stands even if this fails."""
        from memstore.sync import sync_locked

        def run(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR IGNORE INTO dirty (path) VALUES (?)", (rel,))
            conn.commit()
            sync_locked(conn, self.root, self.config, quick=True)

        try:
            self._with_mirror(run)
        except MemstoreError as exc:
            self.notify(f"wrote {rel}, but the mirror did not take it in yet ({exc}); the next sync will")

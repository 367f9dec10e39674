"""The bug ledger read whole, for Store.bug_list: every bug file, read by memstore.life.ledgers,
in id order. An unreadable folder raises rather than look like an empty ledger."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memstore.core.errors import MemstoreError
from memstore.life import ledgers

if TYPE_CHECKING:
    from memstore.core.agent_root import RootPaths
    from memstore.core.config import Config
    from memstore.core.results import Bug


def list_bugs(paths: RootPaths, config: Config, all: bool = False) -> list[Bug]:
    """Every open bug (every bug with all=True) by id; a malformed file listed with its problems."""
    try:
        found = ledgers.list_folder(Path(paths.bugs))
    except OSError as exc:
        raise MemstoreError(
            f"the bug ledger could not be read: {exc.strerror or exc} ({paths.bugs})",
            hint="fix the folder's permissions; no bug is listed rather than a wrong list",
        ) from None
    bugs = [ledgers.read_bug(path, Path(paths.root), config) for path in found]
    return sorted((b for b in bugs if all or b.status == "open"), key=ledgers.sort_key)

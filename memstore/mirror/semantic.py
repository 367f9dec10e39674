"""The embedding passes' steps: which model, the embedding lock, and how much one pass embeds.

Their order (when a sync, a rebuild, the tick or `memstore embed` embeds, on which connection)
is memstore.api.flows'; each step here takes the connection and the values it needs. The model
itself is memstore.meaning.embedding; the vectors table is memstore.meaning.vectors; the fusion
is memstore.mirror.hybrid; the detached pass is memstore.mirror.embed_background.

One embedding pass runs at a time (runtime/state/embed.lock): `memstore embed` waits for
the lock and then finds the work done; the bounded passes and a search's catch-up do not
wait, they leave the files to whoever holds it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.config import semantic_source
from memstore.core.errors import Busy, MemstoreError
from memstore.core.locks import LockTimeout, file_lock
from memstore.mirror.embed_background import note_coverage, running, start

if TYPE_CHECKING:
    from memstore.core.config import Config
    from memstore.meaning.embedding import Embedder
    from memstore.meaning.vectors import EmbedReport

Notify = Callable[[str], None]
CATCH_UP_S = 1.0  # a search embeds changed files for about this long (one batch at least)


def embedder_for(config: Config, notify: Notify, required: bool) -> Embedder | None:
    """The model, when semantic search is on and the extra loads; None (or an error, if required)
    otherwise."""
    from memstore.meaning import embedding  # here: a search by words alone (--mode fts) skips it

    if config.semantic == "off":
        if required:
            where = semantic_source()
            raise MemstoreError(f"semantic search is off ({where})",
                                hint="unset MEMSTORE_SEMANTIC" if where.startswith("$")
                                else 'set semantic = "auto" in memstore.toml')
        return None
    if not required and not embedding.installed():
        return None
    try:
        return embedding.load()
    except embedding.SemanticUnavailable as exc:
        if required:
            raise
        notify(f"{exc}; searching with FTS alone")
        return None


@contextlib.contextmanager
def embed_lock(lock: str | os.PathLike[str], timeout: float) -> Iterator[None]:
    """The embedding lock for a pass that must embed everything: Busy when another holds it past
    timeout."""
    try:
        with file_lock(Path(lock), timeout=timeout):
            yield
    except LockTimeout:
        raise Busy("another memstore embed held the embedding lock past lock_timeout_s",
                   hint="wait for it to finish, then run memstore embed again") from None


def embed_all(conn: sqlite3.Connection, root: Path, embedder: Embedder, budget_s: float | None,
              progress: Callable[[int, int], None] | None = None) -> EmbedReport:
    """Every file without a current vector (budget_s bounds the time); the coverage kept after."""
    from memstore.meaning.vectors import embed_pending  # here: an FTS-only search never loads it

    done = embed_pending(conn, embedder, budget_s=budget_s, progress=progress)
    note_coverage(root, conn, embedder.key, done.pending)
    return done


def embed_briefly(conn: sqlite3.Connection, root: Path, lock: str | os.PathLike[str],
                  config: Config, notify: Notify, embedder: Embedder, budget_s: float
                  ) -> dict[str, Any] | None:
    """The bounded pass after a sync or rebuild, said in one line when it will not finish; a
    detached pass is started for the rest when many files wait (mirror.embed_background)."""
    from memstore.meaning.vectors import embed_pending, pending_count  # here: see embed_all

    try:
        with file_lock(Path(lock), timeout=0):
            waiting = pending_count(conn, embedder.key)
            if waiting > config.search_embed_max:
                notify(f"embedding {waiting} files for up to {budget_s:g}s; "
                       "a background pass embeds the rest")
            report = embed_pending(conn, embedder, budget_s=budget_s)
            note_coverage(root, conn, embedder.key, report.pending)
            done = report.to_json()
    except LockTimeout:
        notify("another memstore process is embedding; it will take in these files")
        return None
    if background_allowed() and start(root, int(done.get("pending") or 0), config.search_embed_max):
        done["background"] = True  # meaning arrives by itself: one detached, low-priority pass
    return done


def background_allowed() -> bool:
    """$MEMSTORE_EMBED_BACKGROUND=off keeps syncs from starting the background pass (benchmarks that
    measure embedding themselves, test runs)."""
    return os.environ.get("MEMSTORE_EMBED_BACKGROUND", "").strip().lower() != "off"


def catch_up_vectors(conn: sqlite3.Connection, root: Path, lock: str | os.PathLike[str],
                     config: Config, notify: Notify, embedder: Embedder) -> None:
    """Before a hybrid search: embed the few files changed since the last pass, or say a backlog
    waits."""
    from memstore.meaning import vectors  # here: see embed_all

    waiting = vectors.pending_count(conn, embedder.key)
    if not waiting:
        return
    if waiting <= config.search_embed_max:
        try:
            with file_lock(Path(lock), timeout=0):
                # Heads first: a long file's tail parts can wait for the next pass.
                vectors.embed_pending(conn, embedder, budget_s=CATCH_UP_S, heads_only=True)
        except LockTimeout:
            pass  # an embedding pass is running and will take them in; search with what there is
        except (OSError, sqlite3.OperationalError):
            pass  # a root this process cannot write (read-only): search with the vectors there are
        return
    share = vectors.embedded_count(conn, embedder.key) / max(vectors.searchable_count(conn), 1)
    doing = ("a background pass is embedding them" if running(root) is not None
             else "run: memstore embed (or wait for the nightly tick)")
    notify(f"meaning covers {share:.0%} of the root so far: {waiting} files have no vector yet, "
           f"so only their words can find them; {doing}")

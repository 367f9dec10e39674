"""The Store's semantic-search passes: which model, when to embed, and how much.

Store.embed, the bounded pass after Store.sync and Store.rebuild, and the catch-up
before a hybrid search live here, as nightly.run_tick and capture.run_debrief hold the
passes of tick and debrief: the Store stays the one front door and this module the
order of the steps. The model itself is memstore.embedding; the vectors table is
memstore.vectors; the fusion is memstore.hybrid.

One embedding pass runs at a time (runtime/state/embed.lock): `memstore embed` waits for
the lock and then finds the work done; the bounded passes and a search's catch-up do not
wait, they leave the files to whoever holds it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.errors import MemstoreError

if TYPE_CHECKING:
    from memstore.embedding import Embedder
    from memstore.store import Store
    from memstore.vectors import EmbedReport


CATCH_UP_S = 1.0  # a search embeds changed files for about this long (one batch at least)


def embedder_for(store: Store, required: bool) -> Embedder | None:
    """The model, when semantic search is on and the extra loads; None (or an error, if required) otherwise."""
    from memstore import embedding

    if store.config.semantic == "off":
        if required:
            from memstore.config import semantic_source

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
        store.notify(f"{exc}; searching with FTS alone")
        return None


def run_embed(store: Store, budget_s: float | None, required: bool,
              progress: Callable[[int, int], None] | None) -> EmbedReport | None:
    """Store.embed: a full sync, then every file without a current vector (budget_s bounds the time)."""
    from memstore.errors import Busy
    from memstore.locks import LockTimeout, file_lock
    from memstore.sync import sync_locked
    from memstore.vectors import embed_pending

    embedder = embedder_for(store, required)
    if embedder is None:
        return None

    def run(conn: sqlite3.Connection) -> EmbedReport:
        sync_locked(conn, store.root, store.config, store.progress)
        return embed_pending(conn, embedder, budget_s=budget_s, progress=progress)

    try:
        with file_lock(Path(store.paths.embed_lock), timeout=store.config.lock_timeout_s):
            return store._with_mirror(run)
    except LockTimeout:
        raise Busy("another memstore embed held the embedding lock past lock_timeout_s",
                   hint="wait for it to finish, then run memstore embed again") from None


def embed_briefly(store: Store, budget_s: float) -> dict[str, Any] | None:
    """The bounded pass after a sync or rebuild, said in one line when it will not finish."""
    from memstore.locks import LockTimeout, file_lock
    from memstore.vectors import embed_pending, pending_count

    embedder = embedder_for(store, required=False)
    if embedder is None:
        return None

    def run(conn: sqlite3.Connection) -> dict[str, Any]:
        waiting = pending_count(conn, embedder.key)
        if waiting > store.config.search_embed_max:
            store.notify(f"embedding {waiting} files for up to {budget_s:g}s; memstore embed finishes the rest")
        return embed_pending(conn, embedder, budget_s=budget_s).to_json()

    try:
        with file_lock(Path(store.paths.embed_lock), timeout=0):
            return store._read(run, catch_up="none")
    except LockTimeout:
        store.notify("another memstore process is embedding; it will take in these files")
        return None


def catch_up_vectors(store: Store, conn: sqlite3.Connection, embedder: Embedder) -> None:
    """Before a hybrid search: embed the few files changed since the last pass, or say a backlog waits."""
    from memstore.locks import LockTimeout, file_lock
    from memstore.vectors import embed_pending, pending_count

    waiting = pending_count(conn, embedder.key)
    if not waiting:
        return
    if waiting <= store.config.search_embed_max:
        try:
            with file_lock(Path(store.paths.embed_lock), timeout=0):
                # Heads first: a long file's tail parts can wait for the next pass.
                embed_pending(conn, embedder, budget_s=CATCH_UP_S, heads_only=True)
        except LockTimeout:
            pass  # an embedding pass is running and will take them in; search with what there is
        except (OSError, sqlite3.OperationalError):
            pass  # a root this process cannot write (read-only): search with the vectors there are
        return
    store.notify(
        f"{waiting} files have no vector yet, so only their words can find them; "
        "run: memstore embed (or wait for the nightly tick)"
    )

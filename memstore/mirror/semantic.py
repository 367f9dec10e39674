"""The Store's semantic-search passes: which model, when to embed, and how much.

Store.embed, the bounded pass after Store.sync and Store.rebuild, and the catch-up
before a hybrid search live here, as nightly.run_tick and capture.run_debrief hold the
passes of tick and debrief: the Store stays the one front door and this module the
order of the steps. The model itself is memstore.meaning.embedding; the vectors table is
memstore.meaning.vectors; the fusion is memstore.mirror.hybrid.

One embedding pass runs at a time (runtime/state/embed.lock): `memstore embed` waits for
the lock and then finds the work done; the bounded passes and a search's catch-up do not
wait, they leave the files to whoever holds it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memstore.core.errors import MemstoreError

if TYPE_CHECKING:
    from memstore.core.agent_root import RootPaths
    from memstore.core.config import Config
    from memstore.meaning.embedding import Embedder
    from memstore.meaning.vectors import EmbedReport


CATCH_UP_S = 1.0  # a search embeds changed files for about this long (one batch at least)


class Host(Protocol):
    """What the passes need of their caller (the Store): the root, its config, progress and notices.

    The mirror itself is handed in as a callable where a pass opens it, so nothing here
    reaches into how the caller opens, rebuilds or catches up its mirror.
    """

    @property
    def root(self) -> Path: ...
    @property
    def paths(self) -> RootPaths: ...
    @property
    def config(self) -> Config: ...
    @property
    def progress(self) -> Callable[[int, int], None] | None: ...
    @property
    def notify(self) -> Callable[[str], None]: ...


def embedder_for(store: Host, required: bool) -> Embedder | None:
    """The model, when semantic search is on and the extra loads; None (or an error, if required) otherwise."""
    from memstore.meaning import embedding

    if store.config.semantic == "off":
        if required:
            from memstore.core.config import semantic_source

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


def run_embed(store: Host, with_mirror: Callable[[Callable[[sqlite3.Connection], EmbedReport]], EmbedReport],
              budget_s: float | None, required: bool,
              progress: Callable[[int, int], None] | None) -> EmbedReport | None:
    """Store.embed: a full sync, then every file without a current vector (budget_s bounds the time).

    with_mirror runs a function on the live mirror (the Store's, rebuilt first when it must be)."""
    from memstore.core.errors import Busy
    from memstore.core.locks import LockTimeout, file_lock
    from memstore.meaning.vectors import embed_pending
    from memstore.mirror.sync import sync_locked

    embedder = embedder_for(store, required)
    if embedder is None:
        return None
    from memstore.mirror.embed_background import note_coverage, stop

    stop(store.root)  # the background pass lets the lock go after its round: this pass embeds everything

    def run(conn: sqlite3.Connection) -> EmbedReport:
        sync_locked(conn, store.root, store.config, store.progress)
        done = embed_pending(conn, embedder, budget_s=budget_s, progress=progress)
        note_coverage(store.root, conn, embedder.key, done.pending)
        return done

    try:
        with file_lock(Path(store.paths.embed_lock), timeout=store.config.lock_timeout_s):
            return with_mirror(run)
    except LockTimeout:
        raise Busy("another memstore embed held the embedding lock past lock_timeout_s",
                   hint="wait for it to finish, then run memstore embed again") from None


def embed_briefly(store: Host, read: Callable[[Callable[[sqlite3.Connection], dict[str, Any]]], dict[str, Any]],
                  budget_s: float) -> dict[str, Any] | None:
    """The bounded pass after a sync or rebuild, said in one line when it will not finish.

    read runs a function on the mirror as it stands (no catch-up: the sync just ran)."""
    from memstore.core.locks import LockTimeout, file_lock
    from memstore.meaning.vectors import embed_pending, pending_count
    from memstore.mirror.embed_background import note_coverage

    embedder = embedder_for(store, required=False)
    if embedder is None:
        return None

    def run(conn: sqlite3.Connection) -> dict[str, Any]:
        waiting = pending_count(conn, embedder.key)
        if waiting > store.config.search_embed_max:
            store.notify(f"embedding {waiting} files for up to {budget_s:g}s; a background pass embeds the rest")
        done = embed_pending(conn, embedder, budget_s=budget_s)
        note_coverage(store.root, conn, embedder.key, done.pending)
        return done.to_json()

    try:
        with file_lock(Path(store.paths.embed_lock), timeout=0):
            done = read(run)
    except LockTimeout:
        store.notify("another memstore process is embedding; it will take in these files")
        return None
    if background_allowed():
        from memstore.mirror.embed_background import start

        if start(store.root, int(done.get("pending") or 0), store.config.search_embed_max):
            done["background"] = True  # meaning arrives by itself: one detached, low-priority pass
    return done


def background_pass(store: Host, with_mirror: Callable[[Callable[[sqlite3.Connection], Any]], Any]
                    ) -> EmbedReport | None:
    """`memstore embed --background`: the detached pass a sync starts (memstore.mirror.embed_background)."""
    from memstore.mirror.embed_background import run

    embedder = embedder_for(store, required=False)
    return None if embedder is None else run(store, with_mirror, embedder)


def background_allowed() -> bool:
    """$MEMSTORE_EMBED_BACKGROUND=off keeps syncs from starting the background pass (benchmarks that
    measure embedding themselves, test runs)."""
    import os

    return os.environ.get("MEMSTORE_EMBED_BACKGROUND", "").strip().lower() != "off"


def catch_up_vectors(store: Host, conn: sqlite3.Connection, embedder: Embedder) -> None:
    """Before a hybrid search: embed the few files changed since the last pass, or say a backlog waits."""
    from memstore.core.locks import LockTimeout, file_lock
    from memstore.meaning.vectors import embed_pending, pending_count

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
    from memstore.meaning.vectors import embedded_count, searchable_count
    from memstore.mirror.embed_background import running

    share = embedded_count(conn, embedder.key) / max(searchable_count(conn), 1)
    store.notify(
        f"meaning covers {share:.0%} of the root so far: {waiting} files have no vector yet, so only their words "
        "can find them; " + ("a background pass is embedding them" if running(store.root) is not None else
                             "run: memstore embed (or wait for the nightly tick)")
    )

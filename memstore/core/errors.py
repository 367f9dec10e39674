"""The project's own exception types; the CLI turns each into one clean line."""

from __future__ import annotations

import errno
import os


class MemstoreError(Exception):
    """Base class. `exit_code` is what the CLI exits with; `hint` says what to do next."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class RootNotFound(MemstoreError):
    """No agent root could be resolved (no --root, no $MEMSTORE_ROOT, no memory/ above cwd)."""


class BadUsage(MemstoreError):
    """The call itself is wrong (an unparseable --now, an unknown type, ...)."""

    exit_code = 2


class Busy(MemstoreError):
    """Another memstore process held the mirror lock for longer than the lock timeout."""


class NotFound(MemstoreError):
    """A named memory or path does not exist."""


class MirrorBlocked(MemstoreError):
    """The mirror's place is taken by something that is not a mirror (a folder, say): never
    removed for us."""


def storage_failure(exc: BaseException, root: str | os.PathLike[str] | None
                    ) -> MemstoreError | None:
    """An OSError or SQLite error as one line and a hint (None for anything else).

    The memory files are never what such a failure loses: the mirror is rebuilt from them.
    """
    import sqlite3

    where = f"{root}/runtime/" if root is not None else "the root's runtime/"
    named = getattr(exc, "filename", None)
    if isinstance(named, str) and root is not None and named.startswith(f"{root}/") \
            and not named.startswith(f"{root}/runtime/"):
        where = os.path.dirname(named) + "/"  # the failing folder (review/, memory/), not runtime/
    if isinstance(exc, OSError):
        code, text = exc.errno, f"{exc.strerror or exc}{f' {exc.filename}' if exc.filename else ''}"
    elif isinstance(exc, sqlite3.Error):
        message = str(exc)
        code = errno.ENOSPC if "full" in message else errno.EROFS if "readonly" in message \
            or "unable to open" in message else None
        text = f"the mirror (runtime/memstore.db): {message}"
    else:
        return None
    hint = None
    if code == errno.ENOSPC:
        hint = ("the disk is full: free some space, then run: memstore rebuild "
                "(the memory files are untouched; the mirror is rebuilt from them)")
    elif code in (errno.EROFS, errno.EACCES, errno.EPERM):
        hint = (f"{where} must be writable by you for this (memstore keeps its mirror, journal and "
                "locks in runtime/)")
    return MemstoreError(text, hint=hint)


def read_only_failure(exc: BaseException) -> bool:
    """Did exc come from a root this process may not write (a read-only mount, permissions)?"""
    if isinstance(exc, OSError):
        return exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    text = str(exc)
    return "readonly" in text or "read-only" in text.lower() or "Permission denied" in text

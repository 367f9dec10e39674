"""The project's own exception types; the CLI turns each into one clean line."""

from __future__ import annotations


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


class NotFound(MemstoreError):
    """A named memory or path does not exist."""


class MirrorBlocked(MemstoreError):
    """The mirror's place is taken by something that is not a mirror (a folder, say): never removed for us."""

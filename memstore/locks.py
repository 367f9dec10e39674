"""Advisory file locks (fcntl.flock) with a time budget. Standard library only."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path


class LockTimeout(Exception):
    pass


@contextlib.contextmanager
def file_lock(path: Path, timeout: float | None = None, poll: float = 0.01) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing).

    timeout None waits as long as it takes; otherwise LockTimeout after `timeout` seconds.
    The lock dies with the process, so a kill -9 never leaves it held.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(str(path)) from None
                    time.sleep(poll)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def atomic_write(path: Path, data: bytes) -> bool:
    """Write `data` to a temp file beside `path` and rename it into place.

    Returns False (and writes nothing) when the file already holds exactly these bytes,
    so an unchanged render does not touch mtimes.
    """
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    return True

"""Advisory file locks (fcntl.flock) with a time budget. Standard library only."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
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


def atomic_write(path: Path, data: bytes, expect: bytes | None = None) -> bool:
    """Write `data` to a temp file beside `path` and rename it into place.

    A reader sees the old bytes or the new, never a mix; a crash leaves the old file and a stray
    temp file (swept by `sweep_stale`). The file keeps its permission bits. Returns False (and
    writes nothing) when the file already holds exactly these bytes, so an unchanged render does not
    touch mtimes, or when `expect` is given and the file no longer holds it (someone edited it
    meanwhile: their edit wins). Raises TeamFileError for a path inside a team clone: every file
    memstore writes comes through here, and a team's files are never one.
    """
    if "teams" in str(path):  # the cheap look first: this runs for every file memstore writes
        from memstore.core.teams import refuse_inside_clone

        refuse_inside_clone(path)
    mode = None
    try:
        current = path.read_bytes()
        if current == data or (expect is not None and current != expect):
            return False
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        if expect is not None:
            return False
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if expect is not None and path.read_bytes() != expect:
            os.unlink(tmp)  # edited while we wrote: leave the person's (or agent's) bytes alone
            return False
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


STALE = re.compile(
    r"^(?:\.(?P<name>.+)\.(?P<pid>\d+)\.tmp"
    r"|memstore\.db\.rebuild-(?P<rpid>\d+)(?:-wal|-shm|-journal)?)$"
)


def sweep_stale(folder: Path) -> list[str]:
    """Remove temp files left in `folder` by writers that died (kill -9, power cut).

    Only files whose writing process is gone are removed, so a concurrent writer's temp
    file is left alone.
    """
    removed: list[str] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = STALE.match(name)
        if not match:
            continue
        pid = int(match.group("pid") or match.group("rpid"))
        if pid != os.getpid() and _pid_alive(pid):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, name))
            removed.append(name)
    return removed

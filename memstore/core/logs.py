"""The logs under runtime/state: the bound each keeps, and the one writer of the hook's error log.

runtime/state/hook-errors.log is written here alone (the hook's failures, and the debrief's, which
runs from a hook); `memstore status` and `verify` read it. Standard library only: the hook's path.
"""

from __future__ import annotations

import os

from memstore.core.fsguard import write_own

LOG_LIMIT = 1_000_000  # bytes; a log past it is moved to LOG.1 (the one before is replaced)


def rotate(path: str | os.PathLike[str], limit: int = LOG_LIMIT) -> bool:
    """Keep a log bounded: past `limit` bytes it becomes path.1, replacing the older one.
    Never raises.

    The cron jobs append to their logs through the shell (`>> tick.log`), so a run's own
    output may still land in path.1; the next run starts a fresh file. Two files at most.
    """
    try:
        if os.stat(path).st_size <= limit:
            return False
        os.replace(path, f"{os.fspath(path)}.1")
        return True
    except OSError:
        return False


def hook_error(root: str | os.PathLike[str] | None, message: str) -> None:
    """One stamped line in the root's hook error log; never raises (the hook must not fail)."""
    if root is None:
        return
    import time

    from memstore.core.agent_root import hook_log

    log = hook_log(root)
    try:
        os.makedirs(os.path.dirname(log), exist_ok=True)
        rotate(log)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = f"{stamp} {' '.join(message.splitlines())}\n"  # one event, one line
        # only ever the person's own regular file: a FIFO there would hold the hook, a link
        # would carry the line into another file
        write_own(log, line.encode("utf-8", "replace"), append=True)
    except OSError:
        pass

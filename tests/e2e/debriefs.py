"""Waiting for the detached SessionEnd debriefs a client session left running.

The installs register `debrief --hook --detach`: the client exits at once and the debrief runs on
in a process of its own session. A test that checks what the debrief wrote waits here first.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

DEBRIEF_WAIT = 60  # seconds; one debrief of a test's small root takes well under one


def running_debriefs(under: Path) -> list[int]:
    """Pids of memstore debriefs running now on a root below `under` (Linux: /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or not ours to read
        line = b" ".join(argv)
        if b"memstore" in line and b"debrief" in argv and b"--hook" in argv and \
                os.fsencode(under) in line:
            found.append(int(entry.name))
    return found


def wait_for_debriefs(under: Path, timeout: float = DEBRIEF_WAIT) -> None:
    """Return once no debrief runs on a root below `under`; fail the test if one still runs after
    `timeout`."""
    deadline = time.monotonic() + timeout
    while (left := running_debriefs(under)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"a SessionEnd debrief still runs after {timeout}s: pids {left}"

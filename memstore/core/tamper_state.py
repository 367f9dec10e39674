"""Tamper evidence's state file: runtime/state/tamper.json, under a short lock.

Standard library only.

What it holds (memstore.core.tamper describes the evidence itself): the digests the person accepted
(`files`), what is held or gone now (`held`, `gone`), the live sessions and a short history of ended
ones (`live`, `sessions`; memstore.core.tamper_sessions), and `since`, before which the history says
nothing. Written to a temp file and os.replace'd (locks.atomic_write).
"""

from __future__ import annotations

import json
import os
import time

from memstore.core.tamper_digests import Entry

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _T = TypeVar("_T")

STATE_VERSION = 1

# The state as JSON gives it back: each table is checked to be a dict (or a list) on load, its
# entries not.
State = dict[str, object]
Files = dict[str, Entry]


def state_file(root: str) -> str:
    from memstore.core.agent_root import RootPaths

    return RootPaths(root).tamper


def load(root: str) -> State | None:
    try:
        with open(state_file(root), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return None
    for key, kind in (("files", dict), ("live", dict), ("sessions", list), ("held", dict),
                      ("gone", dict)):
        if not isinstance(data.get(key), kind):
            data[key] = kind()
    return data


def fresh(now: float) -> State:
    return {"version": STATE_VERSION, "since": now, "files": {}, "live": {}, "sessions": [],
            "held": {}, "gone": {}}


def table(state: State, name: str) -> dict[str, Entry]:
    """One of the state's dict tables ("files", "live", "held", "gone"): load and fresh made sure
    it is a dict."""
    found = state[name]
    assert isinstance(found, dict)
    return found


def history(state: State) -> list[Entry]:
    """The state's ended sessions (load and fresh made sure it is a list)."""
    found = state["sessions"]
    assert isinstance(found, list)
    return found


def save(root: str, state: State) -> None:
    from pathlib import Path

    from memstore.core.locks import atomic_write

    path = state_file(root)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
    atomic_write(Path(path), text.encode("utf-8"))  # temp file beside it, renamed into place


def _lock(root: str) -> int:
    """An exclusive flock on runtime/state/tamper.lock (held briefly; a hook waits at most ~1 s)."""
    import fcntl

    folder = os.path.dirname(state_file(root))
    os.makedirs(folder, exist_ok=True)
    fd = os.open(os.path.join(folder, "tamper.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + 1.0
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return fd  # go on without it: a lost race costs one re-said line, never a crash
            time.sleep(0.01)


def _unlock(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def update(root: str, change: Callable[[State], _T]) -> _T:
    """Load (or start) the state, let `change(state)` edit it, save it; change's result is
    returned."""
    fd = _lock(root)
    try:
        state = load(root) or fresh(time.time())
        result = change(state)
        save(root, state)
        return result
    finally:
        _unlock(fd)

"""SessionStart's answer: the cold-start bundle, or part N of identity + MEMORY.md, in fixed order.

Standard library only (the hook's path). Where identity and the index travel as SessionStart
context (the plugin, a root outside the project), Claude Code runs four handlers at once, each
under its 10,000-character limit: imports:1, imports:2, imports:3 and the bundle. Claude Code
joins their outputs in the order they finish, so the order would change from session to session
and every session would miss the model's prompt cache. Each handler therefore waits for the one
before it: imports:N for imports:N-1, the bundle for the part its registration names (`--after
imports:3`). The most stable text comes first (identity, then the index), the bundle, which
changes every day, last. A marker file per finished handler says "done" (runtime/state/start/);
a handler whose predecessor never says so goes ahead after a short wait, so a missing handler costs
at most that wait and never the session.
"""

from __future__ import annotations

import os
import time

from memstore.core.fsguard import write_own

WAIT_S = 2.5  # the longest a handler waits for the one before it (the hook's timeout is 10 s)
SETTLE_S = 0.03  # after the marker: for the predecessor to exit and Claude Code to take its output
FRESH_S = 30.0  # a marker older than this belongs to an earlier start of the same session
PRUNE_S = 3600.0


def _folder(root: str) -> str:
    from memstore.core.agent_root import state_dir

    return os.path.join(state_dir(root), "start")


def _name(session: str, source: str, key: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{session}.{source}")[:200]
    return f"{safe}.{key.replace(':', '-')}"


def predecessor(part: str | None, after: str | None) -> str | None:
    """The handler this one waits for: imports:N-1 for imports:N (N > 1), `after` for the bundle."""
    if part is None:
        return after
    kind, _, number = part.partition(":")
    if kind == "imports" and number.isdigit() and int(number) > 1:
        return f"imports:{int(number) - 1}"
    return None


def wait_turn(root: str, session: str, source: str, before: str, started: float) -> bool:
    """Wait until the handler `before` of this session's start has finished; False when it never
    said so."""
    marker = os.path.join(_folder(root), _name(session, source, before))
    deadline = started + WAIT_S
    while True:
        try:
            if os.stat(marker).st_mtime >= started - FRESH_S:
                time.sleep(SETTLE_S)
                return True
        except OSError:
            pass
        if time.time() >= deadline:
            return False
        time.sleep(0.01)


def finished(root: str, session: str, source: str, key: str) -> None:
    """Say this handler is done (its output follows at once)."""
    folder = _folder(root)
    try:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, _name(session, source, key))
        write_own(path, f"{time.time():.3f}\n".encode())  # never through a link or into a FIFO
        os.utime(path)
    except OSError:
        pass  # the order is a nicety: never a reason to lose the context


def prune(root: str) -> None:
    """Markers of sessions long started go (the bundle's handler does it, once per start)."""
    folder = _folder(root)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    cutoff = time.time() - PRUNE_S
    for name in names:
        path = os.path.join(folder, name)
        try:
            if os.stat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            pass

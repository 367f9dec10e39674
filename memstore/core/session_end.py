"""What a SessionEnd hook does before any mirror is opened: read the client's payload, mark the
session ended for tamper evidence, and hand the debrief to a process of its own.

Standard library and core only: a client waits for its SessionEnd hooks before it exits (Claude
Code) or kills them after a second or two (Codex), so the hook's own part must cost no more
than starting Python; the debrief itself (sync, lessons, lint, render) runs in the detached
child.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import Any

from memstore.core import processes, tamper_sessions
from memstore.core.agent_root import locate
from memstore.core.logs import hook_error

HOOK_STDIN_MAX = 1_000_000
HOOK_STDIN_WAIT_S = 2.0


def read_hook_stdin(stream: Any) -> bytes:
    """The client's hook JSON from stdin, without waiting forever for an EOF that may not come."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        data = stream.read(HOOK_STDIN_MAX + 1)
        return data.encode() if isinstance(data, str) else data
    chunks: list[bytes] = []
    total = 0
    deadline = time.monotonic() + HOOK_STDIN_WAIT_S
    while total <= HOOK_STDIN_MAX:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def hook_payload(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(payload, None) or (None, why it is not a hook payload)."""
    if len(raw) > HOOK_STDIN_MAX:
        return None, "stdin is too large for a hook payload"
    try:
        payload = json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None, "stdin is not JSON"
    if not isinstance(payload, dict):
        return None, "stdin is not a JSON object"
    return payload, None


def log_failure(root: str | os.PathLike[str] | None, message: str) -> None:
    """One line in the root's hook error log, through its one writer; never raises."""
    hook_error(root, f"debrief: {' '.join(message.split())}")


def session_ended(root: str, raw: bytes) -> None:
    """Tamper evidence: the session the payload names is no longer live (core.tamper); first, and
    cheap."""
    payload, _why = hook_payload(raw)
    session = payload.get("session_id") if payload is not None else None
    try:
        tamper_sessions.session_end(root, session if isinstance(session, str) else None)
    except OSError as exc:
        log_failure(root, f"could not record the session's end: {exc}")


def detach_debrief(root: str | os.PathLike[str], raw: bytes, *, commit: bool,
                   now: str | None) -> None:
    """The debrief in a process of its own session, handed the hook's payload: it outlives a
    client that kills its hook (and the hook's process group), and the client need not wait."""
    # -P and the root as its folder: nothing in the session's project can stand in for a module
    # (`python -m` puts its folder first on sys.path); the child reads the payload's cwd itself
    argv = [sys.executable, "-P", "-m", "memstore", "--root", os.fspath(root),
            *(["--now", now] if now else []), "debrief", "--hook",
            *(["--commit"] if commit else [])]
    child = processes.spawn(argv, stdin=processes.PIPE, stdout=processes.DEVNULL,
                            stderr=processes.DEVNULL, own_session=True, cwd=os.fspath(root))
    assert child.stdin is not None
    child.stdin.write(raw)  # a payload is a few KB: the pipe takes it without waiting
    child.stdin.close()


def working_folder() -> str | None:
    """The process's folder, or None when it is gone (the client started in a folder since
    deleted)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def hand_off(stream: Any, root: str | None, now: str | None, commit: bool) -> bool:
    """`debrief --hook --detach`: the payload read, the session's end recorded, the debrief
    started on its own. False, with nothing read, when no root is found: the command line then
    says so where the person will look. Never raises."""
    if os.environ.get("MEMSTORE_HOOKS", "").lower() == "off":
        return True  # a session memstore itself started (the nightly wake): nothing to debrief
    located = locate(root, os.environ.get("MEMSTORE_ROOT"), working_folder())
    if located is None:
        return False
    try:
        raw = read_hook_stdin(stream)
        session_ended(located, raw)
        detach_debrief(located, raw, commit=commit, now=now)
    except Exception as exc:  # the session is ending: nothing may stop it
        log_failure(located, f"failed: {type(exc).__name__}: {exc}")
    return True

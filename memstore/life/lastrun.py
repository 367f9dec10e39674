"""When the nightly cycle last ran, for `status` and the plugin's Setup: a root whose tick has not
run in days has no flush, no rolls into the archive, no expiry, no stale check, no dream and no sit,
and nothing else would say so (a plugin install wires no cron job by itself)."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from memstore.core.agent_root import RootPaths, wake_failed_file
from memstore.core.locks import atomic_write
from memstore.core.plugin_config import command_word
from memstore.core.timeutil import fmt, parse_when

LATE_DAYS = 2  # a nightly job that has not run for two nights is not wired, or failing


def _ran_at(path: str) -> dt.datetime | None:
    try:
        with open(path, encoding="utf-8") as handle:
            value = json.load(handle).get("ran_at")
    except (OSError, ValueError, AttributeError):
        return None
    return parse_when(value)


def wire_hint(root: str | os.PathLike[str]) -> str:
    """The one command that wires the nightly jobs for this root, as this install should run it."""
    # the jobs alone, whatever wires the hooks: `install --cron` would also write a settings file
    # where the command runs (a second, project-scope install beside a user-scope one)
    return f"{command_word()} --root {os.fspath(root)} install --cron-only --apply"


def _failure_file(root: str | os.PathLike[str]) -> str:
    return wake_failed_file(root)


def wake_failed(root: str | os.PathLike[str], now: dt.datetime, error: str | None) -> None:
    """Record the wake's failure (error), or that the last wake went well (None): a wake failing
    under cron says so only in its log, so a month of dreams could otherwise be lost unsaid."""
    path = _failure_file(root)
    try:
        if error is None:
            if os.path.exists(path):
                os.unlink(path)
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = json.dumps({"ran_at": fmt(now), "error": error[:500]}) + "\n"
        atomic_write(Path(path), data.encode("utf-8"))
    except OSError:
        pass  # the failure itself is what the caller reports


def view(root: str | os.PathLike[str], now: dt.datetime) -> dict[str, object]:
    """{tick, wake: ISO time | None, late, hint: str | None, wake_failed: {ran_at, error} | None}"""
    paths = RootPaths(os.fspath(root))
    tick, wake = _ran_at(paths.tick_status), _ran_at(paths.wake_status)
    late = tick is None or (now - tick).days >= LATE_DAYS
    try:
        with open(_failure_file(root), encoding="utf-8") as handle:
            failed = json.load(handle)
        failed = failed if isinstance(failed, dict) else None
    except (OSError, ValueError):
        failed = None
    return {"tick": fmt(tick) if tick else None, "wake": fmt(wake) if wake else None,
            "late": late, "hint": wire_hint(root) if late else None, "wake_failed": failed}


def line(found: dict[str, object]) -> str:
    """The status command's `nightly` line."""
    if found["tick"] is None:
        return (f"no nightly tick has run yet; if its jobs are not wired: {found['hint']} "
                "(no crontab command: add --crontab-file F)")
    said = f"last tick {found['tick']}, last wake {found['wake'] or 'never'}"
    failed = found.get("wake_failed")
    if isinstance(failed, dict):
        said += (f"; the last wake FAILED at {failed.get('ran_at')}: "
                 f"{str(failed.get('error'))[:200]} (its log: runtime/state/wake.log)")
    if not found["late"]:
        return said
    return (f"{said}; the tick is late: check its log (runtime/state/tick.log), "
            f"or wire it: {found['hint']}")

"""When the nightly cycle last ran, for `status` and the plugin's Setup: a root whose tick has not run
in days has no flush, no rolls into the archive, no expiry, no stale check, no dream and no sit, and
nothing else would say so (a plugin install wires no cron job by itself)."""

from __future__ import annotations

import datetime as dt
import json
import os

from memstore.agent_root import RootPaths
from memstore.timeutil import fmt, parse_when

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
    from memstore.plugin_config import command_word, wiring

    how = "--cron-only" if wiring(root) else "--cron"  # beside the plugin: the jobs alone, no settings file
    return f"{command_word()} --root {os.fspath(root)} install {how} --apply"


def view(root: str | os.PathLike[str], now: dt.datetime) -> dict[str, object]:
    """{tick, wake: ISO time or None, late: bool, hint: str or None}."""
    paths = RootPaths(os.fspath(root))
    tick, wake = _ran_at(paths.tick_status), _ran_at(paths.wake_status)
    late = tick is None or (now - tick).days >= LATE_DAYS
    return {"tick": fmt(tick) if tick else None, "wake": fmt(wake) if wake else None,
            "late": late, "hint": wire_hint(root) if late else None}


def line(found: dict[str, object]) -> str:
    """The status command's `nightly` line."""
    if found["tick"] is None:
        return f"no nightly tick has run yet: wire the nightly jobs with {found['hint']}"
    said = f"last tick {found['tick']}, last wake {found['wake'] or 'never'}"
    return f"{said}; the tick is late: check its log (runtime/state/tick.log), or wire it: {found['hint']}" \
        if found["late"] else said

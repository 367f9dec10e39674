"""Tamper evidence's session marks: which agent sessions were live, and when.

Standard library only. SessionStart records a live session (its id, when, the client's pid where
/proc tells it), SessionEnd ends it; a live entry older than LIVE_BOUND_S, or whose client process
is gone, counts as ended. A short history of session intervals is kept (HISTORY_MAX,
HISTORY_DAYS). A change to a person's file whose time falls inside an interval was made during a
session (during_session): memstore.core.tamper holds it.

Everything is on the real clock (time.time()), never `--now`: the file system's times are.
"""

from __future__ import annotations

import os
import time

from memstore.core.tamper_digests import Entry
from memstore.core.tamper_state import State, history, load, table, update

LIVE_BOUND_S = 24 * 3600  # a live session older than this is treated as ended
HISTORY_MAX = 50  # session intervals kept (a short history: the state is read every SessionStart)
HISTORY_DAYS = 30  # ...and at most this old (older go; a change before them is "unknown": held)
SLACK_S = 2.0  # file-system time granularity around a session's start and end
PROBE_SESSION = "memstore-verify"  # verify's probes carry it (verify.py, install_clients.py)
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "nice", "nohup"})


def _proc_stat(pid: int) -> tuple[str, int, str] | None:
    """(command name, parent pid, start time in clock ticks) from /proc; None where there is no
    /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return None
    close = stat.rfind(")")
    fields = stat[close + 2:].split()
    try:
        return stat[stat.find("(") + 1:close], int(fields[1]), fields[19]
    except (IndexError, ValueError):
        return None


def client_process() -> tuple[int | None, str | None]:
    """The client's pid and start time: the first ancestor of this (short-lived) hook process that
    is no shell and no Python. (None, None) where /proc does not tell: then only SessionEnd and the
    24-hour bound end a session (a transient shell's pid would end it at once)."""
    pid = os.getppid()
    for _ in range(4):
        found = _proc_stat(pid)
        if found is None or pid <= 1:
            return None, None
        name, parent, started = found
        if name not in SHELLS and not name.startswith("python"):
            return pid, started
        pid = parent
    return None, None


def _alive(entry: Entry) -> bool:
    pid, started = entry.get("pid"), entry.get("pid_start")
    if not isinstance(pid, int):
        return True
    found = _proc_stat(pid)
    if found is None:
        return not os.path.isdir("/proc")  # no /proc at all: cannot tell, so alive
    return started is None or found[2] == started


def settle(state: State, now: float) -> None:
    """Live sessions past the bound, or whose client is gone, become intervals; old intervals go."""
    live = table(state, "live")
    for sid, entry in list(live.items()):
        started = entry.get("started") if isinstance(entry, dict) else None
        if not isinstance(started, (int, float)):
            del live[sid]
            continue
        if now - started > LIVE_BOUND_S:
            end_session(state, sid, started + LIVE_BOUND_S, "past the 24-hour bound")
        elif not _alive(entry):
            # when exactly is unknown: until now
            end_session(state, sid, now, "its client process was gone")
    sessions = history(state)
    keep = [s for s in sessions
            if isinstance(s, dict) and isinstance(ended := s.get("ended"), (int, float))
            and now - float(ended) <= HISTORY_DAYS * 86400]
    keep = keep[-HISTORY_MAX:]
    if len(keep) < len(sessions):
        dropped = [s for s in sessions if s not in keep and isinstance(s, dict)]
        ends = [float(ended) for s in dropped if isinstance(ended := s.get("ended"), (int, float))]
        if ends:
            since = state.get("since") or 0
            state["since"] = max(float(since) if isinstance(since, (int, float)) else 0.0,
                                 max(ends))
    state["sessions"] = keep


def end_session(state: State, sid: str, ended: float, why: str) -> None:
    entry = table(state, "live").pop(sid, None)
    if entry is None:
        return
    history(state).append({"id": sid, "started": entry.get("started"), "ended": ended,
                           "client": entry.get("client"), "end": why})


def go_live(state: State, session: str | None, client: str, now: float) -> None:
    pid, started = client_process()
    live = table(state, "live")
    key = session or f"pid-{pid or os.getppid()}"
    if key not in live:
        live[key] = {"started": now, "pid": pid, "pid_start": started, "client": client}


def session_start(root: str, session: str | None, client: str = "claude") -> None:
    """A session is live from now (a resumed or compacted one keeps its first start)."""
    if session == PROBE_SESSION:
        return
    now = time.time()

    def change(state: State) -> None:
        settle(state, now)
        go_live(state, session, client, now)

    update(root, change)


def session_seen(root: str, session: str | None, client: str = "claude") -> None:
    """A tool call of a session the hook never saw start (a resumed Codex session): live from now.
    memstore's own verify probe is no agent session."""
    if not session or session == PROBE_SESSION:
        return
    state = load(root)
    if state is not None and session in table(state, "live"):
        return
    session_start(root, session, client)


def session_end(root: str, session: str | None) -> None:
    if not session:
        return
    now = time.time()

    def change(state: State) -> None:
        end_session(state, session, now, "SessionEnd")

    update(root, change)


def _intervals(state: State, now: float) -> list[tuple[float, float]]:
    spans = [(float(started), float(ended)) for s in history(state)
             if isinstance(started := s.get("started"), (int, float))
             and isinstance(ended := s.get("ended"), (int, float))]
    spans += [(float(started), now) for e in table(state, "live").values()
              if isinstance(e, dict) and isinstance(started := e.get("started"), (int, float))]
    return spans


def during_session(state: State, when: float | None, now: float) -> bool:
    """Did a change at `when` happen while a session was live (or before the history we still
    hold)?"""
    if when is None:
        return bool(state["live"])  # a removed file: no time to go by; live now counts as during
    since = state.get("since")
    if isinstance(since, (int, float)) and when < since - SLACK_S and state["sessions"]:
        return True  # older than the intervals kept: cannot tell, so held
    return any(start - SLACK_S <= when <= end + SLACK_S for start, end in _intervals(state, now))

"""Tamper evidence: the person's files and memstore's wiring, as the person last accepted them. Standard library only.

Recognising shell commands will always miss something in a mode that runs anything, so a
change to what the person owns is made *evident* instead. This module is the one home of it:

- digests (sha256) of each person-owned file (identity.md, memstore.toml, lenses/*.md,
  meditations/*.md) and of memstore's part of each wiring file (its hook handlers, deny
  rules and read grant in a client's settings, the import block of ~/.claude/rules/memstore.md),
  as the person last accepted them: at `init --apply`, `install --apply` and `memstore trust`.
  Of a wiring file only memstore's part counts: the clients rewrite the rest of their own
  settings during sessions (a permission the person allowed, a toggle);
- the sessions the hook saw: SessionStart records a live session (its id, when, the client's
  pid where /proc tells it), SessionEnd ends it; a live entry older than LIVE_BOUND_S, or whose
  client process is gone, counts as ended. A short history of session intervals is kept;
- the comparison (`check`), run by status, verify, the nightly tick and SessionStart. A changed
  file whose change time (the later of mtime and ctime: ctime cannot be set back by `touch`)
  falls outside every session interval is a hand edit: said once, in one line, and accepted.
  One that falls inside a session interval is held until the person runs `memstore trust`:
  a held lens is not injected, a held meditation is not sat with, held memstore.toml overrides
  are ignored (defaults apply), identity is flagged at the top of the bundle, and status and
  verify list it. Wiring whose memstore part is gone (the file moved away, the hooks or deny
  rules taken out) is said at every check until `install --apply` puts it back or `trust`
  accepts its absence.

Everything is on the real clock (time.time()), never `--now`: the file system's times are.
The state file is runtime/state/tamper.json, written to a temp file and os.replace'd.
Lines returned here are plain text; whoever puts them in the bundle makes them inert.
"""

from __future__ import annotations

import json
import os
import time

STATE_VERSION = 1
LIVE_BOUND_S = 24 * 3600  # a live session older than this is treated as ended
HISTORY_MAX = 50  # session intervals kept (a short history: the state is read on every SessionStart)
HISTORY_DAYS = 30  # ...and at most this old (older ones go; changes before them count as "unknown": held)
SLACK_S = 2.0  # file-system time granularity around a session's start and end
PROBE_SESSION = "memstore-verify"  # the session id of verify's own probe payloads (verify.py, install_clients.py)
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "fish", "ksh", "env", "timeout", "nice", "nohup"})
PERSON_FOLDERS = ("lenses", "meditations")
PERSON_FILES = ("identity.md", "memstore.toml")
# how install.BEGIN and install.END start and end (install imports far more than the hook may)
BLOCK_BEGIN = "<!-- memstore:begin"
BLOCK_END = "<!-- memstore:end -->"


def state_file(root: str) -> str:
    from memstore.agent_root import RootPaths

    return RootPaths(root).tamper


# ---------------------------------------------------------------- digests


def _sha256(data: bytes) -> str:
    try:  # Python 3.11's built-in module: a tenth of hashlib's import (OpenSSL) on the hook's path
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:  # 3.12 renamed it (_sha2); hashlib finds whichever there is
        from hashlib import sha256  # type: ignore[no-redef]
    return str(sha256(data).hexdigest())


def _read(path: str, limit: int = 8 * 1024 * 1024) -> bytes | None:
    """A regular file's bytes (a link is followed: identity.md may be the person's link); None when absent."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None


def person_keys(root: str) -> list[str]:
    """The person-owned files present now, root-relative (the tracked set is these plus the recorded ones)."""
    keys = [name for name in PERSON_FILES if os.path.isfile(os.path.join(root, name))]
    for folder in PERSON_FOLDERS:
        try:
            names = sorted(os.listdir(os.path.join(root, folder)))
        except OSError:
            continue
        keys += [f"{folder}/{name}" for name in names if name.endswith(".md") and not name.startswith(".")
                 and os.path.isfile(os.path.join(root, folder, name))]
    return keys


def _marks(root: str, wiring: list[str]) -> tuple[str, ...]:
    """What names memstore's part of a wiring file: the root (every spelling) and the wiring files' paths."""
    found = {root, os.path.realpath(root), *wiring}
    return tuple(sorted(m for m in found if m and m != os.sep))


def _ours(node: object, marks: tuple[str, ...], out: list[object]) -> None:
    """memstore's pieces of a parsed settings file: a handler (a dict with a string naming the root),
    a rule or folder (a string in a list naming it), a table whose key names it (Codex's trust entries)."""
    def named(value: object) -> bool:
        return isinstance(value, str) and any(mark in value for mark in marks)

    if isinstance(node, dict):
        if any(named(v) for v in node.values()):
            out.append(node)
            return
        for key, value in node.items():
            if named(key):
                out.append({key: value})
            else:
                _ours(value, marks, out)
    elif isinstance(node, list):
        for item in node:
            if named(item):
                out.append(item)
            else:
                _ours(item, marks, out)


def wiring_part(path: str, root: str, wiring: list[str]) -> str | None:
    """memstore's part of a wiring file as canonical text; None when the file is gone, "" when it holds
    nothing of memstore's, "unparseable: ..." when the client could not read it either."""
    data = _read(path)
    if data is None:
        return None
    text = data.decode("utf-8", errors="replace")
    if path.endswith(".md"):
        start, end = text.find(BLOCK_BEGIN), text.find(BLOCK_END)
        return text[start:end + len(BLOCK_END)] if start != -1 and end > start else ""
    try:
        if path.endswith(".toml"):
            import tomllib

            parsed: object = tomllib.loads(text)
        else:
            parsed = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError) as exc:
        return f"unparseable: {type(exc).__name__}"
    found: list[object] = []
    _ours(parsed, _marks(root, wiring), found)
    return "\n".join(sorted(json.dumps(piece, sort_keys=True, ensure_ascii=False) for piece in found))


def _pieces(part: str) -> list[str]:
    """What kinds of wiring a part holds: "hooks" (handlers), "deny" (Edit rules), "grant" (a folder or a
    read rule), "block" (an import block)."""
    if part.startswith(BLOCK_BEGIN):
        return ["block"]
    found = set()
    for line in part.splitlines():
        try:
            piece = json.loads(line)
        except ValueError:
            continue
        if isinstance(piece, dict):
            found.add("hooks" if "command" in piece else "other")
        elif isinstance(piece, str):
            found.add("deny" if piece.startswith("Edit(") else "grant")
    return sorted(found)


def _digest_of(key: str, entry: dict[str, object] | None, root: str, wiring: list[str]) -> tuple[str | None, str]:
    """(digest now or None when absent, state: "present", "absent", "empty" (wiring without a kind of piece
    it held when accepted: its hooks, its deny rules, its grant or its block), "unparseable")."""
    if entry is not None and entry.get("kind") == "wiring":
        part = wiring_part(key, root, wiring)
        if part is None:
            return None, "absent"
        had = entry.get("has")
        lost = isinstance(had, list) and bool(set(had) - set(_pieces(part)))
        state = "unparseable" if part.startswith("unparseable:") else "empty" if part == "" or lost else "present"
        return _sha256(part.encode("utf-8")), state
    data = _read(os.path.join(root, key))
    return (None, "absent") if data is None else (_sha256(data), "present")


def _changed_at(path: str) -> float | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return max(info.st_mtime, info.st_ctime)


# ---------------------------------------------------------------- the state file


def load(root: str) -> dict[str, object] | None:
    try:
        with open(state_file(root), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return None
    for key, kind in (("files", dict), ("live", dict), ("sessions", list), ("held", dict), ("gone", dict)):
        if not isinstance(data.get(key), kind):
            data[key] = kind()
    return data


def _fresh(now: float) -> dict[str, object]:
    return {"version": STATE_VERSION, "since": now, "files": {}, "live": {}, "sessions": [], "held": {}, "gone": {}}


def save(root: str, state: dict[str, object]) -> None:
    from pathlib import Path

    from memstore.locks import atomic_write

    path = state_file(root)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
    atomic_write(Path(path), text.encode("utf-8"))  # temp file beside it, renamed into place


def _lock(root: str) -> object:
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


def _unlock(fd: object) -> None:
    try:
        os.close(fd)  # type: ignore[arg-type]
    except OSError:
        pass


def _update(root: str, change: object) -> object:
    """Load (or start) the state, let `change(state)` edit it, save it; change's result is returned."""
    fd = _lock(root)
    try:
        state = load(root) or _fresh(time.time())
        result = change(state)  # type: ignore[operator]
        save(root, state)
        return result
    finally:
        _unlock(fd)


# ---------------------------------------------------------------- sessions


def _proc_stat(pid: int) -> tuple[str, int, str] | None:
    """(command name, parent pid, start time in clock ticks) from /proc; None where there is no /proc."""
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
    """The client's pid and start time: the first ancestor of this (short-lived) hook process that is
    no shell and no Python. (None, None) where /proc does not tell: then only SessionEnd and the
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


def _alive(entry: dict[str, object]) -> bool:
    pid, started = entry.get("pid"), entry.get("pid_start")
    if not isinstance(pid, int):
        return True
    found = _proc_stat(pid)
    if found is None:
        return not os.path.isdir("/proc")  # no /proc at all: cannot tell, so alive
    return started is None or found[2] == started


def _settle(state: dict[str, object], now: float) -> None:
    """Live sessions past the bound, or whose client is gone, become intervals; old intervals go."""
    live: dict[str, dict[str, object]] = state["live"]  # type: ignore[assignment]
    for sid, entry in list(live.items()):
        started = entry.get("started") if isinstance(entry, dict) else None
        if not isinstance(started, (int, float)):
            del live[sid]
            continue
        if now - started > LIVE_BOUND_S:
            _end(state, sid, started + LIVE_BOUND_S, "past the 24-hour bound")
        elif not _alive(entry):
            _end(state, sid, now, "its client process was gone")  # when exactly is unknown: until now
    sessions: list[dict[str, object]] = state["sessions"]  # type: ignore[assignment]
    keep = [s for s in sessions if isinstance(s, dict) and isinstance(s.get("ended"), (int, float))
            and now - float(s["ended"]) <= HISTORY_DAYS * 86400]  # type: ignore[arg-type]
    keep = keep[-HISTORY_MAX:]
    if len(keep) < len(sessions):
        dropped = [s for s in sessions if s not in keep and isinstance(s, dict)]
        ends = [float(s["ended"]) for s in dropped if isinstance(s.get("ended"), (int, float))]  # type: ignore[arg-type]
        if ends:
            state["since"] = max(float(state.get("since") or 0), max(ends))  # type: ignore[arg-type]
    state["sessions"] = keep


def _end(state: dict[str, object], sid: str, ended: float, why: str) -> None:
    live: dict[str, dict[str, object]] = state["live"]  # type: ignore[assignment]
    entry = live.pop(sid, None)
    if entry is None:
        return
    state["sessions"].append({"id": sid, "started": entry.get("started"), "ended": ended,  # type: ignore[attr-defined]
                              "client": entry.get("client"), "end": why})


def session_start(root: str, session: str | None, client: str = "claude") -> None:
    """A session is live from now (a resumed or compacted one keeps its first start)."""
    if session == PROBE_SESSION:
        return
    now = time.time()

    def change(state: dict[str, object]) -> None:
        _settle(state, now)
        _go_live(state, session, client, now)

    _update(root, change)


def _go_live(state: dict[str, object], session: str | None, client: str, now: float) -> None:
    pid, started = client_process()
    live: dict[str, object] = state["live"]  # type: ignore[assignment]
    key = session or f"pid-{pid or os.getppid()}"
    if key not in live:
        live[key] = {"started": now, "pid": pid, "pid_start": started, "client": client}


def session_seen(root: str, session: str | None, client: str = "claude") -> None:
    """A tool call of a session the hook never saw start (a resumed Codex session): live from now.
    memstore's own verify probe is no agent session."""
    if not session or session == PROBE_SESSION:
        return
    state = load(root)
    if state is not None and session in state["live"]:  # type: ignore[operator]
        return
    session_start(root, session, client)


def session_end(root: str, session: str | None) -> None:
    if not session:
        return
    now = time.time()

    def change(state: dict[str, object]) -> None:
        _end(state, session, now, "SessionEnd")

    _update(root, change)


def _intervals(state: dict[str, object], now: float) -> list[tuple[float, float]]:
    spans = [(float(s["started"]), float(s["ended"])) for s in state["sessions"]  # type: ignore[attr-defined]
             if isinstance(s.get("started"), (int, float)) and isinstance(s.get("ended"), (int, float))]
    spans += [(float(e["started"]), now) for e in state["live"].values()  # type: ignore[attr-defined]
              if isinstance(e, dict) and isinstance(e.get("started"), (int, float))]
    return spans


def during_session(state: dict[str, object], when: float | None, now: float) -> bool:
    """Did a change at `when` happen while a session was live (or before the history we still hold)?"""
    if when is None:
        return bool(state["live"])  # a removed file: no time to go by; live now counts as during
    since = state.get("since")
    if isinstance(since, (int, float)) and when < since - SLACK_S and state["sessions"]:
        return True  # older than the intervals kept: cannot tell, so held
    return any(start - SLACK_S <= when <= end + SLACK_S for start, end in _intervals(state, now))


# ---------------------------------------------------------------- recording what the person accepted


def _record(state: dict[str, object], key: str, kind: str, root: str, wiring: list[str], how: str, now: float,
            extra: dict[str, object] | None = None) -> None:
    files: dict[str, dict[str, object]] = state["files"]  # type: ignore[assignment]
    entry: dict[str, object] = {**(files.get(key) or {}), "kind": kind, **(extra or {})}
    digest, _ = _digest_of(key, {**entry, "has": None}, root, wiring)
    entry.update({"sha256": digest, "accepted_at": now, "how": how})
    if kind == "wiring":
        part = wiring_part(key, root, wiring)
        entry["has"] = _pieces(part) if part and not part.startswith("unparseable:") else []
    files[key] = entry
    state["held"].pop(key, None)  # type: ignore[attr-defined]
    state["gone"].pop(key, None)  # type: ignore[attr-defined]


def _wiring_keys(state: dict[str, object]) -> list[str]:
    return [k for k, e in state["files"].items() if isinstance(e, dict) and e.get("kind") == "wiring"]  # type: ignore[attr-defined]


def record_person(root: str, how: str) -> int:
    """Accept the person-owned files not recorded yet, as they are now (init --apply, install --apply); how
    many. A recorded file that differs is left to `check` and `trust`: install runs from any shell, the
    agent's too, and must not launder a change made during a session."""
    root = os.fspath(root)
    now = time.time()

    def change(state: dict[str, object]) -> int:
        keys = [key for key in person_keys(root) if key not in state["files"]]  # type: ignore[operator]
        for key in keys:
            _record(state, key, "person", root, [], how, now)
        return len(keys)

    return int(_update(root, change))  # type: ignore[call-overload]


def record_wiring(root: str, paths: list[str], how: str, client: str, fix: str) -> None:
    """Accept memstore's part of these wiring files as install just wrote it; `fix` is the install
    command that puts it back."""
    root = os.fspath(root)
    now = time.time()

    def change(state: dict[str, object]) -> None:
        wiring = sorted({*_wiring_keys(state), *paths})
        for path in paths:
            _record(state, path, "wiring", root, wiring, how, now, {"client": client, "fix": fix})

    _update(root, change)


def forget_wiring(root: str, paths: list[str]) -> None:
    """install --uninstall: these files no longer carry memstore's wiring, by the person's choice."""
    def change(state: dict[str, object]) -> None:
        for path in paths:
            for table in ("files", "held", "gone"):
                state[table].pop(path, None)  # type: ignore[attr-defined]

    _update(os.fspath(root), change)


def discover_wiring(root: str, cwd: str | None = None) -> list[str]:
    """The usual wiring files that hold memstore's part for this root now (a root recorded before tamper
    evidence existed: its baseline)."""
    home = os.path.expanduser("~")
    claude = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    codex = os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    candidates = [os.path.join(claude, "settings.json"), os.path.join(claude, "settings.local.json"),
                  os.path.join(claude, "rules", "memstore.md"), os.path.join(codex, "hooks.json"),
                  os.path.join(codex, "config.toml"), os.path.join(home, ".gemini", "settings.json")]
    if cwd:
        candidates += [os.path.join(cwd, ".claude", name) for name in ("settings.json", "settings.local.json")]
        candidates.append(os.path.join(cwd, ".gemini", "settings.json"))
    found = []
    for path in dict.fromkeys(candidates):
        part = wiring_part(path, root, candidates)
        if part and not part.startswith("unparseable:") and (not path.endswith(".md") or root in part):
            found.append(path)
    return found


# ---------------------------------------------------------------- comparing


class Finding:
    """One tracked file that differs from what the person accepted. A plain class: the hook's path."""

    __slots__ = ("fix", "key", "kind", "state", "when")

    def __init__(self, key: str, kind: str, state: str, when: float | None, fix: str = "") -> None:
        self.key = key  # root-relative (person) or absolute (wiring)
        self.kind = kind  # "person" or "wiring"
        self.state = state  # "hand" (accepted), "held", "gone" (wiring), "restored"
        self.when = when  # the change time (real clock), when known
        self.fix = fix

    def to_json(self) -> dict[str, object]:
        return {"file": self.key, "kind": self.kind, "state": self.state, "changed": _date(self.when)}


def _date(when: float | None, minutes: bool = False) -> str | None:
    if when is None:
        return None
    return time.strftime("%Y-%m-%d %H:%M UTC" if minutes else "%Y-%m-%d", time.gmtime(when))


def _path(root: str, key: str) -> str:
    return key if os.path.isabs(key) else os.path.join(root, key)


def compare(state: dict[str, object], root: str, now: float) -> list[Finding]:
    """Every tracked file that is not as accepted, classified; the state is not changed."""
    files: dict[str, dict[str, object]] = state["files"]  # type: ignore[assignment]
    held: dict[str, object] = state["held"]  # type: ignore[assignment]
    wiring = _wiring_keys(state)
    keys = list(dict.fromkeys([*files, *person_keys(root), *held]))
    found = []
    for key in keys:
        entry = files.get(key)
        kind = "wiring" if entry is not None and entry.get("kind") == "wiring" else "person"
        digest, shape = _digest_of(key, entry, root, wiring)
        accepted = entry.get("sha256") if entry is not None else None
        if entry is not None and digest == accepted:
            if key in held:
                found.append(Finding(key, kind, "restored", None))
            continue
        if entry is None and digest is None:
            continue
        when = _changed_at(_path(root, key))
        fix = str(entry.get("fix") or "") if entry is not None else ""
        if kind == "wiring" and shape in ("absent", "empty", "unparseable") and accepted is not None:
            found.append(Finding(key, kind, "gone", when, fix))
        elif key in held or during_session(state, when, now):
            found.append(Finding(key, kind, "held", when, fix))
        else:
            found.append(Finding(key, kind, "hand", when, fix))
    return found


def check(root: str, *, cwd: str | None = None, start: str | None = None, client: str = "claude"
          ) -> list[Finding]:
    """status, verify, tick, SessionStart: compare, accept hand edits (each said once by the caller),
    hold changes made during a session, note wiring gone. No state yet: today's files become the
    baseline (and the wiring install wrote for this root, where it can be found). `start`: SessionStart's
    session id, live from after the comparison (one read and one write of the state for both)."""
    root = os.fspath(root)
    now = time.time()

    def change(state: dict[str, object]) -> list[Finding]:
        _settle(state, now)
        found = _check(state, root, cwd, now)
        if start is not None and start != PROBE_SESSION:
            _go_live(state, start, client, now)
        return found

    try:
        return list(_update(root, change))  # type: ignore[call-overload]
    except OSError:
        return []  # a read-only runtime/: nothing recorded, nothing said (status still runs)


def _check(state: dict[str, object], root: str, cwd: str | None, now: float) -> list[Finding]:
    """The comparison itself, on a loaded state (check's body)."""
    if not state["files"]:  # first look: the baseline, said in one line
        for key in person_keys(root):
            _record(state, key, "person", root, [], "first record", now)
        wiring = discover_wiring(root, cwd)
        for path in wiring:
            _record(state, path, "wiring", root, wiring, "first record", now, {"client": "unknown", "fix": ""})
        return [Finding(f"{len(state['files'])} file(s)", "person", "baseline", now)]  # type: ignore[arg-type]
    found = compare(state, root, now)
    for item in found:
        if item.state == "hand" and item.kind == "person" and not os.path.exists(_path(root, item.key)):
            state["files"].pop(item.key, None)  # type: ignore[attr-defined]  # removed by hand: untracked
        elif item.state == "hand":
            extra = {k: v for k, v in (state["files"].get(item.key) or {}).items()  # type: ignore[attr-defined]
                     if k in ("client", "fix")}
            _record(state, item.key, item.kind, root, _wiring_keys(state), "hand edit", now, extra)
        elif item.state == "held":
            state["held"].setdefault(item.key, {"changed": item.when, "seen": now})  # type: ignore[attr-defined]
        elif item.state == "gone":
            state["gone"].setdefault(item.key, {"changed": item.when, "seen": now})  # type: ignore[attr-defined]
        elif item.state == "restored":
            state["held"].pop(item.key, None)  # type: ignore[attr-defined]
    return found


def held_now(root: str) -> list[Finding]:
    """Read-only: what is held or gone right now (changes since the last check classified on the spot)."""
    state = load(os.fspath(root))
    if state is None or not state["files"]:
        return []
    now = time.time()
    return [f for f in compare(state, os.fspath(root), now) if f.state in ("held", "gone")]


def is_held(root: str, key: str, state: dict[str, object] | None = None) -> bool:
    """Is this person-owned file (root-relative) held back right now? No baseline yet: never."""
    state = load(root) if state is None else state
    if state is None or not state["files"]:
        return False
    if key in state["held"]:  # type: ignore[operator]
        entry = state["files"].get(key)  # type: ignore[attr-defined]
        return not (isinstance(entry, dict) and _digest_of(key, entry, root, [])[0] == entry.get("sha256"))
    entry = state["files"].get(key)  # type: ignore[attr-defined]
    digest, _ = _digest_of(key, None, root, [])
    if isinstance(entry, dict) and digest == entry.get("sha256"):
        return False
    if digest is None and not isinstance(entry, dict):
        return False
    return during_session(state, _changed_at(os.path.join(root, key)), time.time())


def lens_filter(root: str) -> object:
    """A predicate for lenses.fire: True for a lens (root-relative path) that may be injected. The state
    is read on the first lens that matches, not before."""
    cache: list[dict[str, object] | None] = []

    def allowed(rel: str) -> bool:
        if not cache:
            cache.append(load(root))
        return not is_held(root, rel, cache[0])

    return allowed


# ---------------------------------------------------------------- trusting (the person, at a terminal)


def trust(root: str, names: list[str]) -> list[str]:
    """Accept these files (root-relative person files, wiring paths; none: everything that differs);
    the keys accepted. A name that is not tracked and not a person-owned file raises ValueError."""
    root = os.fspath(root)
    now = time.time()

    def change(state: dict[str, object]) -> list[str]:
        _settle(state, now)
        files: dict[str, dict[str, object]] = state["files"]  # type: ignore[assignment]
        if names:
            keys = [resolve(root, name, state) for name in names]
        else:
            keys = [f.key for f in compare(state, root, now) if f.state in ("held", "gone", "hand")]
        for key in keys:
            entry = files.get(key) or {}
            kind = "wiring" if entry.get("kind") == "wiring" else "person"
            extra = {k: v for k, v in entry.items() if k in ("client", "fix")}
            _record(state, key, kind, root, _wiring_keys(state), "trust", now, extra)
        return keys

    return list(_update(root, change))  # type: ignore[call-overload]


def resolve(root: str, name: str, state: dict[str, object] | None = None) -> str:
    """A FILE as the person names it (root-relative, absolute, ~) to its key; ValueError when not tracked."""
    from memstore.kinds import person_owned

    state = load(root) if state is None else state
    files = state["files"] if state is not None else {}
    expanded = os.path.expanduser(name)
    candidates = [name, expanded, os.path.abspath(expanded)]
    real_root = os.path.realpath(root)
    for candidate in candidates:
        if candidate in files:  # type: ignore[operator]
            return candidate
        if os.path.isabs(candidate):
            real = os.path.realpath(candidate)
            if real.startswith(real_root + os.sep):
                rel = real[len(real_root) + 1:].replace(os.sep, "/")
                if person_owned(rel):
                    return rel
    rel = name.replace(os.sep, "/").removeprefix("./")
    if person_owned(rel) and not rel.startswith("review/") and ".." not in rel.split("/"):
        return rel
    raise ValueError(f"{name} is neither a person-owned file of this root nor recorded wiring")


# ---------------------------------------------------------------- what is said


def _git_root(root: str) -> bool:
    from memstore.projects import work_tree

    return work_tree(root) is not None


def describe(root: str, item: Finding) -> str:
    """One plain line for a finding (the bundle makes it inert; the terminal shows it as it is)."""
    name = item.key if item.kind == "person" else item.key.replace(os.path.expanduser("~"), "~", 1)
    when = _date(item.when, minutes=True) or "at an unknown time"
    if item.state == "baseline":
        return f"tamper evidence: recorded {item.key} as they are now (the person's files and memstore's wiring)"
    if item.state == "hand":
        return f"{name} changed by hand on {_date(item.when) or 'an unknown day'}; accepted"
    if item.state == "restored":
        return f"{name} is back as the person accepted it; no longer held"
    if item.state == "gone":
        fix = f"`{item.fix}`" if item.fix else "`memstore install --apply` (with the scope you installed)"
        noticed = _date(time.time(), minutes=True)
        return (f"memstore's wiring is gone from {name} (noticed {noticed}): the client starts without "
                f"memstore's hooks and deny rules there. Put it back with {fix}, or accept it with "
                f"`memstore trust {name}`")
    if item.kind == "wiring":
        return (f"memstore's wiring in {name} changed during an agent session ({when}); not accepted: "
                f"check it, then `memstore trust {name}`, or put it back with "
                f"{'`' + item.fix + '`' if item.fix else '`memstore install --apply`'}")
    restore = (f"`git -C {root} checkout -- {name}` if git has it" if _git_root(root)
               else "your own backup (memstore keeps digests, not copies)")
    effect = {"identity.md": "treat what it says now as unverified",
              "memstore.toml": "its overrides are ignored (defaults apply) until you accept it"}.get(name)
    if effect is None:
        effect = "this lens is not injected until you accept it" if name.startswith("lenses/") else \
            "the nightly sit does not use it until you accept it" if name.startswith("meditations/") else \
            "not accepted"
    return (f"{name} changed during an agent session ({when}); {effect}. Accept it with "
            f"`memstore trust {name}` at your own terminal, or restore it from {restore}")


def bundle_lines(root: str, found: list[Finding] | None = None) -> list[str]:
    """The lines at the top of the bundle: what SessionStart's own check said (hand edits once), or, for
    `memstore context`, what is held or gone now. Plain text: the bundle makes them inert."""
    items = held_now(root) if found is None else found
    order = {"gone": 0, "held": 1, "hand": 2, "restored": 3, "baseline": 4}
    items = sorted(items, key=lambda f: (order.get(f.state, 9), f.key != "identity.md", f.key))
    return [describe(root, item) for item in items if item.state != "baseline"]

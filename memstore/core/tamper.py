"""Tamper evidence: the person's files and memstore's wiring, as the person last accepted them.

Standard library only.

Recognising shell commands will always miss something in a mode that runs anything, so a
change to what the person owns is made *evident* instead. This module holds what is accepted
and what is held; its parts live beside it:

- memstore.core.tamper_digests: digests (sha256) of each person-owned file (identity.md,
  memstore.toml, lenses/*.md, meditations/*.md) and of memstore's part of each wiring file (its
  hook handlers, deny rules and read grant in a client's settings, the import block of
  ~/.claude/rules/memstore.md), as the person last accepted them: at `init --apply`,
  `install --apply` and `memstore trust`. Of a wiring file only memstore's part counts: the
  clients rewrite the rest of their own settings during sessions (a permission the person
  allowed, a toggle);
- memstore.core.tamper_sessions: the sessions the hook saw (SessionStart, SessionEnd, the
  24-hour bound, the client's pid), and whether a change fell inside one;
- memstore.core.tamper_state: the state file, runtime/state/tamper.json, written to a temp file
  and os.replace'd under a short lock;
- here, the comparison (`check`), run by status, verify, the nightly tick and SessionStart. A
  changed file whose change time (the later of mtime and ctime: ctime cannot be set back by `touch`)
  falls outside every session interval is a hand edit: said once, in one line, and accepted. One
  that falls inside a session interval is held until the person runs `memstore trust`: a held lens
  is not injected (lens_filter), a held meditation is not sat with, held memstore.toml overrides are
  ignored (defaults apply), identity is flagged at the top of the bundle, and status and verify list
  it. Wiring whose memstore part is gone (the file moved away, the hooks or deny rules taken out) is
  said at every check until `install --apply` puts it back or `trust` accepts its absence;
- memstore.core.tamper_lines: the one line said for each finding (status, verify, the bundle's
  top).

Everything is on the real clock (time.time()), never `--now`: the file system's times are.
Lines are plain text; whoever puts them in the bundle makes them inert.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from memstore.core.tamper_digests import (
    Entry,
    changed_at,
    digest_of,
    person_keys,
    pieces,
    wiring_part,
)
from memstore.core.tamper_sessions import PROBE_SESSION, during_session, go_live, settle
from memstore.core.tamper_state import State, load, table, update

# -------------------------------------------------- recording what the person accepted


def _record(state: State, key: str, kind: str, root: str, wiring: list[str], how: str, now: float,
            extra: Entry | None = None) -> None:
    files = table(state, "files")
    entry: Entry = {**(files.get(key) or {}), "kind": kind, **(extra or {})}
    digest, _ = digest_of(key, {**entry, "has": None}, root, wiring)
    entry.update({"sha256": digest, "accepted_at": now, "how": how})
    if kind == "wiring":
        part = wiring_part(key, root, wiring)
        entry["has"] = pieces(part) if part and not part.startswith("unparseable:") else []
    files[key] = entry
    table(state, "held").pop(key, None)
    table(state, "gone").pop(key, None)


def _wiring_keys(state: State) -> list[str]:
    return [k for k, e in table(state, "files").items()
            if isinstance(e, dict) and e.get("kind") == "wiring"]


def record_person(root: str, how: str) -> int:
    """Accept the person-owned files not recorded yet, as they are now (init --apply, install
    --apply); how many. A recorded file that differs is left to `check` and `trust`: install runs
    from any shell, the agent's too, and must not launder a change made during a session."""
    root = os.fspath(root)
    now = time.time()

    def change(state: State) -> int:
        keys = [key for key in person_keys(root) if key not in table(state, "files")]
        for key in keys:
            _record(state, key, "person", root, [], how, now)
        return len(keys)

    return update(root, change)


def record_wiring(root: str, paths: list[str], how: str, client: str, fix: str) -> None:
    """Accept memstore's part of these wiring files as install just wrote it; `fix` is the install
    command that puts it back."""
    root = os.fspath(root)
    now = time.time()

    def change(state: State) -> None:
        wiring = sorted({*_wiring_keys(state), *paths})
        for path in paths:
            _record(state, path, "wiring", root, wiring, how, now, {"client": client, "fix": fix})

    update(root, change)


def forget_wiring(root: str, paths: list[str]) -> None:
    """install --uninstall: these files no longer carry memstore's wiring, by the person's
    choice."""
    def change(state: State) -> None:
        for path in paths:
            for name in ("files", "held", "gone"):
                table(state, name).pop(path, None)

    update(os.fspath(root), change)


def discover_wiring(root: str, cwd: str | None = None) -> list[str]:
    """The usual wiring files that hold memstore's part for this root now (a root recorded before
    tamper evidence existed: its baseline)."""
    home = os.path.expanduser("~")
    claude = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    codex = os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    candidates = [os.path.join(claude, "settings.json"),
                  os.path.join(claude, "settings.local.json"),
                  os.path.join(claude, "rules", "memstore.md"), os.path.join(codex, "hooks.json"),
                  os.path.join(codex, "config.toml"),
                  os.path.join(home, ".gemini", "settings.json")]
    if cwd:
        candidates += [os.path.join(cwd, ".claude", name)
                       for name in ("settings.json", "settings.local.json")]
        candidates.append(os.path.join(cwd, ".gemini", "settings.json"))
    found = []
    for path in dict.fromkeys(candidates):
        part = wiring_part(path, root, candidates)
        if part and not part.startswith("unparseable:") and (
                not path.endswith(".md") or root in part):
            found.append(path)
    return found


# -------------------------------------------------- comparing


class Finding:
    """One tracked file that differs from what the person accepted. A plain class: the hook's
    path."""

    __slots__ = ("fix", "key", "kind", "state", "when")

    def __init__(self, key: str, kind: str, state: str, when: float | None, fix: str = "") -> None:
        self.key = key  # root-relative (person) or absolute (wiring)
        self.kind = kind  # "person" or "wiring"
        self.state = state  # "hand" (accepted), "held", "gone" (wiring), "restored"
        self.when = when  # the change time (real clock), when known
        self.fix = fix

    def to_json(self) -> dict[str, object]:
        return {"file": self.key, "kind": self.kind, "state": self.state,
                "changed": when_text(self.when)}


def when_text(when: float | None, minutes: bool = False) -> str | None:
    if when is None:
        return None
    return time.strftime("%Y-%m-%d %H:%M UTC" if minutes else "%Y-%m-%d", time.gmtime(when))


def _path(root: str, key: str) -> str:
    return key if os.path.isabs(key) else os.path.join(root, key)


def compare(state: State, root: str, now: float) -> list[Finding]:
    """Every tracked file that is not as accepted, classified; the state is not changed."""
    files = table(state, "files")
    held = table(state, "held")
    wiring = _wiring_keys(state)
    keys = list(dict.fromkeys([*files, *person_keys(root), *held]))
    found = []
    for key in keys:
        entry = files.get(key)
        kind = "wiring" if entry is not None and entry.get("kind") == "wiring" else "person"
        digest, shape = digest_of(key, entry, root, wiring)
        accepted = entry.get("sha256") if entry is not None else None
        if entry is not None and digest == accepted:
            if key in held:
                found.append(Finding(key, kind, "restored", None))
            continue
        if entry is None and digest is None:
            continue
        when = changed_at(_path(root, key))
        fix = str(entry.get("fix") or "") if entry is not None else ""
        if kind == "wiring" and shape in ("absent", "empty", "unparseable") and (
                accepted is not None):
            found.append(Finding(key, kind, "gone", when, fix))
        elif key in held or during_session(state, when, now):
            found.append(Finding(key, kind, "held", when, fix))
        else:
            found.append(Finding(key, kind, "hand", when, fix))
    return found


def check(root: str, *, cwd: str | None = None, start: str | None = None, client: str = "claude"
          ) -> list[Finding]:
    """status, verify, tick, SessionStart: compare, accept hand edits (each said once by the
    caller), hold changes made during a session, note wiring gone. No state yet: today's files
    become the baseline (and the wiring install wrote for this root, where it can be found).
    `start`: SessionStart's session id, live from after the comparison (one read and one write of
    the state for both)."""
    root = os.fspath(root)
    now = time.time()

    def change(state: State) -> list[Finding]:
        settle(state, now)
        found = _check(state, root, cwd, now)
        if start is not None and start != PROBE_SESSION:
            go_live(state, start, client, now)
        return found

    try:
        return list(update(root, change))
    except OSError:
        return []  # a read-only runtime/: nothing recorded, nothing said (status still runs)


def _check(state: State, root: str, cwd: str | None, now: float) -> list[Finding]:
    """The comparison itself, on a loaded state (check's body)."""
    if not state["files"]:  # first look: the baseline, said in one line
        for key in person_keys(root):
            _record(state, key, "person", root, [], "first record", now)
        wiring = discover_wiring(root, cwd)
        for path in wiring:
            _record(state, path, "wiring", root, wiring, "first record", now,
                    {"client": "unknown", "fix": ""})
        return [Finding(f"{len(table(state, 'files'))} file(s)", "person", "baseline", now)]
    found = compare(state, root, now)
    for item in found:
        if item.state == "hand" and item.kind == "person" and not os.path.exists(
                _path(root, item.key)):
            table(state, "files").pop(item.key, None)  # removed by hand: untracked
        elif item.state == "hand":
            extra = {k: v for k, v in (table(state, "files").get(item.key) or {}).items()
                     if k in ("client", "fix")}
            _record(state, item.key, item.kind, root, _wiring_keys(state), "hand edit", now, extra)
        elif item.state == "held":
            table(state, "held").setdefault(item.key, {"changed": item.when, "seen": now})
        elif item.state == "gone":
            table(state, "gone").setdefault(item.key, {"changed": item.when, "seen": now})
        elif item.state == "restored":
            table(state, "held").pop(item.key, None)
    return found


def held_now(root: str) -> list[Finding]:
    """Read-only: what is held or gone right now (changes since the last check classified on the
    spot)."""
    state = load(os.fspath(root))
    if state is None or not state["files"]:
        return []
    now = time.time()
    return [f for f in compare(state, os.fspath(root), now) if f.state in ("held", "gone")]


def is_held(root: str, key: str, state: State | None = None) -> bool:
    """Is this person-owned file (root-relative) held back right now? No baseline yet: never. A
    team's lens or meditation is held whenever its bytes are not its clone's committed text
    (memstore.core.teams)."""
    if key.startswith("teams/"):
        from memstore.core.teams import committed

        return not committed(root, key)
    state = load(root) if state is None else state
    if state is None or not state["files"]:
        return False
    if key in table(state, "held"):
        entry = table(state, "files").get(key)
        return not (isinstance(entry, dict)
                    and digest_of(key, entry, root, [])[0] == entry.get("sha256"))
    entry = table(state, "files").get(key)
    digest, _ = digest_of(key, None, root, [])
    if isinstance(entry, dict) and digest == entry.get("sha256"):
        return False
    if digest is None and not isinstance(entry, dict):
        return False
    return during_session(state, changed_at(os.path.join(root, key)), time.time())


def lens_filter(root: str) -> Callable[[str], bool]:
    """A predicate for lenses.fire: True for a lens (root-relative path) that may be injected. The
    state is read on the first lens that matches, not before."""
    cache: list[State | None] = []

    def allowed(rel: str) -> bool:
        if not cache:
            cache.append(load(root))
        return not is_held(root, rel, cache[0])

    return allowed


# -------------------------------------------------- trusting (the person, at a terminal)


def trust(root: str, names: list[str]) -> list[str]:
    """Accept these files (root-relative person files, wiring paths; none: everything that
    differs); the keys accepted. A name that is not tracked and not a person-owned file raises
    ValueError."""
    root = os.fspath(root)
    now = time.time()

    def change(state: State) -> list[str]:
        settle(state, now)
        files = table(state, "files")
        if names:
            keys = [resolve(root, name, state) for name in names]
        else:
            keys = [f.key for f in compare(state, root, now)
                    if f.state in ("held", "gone", "hand")]
        for key in keys:
            entry = files.get(key) or {}
            kind = "wiring" if entry.get("kind") == "wiring" else "person"
            extra = {k: v for k, v in entry.items() if k in ("client", "fix")}
            _record(state, key, kind, root, _wiring_keys(state), "trust", now, extra)
        return keys

    return list(update(root, change))


def resolve(root: str, name: str, state: State | None = None) -> str:
    """A FILE as the person names it (root-relative, absolute, ~) to its key; ValueError when not
    tracked."""
    from memstore.core.access import person_owned

    state = load(root) if state is None else state
    files = table(state, "files") if state is not None else {}
    expanded = os.path.expanduser(name)
    candidates = [name, expanded, os.path.abspath(expanded)]
    real_root = os.path.realpath(root)
    for candidate in candidates:
        if candidate in files:
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

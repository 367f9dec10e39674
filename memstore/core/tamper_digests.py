"""Tamper evidence's digests: what is compared with what the person accepted.

Standard library only. A person-owned file counts by its bytes (sha256); a wiring file only by
memstore's part of it (its hook handlers, deny rules, read grant, or the import block of
~/.claude/rules/memstore.md), since the clients rewrite the rest of their own settings during
sessions. A change's time is the later of mtime and ctime (ctime cannot be set back by `touch`).
"""

from __future__ import annotations

import json
import os

PERSON_FOLDERS = ("lenses", "meditations")
PERSON_FILES = ("identity.md", "memstore.toml")
# how install_base.BEGIN and install_base.END start and end (install imports more than the hook may)
BLOCK_BEGIN = "<!-- memstore:begin"
BLOCK_END = "<!-- memstore:end -->"

# One recorded file of the state (tamper.json's `files`): kind, sha256, accepted_at, how, has,
# client, fix.
Entry = dict[str, object]


def sha256_hex(data: bytes) -> str:
    try:  # Python 3.11's built-in module: a tenth of hashlib's import (OpenSSL) on the hook's path
        # a private CPython module: typeshed has no stub
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:  # 3.12 renamed it (_sha2); hashlib finds whichever there is
        from hashlib import sha256
    return str(sha256(data).hexdigest())


def read_bytes(path: str, limit: int = 8 * 1024 * 1024) -> bytes | None:
    """A regular file's bytes (a link is followed: identity.md may be the person's link); None
    when absent."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None


def person_keys(root: str) -> list[str]:
    """The person-owned files present now, root-relative (the tracked set is these plus the
    recorded ones)."""
    keys = [name for name in PERSON_FILES if os.path.isfile(os.path.join(root, name))]
    for folder in PERSON_FOLDERS:
        try:
            names = sorted(os.listdir(os.path.join(root, folder)))
        except OSError:
            continue
        keys += [f"{folder}/{name}" for name in names
                 if name.endswith(".md") and not name.startswith(".")
                 and os.path.isfile(os.path.join(root, folder, name))]
    return keys


def _marks(root: str, wiring: list[str]) -> tuple[str, ...]:
    """What names memstore's part of a wiring file: the root (every spelling) and the wiring files'
    paths."""
    found = {root, os.path.realpath(root), *wiring}
    return tuple(sorted(m for m in found if m and m != os.sep))


def _ours(node: object, marks: tuple[str, ...], out: list[object]) -> None:
    """memstore's pieces of a parsed settings file: a handler (a dict with a string naming the
    root), a rule or folder (a string in a list naming it), a table whose key names it (Codex's
    trust entries)."""
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
    """memstore's part of a wiring file as canonical text; None when the file is gone, "" when it
    holds nothing of memstore's, "unparseable: ..." when the client could not read it either."""
    data = read_bytes(path)
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
    return "\n".join(sorted(json.dumps(piece, sort_keys=True, ensure_ascii=False)
                            for piece in found))


def pieces(part: str) -> list[str]:
    """What kinds of wiring a part holds: "hooks" (handlers), "deny" (Edit rules), "grant" (a
    folder or a read rule), "block" (an import block)."""
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


def digest_of(key: str, entry: Entry | None, root: str, wiring: list[str]
              ) -> tuple[str | None, str]:
    """(digest now or None when absent, state: "present", "absent", "empty" (wiring without a kind
    of piece it held when accepted: its hooks, its deny rules, its grant or its block),
    "unparseable")."""
    if entry is not None and entry.get("kind") == "wiring":
        part = wiring_part(key, root, wiring)
        if part is None:
            return None, "absent"
        had = entry.get("has")
        lost = isinstance(had, list) and bool(set(had) - set(pieces(part)))
        state = ("unparseable" if part.startswith("unparseable:")
                 else "empty" if part == "" or lost else "present")
        return sha256_hex(part.encode("utf-8")), state
    data = read_bytes(os.path.join(root, key))
    return (None, "absent") if data is None else (sha256_hex(data), "present")


def changed_at(path: str) -> float | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return max(info.st_mtime, info.st_ctime)

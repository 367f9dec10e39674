"""Which wiring files `install` created (runtime/state/installed-files.json), so that `install
--uninstall` can take out a file that memstore made and that holds nothing but memstore's part,
instead of leaving a one-byte CLAUDE.md or a `{"autoMemoryEnabled": false}` settings file behind.

A file that existed before install is never removed, whatever is left in it: what remains may be
the person's (their own autoMemoryEnabled, their own read grant)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memstore.core.agent_root import state_dir
from memstore.core.locks import atomic_write


def _file(root: Path) -> Path:
    return Path(state_dir(root)) / "installed-files.json"


def created(root: Path) -> set[str]:
    """The absolute paths install created for this root (and has not removed since)."""
    try:
        data = json.loads(_file(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(data, dict):
        return set()
    return {p for p in data.get("created", []) if isinstance(p, str)}


def record(root: Path, made: list[Path], removed: list[Path]) -> None:
    """After an apply: the files it made join the record, the files it removed leave it."""
    if not made and not removed:
        return
    paths = ((created(root) | {os.path.abspath(p) for p in made})
             - {os.path.abspath(p) for p in removed})
    target = _file(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps({"created": sorted(paths)}, indent=2) + "\n").encode("utf-8"))


def only_memstores(settings: dict[str, Any], root: Path) -> bool:
    """Does what uninstall leaves of a settings file hold nothing but what install adds
    (autoMemoryEnabled off, the read grant for this root), so that the file can go when install
    made it?"""
    rest = json.loads(json.dumps(settings))
    if rest.get("autoMemoryEnabled") is False:
        del rest["autoMemoryEnabled"]
    permissions = rest.get("permissions")
    if isinstance(permissions, dict):
        folders = permissions.get("additionalDirectories")
        if isinstance(folders, list):
            real = os.path.realpath(root)
            permissions["additionalDirectories"] = [
                f for f in folders if not (isinstance(f, str) and os.path.realpath(f) == real)]
        for key in [k for k, v in permissions.items() if v in ([], {})]:
            del permissions[key]
        if not permissions:
            del rest["permissions"]
    if rest.get("hooks") in ({}, []):
        del rest["hooks"]
    return rest == {}

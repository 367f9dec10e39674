"""Where things live in an agent root, and how the root is found."""

from __future__ import annotations

import os
from pathlib import Path

from memstore.errors import RootNotFound


def find_root(explicit: str | os.PathLike[str] | None, env: str | None, cwd: Path) -> Path:
    """--root, else $MEMSTORE_ROOT, else the nearest folder at or above cwd holding memory/.

    A named root must hold memory/: pointing memstore at an arbitrary folder would index
    every markdown file in it and leave a runtime/ folder behind.
    """
    for value, label in ((explicit, "root"), (env, "$MEMSTORE_ROOT")):
        if not value:
            continue
        root = Path(value).expanduser()
        if not root.is_dir():
            raise RootNotFound(f"{label} {root} does not exist", hint=f"create it with: memstore init {root} --apply")
        if not (root / "memory").is_dir():
            raise RootNotFound(
                f"{label} {root} is not an agent root (it has no memory/ folder)",
                hint=f"lay one out with: memstore init {root} --apply",
            )
        return root.resolve()
    here = cwd.resolve()
    for candidate in (here, *here.parents):
        if (candidate / "memory").is_dir():
            return candidate
    raise RootNotFound(
        f"no agent root at or above {here} (no memory/ folder found)",
        hint="pass --root DIR, set MEMSTORE_ROOT, or create one with: memstore init DIR --apply",
    )


def state_dir(root: Path) -> Path:
    return root / "runtime" / "state"


def db_path(root: Path) -> Path:
    return root / "runtime" / "memstore.db"

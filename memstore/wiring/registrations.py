"""Which of a settings file's memstore registrations name files this memstore no longer has.

Every install so far registered `python -S <package>/memstore/hookrun.py --root ROOT` (and the lens
gate, `bash <package>/memstore/hookgate.sh ...`, and `<bin>/memstore ... debrief --hook`). If one of
those files is gone (a package moved, a venv deleted, a clone elsewhere), python exits 2 on the
missing file, which Claude Code takes for a blocking hook error on every memory Read and Write. So
verify names each such registration, with the one command that rewrites them.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

LAUNCHERS = ("hookrun.py", "hookgate.sh")  # the files a registration names inside the package


def _commands(settings: dict[str, Any]) -> Iterator[tuple[str, str]]:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if isinstance(handler, dict) and isinstance(handler.get("command"), str):
                    yield str(event), handler["command"]


def _named_files(command: str) -> list[str]:
    """The memstore files a command runs: its launchers, and its program when that is a `memstore` script."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    found = [w for w in words if Path(w).name in LAUNCHERS and Path(w).parent.name == "memstore"]
    if words and Path(words[0]).name == "memstore" and "/" in words[0]:
        found.append(words[0])
    return found


def outdated(settings: dict[str, Any], package: Path) -> list[str]:
    """One line per memstore file that a registration names and that is missing or belongs to another
    memstore than the one at `package` (the folder holding hookrun.py), in the settings' order."""
    lines: list[str] = []
    for event, command in _commands(settings):
        for name in _named_files(command):
            path = Path(name)
            if not path.exists():
                why = f"{event} runs {name}, which no longer exists"
            elif path.name in LAUNCHERS and path.resolve().parent != package.resolve():
                why = f"{event} runs {name}, another memstore's (this one is {package})"
            else:
                continue
            if why not in lines:
                lines.append(why)
    return lines


_SHELL = set(";|&$`<>(){}\n\\*?[]~!#")  # a command with any of these is more than a program and its words


def not_this_hook(command: str, package: Path, python: str) -> str | None:
    """None when `command` is this memstore's hook as install registers it (`python -S <package>/hookrun.py
    ...` with this Python; `python -m memstore ... hook`; this install's `memstore ... hook`); else why not. verify runs
    a registered command on a probe: it must never run one a project's settings file chose."""
    if _SHELL & set(command):
        return "it is a shell command line, not memstore's hook"
    try:
        words = shlex.split(command)
    except ValueError:
        return "it cannot be read as words"
    if len(words) >= 3 and words[1] == "-S" and Path(words[2]) == package / "hookrun.py":
        return None if _same(words[0], python) else f"it runs another Python ({words[0]})"
    if len(words) >= 3 and words[1:3] == ["-m", "memstore"] and "hook" in words[3:]:
        return None if _same(words[0], python) else f"it runs another Python ({words[0]})"
    script = Path(python).parent / "memstore"
    if words and _same(words[0], str(script)) and "hook" in words[1:]:
        return None
    return f"it does not run this memstore's hook ({package / 'hookrun.py'})"


def _same(a: str, b: str) -> bool:
    try:
        return Path(a) == Path(b) or Path(a).samefile(b)
    except OSError:
        return False

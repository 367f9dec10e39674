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
    """The memstore files a command runs: its launchers, and its program when that is a
    `memstore` script."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    found = [w for w in words if Path(w).name in LAUNCHERS and Path(w).parent.name == "memstore"]
    if words and Path(words[0]).name == "memstore" and "/" in words[0]:
        found.append(words[0])
    return found


def outdated(settings: dict[str, Any], package: Path) -> list[str]:
    """One line per memstore file that a registration names and that is missing or belongs to
    another memstore than the one at `package` (the folder holding hookrun.py), in the settings'
    order."""
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


# what install puts after the launcher; a value's word follows these (any value: the argv is
# memstore's own)
_FLAGS = frozenset({"--plugin", "hook"})
_VALUED = {"--root": None, "--client": frozenset({"claude", "codex", "gemini"}), "--part": None,
           "--after": None}


def own_argv(command: str, package: Path, python: str) -> tuple[list[str] | None, str | None]:
    """(argv, None) when `command` is exactly what install registers for this memstore: `python
    -S <package>/hookrun.py ...` with this very Python, or this install's `memstore ... hook`,
    written as shlex.join writes it (a client's ` || true` aside), with only the options install
    writes. Else (None, why). verify runs that argv itself, never through a shell and from the
    root, so nothing a project's settings file spells (a carriage return the shell reads as a
    letter, a symlinked interpreter beside a pyvenv.cfg, a `memstore/` package in the folder for
    `-m`) can start anything of the project's."""
    body = command.removesuffix(" || true")
    try:
        words = shlex.split(body)
    except ValueError:
        return None, "it cannot be read as words"
    if not words or shlex.join(words) != body:
        return None, "it is not written as memstore's install writes it"
    if words[:3] == [python, "-S", str(package / "hookrun.py")]:
        rest = words[3:]
    elif words[0] == str(Path(python).parent / "memstore") and "hook" in words[1:]:
        rest = words[1:]
    else:
        return None, f"it does not run this memstore's hook ({python} -S {package / 'hookrun.py'})"
    args = iter(rest)
    for word in args:
        if word in _VALUED:
            value = next(args, None)
            allowed = _VALUED[word]
            if value is None or (allowed is not None and value not in allowed):
                return None, f"it passes {word} {value!r}, which install never writes"
        elif word not in _FLAGS:
            return None, f"it passes {word!r}, which install never writes"
    return words, None

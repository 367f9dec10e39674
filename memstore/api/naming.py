"""How the Store names a memory: a root-relative path (as results carry), an absolute path, a path
relative to cwd, or a bare name; and which project a call from cwd belongs to."""

from __future__ import annotations

import os
from pathlib import Path

from memstore.core.errors import BadUsage, NotFound


def key(root: Path, memory: str | os.PathLike[str]) -> str:
    """A memory named as results name it: an absolute path inside the root becomes root-relative."""
    text = os.fspath(memory)
    if not text:
        raise BadUsage("no memory named",
                       hint="give a name, or a path such as memory/feedback_x.md")
    if os.path.isabs(text):
        real = os.path.realpath(text)
        base = os.path.realpath(root)
        if real.startswith(base + os.sep):
            return os.path.relpath(real, base).replace(os.sep, "/")
    return text


def memory_file(root: Path, memory: str | os.PathLike[str]) -> Path:
    """The file a memory names: an absolute path, a path relative to cwd or to the root, or a
    name."""
    text = os.fspath(memory)
    target = Path(text).expanduser()
    if not target.is_absolute() and not target.exists():
        if (root / target).exists():
            target = root / target  # a path relative to the root, as results carry
        elif "/" not in text and os.sep not in text:
            stem = text[:-3] if text.endswith(".md") else text
            target = root / "memory" / f"{stem}.md"  # a name
    if not target.exists():
        raise NotFound(f"no such file: {target}",
                       hint="give a path under memory/, or a memory's name")
    if not target.is_file():
        raise NotFound(f"not a file: {target}")
    return target.absolute()


def note_file(root: Path, memory: str | os.PathLike[str]) -> Path:
    """Like memory_file, and a bare name also finds a T1 note or lesson (short-term/, its
    archive/)."""
    text = os.fspath(memory)
    stem = text[:-3] if text.endswith(".md") else text
    if "/" not in text and os.sep not in text and not (root / "memory" / f"{stem}.md").exists():
        for folder in ("short-term", "short-term/archive"):
            candidate = root / "memory" / folder / f"{stem}.md"
            if candidate.is_file():
                return candidate.absolute()
    return memory_file(root, memory)


def project(root: Path, cwd: str | os.PathLike[str] | None, everywhere: bool = False) -> str | None:
    """The project of cwd (memstore.core.projects), or None: person-wide (everywhere, or no
    project)."""
    from memstore.core.projects import project_of

    if everywhere:
        return None
    return project_of(os.fspath(cwd) if cwd else os.getcwd(), os.fspath(root))


def alias(named: str | os.PathLike[str], root: Path, *, must_be_dir: bool = True) -> Path | None:
    """The root as named, when a symlink leads to it (else None): install registers both spellings,
    since Claude Code matches its rules against the path a tool call gives."""
    spelled = Path(os.path.abspath(os.path.expanduser(os.fspath(named))))
    return spelled if spelled != root and (spelled.is_dir() or not must_be_dir) else None


def other_root_notice(found: str | os.PathLike[str]) -> str | None:
    """When the lookup found a root other than the one install recorded: a project holding its own
    memory/ folder wins by the lookup order; said every time."""
    from memstore.core.agent_root import installed_root

    installed = installed_root()
    if installed and os.path.realpath(installed) != os.path.realpath(found):
        return (f"using the agent root at {found} (a memory/ folder at or above here), not the "
                f"installed {installed}; pass --root to choose")
    return None

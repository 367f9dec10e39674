"""What Claude Code will do with the files memstore writes for it: where they live, and
whether the client honours them. `install` plans with it and `verify` judges with it.

The facts behind each rule were checked with the real binary (tests/e2e/test_claude_code.py
keeps checking them):
- `@` imports in user memory (~/.claude/CLAUDE.md, ~/.claude/rules/*.md) are always
  expanded; imports of files outside the project from the project's own memory files
  are expanded only after the person approved external imports once, which Claude Code
  keeps in its state file (~/.claude.json). No setting grants it.
- A read grant (`permissions.additionalDirectories`) works in ~/.claude/settings.json,
  and in the project's .claude/settings.local.json while git does not track that file;
  in the project's .claude/settings.json only once the folder's trust dialog was
  accepted.

memstore reads the state file to tell the person the truth; it never writes it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from memstore.core import processes
from memstore.core.processes import run_git


def user_dir() -> Path:
    """~/.claude, or $CLAUDE_CONFIG_DIR where the person moved it."""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(moved).expanduser() if moved else Path.home() / ".claude"


def state_file() -> Path:
    """Claude Code's private state file (trust and import approvals live there)."""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(moved).expanduser() / ".claude.json" if moved else Path.home() / ".claude.json"


def user_settings() -> Path:
    return user_dir() / "settings.json"


def user_rules_file() -> Path:
    """The user-memory file memstore owns: Claude Code loads every ~/.claude/rules/*.md."""
    return user_dir() / "rules" / "memstore.md"


def is_user_memory(path: Path) -> bool:
    """Is this a file Claude Code loads as user memory, where imports are always expanded?"""
    home = user_dir().resolve()
    real = path.expanduser().resolve()
    return real == home / "CLAUDE.md" or (real.parent == home / "rules" and real.suffix == ".md")


def inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def read_state() -> dict[str, Any]:
    """The state file as a dict; {} when absent or unreadable (a fresh install has none)."""
    try:
        data = json.loads(state_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _project_flag(state: dict[str, Any], project: Path, key: str, *, ancestors: bool) -> bool:
    projects = state.get("projects")
    if not isinstance(projects, dict):
        return False
    here = project.resolve()
    for folder in (here, *here.parents) if ancestors else (here,):
        entry = projects.get(str(folder))
        if isinstance(entry, dict) and entry.get(key) is True:
            return True
    return False


def external_imports_approved(state: dict[str, Any], project: Path) -> bool:
    return _project_flag(state, project, "hasClaudeMdExternalIncludesApproved", ancestors=False)


def trust_accepted(state: dict[str, Any], project: Path) -> bool:
    # Trust given to a folder covers the folders below it.
    return _project_flag(state, project, "hasTrustDialogAccepted", ancestors=True)


def _git(path: Path, *args: str) -> processes.CompletedProcess[str] | None:
    """`git -C <nearest existing folder of path> ARGS <path relative to it>`; None without git."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    if shutil.which("git") is None:
        return None
    try:
        rel = os.path.relpath(path, folder)
        # nothing the project's git config names runs
        return run_git(folder, *args, rel, timeout=10)
    except (OSError, ValueError, processes.TimeoutExpired):
        return None


def git_tracks(path: Path) -> bool | None:
    """True/False when `path` lies in a git work tree; None when there is no git or no
    repository."""
    probe = _git(path, "check-ignore", "--no-index", "-q")
    if probe is None or probe.returncode == 128:  # 128: not a repository (or no git at all)
        return None
    listed = _git(path, "ls-files", "--error-unmatch")
    return listed is not None and listed.returncode == 0


def git_ignores(path: Path) -> bool | None:
    """True/False when `path` lies in a git work tree; None when there is no git or no
    repository."""
    proc = _git(path, "check-ignore", "-q")  # 0 ignored, 1 not ignored, 128 not a repository
    if proc is None or proc.returncode not in (0, 1):
        return None
    return proc.returncode == 0


def git_toplevel(path: Path) -> Path | None:
    if shutil.which("git") is None or not path.is_dir():
        return None
    try:
        proc = run_git(path, "rev-parse", "--show-toplevel", timeout=10)
    except (OSError, processes.TimeoutExpired):
        return None
    return Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None


def grants_read(settings: dict[str, Any], root: Path) -> bool:
    """Does this settings object let Claude Code read files under root/memory without asking?"""
    permissions = settings.get("permissions")
    if not isinstance(permissions, dict):
        return False
    real = root.resolve()
    for folder in permissions.get("additionalDirectories") or []:
        if isinstance(folder, str) and folder and inside(real, Path(folder).expanduser()):
            return True
    for rule in permissions.get("allow") or []:
        if not isinstance(rule, str) or not rule.startswith("Read(//") or not rule.endswith(")"):
            continue
        pattern = rule[len("Read(/"):-1].rstrip("*").rstrip("/")
        if pattern and inside(real / "memory", Path(pattern)):
            return True
    return False

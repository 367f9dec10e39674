"""What a tool call's path is to memstore, by real path (symlinks and `..` resolved): a memory file,
a file of the person's, one memstore alone writes, or a client's wiring. Standard library only: the
hook judges every PreToolUse with these.
"""

from __future__ import annotations

import os

PATH_MAX = 4096  # Linux's limit for a whole path; longer is never a real file


def real_paths(root: str, file_path: object, cwd: str | None) -> tuple[str, str] | None:
    """(real path, real root) of a tool's file_path, or None when it cannot be a usable path.

    A path longer than the system allows is refused before realpath, whose cost grows
    with the square of its depth (a 300 KB path took seconds).
    """
    if not file_path or not isinstance(file_path, str) or "\x00" in file_path or len(file_path) > PATH_MAX:
        return None
    try:
        real = os.path.realpath(os.path.join(cwd or os.getcwd(), file_path))
        return real, os.path.realpath(root)
    except (OSError, ValueError):
        return None


def in_memory(root: str, file_path: object, cwd: str | None, *, derived: bool = False,
              teams: tuple[str, ...] = ()) -> bool:
    """Is the real path (symlinks and .. resolved) a markdown file inside root/memory/?

    Derived files count only with `derived` (reading MEMORY.md is fine; writing it is not).
    Names are compared without case: on macOS memory/memory.md is MEMORY.md. `teams`: a joined
    team's teams/<team>/memory/ counts too (for reads only: the agent never writes under teams/).
    """
    from memstore.core.kinds import DERIVED

    found = real_paths(root, file_path, cwd)
    if found is None:
        return False
    real, real_root = found
    memory = os.path.join(real_root, "memory")
    if not real.startswith(memory + os.sep):
        memory = next((folder for folder in (os.path.join(real_root, "teams", team, "memory") for team in teams)
                       if real.startswith(folder + os.sep)), "")
    if not memory or not real.endswith(".md"):
        return False
    rel = real[len(memory) + 1 :]
    if os.path.basename(real).startswith("."):
        return False  # hidden files are never indexed; approving them would hide a write
    return derived or rel.casefold() not in {name.casefold() for name in DERIVED}


def wiring_file(file_path: object, cwd: str | None) -> str | None:
    """Claude Code's settings files (user and project) and memstore's rules file, by real path."""
    found = real_paths(os.sep, file_path, cwd)
    if found is None:
        return None
    real = found[0]
    user = os.path.realpath(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude"))
    names = {os.path.join(user, "settings.json"), os.path.join(user, "settings.local.json"),
             os.path.join(user, "rules", "memstore.md")}
    if cwd:
        project = os.path.join(os.path.realpath(cwd), ".claude")
        names |= {os.path.join(project, "settings.json"), os.path.join(project, "settings.local.json")}
    if real in names:
        return "Claude Code's settings (they hold memstore's wiring)"
    if real.startswith(os.path.join(user, "plugins") + os.sep) or real == os.path.realpath(
            os.path.join(os.path.expanduser("~"), ".local", "bin", "memstore")):
        # the plugins' code and data (memstore's hooks and the venv its cron jobs run), and the command Setup linked
        return "Claude Code's plugins and memstore's command (the code memstore's hooks and jobs run)"
    from memstore.core.agent_root import user_config_file

    if real == os.path.realpath(user_config_file()):  # the root `install --scope user` recorded: where trust acts
        return "memstore's own config (the root it acts on)"
    # Codex's and Gemini CLI's own: with them rewritten, the next session starts without memstore's hooks
    home = os.path.expanduser("~")
    codex = os.path.realpath(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex"))
    others = {os.path.join(codex, "hooks.json"), os.path.join(codex, "config.toml"),
              os.path.join(os.path.realpath(home), ".gemini", "settings.json")}
    if cwd:
        others.add(os.path.join(os.path.realpath(cwd), ".gemini", "settings.json"))
    return "the client's settings (they hold memstore's wiring)" if real in others else None


def inside_root(root: str, file_path: object, cwd: str | None) -> str | None:
    """The posix path relative to the root of a tool's file whose real path lies inside the root, else None."""
    found = real_paths(root, file_path, cwd)
    if found is None:
        return None
    real, real_root = found
    if not real.startswith(real_root + os.sep):
        return None
    return real[len(real_root) + 1 :].replace(os.sep, "/")


def machine_file(root: str, file_path: object, cwd: str | None) -> str | None:
    """runtime/ (the journal, the mirror, state) and the derived files, by real path: written by memstore
    alone (access.MACHINE_OWNED). An agent that wrote a journal line would be forging reads of its own
    memories; one that wrote MEMORY.md would skip the inert render the client's import relies on."""
    from memstore.core.access import machine_owned

    rel = inside_root(root, file_path, cwd)
    if rel is None or not machine_owned(rel):
        return None
    if rel.casefold().startswith("runtime"):
        return "runtime/ (memstore's own state)"
    return f"{rel} (memstore's: rendered, or its archive)"


def person_file(root: str, file_path: object, cwd: str | None) -> str | None:
    """The root-relative path when a tool's file is one the person owns (identity.md, lenses/ ...)."""
    from memstore.core.access import person_owned

    rel = inside_root(root, file_path, cwd)
    return rel if rel is not None and person_owned(rel) else None


def outside(root: str, cwd: str | None) -> bool:
    """Is the root outside the session's project? Only then do reads need our approval."""
    if not cwd:
        return False
    project = os.path.realpath(cwd)
    real = os.path.realpath(root)
    return real != project and not real.startswith(project.rstrip(os.sep) + os.sep)


def within(cwd: str | None, root: str) -> bool:
    """Does the shell stand in the root (a bare file name there may be the person's)?"""
    if not cwd:
        return False
    real, base = os.path.realpath(cwd), os.path.realpath(root)
    return real == base or real.startswith(base + os.sep)

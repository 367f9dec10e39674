"""What a tool call's path is to memstore besides a memory, by real path: a file of the person's,
one memstore alone writes, or a client's wiring. Each takes the path as core.toolpath resolved it
once for the call. Standard library only: the hook judges every PreToolUse with these.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    from memstore.core.toolpath import Resolved


def wiring_file(found: Resolved | None, cwd: str | None) -> str | None:
    """Claude Code's settings files (user and project) and memstore's rules file, by real path."""
    if found is None:
        return None
    real = found.real
    home = os.path.expanduser("~")
    user = os.path.realpath(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"))
    names = {os.path.join(user, "settings.json"), os.path.join(user, "settings.local.json"),
             os.path.join(user, "rules", "memstore.md")}
    project = os.path.realpath(cwd) if cwd else None
    if project:
        names |= {os.path.join(project, ".claude", "settings.json"),
                  os.path.join(project, ".claude", "settings.local.json")}
    if real in names:
        return "Claude Code's settings (they hold memstore's wiring)"
    if real.startswith(os.path.join(user, "plugins") + os.sep) or real == os.path.realpath(
            os.path.join(home, ".local", "bin", "memstore")):
        # the plugins' code and data (memstore's hooks, the venv its cron jobs run), and the
        # command Setup linked
        return ("Claude Code's plugins and memstore's command (the code memstore's hooks and "
                "jobs run)")
    from memstore.core.agent_root import user_config_file

    # the root `install --scope user` recorded: where trust acts
    if real == os.path.realpath(user_config_file()):
        return "memstore's own config (the root it acts on)"
    # Codex's and Gemini CLI's own: rewritten, the next session starts without memstore's hooks
    codex = os.path.realpath(os.environ.get("CODEX_HOME") or os.path.join(home, ".codex"))
    others = {os.path.join(codex, "hooks.json"), os.path.join(codex, "config.toml"),
              os.path.join(os.path.realpath(home), ".gemini", "settings.json")}
    if project:
        others.add(os.path.join(project, ".gemini", "settings.json"))
    return "the client's settings (they hold memstore's wiring)" if real in others else None


def machine_file(found: Resolved | None) -> str | None:
    """runtime/ (the journal, the mirror, state) and the derived files, by real path: written by
    memstore alone (access.MACHINE_OWNED). An agent that wrote a journal line would be forging
    reads of its own memories; one that wrote MEMORY.md would skip the inert render the client's
    import relies on."""
    from memstore.core.access import machine_owned

    rel = found.rel() if found is not None else None
    if rel is None or not machine_owned(rel):
        return None
    if rel.casefold().startswith("runtime"):
        return "runtime/ (memstore's own state)"
    return f"{rel} (memstore's: rendered, or its archive)"


def person_file(found: Resolved | None) -> str | None:
    """The root-relative path when the tool's file is the person's (identity.md, lenses/ ...)."""
    from memstore.core.access import person_owned

    rel = found.rel() if found is not None else None
    return rel if rel is not None and person_owned(rel) else None


def outside(real_root: str, cwd: str | None) -> bool:
    """Is the (resolved) root outside the session's project? Only then do reads need approval."""
    if not cwd:
        return False
    project = os.path.realpath(cwd)
    return real_root != project and not real_root.startswith(project.rstrip(os.sep) + os.sep)


def within(cwd: str | None, real_root: str) -> bool:
    """Does the shell stand in the (resolved) root (a bare file name there may be the person's)?"""
    if not cwd:
        return False
    real = os.path.realpath(cwd)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)

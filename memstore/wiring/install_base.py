"""What every installer shares (install, install_mcp, install_clients, protect, cron, verify): how
this memstore is run (memstore_command, hook_command), how memstore's own registrations are known,
reading and writing a settings file, and the plan every installer builds (InstallPlan of Changes,
shown as a diff, written on --apply). Below all of them, so none imports another for these.
"""

from __future__ import annotations

import difflib
import itertools
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstore.core.agent_root import installed_root, user_config_file
from memstore.core.errors import MemstoreError
from memstore.core.kinds import MCP_TOOLS, WRITE_TOOLS
from memstore.core.locks import atomic_write
from memstore.wiring import install_record

HOOK_TIMEOUT_S = 10
# SessionEnd's debrief syncs, renders and reads the transcript: more than a tool hook's 10 s.
DEBRIEF_TIMEOUT_S = 60
BEGIN = ("<!-- memstore:begin (managed by `memstore install`; "
         "edits between these lines are replaced) -->")
END = "<!-- memstore:end -->"
_OUR_COMMAND = re.compile(
    r"(memstore\S*(\s.*)?\shook|memstore/hookrun\.py(\s.*)?"
    r"|memstore\S*(\s.*)?\sdebrief\s+--hook(\s+--detach)?)\s*$")
# memstore's own MCP tools by exact name (kinds.MCP_TOOLS), never a prefix.
MCP_MATCHER = "^mcp__memstore__({})$".format("|".join(MCP_TOOLS))
MCP_NAME = "memstore"  # the server's name in .mcp.json and `claude mcp add`


class InstallError(MemstoreError):
    """A file we would merge into is not in a shape we can merge safely."""


# ---------------------------------------------------------------- how memstore is run


def memstore_command() -> list[str]:
    """How to run this very installation of memstore, as an absolute command."""
    beside = Path(sys.executable).parent / "memstore"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("memstore")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "memstore"]


def hook_command(root: Path, *extra: str) -> str:
    """`python -S .../memstore/hookrun.py --root ROOT`: the same code as `memstore hook`,
    started without site-packages, which the standard-library-only hook does not need (see
    hookrun.py)."""
    launcher = Path(__file__).resolve().parents[1] / "hookrun.py"
    return shlex.join([sys.executable, "-S", str(launcher), "--root", str(root), *extra])


def debrief_command(root: Path) -> str:
    """`<memstore> --root ROOT debrief --hook --detach`: the end-of-session debrief, as SessionEnd
    runs it; detached, so the client does not wait for it before it exits."""
    return shlex.join([*memstore_command(), "--root", str(root), "debrief", "--hook", "--detach"])


# ---------------------------------------------------------------- memstore's registrations


def approved_tools(reads: bool) -> tuple[str, ...]:
    """The tools whose memory-file calls the PreToolUse hook approves (reads only for a root
    outside the project)."""
    return (*WRITE_TOOLS, "Read") if reads else WRITE_TOOLS


def is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and isinstance(handler.get("command"), str) and bool(
        _OUR_COMMAND.search(handler["command"])
    )


def names_root(command: str, root: Path) -> bool:
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return any(a == "--root" and os.path.realpath(b) == os.path.realpath(root)
               for a, b in itertools.pairwise(words))


def has_mcp_approval(settings: dict[str, Any]) -> bool:
    groups = ((settings.get("hooks") or {}).get("PreToolUse")
              if isinstance(settings.get("hooks"), dict) else None)
    return isinstance(groups, list) and any(
        isinstance(g, dict) and str(g.get("matcher", "")).startswith("^mcp__memstore__")
        for g in groups)


# ---------------------------------------------------------------- settings files


def read_settings(path: Path) -> tuple[str | None, dict[str, Any]]:
    if not path.exists():
        return None, {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc})",
                           hint="fix it, then run install again") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object",
                           hint="fix it, then run install again")
    return text, data


def json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def hooks_of(settings: dict[str, Any]) -> dict[str, Any]:
    """settings["hooks"] when it is an object, else {} (nothing of it can be ours)."""
    hooks = settings.get("hooks")
    return hooks if isinstance(hooks, dict) else {}


def permission_list(settings: dict[str, Any], key: str) -> list[Any]:
    """settings["permissions"][key], made when absent; InstallError when either is of another
    shape."""
    permissions = settings.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise InstallError("settings has a 'permissions' value that is not an object",
                           hint="fix it by hand first")
    found = permissions.setdefault(key, [])
    if not isinstance(found, list):
        raise InstallError(f"permissions.{key} is not a list", hint="fix it by hand first")
    return found


# ---------------------------------------------------------------- the plan


def _handlers(hooks: object) -> dict[str, int]:
    """How many hook handlers a settings file's `hooks` holds, by event."""
    if not isinstance(hooks, dict):
        return {}
    return {event: sum(len(group.get("hooks") or []) if isinstance(group, dict) else 0
                       for group in groups) if isinstance(groups, list) else 0
            for event, groups in hooks.items()}


@dataclass
class Change:
    path: Path
    before: str | None
    after: str
    write: Callable[[], None] | None = None  # how to write it when not as a plain file (a crontab)
    # uninstall: install made this file and nothing else is left in it (install_record)
    remove: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after or self.remove

    def summary(self) -> str:
        """The change in one line: for a settings file, its hook handlers by event and the other
        keys it touches; for any other file, lines added and taken out."""
        if self.remove:
            return f"{self.path}: removed (install made it, and nothing else is in it)"
        try:
            old, new = json.loads(self.before or "{}"), json.loads(self.after)
        except ValueError:
            old = new = None
        if isinstance(old, dict) and isinstance(new, dict):
            said = []
            hooks = [_handlers(old.get("hooks")), _handlers(new.get("hooks"))]
            for event in sorted(set(hooks[0]) | set(hooks[1])):
                step = hooks[1].get(event, 0) - hooks[0].get(event, 0)
                if step:
                    said.append(f"{event} {step:+d}")
            keys = [k for k in sorted(set(old) | set(new))
                    if k != "hooks" and old.get(k) != new.get(k)]
            parts = ([f"hook handlers {', '.join(said)}"] if said else []) + (
                [f"also {', '.join(keys)}"] if keys else [])
            return f"{self.path}: {'; '.join(parts) or 'reformatted'}"
        lines = self.diff().splitlines()[2:]  # past the two file headers
        added = sum(1 for line in lines if line.startswith("+"))
        gone = sum(1 for line in lines if line.startswith("-"))
        return f"{self.path}: {added} line(s) added, {gone} taken out"

    def diff(self) -> str:
        if self.remove:
            return (f"--- {self.path} (now)\n"
                    "+++ /dev/null (removed: install made it, and nothing else is in it)\n")
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
                tofile=f"{self.path} (after)",
            )
        )


@dataclass
class InstallPlan:
    changes: list[Change] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)  # what the person must still do by hand
    # the verify arguments that fit this plan, when not the layout's own
    verify_with: str | None = None
    # whose install this is: the files it creates are recorded there (install_record)
    root: Path | None = None

    def apply(self) -> list[Path]:
        compile_package()
        written, made, removed = [], [], []
        for change in self.changes:
            if change.remove:
                change.path.unlink(missing_ok=True)
                if change.path.parent.name == ".claude":
                    try:
                        change.path.parent.rmdir()  # only when empty: nothing else was in it
                    except OSError:
                        pass
                written.append(change.path)
                removed.append(change.path)
            elif change.changed and change.write is not None:
                change.write()
                written.append(change.path)
            elif change.changed:
                change.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(change.path, change.after.encode("utf-8"))
                written.append(change.path)
                if change.before is None:
                    made.append(change.path)
        if self.root is not None:
            install_record.record(self.root, made, removed)
        return written


def compile_package() -> None:
    """Write the package's bytecode now, so the hook never compiles source at start-up.

    Compiling costs more than the hook's own work; an environment with
    PYTHONDONTWRITEBYTECODE set would otherwise pay it on every call.
    """
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parents[1]), quiet=2, force=False)


def plan_root_record(plan: InstallPlan, root: Path, *, remove: bool = False) -> None:
    """Record (or, removing, forget) the person's agent root in memstore's user config file, so
    the CLI and the MCP server find it from any folder (agent_root.installed_root)."""
    target = Path(user_config_file())
    before = target.read_text(encoding="utf-8") if target.is_file() else None
    kept = [line for line in (before or "").splitlines() if not re.match(r"\s*root\s*=", line)]
    if remove:
        named = installed_root()
        if before is None or named is None or os.path.realpath(named) != os.path.realpath(root):
            return
        after = "\n".join(kept).strip("\n")
        plan.changes.append(Change(target, before, after + "\n" if after else ""))
        return
    head = "# memstore's own settings for this person (written by memstore install --scope user)"
    lines = [line for line in kept if line != head]
    after = "\n".join([head, f"root = {json.dumps(str(root))}", *lines]).rstrip("\n") + "\n"
    plan.changes.append(Change(target, before, after))

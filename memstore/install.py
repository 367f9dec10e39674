"""Wire memstore into Claude Code: hook registrations, CLAUDE.md imports, the nightly cron line.

Everything is planned first and shown as a diff; --apply writes it. Merging is
idempotent: our earlier registrations are recognised by their command and replaced,
every other key and every other hook in settings.json is kept as it was, and running
install twice changes nothing the second time.

Registrations (why each looks the way it does is in hook.py's docstring):
- PostToolUse Read/Edit/Write/MultiEdit, filtered with `if` to files under memory/, so
  a hook process starts only for memory files: reinforcement.
- PreToolUse Write/Edit/MultiEdit filtered the same way: approvals.
- PreToolUse with a matcher that is the union of the lenses' tool_match: lenses.
- SessionStart: the cold-start bundle.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstore.errors import MemstoreError

REINFORCING = ("Read", "Edit", "Write", "MultiEdit")
APPROVED = ("Write", "Edit", "MultiEdit")
HOOK_TIMEOUT_S = 10
BEGIN = "<!-- memstore:begin (managed by `memstore install`; edits between these lines are replaced) -->"
END = "<!-- memstore:end -->"
CRON_MARK = "# memstore nightly tick"
_OUR_COMMAND = re.compile(r"(memstore\S*(\s.*)?\shook|memstore/hookrun\.py(\s.*)?)\s*$")


class InstallError(MemstoreError):
    """A file we would merge into is not in a shape we can merge safely."""


def memstore_command() -> list[str]:
    """How to run this very installation of memstore, as an absolute command."""
    beside = Path(sys.executable).parent / "memstore"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("memstore")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "memstore"]


def hook_command(root: Path) -> str:
    """`python -S .../memstore/hookrun.py --root ROOT`: the same code as `memstore hook`, started
    without site-packages, which the standard-library-only hook does not need (see hookrun.py)."""
    launcher = Path(__file__).resolve().parent / "hookrun.py"
    return shlex.join([sys.executable, "-S", str(launcher), "--root", str(root)])


def permission_glob(tool: str, root: Path) -> str:
    # Claude Code's permission-rule syntax: `//` marks an absolute path.
    return f"{tool}(/{root.as_posix()}/memory/**)"


def registrations(root: Path, command: str, lens_matcher: str | None) -> dict[str, list[dict[str, Any]]]:
    def handler(extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S, **(extra or {})}

    pre = [{"matcher": tool, "hooks": [handler({"if": permission_glob(tool, root)})]} for tool in APPROVED]
    if lens_matcher:
        pre.append({"matcher": lens_matcher, "hooks": [handler()]})
    return {
        "SessionStart": [{"hooks": [handler()]}],
        "PreToolUse": pre,
        "PostToolUse": [
            {"matcher": tool, "hooks": [handler({"if": permission_glob(tool, root)})]} for tool in REINFORCING
        ],
    }


def is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and isinstance(handler.get("command"), str) and bool(
        _OUR_COMMAND.search(handler["command"])
    )


def merge_settings(existing: dict[str, Any], regs: dict[str, list[dict[str, Any]]], disable_auto_memory: bool
                   ) -> dict[str, Any]:
    merged = json.loads(json.dumps(existing))  # a deep copy that keeps key order
    hooks = merged.get("hooks")
    if hooks is None:
        hooks = merged["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InstallError("settings.json has a 'hooks' value that is not an object", hint="fix it by hand first")
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                others = [h for h in group["hooks"] if not is_ours(h)]
                if not others and group["hooks"]:
                    continue  # the group held only our handlers
                group = {**group, "hooks": others}
            kept.append(group)
        hooks[event] = kept
    for event, groups in regs.items():
        hooks.setdefault(event, [])
        hooks[event] = [*hooks[event], *groups]
    for event in [e for e, groups in hooks.items() if groups == []]:
        del hooks[event]
    if disable_auto_memory:
        # One writer owns memory: Claude Code's own auto memory would be a second one.
        merged["autoMemoryEnabled"] = False
    return merged


def import_lines(root: Path, claude_md: Path) -> list[str]:
    lines = []
    for target in (root / "identity.md", root / "memory" / "MEMORY.md"):
        try:
            rel = target.relative_to(claude_md.parent.resolve())
            lines.append(f"@{rel.as_posix()}")
        except ValueError:
            lines.append(f"@{target.as_posix()}")
    return lines


def merge_claude_md(text: str, lines: list[str]) -> str:
    block = "\n".join([BEGIN, *lines, END])
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if pattern.search(text):
        return pattern.sub(lambda _m: block, text, count=1)
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text else "") + block + "\n"


def cron_lines(root: Path, hour: int = 3, minute: int = 30) -> list[str]:
    command = shlex.join([*memstore_command(), "--root", str(root), "tick"])
    log = shlex.quote(str(root / "runtime" / "state" / "tick.log"))
    return [f"{CRON_MARK} for {root}", f"{minute} {hour} * * * {command} >> {log} 2>&1"]


def merge_crontab(text: str, root: Path) -> str:
    lines = text.splitlines()
    out: list[str] = []
    skip = False
    for line in lines:
        if line == f"{CRON_MARK} for {root}":
            skip = True
            continue
        if skip:
            skip = False
            continue
        out.append(line)
    out.extend(cron_lines(root))
    return "\n".join(out) + "\n"


@dataclass
class Change:
    path: Path
    before: str | None
    after: str
    system_crontab: bool = False  # written with `crontab -`, not to a file

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
                tofile=f"{self.path} (after install)",
            )
        )


@dataclass
class InstallPlan:
    changes: list[Change] = field(default_factory=list)

    def apply(self) -> list[Path]:
        from memstore.locks import atomic_write

        compile_package()
        written = []
        for change in self.changes:
            if change.changed and change.system_crontab:
                write_system_crontab(change.after)
                written.append(change.path)
            elif change.changed:
                change.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(change.path, change.after.encode("utf-8"))
                written.append(change.path)
        return written


def compile_package() -> None:
    """Write the package's bytecode now, so the hook never compiles source at start-up.

    Compiling costs more than the hook's own work; an environment with
    PYTHONDONTWRITEBYTECODE set would otherwise pay it on every call.
    """
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parent), quiet=2, force=False)


def read_settings(path: Path) -> tuple[str | None, dict[str, Any]]:
    if not path.exists():
        return None, {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc})", hint="fix it, then run install again") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object", hint="fix it, then run install again")
    return text, data


def plan_install(
    root: Path,
    settings: Path,
    claude_md: Path,
    lens_matcher: str | None,
    *,
    disable_auto_memory: bool = True,
    crontab_file: Path | None = None,
    crontab_text: str | None = None,
) -> InstallPlan:
    """crontab_file: merge the cron line into that file; crontab_text: into the user's crontab."""
    plan = InstallPlan()
    before, data = read_settings(settings)
    merged = merge_settings(data, registrations(root, hook_command(root), lens_matcher), disable_auto_memory)
    plan.changes.append(Change(settings, before, json.dumps(merged, indent=2, ensure_ascii=False) + "\n"))
    md_before = claude_md.read_text(encoding="utf-8") if claude_md.exists() else None
    plan.changes.append(Change(claude_md, md_before, merge_claude_md(md_before or "", import_lines(root, claude_md))))
    if crontab_file is not None:
        cron_before = crontab_file.read_text(encoding="utf-8") if crontab_file.exists() else None
        plan.changes.append(Change(crontab_file, cron_before, merge_crontab(cron_before or "", root)))
    elif crontab_text is not None:
        plan.changes.append(
            Change(Path("crontab"), crontab_text, merge_crontab(crontab_text, root), system_crontab=True)
        )
    return plan


def read_system_crontab() -> str:
    """The user's crontab through `crontab -l` ('' when there is none yet)."""
    import subprocess

    if shutil.which("crontab") is None:
        raise InstallError("no `crontab` command on this machine", hint="install cron, or pass --crontab-file F")
    proc = subprocess.run(["crontab", "-l"], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        if "no crontab" in proc.stderr.lower():
            return ""
        raise InstallError(f"crontab -l failed: {proc.stderr.strip()}")
    return proc.stdout


def write_system_crontab(text: str) -> None:
    import subprocess

    proc = subprocess.run(["crontab", "-"], input=text, capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise InstallError(f"crontab - failed: {proc.stderr.strip()}")

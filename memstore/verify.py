"""`memstore verify`: prove the wiring on the real files, then prove a Read really reinforces.

Each check says what is wrong and what to run. The last check feeds a synthetic
PostToolUse Read of a throwaway probe memory through the command registered in
settings.json, exactly as Claude Code would run it, and looks at the policy state
that results; the probe file is removed again afterwards.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shlex
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstore import mirror
from memstore.config import Config
from memstore.install import APPROVED, BEGIN, CRON_MARK, END, REINFORCING, is_ours
from memstore.locations import db_path

PROBE = "process_memstore-verify-probe"


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _handlers(settings: dict[str, Any], event: str) -> list[tuple[str | None, dict[str, Any]]]:
    found = []
    for group in (settings.get("hooks") or {}).get(event) or []:
        if isinstance(group, dict):
            for handler in group.get("hooks") or []:
                if is_ours(handler):
                    found.append((group.get("matcher"), handler))
    return found


def check_settings(settings_path: Path, root: Path, lens_matcher: str | None) -> tuple[list[Check], str | None]:
    fix = f"memstore --root {root} install --apply --settings {settings_path}"
    if not settings_path.is_file():
        return [Check("settings", False, f"{settings_path} does not exist", fix)], None
    try:
        settings = json.loads(settings_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [Check("settings", False, f"{settings_path} is not readable JSON ({exc})", "fix the file by hand")], None
    checks = [Check("settings", True, str(settings_path))]
    command = None
    for event, tools in (("SessionStart", (None,)), ("PreToolUse", APPROVED), ("PostToolUse", REINFORCING)):
        handlers = _handlers(settings, event)
        for tool in tools:
            hit = [h for m, h in handlers if tool is None or m == tool]
            label = f"hook {event}" + (f" {tool}" if tool else "")
            if not hit:
                checks.append(Check(label, False, "not registered", fix))
                continue
            handler = hit[0]
            command = command or handler["command"]
            if tool and str(root) not in str(handler.get("if", "")):
                checks.append(Check(label, False, f"filter {handler.get('if')!r} does not name {root}/memory", fix))
            else:
                checks.append(Check(label, True, "registered"))
    if lens_matcher:
        matchers = [m for m, h in _handlers(settings, "PreToolUse") if "if" not in h]
        ok = lens_matcher in matchers
        checks.append(Check("hook PreToolUse lenses", ok, f"matcher {lens_matcher!r}" if ok else
                            f"lenses listen to {lens_matcher!r} but the registration has {matchers or 'none'}", fix))
    if command:
        program = shlex.split(command)[0]
        exists = Path(program).is_file() and os.access(program, os.X_OK)
        checks.append(Check("hook command", exists, program if exists else f"{program} is not an executable file",
                            fix))
    return checks, command


def check_claude_md(claude_md: Path, root: Path) -> list[Check]:
    fix = f"memstore --root {root} install --apply --claude-md {claude_md}"
    if not claude_md.is_file():
        return [Check("CLAUDE.md", False, f"{claude_md} does not exist", fix)]
    text = claude_md.read_text(encoding="utf-8", errors="replace")
    match = re.search(re.escape(BEGIN) + r"(.*?)" + re.escape(END), text, re.S)
    if not match:
        return [Check("CLAUDE.md", False, "no memstore import block", fix)]
    checks = []
    for line in match.group(1).split("\n"):
        if line.startswith("@"):
            target = Path(line[1:]).expanduser()
            if not target.is_absolute():
                target = claude_md.parent / target
            hint = "memstore render" if target.name == "MEMORY.md" else f"create {target}"
            checks.append(Check(f"import {line}", target.is_file(),
                                "resolves" if target.is_file() else f"{target} does not exist", hint))
    return checks or [Check("CLAUDE.md", False, "import block is empty", fix)]


def check_index(root: Path, config: Config) -> Check:
    index = root / "memory" / "MEMORY.md"
    if not index.is_file():
        return Check("index", False, "memory/MEMORY.md does not exist", "memstore render")
    data = index.read_bytes()
    lines = len(data.decode("utf-8", "replace").splitlines())
    ok = lines <= config.index_max_lines and len(data) <= config.index_max_bytes
    detail = f"{lines} lines, {len(data):,} bytes (limits {config.index_max_lines}, {config.index_max_bytes:,})"
    return Check("index", ok, detail, "memstore render")


def check_mirror(root: Path) -> Check:
    try:
        conn = mirror.open_checked(db_path(root))
    except mirror.MirrorUnhealthy as exc:
        return Check("mirror", False, exc.reason, "memstore rebuild")
    try:
        result = conn.execute("PRAGMA quick_check").fetchone()[0]
    finally:
        conn.close()
    return Check("mirror", result == "ok", f"quick_check: {result}", "memstore rebuild")


def check_cron(crontab_text: str, root: Path) -> Check:
    ok = f"{CRON_MARK} for {root}" in crontab_text
    return Check("cron", ok, "nightly tick installed" if ok else "no nightly tick line",
                 f"memstore --root {root} install --apply --cron")


def check_reinforcement(root: Path, command: str, now: dt.datetime) -> Check:
    """Run the registered command on a synthetic Read of a probe memory and look at its state."""
    from memstore.sync import sync

    probe = root / "memory" / f"{PROBE}.md"
    probe.write_text(f"---\nname: {PROBE}\ntype: process\nsummary: written and removed by memstore verify\n---\n")
    try:
        sync(root)
        payload = {"hook_event_name": "PostToolUse", "session_id": "memstore-verify", "cwd": str(root),
                   "tool_name": "Read", "tool_input": {"file_path": str(probe)}}
        env = {**os.environ, "MEMSTORE_NOW": now.strftime("%Y-%m-%dT%H:%M:%SZ")}
        try:
            proc = subprocess.run(shlex.split(command), input=json.dumps(payload), capture_output=True, text=True,
                                  timeout=30, env=env)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Check("reinforcement", False, f"the registered command could not run: {exc}",
                         "memstore install --apply")
        conn = sqlite3.connect(db_path(root))
        try:
            row = conn.execute("SELECT access_count, last_accessed FROM policy WHERE path = ?",
                               (f"memory/{PROBE}.md",)).fetchone()
        finally:
            conn.close()
        if proc.returncode != 0:
            return Check("reinforcement", False, f"hook exited {proc.returncode}: {proc.stderr.strip()[:200]}")
        if not row or row[0] != 1:
            return Check("reinforcement", False, f"a Read through the hook left the probe at {row}",
                         f"see {root}/runtime/state/hook-errors.log")
        return Check("reinforcement", True, f"a Read through the registered hook moved the probe to "
                                            f"access_count {row[0]}, last_accessed {row[1]}")
    finally:
        probe.unlink(missing_ok=True)
        sync(root)

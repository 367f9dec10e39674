"""`memstore hook`: the Claude Code command hook. Standard library only; always exits 0.

One JSON object arrives on stdin, as Claude Code sends it. By `hook_event_name`:

- PostToolUse of Read, Edit, Write, MultiEdit on a T2 memory: reinforcement, through
  policy.record_touch (a journal line, then one SQLite transaction). Post, not Pre, so
  only tool calls that really ran are counted; registered synchronously, because an
  async handler of the last tool call before a `claude -p` session ends never runs and
  that touch would be lost. Registration filters (`if`) start this process only for
  files under memory/, so other reads cost nothing.
- PreToolUse: approve Write/Edit/MultiEdit of markdown files whose real path lies in
  memory/ (never identity.md, lenses/, meditations/, derived files or anything else),
  and deliver matching lenses as additionalContext, once per session each.
- SessionStart: the cold-start bundle as additionalContext.

Every failure is written to runtime/state/hook-errors.log and swallowed: a memory
bookkeeping bug must never stop the agent from working.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import Any

MAX_STDIN = 4 * 1024 * 1024  # a hook payload is small; anything larger is not ours to parse
WRITE_TOOLS = ("Write", "Edit", "MultiEdit")


def _now(argv_now: str | None) -> dt.datetime:
    from memstore.timeutil import parse_now

    try:
        return parse_now(argv_now if argv_now is not None else os.environ.get("MEMSTORE_NOW"))
    except ValueError:
        return parse_now(None)


def _args(argv: list[str]) -> tuple[str | None, str | None]:
    root = now = None
    items = iter(argv)
    for arg in items:
        if arg == "--root":
            root = next(items, None)
        elif arg.startswith("--root="):
            root = arg.split("=", 1)[1]
        elif arg == "--now":
            now = next(items, None)
        elif arg.startswith("--now="):
            now = arg.split("=", 1)[1]
    return root, now


def _find_root(explicit: str | None, payload: dict[str, Any]) -> Path | None:
    for candidate in (explicit, os.environ.get("MEMSTORE_ROOT")):
        if candidate and Path(candidate).is_dir():
            return Path(candidate).resolve()
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        here = Path(cwd)
        for folder in (here, *here.parents):
            if (folder / "memory").is_dir():
                return folder.resolve()
    return None


def _log(root: Path | None, message: str) -> None:
    if root is None:
        return
    try:
        log = root / "runtime" / "state" / "hook-errors.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        if log.exists() and log.stat().st_size > 1_000_000:
            os.replace(log, log.with_suffix(".log.1"))  # keep the log from growing without end
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {message}\n")
    except OSError:
        pass


def read_payload(stream: Any) -> dict[str, Any] | None:
    raw = stream.read(MAX_STDIN + 1)
    if len(raw) > MAX_STDIN:
        return None
    try:
        payload = json.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def in_memory(root: Path, file_path: str, cwd: str | None) -> bool:
    """Is the real path (symlinks and .. resolved) a markdown file inside root/memory/, not derived?"""
    from memstore.paths import DERIVED

    if not file_path or not isinstance(file_path, str) or "\x00" in file_path:
        return False
    path = Path(file_path)
    if not path.is_absolute():
        path = Path(cwd or os.getcwd()) / path
    try:
        real = Path(os.path.realpath(path))
        memory = Path(os.path.realpath(root / "memory"))
        rel = real.relative_to(memory)
    except (ValueError, OSError):
        return False
    if not rel.parts or real.suffix != ".md":
        return False
    return not (len(rel.parts) == 1 and rel.parts[0] in DERIVED)


def _tool_input(payload: dict[str, Any]) -> tuple[str, str | None]:
    tool = payload.get("tool_name")
    tool = tool if isinstance(tool, str) else ""
    data = payload.get("tool_input")
    file_path = data.get("file_path") if isinstance(data, dict) else None
    return tool, file_path if isinstance(file_path, str) else None


def _session(payload: dict[str, Any]) -> str | None:
    session = payload.get("session_id")
    return session if isinstance(session, str) and session else None


def handle(payload: dict[str, Any], root: Path, now: dt.datetime) -> dict[str, Any] | None:
    """The response object for one payload (None: print nothing)."""
    from memstore.config import Config, ConfigError, load_config

    try:
        config = load_config(root)
    except ConfigError as exc:
        _log(root, f"config: {exc}; using defaults")
        config = Config()
    event = payload.get("hook_event_name")
    tool, file_path = _tool_input(payload)
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None

    if event == "PostToolUse":
        from memstore.policy import REINFORCING_TOOLS, record_touch

        if tool in REINFORCING_TOOLS and file_path:
            result = record_touch(root, file_path, tool, now, config, session=_session(payload),
                                  cwd=Path(cwd) if cwd else None)
            if result.recorded and not result.applied:
                _log(root, f"touch of {result.rel} journaled only: {result.message}")
        return None

    if event == "PreToolUse":
        output: dict[str, Any] = {"hookEventName": "PreToolUse"}
        if tool in WRITE_TOOLS and file_path and in_memory(root, file_path, cwd):
            output["permissionDecision"] = "allow"
            output["permissionDecisionReason"] = "memstore: writes to memory files are pre-approved"
        texts = _lens_texts(root, tool, file_path, _session(payload), now, config)
        if texts:
            output["additionalContext"] = "\n\n".join(texts)
        return {"hookSpecificOutput": output} if len(output) > 1 else None

    if event == "SessionStart":
        from memstore.context import bundle

        text = bundle(root, now, config)
        return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return None


def _lens_texts(root: Path, tool: str, file_path: str | None, session: str | None, now: dt.datetime,
                config: Any) -> list[str]:
    from memstore.lenses import fire

    db = root / "runtime" / "memstore.db"
    if not db.exists():
        return []
    budget = config.hook_lock_budget_ms
    conn = sqlite3.connect(str(db), timeout=budget / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout={int(budget)}")
        conn.execute("BEGIN IMMEDIATE")
        try:
            lenses = fire(conn, tool, file_path, session, now)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return [lens.text() for lens in lenses]
    except sqlite3.Error as exc:
        _log(root, f"lenses skipped: {exc}")
        return []
    finally:
        conn.close()


def main(argv: list[str] | None = None, stdin: Any = None, stdout: Any = None) -> int:
    """Entry point. Returns 0 whatever happens."""
    root: Path | None = None
    try:
        args = list(sys.argv[1:] if argv is None else argv)
        root_opt, now_opt = _args(args)
        payload = read_payload(stdin or sys.stdin.buffer)
        if payload is None:
            root = _find_root(root_opt, {})
            _log(root, "payload is not a JSON object; ignored")
            return 0
        root = _find_root(root_opt, payload)
        if root is None:
            return 0
        response = handle(payload, root, _now(now_opt))
        if response is not None:
            out = stdout or sys.stdout
            out.write(json.dumps(response, ensure_ascii=False))
            out.flush()
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            return 0
        _log(root, f"{type(exc).__name__}: {exc} | {traceback.format_exc(limit=3)!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Lenses: situational rules injected by the hook when their trigger matches. Standard library only.

A lens is content, not code: a markdown file in lenses/ with
`trigger: {tool_match: REGEX, path_pattern: REGEX}` (path optional) and a
`body_token_cap`. The hook reads lenses from the mirror (their frontmatter was parsed
at sync), so this path never loads a YAML parser. Each lens fires at most once per
session; the session ids it fired in are kept in SQLite.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3

from memstore.inert import inert_block, inert_line
from memstore.timeutil import fmt

DEFAULT_TOKEN_CAP = 400
CHARS_PER_TOKEN = 4  # a rough, conservative rule for English prose


class Lens:
    """One lens, as the mirror holds it. A plain class: dataclasses cost too much to import here."""

    def __init__(
        self,
        path: str,
        name: str,
        tool_match: re.Pattern[str] | None,
        path_pattern: re.Pattern[str] | None,
        token_cap: int,
        body: str,
        problem: str | None = None,
    ) -> None:
        self.path = path
        self.name = name
        self.tool_match = tool_match
        self.path_pattern = path_pattern
        self.token_cap = token_cap
        self.body = body
        self.problem = problem

    def matches(self, tool: str, file_path: str | None) -> bool:
        if self.tool_match is None or not self.tool_match.search(tool or ""):
            return False
        if self.path_pattern is None:
            return True
        return bool(file_path) and bool(self.path_pattern.search(file_path or ""))

    def text(self) -> str:
        # A lens is the person's text: its markdown stays, but no tag or control comes out of it.
        body = inert_block(cap_text(self.body.strip(), self.token_cap), markdown=False)
        return f"[memstore lens: {inert_line(self.name)}]\n{body}"


def cap_text(text: str, tokens: int) -> str:
    limit = max(tokens, 1) * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(None, 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip() + " …"


def _compile(value: object) -> tuple[re.Pattern[str] | None, str | None]:
    if value is None or value == "":
        return None, None
    try:
        return re.compile(str(value)), None
    except re.error as exc:
        return None, f"bad regex {value!r}: {exc}"


def lens_from_row(path: str, meta_json: str, body: str) -> Lens:
    try:
        meta = json.loads(meta_json or "{}")
    except ValueError:
        meta = {}
    trigger = meta.get("trigger") if isinstance(meta.get("trigger"), dict) else {}
    tool_match, problem = _compile(trigger.get("tool_match"))
    path_pattern, path_problem = _compile(trigger.get("path_pattern"))
    if tool_match is None and problem is None:
        problem = "no trigger.tool_match: this lens never fires"
    try:
        cap = min(max(int(meta.get("body_token_cap", DEFAULT_TOKEN_CAP)), 1), 100_000)
    except (TypeError, ValueError, OverflowError):  # "lots", null, .inf
        cap = DEFAULT_TOKEN_CAP
    name = str(meta.get("name") or path.rsplit("/", 1)[-1][:-3])
    return Lens(path, name, tool_match, path_pattern, cap, body or "", problem or path_problem)


def load_lenses(conn: sqlite3.Connection) -> list[Lens]:
    # The body lives in the full-text table, not in `files` (migration m004; indexing.body_of).
    rows = conn.execute(
        "SELECT f.path, f.meta, t.body FROM files f LEFT JOIN files_fts t ON t.rowid = f.id "
        "WHERE f.kind = 'lens' ORDER BY f.path"
    ).fetchall()
    return [lens_from_row(r[0], r[1], r[2]) for r in rows]


def fire(
    conn: sqlite3.Connection, tool: str, file_path: str | None, session: str | None, now: dt.datetime,
    allowed: object = None,
) -> list[Lens]:
    """Lenses that match and have not fired in this session yet; marks them fired (caller commits).

    `allowed(path)`: False for a lens held back (tamper.lens_filter: changed during an agent session,
    not yet trusted); it is neither injected nor marked fired, so it fires once trusted.
    """
    fired = []
    for lens in load_lenses(conn):
        if not lens.matches(tool, file_path):
            continue
        if allowed is not None and not allowed(lens.path):  # type: ignore[operator]
            continue
        if session:
            cur = conn.execute(
                "INSERT OR IGNORE INTO lens_fired (session, lens, fired_at) VALUES (?, ?, ?)",
                (session, lens.path, fmt(now)),
            )
            if cur.rowcount != 1:
                continue
        fired.append(lens)
    return fired


def tool_union(conn: sqlite3.Connection) -> str | None:
    """One regex matching every tool some lens listens to (the hook registration's matcher)."""
    patterns = sorted({lens.tool_match.pattern for lens in load_lenses(conn) if lens.tool_match is not None})
    if not patterns:
        return None
    return "|".join(f"(?:{p})" if len(patterns) > 1 else p for p in patterns)

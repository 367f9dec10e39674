"""Lenses: situational rules injected by the hook when their trigger matches. Standard library only.

A lens is content, not code: a markdown file in lenses/ with
`trigger: {tool_match: REGEX, path_pattern: REGEX}` (path optional) and a
`body_token_cap`. The hook reads lenses from the mirror (their frontmatter was parsed
at sync), so this path never loads a YAML parser; a lens file changed since the last sync
is read afresh with a small reader of its own (current_lenses). Each lens fires at most once per
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
    allowed: object = None, lenses: list[Lens] | None = None,
) -> list[Lens]:
    """Lenses that match and have not fired in this session yet; marks them fired (caller commits).

    `allowed(path)`: False for a lens held back (tamper.lens_filter: changed during an agent session,
    not yet trusted); it is neither injected nor marked fired, so it fires once trusted. `lenses`: the
    lenses to try (current_lenses); the mirror's when not given.
    """
    fired = []
    for lens in load_lenses(conn) if lenses is None else lenses:
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


# ---------------------------------------------------------------- lenses as they are on disk now
# The mirror holds each lens as the last sync parsed it, and under the plugin nothing syncs between
# sessions: a lens added or edited since would fire a session late, or with its old text. So the hook
# compares the mirror's (mtime, size) with the folder and reads a changed lens itself, with the small
# reader below (the hook's path has no YAML parser).

_PLAIN_FIRST = set("-?:,[]{}#&*!|>'\"%@`")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_DOUBLE = re.compile(r'(?:[^"\\]|\\["\\/bfnrtu])*')  # escapes JSON and YAML read alike
# what YAML 1.1 (PyYAML) reads as something other than a string
_NOT_STRING = re.compile(r"[0-9].*|[+-][0-9.].*|\.([0-9]|inf|nan).*|=|<<|y|Y|yes|Yes|YES|no|No|NO|true|True|TRUE|"
                         r"false|False|FALSE|on|On|ON|off|Off|OFF", re.IGNORECASE)


def _scalar(text: str) -> tuple[bool, object]:
    """(understood, value) of one YAML scalar on one line, as PyYAML's safe loader reads it; anything
    else is (False, None), and the caller leaves the file to sync."""
    text = text.strip()
    if not text or text in ("~", "null", "Null", "NULL"):
        return True, None
    if text[0] == '"':
        if len(text) < 2 or not text.endswith('"') or not _DOUBLE.fullmatch(text[1:-1]):
            return False, None
        try:
            return True, json.loads(text)
        except ValueError:
            return False, None
    if text[0] == "'":
        if len(text) < 2 or not text.endswith("'") or "'" in text[1:-1].replace("''", ""):
            return False, None
        return True, text[1:-1].replace("''", "'")
    if re.fullmatch(r"[-+]?(0|[1-9][0-9]*)", text):
        return True, int(text)
    if text[0] in _PLAIN_FIRST or _NOT_STRING.fullmatch(text) or ": " in text or " #" in text \
            or text.endswith(":") or "\t" in text:
        return False, None  # a collection, an anchor, a tag, a block scalar, a number, a date, a comment
    return True, text


def _odd_chars(text: str) -> bool:
    """Characters on which this reader and PyYAML could disagree: controls (C0 but CR, LF: a tab too; DEL; C1),
    the line breaks YAML knows and str.split does not (NEL, U+2028, U+2029, a lone CR), a byte-order mark, and
    every space but the ASCII one (str.strip takes NBSP or U+3000 away, YAML keeps them)."""
    if "\r" in text.replace("\r\n", ""):
        return True  # a lone CR is a line break to YAML, not to str.split("\n")
    return any((c < " " and c not in "\r\n") or "\x7f" <= c <= "\x9f" or c in "\u2028\u2029\ufeff"
               or (c.isspace() and c not in " \r\n") for c in text)


def read_frontmatter(text: str) -> tuple[dict[str, object], str] | None:
    """(mapping, body) of a lens file, or None when its frontmatter is more YAML than this reader takes on.

    Takes `key: scalar` lines, one level of `key: scalar` lines indented alike under a bare `key:`
    (trigger:), blank lines and # comment lines: what a lens needs, read as PyYAML reads it
    (tests/test_lens_fresh.py holds the two readers to the same answers)."""
    text = text[1:] if text.startswith("\ufeff") else text
    if not text.startswith("---"):
        return {}, text
    close = text.find("\n---", 3)
    if _odd_chars(text[:close if close >= 0 else len(text)]):
        return None  # YAML would break or keep these where str.split/strip would not: sync's parser decides
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return None
    meta: dict[str, object] = {}
    nested: dict[str, object] | None = None
    indent = 0
    for number, raw in enumerate(lines[1:], start=1):
        line = raw.rstrip("\r")
        if line.startswith(("---", "...")):
            if line.rstrip() != "---":
                return None
            return {k: (None if v == {} else v) for k, v in meta.items()}, "\n".join(lines[number + 1:]).lstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        width = len(line) - len(line.lstrip(" "))
        key, sep, rest = line.strip().partition(":")
        if "\t" in line[:width + 1] or not sep or not _KEY.fullmatch(key) or (rest and rest[0] != " "):
            return None
        if width:
            if nested is None or (indent and width != indent) or key in nested:
                return None
            indent = width
            understood, value = _scalar(rest)
            if not understood:
                return None
            nested[key] = value
            continue
        if key in meta:
            return None  # a repeated key: the loader keeps the last; not worth copying
        nested, indent = None, 0
        if not rest.strip():
            nested = meta[key] = {}
            continue
        understood, value = _scalar(rest)
        if not understood:
            return None
        meta[key] = value
    return None  # never closed


def lens_files(root: str, stamps: dict[str, int] | None = None) -> dict[str, tuple[int, int]]:
    """{root-relative path: (mtime_ns, size)} of the lens files on disk, walked as sync walks them: no
    links, no hidden names, no machine folders. `stamps` gets the mtime of every file and folder seen."""
    import os

    from memstore.kinds import SKIP_DIRS

    found: dict[str, tuple[int, int]] = {}
    pending = ["lenses"]
    try:
        if stamps is not None:
            stamps["lenses"] = os.stat(os.path.join(root, "lenses")).st_mtime_ns
    except OSError:
        return found
    while pending:
        rel = pending.pop()
        try:
            entries = list(os.scandir(os.path.join(root, rel)))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SKIP_DIRS:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(f"{rel}/{entry.name}")
                    if stamps is not None:
                        stamps[f"{rel}/{entry.name}"] = entry.stat(follow_symlinks=False).st_mtime_ns
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    found[f"{rel}/{entry.name}"] = (info.st_mtime_ns, info.st_size)
                    if stamps is not None:
                        stamps[f"{rel}/{entry.name}"] = info.st_mtime_ns
            except OSError:
                continue
    return found


def current_lenses(conn: sqlite3.Connection | None, root: str, problems: list[str] | None = None,
                   stamps: dict[str, int] | None = None) -> list[Lens]:
    """The lenses as the files are now: the mirror's row where its (mtime, size) still match the file,
    the file read afresh where not, none for a file gone. A changed file this reader cannot take keeps
    its mirror row (or, new, waits for a sync); each such file is named in `problems`. `stamps`: as
    lens_files fills it (hookgate's watch list)."""
    import os

    rows: dict[str, tuple[str, str, int, int]] = {}
    if conn is not None:
        for path, meta, body, mtime, size in conn.execute(
                "SELECT f.path, f.meta, t.body, f.mtime_ns, f.size FROM files f "
                "LEFT JOIN files_fts t ON t.rowid = f.id WHERE f.kind = 'lens'"):
            rows[path] = (meta, body, mtime, size)
    found = []
    for rel, stamp in sorted(lens_files(root, stamps).items()):
        row = rows.get(rel)
        if row is not None and (row[2], row[3]) == stamp:
            found.append(lens_from_row(rel, row[0], row[1]))
            continue
        try:
            with open(os.path.join(root, rel), "rb") as handle:
                read = read_frontmatter(handle.read(1_000_000).decode("utf-8", errors="replace"))
        except OSError:
            read = None
        if read is not None:
            found.append(lens_from_row(rel, json.dumps(read[0]), read[1]))
            continue
        if problems is not None:
            problems.append(rel)
        if row is not None:
            found.append(lens_from_row(rel, row[0], row[1]))
    return found

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
from collections.abc import Callable, Collection

from memstore.core import statements
from memstore.core.frontreader import read_frontmatter
from memstore.core.inert import inert_block, inert_line
from memstore.core.timeutil import fmt

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
        # a body cannot start a lens of its own: a line like memstore's header would pass for
        # another lens (a team's lens posing as one of the person's)
        body = body.replace("[memstore lens", "\\[memstore lens")
        # a team's lens says whose it is (teams/<name>/lenses/...): reviewed by the team, not
        # written by the person
        team = (f" (team {inert_line(self.path.split('/', 2)[1])})"
                if self.path.startswith("teams/") else "")
        return f"[memstore lens: {inert_line(self.name)}{team}]\n{body}"


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
    """Every lens as the mirror holds it, by path."""
    return [lens_from_row(r[0], r[1], r[2]) for r in statements.lens_rows(conn)]


def fire(
    conn: sqlite3.Connection, tool: str, file_path: str | None, session: str | None,
    now: dt.datetime,
    allowed: Callable[[str], bool] | None = None, lenses: list[Lens] | None = None,
) -> list[Lens]:
    """Lenses that match and have not fired in this session yet; marks them fired (caller commits).

    `allowed(path)`: False for a lens held back (tamper.lens_filter: changed during an agent
    session, not yet trusted); it is neither injected nor marked fired, so it fires once trusted.
    `lenses`: the lenses to try (current_lenses); the mirror's when not given.
    """
    fired = []
    for lens in load_lenses(conn) if lenses is None else lenses:
        if not _matches_in_time(lens, tool, file_path):
            continue
        if allowed is not None and not allowed(lens.path):
            continue
        if session and not statements.lens_fired(conn, session, lens.path, fmt(now)):
            continue
        fired.append(lens)
    return fired


# A lens's patterns are a person's or a team's regular expressions, and one can take exponential
# time on a plain path (`^(/|[a-z_]+|[a-z/._-]+)*\.zz$`: minutes, at full CPU, on every Read): each
# match gets this long, and a lens that runs past it does not fire (the hook logs it). Python's
# regex engine checks for signals as it runs, so an interval timer stops it.
MATCH_BUDGET_S = 0.05


class _TooSlow(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _TooSlow


def _matches_in_time(lens: Lens, tool: str, file_path: str | None) -> bool:
    found = in_time(lambda: lens.matches(tool, file_path))
    if found is None:
        lens.problem = (f"its pattern took over {MATCH_BUDGET_S * 1000:.0f} ms to match: "
                        "it does not fire")
        SLOW.append(lens.path)
    return bool(found)


def in_time(match: Callable[[], bool]) -> bool | None:
    """match(), or None when it runs past MATCH_BUDGET_S (in the main thread; elsewhere it runs as
    it is)."""
    import signal

    try:
        before = signal.signal(signal.SIGALRM, _alarm)
    except ValueError:  # not the main thread (a library caller's worker): no timer there
        return match()
    try:
        signal.setitimer(signal.ITIMER_REAL, MATCH_BUDGET_S)
        return match()
    except _TooSlow:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


SLOW: list[str] = []  # the lenses whose patterns ran out of time in this process (the hook logs)


def tool_union(conn: sqlite3.Connection) -> str | None:
    """One regex matching every tool some lens listens to (the hook registration's matcher)."""
    patterns = sorted({lens.tool_match.pattern for lens in load_lenses(conn)
                       if lens.tool_match is not None})
    if not patterns:
        return None
    return "|".join(f"(?:{p})" if len(patterns) > 1 else p for p in patterns)


# -------------------------------------------------- lenses as they are on disk now
# The mirror holds each lens as the last sync parsed it, and under the plugin nothing syncs between
# sessions: a lens added or edited since would fire a session late, or with its old text. So the
# hook compares the mirror's (mtime, size) with the folder and reads a changed lens itself, with
# the exact reader of memstore.core.frontreader (the hook's path has no YAML parser).

def lens_files(root: str, stamps: dict[str, int] | None = None,
               teams: Collection[str] = ()) -> dict[str, tuple[int, int]]:
    """{root-relative path: (mtime_ns, size)} of the lens files on disk, walked as sync walks them:
    no links, no hidden names, no machine folders. `stamps` gets the mtime of every file and folder
    seen. `teams`: the joined teams, whose clones' lenses/ fire like the person's
    (memstore.core.teams)."""
    import os

    from memstore.core.kinds import SKIP_DIRS

    found: dict[str, tuple[int, int]] = {}
    pending = []
    for top in ("lenses", *(f"teams/{name}/lenses" for name in sorted(teams))):
        if top != "lenses" and os.path.islink(os.path.join(root, top)):
            continue  # a team repository's lenses/ committed as a link leads anywhere: not followed
        try:
            mtime = os.stat(os.path.join(root, top)).st_mtime_ns
        except OSError:
            continue
        pending.append(top)
        if stamps is not None:
            stamps[top] = mtime
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
                        stamps[f"{rel}/{entry.name}"] = entry.stat(
                            follow_symlinks=False).st_mtime_ns
                elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    found[f"{rel}/{entry.name}"] = (info.st_mtime_ns, info.st_size)
                    if stamps is not None:
                        stamps[f"{rel}/{entry.name}"] = info.st_mtime_ns
            except OSError:
                continue
    return found


def current_lenses(conn: sqlite3.Connection | None, root: str, problems: list[str] | None = None,
                   stamps: dict[str, int] | None = None, teams: Collection[str] = ()) -> list[Lens]:
    """The lenses as the files are now: the mirror's row where its (mtime, size) still match the
    file, the file read afresh where not, none for a file gone. A changed file this reader cannot
    take keeps its mirror row (or, new, waits for a sync); each such file is named in `problems`.
    `stamps`: as lens_files fills it (hookgate's watch list)."""
    import os

    rows: dict[str, tuple[str, str, int, int]] = {}
    if conn is not None:
        for path, meta, body, mtime, size in statements.lens_rows(conn):
            rows[path] = (meta, body, mtime, size)
    found = []
    for rel, stamp in sorted(lens_files(root, stamps, teams).items()):
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

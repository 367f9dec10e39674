"""The ledgers a session writes to: new T2 memories (`new`) and the open-bug ledger (`bug`).

A bug is one markdown file, `memory/bugs/<id>-<slug>.md`, with frontmatter `id`, `title`,
`status` (open or closed), `filed_at`, `filed_by`, and once closed `closed_at` and `why`.
The ledger is read whole, every time: never filtered by run, session or plan, so a bug
filed months ago by someone else is as visible as one filed a minute ago.

Ids are sequential (max existing + 1), picked under a file lock so two concurrent adds
never take the same one. Closing edits only status, closed_at and why (fmedit, byte
for byte). Reading never raises on a file's content: a malformed bug is listed with what
could be read and a note of what is wrong.

The hook reads bugs through memstore.context (standard library, no YAML); the library
through `read_bug` (memstore's own parser). YAML loads only inside the functions that need it.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.context import list_folder, scan_front
from memstore.errors import MemstoreError

if TYPE_CHECKING:
    from memstore.config import Config
    from memstore.results import Bug

STATUSES = ("open", "closed")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_ID_PREFIX = re.compile(r"^(\d+)-")
MAX_TOPIC = 80
MAX_SLUG = 50


class Refused(MemstoreError):
    """A ledger verb refused its input (unknown type, a name taken, a bug already closed, ...)."""


def kebab(text: str, limit: int = MAX_TOPIC) -> str:
    """Free text as kebab-case: lowercase, each run of non-alphanumerics one hyphen, trimmed.

    Cut at a hyphen to at most `limit` characters. Accented letters lose their accent
    (é -> e); letters with no ASCII form are dropped, so the result may be empty.
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_ALNUM.sub("-", folded.lower()).strip("-")
    if len(slug) > limit:
        cut = slug[:limit]
        slug = (cut.rsplit("-", 1)[0] if "-" in cut else cut).strip("-")
    return slug


def one_line(text: str) -> str:
    """Free text as one clean line: whitespace runs become one space, control characters go."""
    text = " ".join(text.split())
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cs"))


def yaml_line(key: str, value: Any) -> str:
    """`key: value` as YAML, quoted as YAML needs it (colons, quotes, #, leading -, ...)."""
    import yaml

    return yaml.safe_dump({key: value}, allow_unicode=True, width=float("inf"), sort_keys=False).rstrip("\n")


def default_filer() -> str:
    """$MEMSTORE_FILED_BY, else user@host."""
    import getpass
    import socket

    who = os.environ.get("MEMSTORE_FILED_BY", "").strip()
    if who:
        return who
    try:
        user = getpass.getuser()
    except Exception:  # no name for this uid (containers): getuser raises KeyError or OSError
        user = f"uid{os.getuid()}"
    return f"{user}@{socket.gethostname() or 'localhost'}"


# ---------------------------------------------------------------- new T2 memories


def new_memory_text(name: str, type_: str, summary: str, now: dt.datetime, config: Config,
                    importance: float | None, pin: bool, body: str | None) -> str:
    from memstore.fmedit import render_value

    lines = [
        "---",
        yaml_line("name", name),
        yaml_line("type", type_),
        yaml_line("summary", summary),
        f"created: {render_value(now.date())}",
        f"last_updated: {render_value(now.date())}",
        "access_count: 0",
        f"last_accessed: {render_value(now)}",
        "last_reinforced:",
        f"stability: {render_value(float(config.initial_stability))}",
    ]
    if importance is not None:
        lines.append(f"importance: {render_value(importance)}")
    if pin:
        lines.append("pin: true")
    text = (body if body is not None and body.strip() else summary).strip("\n")
    return "\n".join([*lines, "---", "", f"# {name}", "", text, ""])


# Bounds on what one call may write (CLI and MCP alike): a memory is read whole by the
# agent and its summary is a row of the always-loaded index; lint warns from 16 KB.
SUMMARY_MAX_CHARS = 1_000
BODY_MAX_CHARS = 256_000
TITLE_MAX_CHARS = 300


def check_size(what: str, text: str | None, limit: int, hint: str) -> None:
    if text is not None and len(text) > limit:
        raise Refused(f"the {what} is {len(text):,} characters, over the limit of {limit:,}", hint=hint)


def check_new(type_: str, topic: str, summary: str, importance: float | None, body: str | None = None
              ) -> tuple[str, str, float | None]:
    """(name, one-line summary, importance) for `new`, or Refused saying what is wrong."""
    from memstore.kinds import MEMORY_TYPES

    check_size("summary", summary, SUMMARY_MAX_CHARS, "a summary is one line of the index: say it shortly")
    check_size("body", body, BODY_MAX_CHARS, "split it into several memories, each about one thing")
    check_size("topic", topic, TITLE_MAX_CHARS, "name the topic in a few words")

    if type_ not in MEMORY_TYPES:
        raise Refused(f"unknown memory type {type_!r}", hint=f"use one of: {', '.join(MEMORY_TYPES)}")
    slug = kebab(topic)
    if not slug:
        raise Refused(f"topic {topic!r} has no letters or digits to name the file with",
                      hint="give a topic such as 'release checklist'")
    line = one_line(summary)
    if not line:
        raise Refused("the summary is empty", hint="say in one line what the memory holds: --summary '...'")
    if importance is not None:
        if not 0 <= importance <= 10:
            raise Refused(f"importance {importance:g} is outside 0-10", hint="give --importance between 0 and 10")
        if float(importance).is_integer():
            importance = int(importance)
    return f"{type_}_{slug}", line, importance


# ---------------------------------------------------------------- the bug ledger


def bug_number(path: Path, meta_id: object = None) -> int | None:
    """The bug's number: its frontmatter id, else the digits its file name starts with."""
    if isinstance(meta_id, bool):
        meta_id = None
    if isinstance(meta_id, int):
        return meta_id
    if isinstance(meta_id, str) and meta_id.strip().isdigit():
        return int(meta_id.strip())
    match = _ID_PREFIX.match(path.name)
    return int(match.group(1)) if match else None


def next_id(folder: Path) -> int:
    """max(existing numbers) + 1, from file names and frontmatter ids alike (stdlib reader).

    A folder that cannot be listed raises OSError; a file that cannot be read counts by its name.
    """
    highest = 0
    for path in list_folder(folder):
        try:
            front = scan_front(path)
        except (OSError, UnicodeDecodeError):
            front = {}
        number = bug_number(path, front.get("id"))
        prefix = _ID_PREFIX.match(path.name)
        for value in (number, int(prefix.group(1)) if prefix else None):
            if value is not None:
                highest = max(highest, value)
    return highest + 1


def bug_text(number: int, title: str, filed_at: dt.datetime, filed_by: str, body: str) -> str:
    from memstore.timeutil import fmt

    lines = [
        "---",
        yaml_line("id", f"{number:04d}"),
        yaml_line("title", title),
        "status: open",
        f"filed_at: {fmt(filed_at)}",
        yaml_line("filed_by", filed_by),
        "---",
        "",
    ]
    text = body.strip("\n")
    return "\n".join(lines) + ("\n" + text + "\n" if text else "")


def read_bug(path: Path, root: Path, config: Config) -> Bug:
    """One bug file as a Bug record; never raises on content (problems say what is wrong)."""
    from memstore.parsing import parse_bytes
    from memstore.results import Bug
    from memstore.timeutil import fmt, parse_when

    rel = path.relative_to(root).as_posix()
    problems: list[str] = []
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Bug(id=_fallback_id(path), title=path.stem, status="open", filed_at=None, filed_by=None,
                   closed_at=None, why=None, path=rel, body="", problems=[f"cannot be read: {exc.strerror or exc}"])
    parsed = parse_bytes(raw, path.stem, config)
    problems += [p.message for p in parsed.problems]
    meta = parsed.meta

    def text(key: str) -> str | None:
        value = meta.get(key)
        if value is None:
            return None
        if isinstance(value, (dict, list)):
            problems.append(f"{key} is not a single value")
            return None
        return str(value)

    number = bug_number(path, meta.get("id"))
    if number is None:
        problems.append("no id (in the frontmatter or the file name)")
    title = one_line(text("title") or "")
    if not title:
        problems.append("no title")
        first = next((ln.strip().lstrip("#").strip() for ln in parsed.body.splitlines() if ln.strip()), "")
        title = first[:200] or path.stem
    status = (text("status") or "").strip().lower()
    if status not in STATUSES:
        problems.append(f"status is {status or 'missing'!r}, not open or closed; listed as open")
        status = "open"

    def when(key: str) -> str | None:
        value = meta.get(key)
        if value is None:
            return None
        parsed_when = parse_when(value)
        if parsed_when is None:
            problems.append(f"{key} is not a date or time: {value!r}"[:200])
            return str(value)
        return fmt(parsed_when)

    filed_at = when("filed_at")
    if filed_at is None:
        problems.append("no filed_at")
    filed_by = text("filed_by")
    if not filed_by:
        problems.append("no filed_by")
    return Bug(
        id=f"{number:04d}" if number is not None else _fallback_id(path),
        title=title,
        status=status,
        filed_at=filed_at,
        filed_by=filed_by,
        closed_at=when("closed_at"),
        why=text("why"),
        path=rel,
        body=parsed.body.strip("\n"),
        problems=problems,
    )


def _fallback_id(path: Path) -> str:
    match = _ID_PREFIX.match(path.name)
    return f"{int(match.group(1)):04d}" if match else path.stem


def sort_key(bug: Bug) -> tuple[int, int, str]:
    return (0, int(bug.id), bug.path) if bug.id.isdigit() else (1, 0, bug.path)


def find_bug(bugs: list[Bug], key: str) -> Bug:
    """The bug `key` names: 1, 0001, #1, its file name (with or without .md) or its path."""
    text = key.strip().lstrip("#")
    if text.isdigit():
        matches = [bug for bug in bugs if bug.id.isdigit() and int(bug.id) == int(text)]
    else:
        name = os.path.basename(text)
        name = name if name.endswith(".md") else name + ".md"
        matches = [bug for bug in bugs if os.path.basename(bug.path) == name]
    if not matches:
        raise Refused(f"no bug {key!r} in the ledger", hint="see the ids with: memstore bug list --all")
    if len(matches) > 1:
        raise Refused(f"bug {key!r} is ambiguous: {', '.join(b.path for b in matches)}",
                      hint="name it by its file name instead")
    return matches[0]

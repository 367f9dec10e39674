"""The ledgers a session writes to: new T2 memories (`new`) and the open-bug ledger (`bug`).

A bug is one markdown file, `memory/bugs/<id>-<slug>.md`, with frontmatter `id`, `title`,
`status` (open or closed), `filed_at`, `filed_by`, and once closed `closed_at` and `why`.
The ledger is read whole, every time: never filtered by run, session or plan, so a bug
filed months ago by someone else is as visible as one filed a minute ago.

Ids are sequential (max existing + 1), picked under a file lock so two concurrent adds
never take the same one. Closing edits only status, closed_at and why (fmedit, byte
for byte). Reading never raises on a file's content: a malformed bug is listed with what
could be read and a note of what is wrong.

The hook reads bugs through memstore.hook.bundle (standard library, no YAML); the library
through `read_bug` (memstore's own parser). YAML loads only inside the functions that need it.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.errors import BadUsage, Busy, MemstoreError
from memstore.core.journal import clone_id
from memstore.core.kinds import MEMORY_TYPES
from memstore.core.locks import atomic_write, file_lock
from memstore.core.results import Bug
from memstore.core.timeutil import fmt, parse_when
from memstore.hook.bundle import list_folder, scan_front
from memstore.life.date_stamping import annotate
from memstore.mirror.bug_ids import BUG_ID as _BUG_ID
from memstore.mirror.bug_ids import ID_PREFIX as _ID_PREFIX
from memstore.mirror.bug_ids import bug_id
from memstore.mirror.fmedit import render_value, set_fields
from memstore.mirror.parsing import parse_bytes
from memstore.team.secrets import refuse

if TYPE_CHECKING:
    from collections.abc import Callable

    from memstore.core.agent_root import RootPaths
    from memstore.core.config import Config

STATUSES = ("open", "closed")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
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

    return yaml.safe_dump({key: value}, allow_unicode=True, width=float("inf"),
                          sort_keys=False).rstrip("\n")


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
                    importance: float | None, pin: bool, body: str | None,
                    project: str | None = None) -> str:
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
    if project:
        lines.append(yaml_line("project", project))
    text = (body if body is not None and body.strip() else summary).strip("\n")
    return "\n".join([*lines, "---", "", f"# {name}", "", text, ""])


# Bounds on what one call may write (CLI and MCP alike): a memory is read whole by the
# agent and its summary is a row of the always-loaded index; lint warns from 16 KB.
SUMMARY_MAX_CHARS = 1_000
BODY_MAX_CHARS = 256_000
TITLE_MAX_CHARS = 300


def check_size(what: str, text: str | None, limit: int, hint: str) -> None:
    """Input over its bound is bad usage (exit 2), as an over-long note is."""
    if text is not None and len(text) > limit:
        raise BadUsage(f"the {what} is {len(text):,} characters, over the limit of {limit:,}",
                       hint=hint)


def check_new(type_: str, topic: str, summary: str, importance: float | None,
              body: str | None = None) -> tuple[str, str, float | None]:
    """(name, one-line summary, importance) for `new`, or Refused saying what is wrong."""
    check_size("summary", summary, SUMMARY_MAX_CHARS,
               "a summary is one line of the index: say it shortly")
    check_size("body", body, BODY_MAX_CHARS, "split it into several memories, each about one thing")
    check_size("topic", topic, TITLE_MAX_CHARS, "name the topic in a few words")

    if type_ not in MEMORY_TYPES:
        raise BadUsage(f"unknown memory type {type_!r}",
                       hint=f"use one of: {', '.join(MEMORY_TYPES)}")
    slug = kebab(topic)
    if not slug:
        raise BadUsage(f"topic {topic!r} has no letters or digits to name the file with",
                      hint="give a topic such as 'release checklist'")
    line = one_line(summary)
    if not line:
        raise BadUsage("the summary is empty",
                       hint="say in one line what the memory holds: --summary '...'")
    if importance is not None:
        if not 0 <= importance <= 10:
            raise BadUsage(f"importance {importance:g} is outside 0-10",
                           hint="give --importance between 0 and 10")
        if float(importance).is_integer():
            importance = int(importance)
    return f"{type_}_{slug}", line, importance


# ---------------------------------------------------------------- the bug ledger


def bug_number(path: Path, meta_id: object = None) -> int | None:
    """The bug's number: its frontmatter id, else the digits its file name starts with."""
    found = bug_id(path, meta_id)
    return int(found.split("-")[0]) if found else None


def clone_mark(root: Path) -> str:
    """Three hex digits that tell this clone's bugs from another's (from its journal clone id)."""
    import hashlib

    return hashlib.blake2b(clone_id(root).encode(), digest_size=4).hexdigest()[:3]


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


def bug_text(ident: str, title: str, filed_at: dt.datetime, filed_by: str, body: str) -> str:
    lines = [
        "---",
        yaml_line("id", ident),
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
    rel = path.relative_to(root).as_posix()
    problems: list[str] = []
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Bug(id=_fallback_id(path), title=path.stem, status="open", filed_at=None,
                   filed_by=None, closed_at=None, why=None, path=rel, body="",
                   problems=[f"cannot be read: {exc.strerror or exc}"])
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

    ident = bug_id(path, meta.get("id"))
    if ident is None:
        problems.append("no id (in the frontmatter or the file name)")
    title = one_line(text("title") or "")
    if not title:
        problems.append("no title")
        first = next((ln.strip().lstrip("#").strip() for ln in parsed.body.splitlines()
                      if ln.strip()), "")
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
        id=ident if ident is not None else _fallback_id(path),
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
    return bug_id(path) or path.stem


def sort_key(bug: Bug) -> tuple[int, int, str, str]:
    match = _BUG_ID.match(bug.id)
    return ((0, int(match.group(1)), match.group(2) or "", bug.path) if match
            else (1, 0, "", bug.path))


def find_bug(bugs: list[Bug], key: str) -> Bug:
    """The bug `key` names: 1, 0001, #1 (while one bug has that number), 0001-3f9, its file name
    (with or without .md) or its path."""
    text = key.strip().lstrip("#")
    wanted = _BUG_ID.match(text)
    if wanted:
        number, suffix = int(wanted.group(1)), wanted.group(2)
        matches = []
        for bug in bugs:
            found = _BUG_ID.match(bug.id)
            if (found and int(found.group(1)) == number
                    and (suffix is None or found.group(2) == suffix)):
                matches.append(bug)
        still_open = [bug for bug in matches if bug.status == "open"]
        if len(matches) > 1 and len(still_open) == 1:
            matches = still_open  # the other one is closed already: the number names the open one
        if len(matches) > 1:
            raise Refused(f"bug {key!r} is ambiguous: {', '.join(b.id for b in matches)} "
                          "(filed on two machines)",
                          hint=f"name it by its whole id, e.g. memstore bug close {matches[0].id}")
    else:
        name = os.path.basename(text)
        name = name if name.endswith(".md") else name + ".md"
        matches = [bug for bug in bugs if os.path.basename(bug.path) == name]
    if not matches:
        raise Refused(f"no bug {key!r} in the ledger",
                      hint="see the ids with: memstore bug list --all")
    if len(matches) > 1:
        raise Refused(f"bug {key!r} is ambiguous: {', '.join(b.path for b in matches)}",
                      hint="name it by its whole id or its file name")
    return matches[0]


# ---------------------------------------------------------- the writing verbs (Store calls these)


def write_new(paths: RootPaths, now: dt.datetime, config: Config, type_: str, topic: str,
              summary: str, importance: float | None, pin: bool, body: str | None,
              project: str | None = None) -> tuple[Path, str, str]:
    """Write memory/<type>_<topic>.md under the ledger lock; (its path, name, one-line summary).
    Text that looks like it holds a secret is refused (memstore.team.secrets)."""
    name, line, importance = check_new(type_, topic, summary, importance, body)
    # memstore.life.date_stamping
    line, body = annotate(line, now.date()), annotate(body, now.date()) if body else body
    target = Path(paths.memory) / f"{name}.md"
    text = new_memory_text(name, type_, line, now, config, importance, pin, body, project)
    refuse(text, f"memory {name}")
    with file_lock(Path(paths.ledger_lock), timeout=config.lock_timeout_s):
        if target.exists():
            raise Refused(f"a memory named {name} already exists: memory/{name}.md",
                          hint="edit that file, or choose another topic")
        atomic_write(target, text.encode("utf-8"))
    return target, name, line


def file_bug(paths: RootPaths, now: dt.datetime, config: Config, title: str, body: str | None,
             by: str | None) -> Path:
    """Write memory/bugs/<id>-<slug>.md (next free number, this clone's mark) under the lock."""
    check_size("title", title, TITLE_MAX_CHARS, "say what is wrong in a line; details go in --body")
    check_size("body", body, BODY_MAX_CHARS, "attach the essentials, not whole logs")
    line = one_line(title)
    if not line:
        raise BadUsage("the bug has no title", hint="memstore bug add 'what is wrong' [--body ...]")
    filer = one_line(by) if by is not None else default_filer()
    if not filer:
        raise BadUsage("--by is empty", hint="say who files it, or leave --by out")
    folder = Path(paths.bugs)
    with file_lock(Path(paths.ledger_lock), timeout=config.lock_timeout_s):
        folder.mkdir(parents=True, exist_ok=True)
        same = _open_with_title(folder, line)
        if same is not None:
            raise Refused(f"an open bug already has this title: {same}",
                          hint="add to that bug's file, "
                               "or give this one a title that tells them apart")
        try:
            number = next_id(folder)
        except OSError as exc:
            raise Refused("the bug ledger could not be read, "
                          f"so no id can be picked safely ({exc})",
                          hint=f"fix or move the file, then try again: {folder}") from None
        ident = f"{number:04d}-{clone_mark(Path(paths.root))}"  # unique when clones merge (_BUG_ID)
        target = folder / f"{ident}-{kebab(line, MAX_SLUG) or 'bug'}.md"
        atomic_write(target, bug_text(ident, line, now, filer, body or "").encode("utf-8"))
    return target


def _open_with_title(folder: Path, title: str) -> str | None:
    """The file name of an open bug whose title is `title` (case and spacing aside), or None."""
    wanted = " ".join(title.split()).casefold()
    for path in list_folder(folder):
        try:
            front = scan_front(path)
        except (OSError, UnicodeDecodeError):
            continue
        status = str(front.get("status", "open")).strip().strip("'\"").lower()
        have = " ".join(str(front.get("title", "")).strip().strip("'\"").split()).casefold()
        if status != "closed" and have == wanted:
            return path.name
    return None


def close_bug(paths: RootPaths, now: dt.datetime, config: Config,
              every_bug: Callable[[], list[Bug]], key: str, why: str | None) -> tuple[Bug, Path]:
    """Set status, closed_at and why of the bug `key` names, nothing else; (the bug, its path)."""
    with file_lock(Path(paths.ledger_lock), timeout=config.lock_timeout_s):
        found = find_bug(every_bug(), key)
        if found.status == "closed":
            raise Refused(f"bug {found.id} is already closed ({found.closed_at or 'no date'})",
                          hint=f"see it in: memstore bug list --all ({found.path})")
        target = Path(paths.root) / found.path
        raw = target.read_bytes()
        updates = {"status": "closed", "closed_at": now, "why": one_line(why or "") or None}
        if not atomic_write(target, set_fields(raw, updates), expect=raw):
            raise Busy(f"{found.path} changed while it was being closed",
                       hint="run the close again")
    return found, target

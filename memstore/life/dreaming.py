"""What the wake's prompts carry, and which project each dream is about. Standard library only.

A dream reads one scope's facts and cue items: a project's own, or the person-wide ones
(facts and memories with no `project:` key, or `project: global`). Its journal entry and
proposals carry that scope's `project:`, and the bundle shows them only where those facts
would be shown (context.sections, projects.belongs). So a fact captured in one project, its
text or its file name (a slug of the fact), never reaches another project's sessions by way
of a dream.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from memstore.core.frontreader import front_values, split_front, unquote
from memstore.core.fsguard import md_files, read_text
from memstore.core.projects import GLOBAL
from memstore.hook import review

# How much text goes into the dream prompt.
FACT_CHARS = 2_000  # per short-term fact
FACTS_CHARS = 16_000  # all of them together, newest first
NAMED_CHARS = 1_500  # per file a cue item names
NAMED_FILES = 12
OBJECT_CHARS = 8_000

_DATED = re.compile(r"^(\d{2})(\d{2})(\d{2})-.+\.md$")
ALL = object()  # recent_facts(scope=ALL): every project's facts (the old, unscoped reading)


def cue_items(cue: dict[str, object]) -> list[dict[str, object]]:
    """The cue's items: the JSON objects of its `items` list (anything else in it is ignored)."""
    items = cue.get("items")
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


# ---------------------------------------------------------------- scopes


def scope_of(value: str | None) -> str | None:
    """A frontmatter `project:` value as a scope: None for person-wide (absent, empty, `global`)."""
    value = (value or "").strip().lower()
    return None if not value or value == GLOBAL else value


def file_scope(root: Path, rel: str) -> str | None:
    """A root-relative markdown file's scope by its frontmatter; None: unreadable or person-wide."""
    try:
        return scope_of(front_values(split_front(read_text(root / rel))[0]).get("project"))
    except (OSError, UnicodeDecodeError):
        return None


class Mixed(Exception):
    """A cue item whose files belong to two different projects: no one dream may read it."""


def item_scope(root: Path, item: dict[str, object]) -> str | None:
    """The scope of a cue item: that of the project its files belong to, else person-wide.

    A person-wide file beside a project's file makes the item the project's (the narrower
    audience); files of two projects raise Mixed.
    """
    paths = item.get("paths")
    scopes = (file_scope(root, rel) for rel in (paths if isinstance(paths, list) else [])
              if isinstance(rel, str))
    found = {scope for scope in scopes if scope is not None}
    if len(found) > 1:
        raise Mixed(", ".join(sorted(found)))
    return next(iter(found), None)


def scope_slug(scope: str | None) -> str:
    """A file-name part for a scope: `proja` for github.com/me/proja; '' for person-wide."""
    if scope is None:
        return ""
    tail = scope.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^a-z0-9]+", "-", tail).strip("-")[:40] or "project"


# ---------------------------------------------------------------- what the prompts carry


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def recent_facts(root: Path, today: dt.date, days: int, scope: object = ALL
                 ) -> list[tuple[str, str]]:
    """(root-relative path, text) of the short-term facts dated in the last `days` days, newest
    first; with `scope` (a project, or None for person-wide), that scope's facts only."""
    folder = root / "memory" / "short-term"
    found = []
    try:
        paths = md_files(folder)  # regular files only: a link (a pull may plant one) is never read
    except OSError:
        paths = []
    for path in paths:
        match = _DATED.match(path.name)
        if not match:
            continue
        try:
            day = dt.date(2000 + int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            continue
        if 0 <= (today - day).days <= days:
            found.append((day, path))
    found.sort(key=lambda pair: (pair[0], pair[1].name), reverse=True)
    answered = review.answers(root)
    out, used = [], 0
    for _day, path in found:
        whole = read_text(path)  # a regular file only: never through a link, never a FIFO
        front, body = split_front(whole)
        values = front_values(front)
        if scope is not ALL and scope_of(values.get("project")) != scope:
            continue  # another project's fact (or a project's, for the person-wide dream)
        if review.withheld(unquote(values.get("kind", "")), body, answered):
            continue  # a rejected or unsafe lesson never reaches the dream either
        if unquote(values.get("kind", "")).strip().lower() == "wake-proposals":
            continue  # the dream's own earlier output is not a fact
        text = _clip(whole, FACT_CHARS)
        if used + len(text) > FACTS_CHARS:
            break
        out.append((path.relative_to(root).as_posix(), text))
        used += len(text)
    return out


def named_files(root: Path, items: list[dict[str, object]]) -> list[tuple[str, str]]:
    """(path, text) of the files the cue's items name: only markdown files inside the root."""
    base = root.resolve()
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for item in items:
        paths = item.get("paths")
        for rel in paths if isinstance(paths, list) else []:
            if not isinstance(rel, str) or rel in seen or len(out) >= NAMED_FILES:
                continue
            seen.add(rel)
            target = (root / rel).resolve()
            if not (target.is_relative_to(base) and target.suffix == ".md" and target.is_file()):
                continue
            if (root / rel).is_symlink():  # only the file under its own name (the mirror's rule)
                continue
            out.append((rel, _clip(read_text(target), NAMED_CHARS)))
    return out


NO_TOOLS = ("Everything you need is in this prompt. Do not use tools, and do not read, create or "
            "edit any file: answer with text only. Nothing you write is applied automatically.")


def dream_prompt(root: Path, cue: dict[str, object], facts: list[tuple[str, str]],
                 named: list[tuple[str, str]], short_term_days: int, scope: object = ALL) -> str:
    where = ("" if scope is ALL else
             " This dream is about person-wide memory only (no project's)." if scope is None else
             f" This dream is about the project {scope} only: "
             "what it proposes stays in that project.")
    lines = [
        "You are dreaming: the nightly consolidation pass over a coding agent's memory "
        f"(agent root {root}). The memory is markdown: topic memories in memory/<type>_<topic>.md, "
        f"short-term facts in memory/short-term/, lenses in lenses/.{where}",
        NO_TOOLS,
        "",
        f"## Tonight's cue (from the nightly tick at {cue.get('ran_at', 'an unknown time')})",
        "",
    ]
    for item in cue_items(cue):
        paths = item.get("paths")
        named_paths = ", ".join(str(p) for p in paths) if isinstance(paths, list) else ""
        detail = f": {item['detail']}" if item.get("detail") else ""
        lines.append(f"- {item.get('kind', 'item')}: {named_paths}{detail}")
    if named:
        lines += ["", "## The files the cue names", ""]
        for rel, text in named:
            lines += [f"### {rel}", text, ""]
    lines += ["", f"## Short-term facts from the last {short_term_days} days (newest first)", ""]
    if facts:
        for rel, text in facts:
            lines += [f"### {rel}", text, ""]
    else:
        lines.append("(none)")
    lines += [
        "",
        "## What to write",
        "",
        "A short dream-journal entry in markdown (at most about 400 words) that consolidates:",
        "1. Durable patterns: what do these facts suggest that should outlive this week?",
        "2. Near-duplicates: which memories say the same thing, "
        "and which one should absorb the other?",
        "3. Wrong or merely old: which memories look mistaken, superseded or stale, and why?",
        "",
        "Put every change you propose to a memory file under one heading `## Proposals`, "
        "one bullet per change naming the file "
        "(for example `- merge memory/a.md into memory/b.md: why`). "
        "If you propose nothing, write `## Proposals` and `- none`.",
    ]
    return "\n".join(lines) + "\n"


def sit_prompt(stem: str, shelf: str, rel: str, text: str) -> str:
    return "\n".join([
        f"You are sitting with one meditation object tonight: {stem} (the {shelf} shelf).",
        "A sit is not a task. Hold sustained attention on the object below, in the first person, "
        "and write down what you notice; it produces no artifact anyone asked for.",
        NO_TOOLS,
        "",
        f"## The object ({rel})",
        "",
        _clip(text, OBJECT_CHARS),
        "",
        "## What to write",
        "",
        "A short dream-journal entry in the first person (at most about 300 words), "
        "in three parts:",
        "- What shifted: what looks different after holding the object.",
        "- What stayed open: what you could not settle.",
        "- What the next session should carry: one or two lines it should start with.",
    ]) + "\n"

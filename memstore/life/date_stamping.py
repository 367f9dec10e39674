"""Dates that stay true: a relative date in a memory's text gains the absolute date it meant.

"Met Anna yesterday" written on 2026-12-01 becomes "Met Anna yesterday (2026-11-30)": the words as
said, the date right after them. Inline rather than a frontmatter `dates:` map, so the date is read
wherever the sentence is (the bundle, an excerpt, a quote), full-text search indexes it with the
body, and render shows it as the text it is. Resolved from the day of writing (noon UTC, so "2 hours
ago" never crosses midnight); which phrases count is memstore.mirror.date_phrases's rule. Durations
("for 3 years") are left out: whether they start or end at the moment of writing is not in the words
("used it for 3 years" vs "valid for 3 years"); so is a distance from an event ("for 2 weeks after
the launch"), counted from that event, not from the writing. A date goes only after a whole phrase.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstore.core.agent_root import state_dir
from memstore.core.frontreader import split_front
from memstore.core.locks import atomic_write
from memstore.core.pending_dates import CUE, pending_lines, take
from memstore.core.timeutil import parse_date
from memstore.core.toolpath import may_write, resolve
from memstore.mirror.date_phrases import Meant, relative_dates
from memstore.mirror.queries import own_memory_digests

# Already dated: the phrase is followed by "(...2026..." (an annotation, ours or the writer's).
_DATED_AFTER = re.compile(r"\s*\([^)\n]{0,24}\b\d{4}\b")


def _base(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, 12)


def undated(text: str, day: dt.date) -> list[Meant]:
    """The relative dates in `text`, written on `day`, with no absolute date right after them."""
    return [m for m in relative_dates(text, _base(day)) if not _DATED_AFTER.match(text, m.end)]


def annotate(text: str, day: dt.date) -> str:
    """`text` with " (ISO)" after each relative date written on `day` that has none; idempotent."""
    for meant in reversed(undated(text, day)):
        text = f"{text[:meant.end]} ({meant.iso}){text[meant.end:]}"
    return text


def lint_dates(conn: sqlite3.Connection, root: Path, *, fresh_max: int | None = None,
               skipped: list[str] | None = None) -> list[dict[str, str]]:
    """Lint's warnings: each relative date in a T2 memory's body with no absolute date beside it, as
    meant from the memory's `created` day. `fresh_max`: at most this many files not in the cache are
    parsed (status's bound: dateparser costs ~40 ms a file), the others named in `skipped`."""
    import json

    # what each file (by its digest and created day) was found to hold, so that a later lint parses
    # only what changed: dateparser costs milliseconds a file (runtime/state, memstore's)
    cache_path = Path(state_dir(root)) / CACHE_FILE
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
        cache = cache if isinstance(cache, dict) and cache.get("version") == CACHE_VERSION else {}
    except (OSError, ValueError):
        cache = {}
    waiting = pending_lines(str(root))  # what the agent wrote since the last tick, which dates it
    seen: dict[str, list[list[str]]] = {}
    found = []
    for path, created, digest in own_memory_digests(conn):
        key = f"{digest}:{created}"
        messages = cache.get("files", {}).get(key) if isinstance(cache.get("files"), dict) else None
        if not isinstance(messages, list):
            if fresh_max is not None and fresh_max <= 0:
                if skipped is not None:
                    skipped.append(path)
                continue
            fresh_max = None if fresh_max is None else fresh_max - 1
            messages = _messages(root, path, parse_date(created), split_front)
        seen[key] = messages
        found += [{"path": path, "level": "warning", "message": str(m[1])} for m in messages
                  if isinstance(m, list) and len(m) == 2 and m[0] not in waiting.get(path, ())]
    if seen != cache.get("files"):
        try:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(cache_path,
                         json.dumps({"version": CACHE_VERSION, "files": seen}).encode("utf-8"))
        except OSError:
            pass  # a root this process cannot write: the next lint parses again
    return found


CACHE_FILE = "lint-dates.json"
CACHE_VERSION = 3  # one more when the rule (mirror.date_phrases) or the entries' shape changes


def _messages(root: Path, path: str, day: dt.date | None,
              split_front: Callable[[str], tuple[Any, str]]) -> list[list[str]]:
    """[line, message] for each bare relative date in the body and the index's own words (summary,
    description: the row MEMORY.md shows at every start)."""
    if day is None:
        return []
    try:
        front, body = split_front((root / path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return []  # the mirror's own lint names a file it cannot read
    text = "\n".join([*(line for line in front.splitlines() if _INDEX_WORDS.match(line)), body])
    if not CUE.search(text):  # dateparser (a few ms a file) only where a relative date can begin
        return []
    out = []
    for meant in undated(text, day):
        line = text[text.rfind("\n", 0, meant.start) + 1:].split("\n", 1)[0].strip()
        out.append([line, f"relative date {meant.phrase!r} with no absolute date beside it: "
                    f"written {day.isoformat()}, it means {meant.iso}; "
                    f"write \"{meant.phrase} ({meant.iso})\""])
    return out


_INDEX_WORDS = re.compile(r"(?:summary|description):\s")




# ---------------------------------------------------------------- what the agent wrote


MAX_DATED_LINES = 200  # a tick's dateparser work (tens of ms a line); lint names the rest
_FRONT = re.compile(r"\ufeff?---[ \t]*\r?\n(?:.*?\r?\n)?---[ \t]*(?:\r?\n|$)", re.S)
_FENCE = re.compile(r"^\s*(```|~~~)")


def date_written(root: Path) -> list[str]:
    """The tick's pass over what the agent wrote (memstore.core.pending_dates): in each memory, each
    line equal to a line the agent added gains the absolute dates of its relative ones, as meant at
    the instant of writing. A line is found by its whole text, so a later edit elsewhere in the
    file, or a reordering, does not stop it; a line changed since, found twice, or inside a code
    fence is left alone (lint names it). Only a file whose real path lies in memory/ is rewritten (a
    folder linked out of it is not followed), and only if nobody changed it meanwhile. Returns the
    paths (relative to root) rewritten. Call with the mirror lock held."""
    records, taken = take(str(root))
    by_path: dict[str, dict[tuple[str, dt.date], None]] = {}
    budget = MAX_DATED_LINES
    for record in records:
        try:
            day = dt.datetime.fromisoformat(record["at"]).date()  # as note and new take now.date()
        except ValueError:
            continue
        for said in record["text"].split("\n"):
            said = said.strip()
            if (said and CUE.search(said) and (said, day) not in by_path.get(record["path"], {})
                    and budget):
                # once, however often written
                by_path.setdefault(record["path"], {})[(said, day)] = None
                budget -= 1
    rewritten = []
    for rel, written in by_path.items():
        path = root / rel
        written_here = ".." not in Path(rel).parts and rel.startswith("memory/")
        if not written_here or may_write(resolve(root, str(path), None)) is None:
            continue  # the real path must be a memory: no folder linked out of memory/ is followed
        real = Path(os.path.realpath(path))
        try:
            before = real.read_bytes()
            text = before.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # gone, or not text we can rewrite without losing bytes
        front = _FRONT.match(text)
        if front is None and text.lstrip("\ufeff").startswith("---"):
            continue  # a frontmatter we cannot find the end of: its lines are not ours to date
        start = front.end() if front else 0
        # the body, and the frontmatter's summary and description lines (the row MEMORY.md shows)
        head = _dated_lines(text[:start], list(written), only=_INDEX_WORDS) if start else ""
        dated = head + _dated_lines(text[start:], list(written))
        if dated != text and atomic_write(real, dated.encode("utf-8"), expect=before):
            rewritten.append(rel)
    if taken is not None:
        Path(taken).unlink(missing_ok=True)
    return rewritten


def _dated_lines(body: str, written: list[tuple[str, dt.date]],
                 only: re.Pattern[str] | None = None) -> str:
    lines = body.split("\n")
    fenced, inside = set(), False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            inside = not inside
            fenced.add(i)
        elif inside or (only is not None and not only.match(line)):
            fenced.add(i)
    for said, day in written:
        holding = [i for i, line in enumerate(lines) if line.strip() == said and i not in fenced]
        if len(holding) != 1:
            continue
        line = lines[holding[0]]
        at = line.index(said)
        for m in reversed(undated(said, day)):  # from the end, so the earlier offsets hold
            end = at + m.end
            line = f"{line[:end]} ({m.iso}){line[end:]}"
        lines[holding[0]] = line
    return "\n".join(lines)

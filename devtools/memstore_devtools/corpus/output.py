"""Turning values into the exact bytes on disk, and writing them.

YAML is written as text (no dumper): `_yaml_str` picks a plain or a JSON double-quoted
scalar, `_frontmatter` lays out the block. Dates are rendered without strftime's
locale-dependent names, so the C locale cannot change a byte. `_write` sets each file's
mtime from the file's own dates, never the wall clock.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, date, datetime
from pathlib import Path

from memstore_devtools.corpus.vocabulary import _MONTHS

_UTC = UTC

_PLAIN_SAFE_START = re.compile(r"[A-Za-z0-9(]")
_YAML_SPECIAL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"})


def _yaml_str(s: str) -> str:
    """A YAML scalar for `s`: plain when unambiguous, else JSON double-quoted (valid YAML)."""
    if (
        s
        and _PLAIN_SAFE_START.match(s)
        and ": " not in s
        and " #" not in s
        and not s.endswith(":")
        and s == s.strip()
        and s.lower() not in _YAML_SPECIAL_WORDS
        and not s[0].isdigit()
        and "\n" not in s
    ):
        return s
    return json.dumps(s, ensure_ascii=False)


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _stability(k: int) -> float:
    return round(min(14 * 1.6**k, 365.0), 1)


def _num(x: float) -> str:
    """Render 14.0 as 14 and 57.344 as 57.3, as a person would write it."""
    return f"{x:g}"


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _human_date(d: date) -> str:
    """'3 March 2026', without strftime so the C locale cannot change the bytes."""
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def _frontmatter(lines: list[tuple[str, str]]) -> str:
    # A key starting with "#" is a YAML comment line, written without a value.
    body = "".join(f"{k}\n" if k[0] == "#" else f"{k}: {v}\n" for k, v in lines)
    return "---\n" + body + "---\n"


_UTIME_FD = os.utime in os.supports_fd
_O_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)


def _write(path: Path, data: bytes, mtime: float) -> None:
    # Raw os.open/os.write: at 100k files the buffered-file overhead of open() shows.
    fd = os.open(path, _O_FLAGS, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if _UTIME_FD:
            os.utime(fd, (mtime, mtime))
    finally:
        os.close(fd)
    if not _UTIME_FD:
        os.utime(path, (mtime, mtime))


def _epoch(d: date | datetime) -> float:
    if isinstance(d, datetime):
        return d.timestamp()
    return datetime(d.year, d.month, d.day, 12, 0, tzinfo=_UTC).timestamp()

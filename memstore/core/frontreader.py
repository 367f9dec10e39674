"""The standard library's frontmatter readers: the hook's path never loads a YAML parser. Standard library only.

Two readers, for two jobs, kept apart on purpose:

- split_front, front_values, unquote: flat and forgiving. The `key: value` lines memstore writes itself
  (plain, "json", 'single' values on one line), read by the bundle, the review queue, the proposals
  record, deleted copies and the nightly jobs. Whatever is not such a line is skipped.
- read_frontmatter: exact or nothing. A lens file the mirror has not parsed yet: the answer must be
  the one PyYAML's safe loader gives at sync (tests/test_lens_fresh.py holds the two to it), so any
  frontmatter where the two could differ (more YAML than `key: scalar` and one nested level, or a
  character YAML reads otherwise, such as a lone CR or an NBSP) is declined (None) and left to sync.
"""

from __future__ import annotations

import json
import re

# ---------------------------------------------------------------- flat and forgiving (memstore's own lines)


def split_front(text: str) -> tuple[str, str]:
    """(frontmatter text, body) by the --- fences; no YAML parsing on this path."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            after = text.find("\n", end + 4)
            return text[4:end], text[after + 1 :] if after != -1 else ""
    return "", text


def front_values(front: str) -> dict[str, str]:
    """The flat `key: value` lines of a frontmatter block's text, unquoted."""
    values: dict[str, str] = {}
    for line in front.splitlines():
        match = re.match(r"^([A-Za-z_][\w-]*):[ \t]*(.*)$", line)
        if match:
            values[match.group(1)] = unquote(match.group(2))
    return values


def unquote(value: str) -> str:
    value = value.strip()
    if value.startswith('"'):
        try:
            loaded = json.loads(value)
            return loaded if isinstance(loaded, str) else value
        except ValueError:
            return value.strip('"')
    if value.startswith("'"):
        return value[1:-1].replace("''", "'") if value.endswith("'") and len(value) > 1 else value[1:]
    return re.sub(r"[ \t]+#.*$", "", value)


# ---------------------------------------------------------------- exact or nothing (lens files, before sync)
# (The lens reader, memstore.core.lenses.current_lenses, reads a lens changed since the last sync with it.)

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

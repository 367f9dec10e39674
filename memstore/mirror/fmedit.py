"""Edit the values of a few frontmatter keys and leave every other byte alone.

Used by `flush` (policy fields) and `init` (defaults, name = stem). A person's
comments, key order, quoting, blank lines, BOM and line endings survive; only the
value text of the named keys changes, and keys that are missing are appended at the
end of the block. The result is parsed again and checked before it is returned, so
an edit that would change anything else is refused rather than written.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from memstore.core.config import Config
from memstore.core.errors import MemstoreError
from memstore.core.timeutil import fmt
from memstore.mirror.parsing import Refused, load_frontmatter, parse_bytes

_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "none", "~"}


class CannotEdit(MemstoreError):
    """The frontmatter is not in a shape we can edit without risk; the file is left as it is."""


def render_value(value: Any) -> str:
    """YAML text for a policy value: numbers plain, instants as ...Z, text quoted when needed."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = f"{round(value, 4):.4f}".rstrip("0").rstrip(".")
        return text if "." in text else text + ".0"
    if isinstance(value, dt.datetime):
        return fmt(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value)
    if _PLAIN_SAFE.match(text) and text.lower() not in _RESERVED and not _looks_numeric(text):
        return text
    return json.dumps(text, ensure_ascii=False)


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return bool(re.match(r"^\d{4}-\d{2}-\d{2}", text))


def _key_line(key: str) -> re.Pattern[str]:
    # key, colon, the gap, then the value up to a comment (YAML: a # after white space)
    return re.compile(r"^(" + re.escape(key) + r"[ \t]*:)([ \t]*)"
                      r"((?:(?![ \t]#)[^#])*?|)((?:^|[ \t]*)#.*)?$")


def set_fields(raw: bytes, updates: dict[str, Any]) -> bytes:
    """Return the file bytes with `updates` applied to its frontmatter (appended if missing)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CannotEdit("not UTF-8") from exc
    bom = ""
    if text.startswith("\ufeff"):
        bom, text = "\ufeff", text[1:]
    if "\x00" in text:
        raise CannotEdit("contains NUL bytes")
    newline = "\r\n" if "\r\n" in text else "\n"
    if newline == "\r\n" and text.replace("\r\n", "").count("\n"):
        raise CannotEdit("mixed line endings")
    lines = text.split(newline)
    if lines and _FENCE.match(lines[0]) and lines[0].rstrip() != "---":
        raise CannotEdit("frontmatter fence is not exactly ---")

    if not lines or lines[0].rstrip() != "---":
        block = ["---", *(f"{k}: {render_value(v)}".rstrip() for k, v in updates.items()), "---"]
        result = bom + newline.join(block) + newline + text
        _verify(result, newline, updates, original=None)
        _agrees_with_parser(raw, result.encode("utf-8"), updates)
        return result.encode("utf-8")

    try:
        close = next(i for i in range(1, len(lines)) if _FENCE.match(lines[i]))
    except StopIteration:
        raise CannotEdit("frontmatter is never closed") from None
    if lines[close].rstrip() != "---":
        raise CannotEdit("frontmatter fence is not exactly ---")
    head = lines[1:close]
    original = _load("\n".join(head))
    pending = dict(updates)
    for index, line in enumerate(head):
        for key in list(pending):
            match = _key_line(key).match(line)
            if not match:
                continue
            following = head[index + 1] if index + 1 < len(head) else ""
            if (match.group(3) in ("", "|", ">", "|-", ">-")
                    and following.startswith((" ", "\t", "-"))):
                raise CannotEdit(f"{key} spans several lines")
            value = render_value(pending.pop(key))
            gap = match.group(2) or " "
            comment = match.group(4) or ""
            if comment and not match.group(3):
                gap, comment = " ", gap + comment  # `key:   # note`: the spaces are the comment's
            if comment and not comment[0].isspace():
                comment = " " + comment
            head[index] = (match.group(1) + (gap + value if value else "") + comment).rstrip()
            break
    for key, value in pending.items():
        head.append(f"{key}: {render_value(value)}".rstrip())
    result = bom + newline.join([lines[0], *head, *lines[close:]])
    _verify(result, newline, updates, original)
    _agrees_with_parser(raw, result.encode("utf-8"), updates)
    return result.encode("utf-8")


_FENCE = re.compile(r"^-{3,}\s*$")


def _agrees_with_parser(before: bytes, after: bytes, updates: dict[str, Any]) -> None:
    """The last word: memstore's own parser must read the same body and the same other keys.

    fmedit and the parser find frontmatter in separate ways; if they ever disagree (odd
    fences, stray bytes), refusing is safe and guessing is not.
    """
    old = parse_bytes(before, "x", Config())
    new = parse_bytes(after, "x", Config())
    if new.body != old.body:
        raise CannotEdit("the edit would change the body")
    for key, value in old.meta.items():
        if key not in updates and new.meta.get(key) != value:
            raise CannotEdit(f"the edit would change {key}")
    for key, value in updates.items():
        if _normal(new.meta.get(key)) != _normal(value):
            raise CannotEdit(f"{key} would not read back as {value!r}")


def _load(text: str) -> dict[str, Any]:
    try:
        loaded = load_frontmatter(text)  # the parser's loader: aliases and deep nesting refused
    except Refused as exc:
        raise CannotEdit(str(exc)) from exc
    except Exception as exc:  # PyYAML's constructors raise more than YAMLError (2026-02-30, ...)
        raise CannotEdit("frontmatter is not valid YAML") from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise CannotEdit("frontmatter is not a mapping")
    return loaded


def _normal(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return fmt(value)
    if isinstance(value, float):
        return round(value, 4)
    return value


def _verify(result: str, newline: str, updates: dict[str, Any],
            original: dict[str, Any] | None) -> None:
    body = result.lstrip("\ufeff").split(newline)
    close = next(i for i in range(1, len(body)) if body[i].rstrip() == "---")
    after = _load("\n".join(body[1:close]))
    for key, value in updates.items():
        if _normal(after.get(key)) != _normal(value):
            raise CannotEdit(f"{key} would not read back as {value!r}")
    if original is not None:
        for key, value in original.items():
            if key not in updates and after.get(key) != value:
                raise CannotEdit(f"editing would change {key}")

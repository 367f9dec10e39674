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

import yaml
from frontmatter.default_handlers import SafeLoader

from memstore.errors import MemstoreError
from memstore.timeutil import fmt

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
    return re.compile(r"^(" + re.escape(key) + r"[ \t]*:)([ \t]*)(.*?)([ \t]+#.*)?$")


def set_fields(raw: bytes, updates: dict[str, Any]) -> bytes:
    """Return the file bytes with `updates` applied to its frontmatter (appended if missing)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CannotEdit("not UTF-8") from exc
    bom = ""
    if text.startswith("\ufeff"):
        bom, text = "\ufeff", text[1:]
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)

    if not lines or lines[0].rstrip() != "---":
        block = ["---", *(f"{k}: {render_value(v)}".rstrip() for k, v in updates.items()), "---"]
        result = bom + newline.join(block) + newline + text
        _verify(result, newline, updates, original=None)
        return result.encode("utf-8")

    try:
        close = next(i for i in range(1, len(lines)) if lines[i].rstrip() == "---")
    except StopIteration:
        raise CannotEdit("frontmatter is never closed") from None
    head = lines[1:close]
    original = _load("\n".join(head))
    pending = dict(updates)
    for index, line in enumerate(head):
        for key in list(pending):
            match = _key_line(key).match(line)
            if not match:
                continue
            following = head[index + 1] if index + 1 < len(head) else ""
            if match.group(3) in ("", "|", ">", "|-", ">-") and following.startswith((" ", "\t", "-")):
                raise CannotEdit(f"{key} spans several lines")
            value = render_value(pending.pop(key))
            gap = match.group(2) or " "
            head[index] = (match.group(1) + (gap + value if value else "") + (match.group(4) or "")).rstrip()
            break
    for key, value in pending.items():
        head.append(f"{key}: {render_value(value)}".rstrip())
    result = bom + newline.join([lines[0], *head, *lines[close:]])
    _verify(result, newline, updates, original)
    return result.encode("utf-8")


def _load(text: str) -> dict[str, Any]:
    try:
        loaded = yaml.load(text, Loader=SafeLoader)
    except yaml.YAMLError as exc:
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


def _verify(result: str, newline: str, updates: dict[str, Any], original: dict[str, Any] | None) -> None:
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

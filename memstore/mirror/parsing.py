"""Parse one markdown file into frontmatter fields, body and a list of problems.

Parsing never raises on file content: malformed YAML, a BOM, CRLF endings, a
frontmatter that is not a mapping, wrong types or a key named `content` all degrade
to defaults and are recorded as problems, which `memstore lint` reports. One bad
file must never stop a sync, a render or a search.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from frontmatter.default_handlers import SafeLoader as _HANDLER_LOADER  # C one if any
from frontmatter.default_handlers import YAMLHandler

from memstore.core.config import Config
from memstore.core.frontreader import (
    PROSE,
    STRAY,
    UNCLOSED,
    Slip,
    advice,
    check,
    entries,
    mend,
    slips,
)
from memstore.core.kinds import KEBAB, memory_type
from memstore.core.policy import format_base, parse_base
from memstore.core.timeutil import parse_date, parse_when
from memstore.meaning.chunking import one_line

_HANDLER = YAMLHandler()

# Frontmatter never needs more than a few levels (a lens's trigger is two); memstore's own code and
# json walk the values recursively, so a deeper one would stop a command, not just look odd.
MAX_DEPTH = 32
ALIASES = "frontmatter uses YAML aliases (&/*), which memstore does not read"


class Refused(yaml.YAMLError):
    """Frontmatter memstore will not build: an alias (a cycle or an exponential "billion laughs"
    expansion) or nesting past MAX_DEPTH. Its message is the file's lint problem."""


def load_frontmatter(text: str) -> Any:
    """The YAML of a frontmatter block, by the safe loader, with aliases and deep nesting refused.

    The node graph is composed first (linear in the text: an alias is a second reference to a
    node, not a copy) and walked without recursion; only a tree of bounded depth is constructed.
    Raises yaml.YAMLError (Refused for what this adds) and, from the constructors, other types.
    """
    loader = _HANDLER_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        aliased = "*" in text  # an alias needs its star; without one only the depth is looked at
        if not aliased and _depth_bound(text) <= MAX_DEPTH:
            return loader.construct_document(node)  # too few places for nesting to start: no walk
        seen: set[int] = set()
        todo = [(node, 1)]
        while todo:
            item, depth = todo.pop()
            if aliased:
                if id(item) in seen:  # a node met twice is an alias (a cycle, or a laugh)
                    raise Refused(ALIASES)
                seen.add(id(item))
            if depth > MAX_DEPTH:
                raise Refused(f"frontmatter nests deeper than {MAX_DEPTH} levels, "
                              "which memstore does not read")
            if isinstance(item, yaml.SequenceNode):
                children = item.value
            elif isinstance(item, yaml.MappingNode):
                children = [part for pair in item.value for part in pair]
            else:
                continue
            todo += [(child, depth + 1) for child in children
                     if aliased or not isinstance(child, yaml.ScalarNode)]
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _depth_bound(text: str) -> int:
    """At least the nesting depth of YAML text: a collection inside another starts on a new line,
    after a flow bracket, or after an indicator on the same line ("- - a", "? - a", ": - a")."""
    same_line = text.count("- ") + text.count("-\t") + text.count("[") + text.count("{")
    if "?" in text:  # a complex key's "? " and ": " may open a collection too
        same_line += text.count("? ") + text.count(": ") + text.count("?\t") + text.count(":\t")
    return 1 + text.count("\n") + same_line


ERROR = "error"
WARNING = "warning"

POLICY_FIELDS = ("access_count", "last_accessed", "last_reinforced", "stability")


@dataclass
class Problem:
    level: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"level": self.level, "message": self.message}


@dataclass
class Parsed:
    """What the mirror keeps of one file. Policy values are None when absent or invalid."""

    meta: dict[str, Any]
    body: str
    name: str
    type: str | None
    summary: str | None
    description: str | None
    created: dt.date | None
    last_updated: dt.date | None
    status: str | None
    in_flight: bool
    state: str | None
    pin: bool
    importance: float
    access_count: int | None
    stability: float | None
    last_accessed: dt.datetime | None
    last_reinforced: dt.datetime | None
    has_frontmatter: bool
    problems: list[Problem] = field(default_factory=list)
    policy_base: str | None = None  # the starting state flush wrote (policy.parse_base), normalised
    # a frontmatter block is there but cannot be read (not YAML, never closed, not a mapping,
    # refused): every field took its default, so sync keeps the last good values (mirror.adoption)
    broken: bool = False
    # what an excerpt replied to, as one line (meaning.chunking): embedded apart, never shown
    context: str | None = None

    @property
    def row_text(self) -> str:
        """The index row text: summary, else description, else the first body line."""
        for candidate in (self.summary, self.description):
            if candidate and candidate.strip():
                return " ".join(candidate.split())
        return first_line(self.body)


def first_line(body: str) -> str:
    """The first line that says something; a frontmatter block that did not parse (the body then
    opens with `---`) and rule lines (---, ===, ***) are not a summary."""
    text = body.lstrip("\ufeff")
    if text.lstrip().startswith("---"):
        opened = text.lstrip()
        end = opened.find("\n---", 3)
        text = opened[end + 4:] if end != -1 else ""
    for line in text.splitlines():
        found = line.strip().lstrip("#").strip()
        if found and not set(found) <= set("-=*_~` "):
            return found
    return ""


def decode(raw: bytes, problems: list[Problem]) -> str:
    if b"\x00" in raw[:8192]:
        problems.append(Problem(ERROR,
                                "binary content (NUL bytes); indexed as text with replacements"))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        problems.append(Problem(ERROR, "not valid UTF-8; undecodable bytes replaced for indexing"))
    if text.startswith("\ufeff"):
        text = text[1:]
        problems.append(Problem(WARNING, "starts with a byte-order mark"))
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
        problems.append(Problem(WARNING, "CRLF line endings"))
    text = text.replace("\x00", "")
    return text


def split_frontmatter(text: str, problems: list[Problem]) -> tuple[dict[str, Any], str, bool]:
    """(mapping, body, had_frontmatter). Never raises."""
    split = read_front(text, problems)
    return split.meta, split.body, split.had


@dataclass
class Split:
    """A file's frontmatter as read: `broken` when even the tolerant reading failed, and then
    `prose` holds the text keys (summary, description, context) still readable one by one."""

    meta: dict[str, Any]
    body: str
    had: bool
    broken: bool = False
    prose: dict[str, str] = field(default_factory=dict)


def _slip_problems(found: list[Slip], level: str) -> list[Problem]:
    # the block's text starts with the rest of the opening fence's line: its index 0 is line 1
    return [Problem(level, advice(slip, 1) + (
                "" if slip[2] in (STRAY, UNCLOSED)
                else " (read meanwhile as written, the text after the key)"))
            for slip in found]


def _load_tolerant(fm: str, problems: list[Problem]) -> Any:
    """The block's YAML, the writer's usual slips read as meant (frontreader.slips) and said."""
    found = slips(fm)
    mendable = [slip for slip in found if slip[2] not in (STRAY, UNCLOSED)]
    if not mendable:
        try:
            return load_frontmatter(fm)
        except Refused:
            raise
        except Exception:
            problems += _slip_problems(found, ERROR)  # a stray line or an open block, by its line
            raise
    try:
        loaded = load_frontmatter(mend(fm, mendable))
    except Exception as mended_error:
        try:
            loaded = load_frontmatter(fm)  # the mending made it worse: YAML's reading, slips unsaid
        except Refused:
            raise  # an alias or a depth refused is said as such, slips or not
        except Exception:
            problems += _slip_problems(found, ERROR)
            raise mended_error from None  # what is wrong past the slips, on the file's own lines
        return loaded
    try:
        load_frontmatter(fm)
        strict = True  # YAML reads it too, only not as meant (a ' #' cut, an anchor): a warning
    except Exception:
        strict = False
    # YAML read the rest: no stray line
    problems += _slip_problems(mendable, WARNING if strict else ERROR)
    return loaded


def read_front(text: str, problems: list[Problem]) -> Split:
    """The frontmatter and body of decoded text, read tolerantly; never raises."""
    if not _HANDLER.FM_BOUNDARY.match(text):
        return Split({}, text, False)
    try:
        fm, body = _HANDLER.split(text)
    except ValueError:
        problems.append(Problem(ERROR, "frontmatter opened with --- but never closed: "
                                "add a line --- after its last key"))
        return Split({}, text, False, broken=True, prose=_prose(text.partition("\n")[2]))
    body = body.lstrip("\n")
    try:
        loaded = _load_tolerant(fm, problems)
    except Refused as exc:
        problems.append(Problem(ERROR, str(exc)))
        return Split({}, body, True, broken=True)
    except yaml.YAMLError as exc:
        # where the construct YAML choked on began (an unclosed `[`), else where it noticed
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        # the block opens on the fence's line
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problems.append(Problem(ERROR, f"frontmatter is not valid YAML{where}"))
        return Split({}, body, True, broken=True, prose=_prose(fm))
    except Exception as exc:  # the C loader can raise odd types on odd input
        problems.append(Problem(ERROR, f"frontmatter could not be read ({type(exc).__name__})"))
        return Split({}, body, True, broken=True, prose=_prose(fm))
    if loaded is None:
        return Split({}, body, True)
    if not isinstance(loaded, dict):
        problems.append(Problem(ERROR, f"frontmatter is a {type(loaded).__name__}, not a mapping"))
        return Split({}, body, True, broken=True)
    # YAML allows non-string keys (1: x, null: y) at any depth; we keep string keys only,
    # so the frontmatter always serialises (the mirror stores it as JSON).
    return Split(_string_keys(loaded), body, True)


def _prose(fm: str) -> dict[str, str]:
    """The text keys of a block YAML cannot read as a whole, each read from its own lines."""
    out: dict[str, str] = {}
    for key, lines in entries(fm).items():
        if key not in PROSE:
            continue
        for text in (lines, lines.split("\n", 1)[0]):  # its lines, else its own line alone
            try:
                value = load_frontmatter(mend(text, slips(text)))
            except Exception:
                continue
            if isinstance(value, dict) and isinstance(value.get(key), str):
                out[key] = value[key]
                break
    return out


def strict_problem(raw: bytes) -> str | None:
    """What keeps a file's frontmatter from being read by YAML as written (its first slip, else
    YAML's own complaint), or None: the bar for what leaves this machine (a team's share)."""
    problems: list[Problem] = []
    text = decode(raw, problems)
    if not _HANDLER.FM_BOUNDARY.match(text):
        return None
    found, first = check(text)
    if found:
        return advice(found[0], first)
    split = read_front(text, problems)
    errors = [p.message for p in problems if p.level == ERROR]
    return errors[0] if split.broken and errors else None


def _string_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value


def _text(meta: dict[str, Any], key: str, problems: list[Problem]) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, (str, int, float, dt.date)) and not isinstance(value, bool):
        return str(value)
    problems.append(Problem(ERROR, f"{key} should be text, found {type(value).__name__}"))
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            number = float(value)
        elif isinstance(value, str):
            number = float(value.strip())
        else:
            return None
    except (ValueError, OverflowError):  # "many", or an integer too large for a float
        return None
    return number if math.isfinite(number) else None


def _bool(meta: dict[str, Any], key: str, problems: list[Problem]) -> bool:
    value = meta.get(key)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "on", "1"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "no", "off", "0", ""}:
        return False
    if isinstance(value, int):
        return value != 0
    problems.append(Problem(ERROR, f"{key} should be true or false, found {value!r}"[:200]))
    return False


_CONFLICT = re.compile(r"^<{7}(?: |$).*?^={7}$.*?^>{7}(?: |$)", re.M | re.S)


def parse_bytes(raw: bytes, stem: str, config: Config, *, is_t2: bool = False) -> Parsed:
    """Parse file bytes. `stem` is the file name without .md; `is_t2` adds T2 hygiene checks."""
    problems: list[Problem] = []
    text = decode(raw, problems)
    if _CONFLICT.search(text):
        # Said before the YAML error it usually causes, which names the symptom, not the cause.
        problems.append(Problem(ERROR, "unresolved git merge conflict (<<<<<<< ... >>>>>>> lines): "
                                "keep one side of each block, then run memstore sync "
                                "(and flush on the flushing machine)"))
    split = read_front(text, problems)
    meta, body, had, broken = split.meta, split.body, split.had, split.broken
    if not text.strip():
        problems.append(Problem(WARNING, "empty file"))

    name = _text(meta, "name", problems) or stem
    # a block YAML cannot read still shows its own summary: the row follows the file, never stale
    summary = _text(meta, "summary", problems) or split.prose.get("summary")
    description = _text(meta, "description", problems) or split.prose.get("description")
    typ = _text(meta, "type", problems)
    status = _text(meta, "status", problems)
    state = _text(meta, "state", problems)
    in_flight = _bool(meta, "in_flight", problems)
    context = one_line(_text(meta, "context", problems) or split.prose.get("context") or "") or None
    pin = _bool(meta, "pin", problems)

    created = last_updated = None
    for key in ("created", "last_updated"):
        value = meta.get(key)
        if value is None:
            continue
        parsed = parse_date(value)
        if parsed is None:
            problems.append(Problem(ERROR, f"{key} is not a date: {value!r}"[:200]))
        elif key == "created":
            created = parsed
        else:
            last_updated = parsed

    importance = 0.0
    if meta.get("importance") is not None:
        number = _number(meta["importance"])
        if number is None:
            problems.append(Problem(ERROR,
                                    f"importance is not a number: {meta['importance']!r}"[:200]))
        elif not 0 <= number <= 10:
            importance = min(max(number, 0.0), 10.0)
            problems.append(Problem(ERROR,
                                    f"importance {number:g} is outside 0-10; using {importance:g}"))
        else:
            importance = number

    access_count: int | None = None
    if meta.get("access_count") is not None:
        number = _number(meta["access_count"])
        if number is None or number < 0 or number != int(number):
            problems.append(Problem(ERROR, "access_count is not a whole number >= 0: "
                                    f"{meta['access_count']!r}"[:200]))
        else:
            access_count = int(min(number, 1e9))

    stability: float | None = None
    if meta.get("stability") is not None:
        number = _number(meta["stability"])
        if number is None or number <= 0:
            problems.append(Problem(ERROR, "stability is not a positive number: "
                                    f"{meta['stability']!r}"[:200]))
        elif number > config.stability_cap:
            stability = config.stability_cap
            problems.append(Problem(WARNING,
                                    f"stability {number:g} is above the cap; using {stability:g}"))
        else:
            stability = number

    stamps: dict[str, dt.datetime | None] = {}
    for key in ("last_accessed", "last_reinforced"):
        value = meta.get(key)
        stamps[key] = None
        if value is None or value == "":
            continue
        when = parse_when(value)
        if when is None:
            problems.append(Problem(ERROR, f"{key} is not a timestamp: {value!r}"[:200]))
        stamps[key] = when

    policy_base: str | None = None
    if meta.get("policy_base") is not None:
        base = parse_base(meta["policy_base"])
        if base is None:
            problems.append(Problem(
                ERROR, "policy_base is not "
                "'COUNT STABILITY LAST_ACCESSED LAST_REINFORCED THROUGH': "
                f"{meta['policy_base']!r}"[:200]))
        else:
            policy_base = format_base(*base)

    if is_t2:
        file_type = memory_type(stem + ".md")
        if not had:
            problems.append(Problem(WARNING, "no frontmatter; every field takes its default"))
        if meta.get("name") is not None and name != stem:
            problems.append(Problem(ERROR, f"name {name!r} does not match the file name {stem!r}"))
        if typ is not None and file_type and typ != file_type:
            problems.append(Problem(WARNING, f"type {typ!r} differs from the file name's type "
                                    f"{file_type!r}"))
        topic = stem.split("_", 1)[1] if "_" in stem else stem
        if not KEBAB.match(topic):
            problems.append(Problem(WARNING, f"topic {topic!r} is not kebab-case"))
        if had and meta and not (summary or description):
            problems.append(Problem(WARNING,
                                    "no summary or description; the row shows the first body line"))
        if "content" in meta:
            problems.append(Problem(WARNING, "frontmatter has a key named 'content' "
                                    "(kept; many tools choke on it)"))
        missing = [key for key in POLICY_FIELDS if key not in meta]
        if had and missing and len(missing) < len(POLICY_FIELDS):
            problems.append(Problem(WARNING, f"policy fields missing: {', '.join(missing)}"))
        if typ is None:
            typ = file_type
        name = stem if meta.get("name") is None else name

    return Parsed(
        meta=meta,
        body=body,
        name=name,
        type=typ,
        summary=summary,
        description=description,
        created=created,
        last_updated=last_updated,
        status=status,
        in_flight=in_flight,
        state=state,
        pin=pin,
        importance=importance,
        access_count=access_count,
        stability=stability,
        last_accessed=stamps["last_accessed"],
        last_reinforced=stamps["last_reinforced"],
        has_frontmatter=had,
        problems=problems,
        policy_base=policy_base,
        broken=broken,
        context=context,
    )

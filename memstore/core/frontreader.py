"""The standard library's frontmatter readers: the hook's path never loads a YAML parser.

Standard library only. Two readers, for two jobs, kept apart on purpose, and the one rule for a
writer's usual slips:

- split_front, front_values, unquote: flat and forgiving. The `key: value` lines memstore writes
  itself (plain, "json", 'single' values on one line), read by the bundle, the review queue, the
  proposals record, deleted copies and the nightly jobs. Whatever is not such a line is skipped.
- read_frontmatter: exact or nothing. A lens file the mirror has not parsed yet: the answer must be
  the one PyYAML's safe loader gives at sync (tests/test_lens_fresh.py holds the two to it), so any
  frontmatter where the two could differ (more YAML than `key: scalar` and one nested level, or a
  character YAML reads otherwise, such as a lone CR or an NBSP) is declined (None) and left to
  sync.
- slips, mend, advice: the usual ways a hand-written `key: value` line breaks YAML or is cut by it
  (an unquoted ': ', a ' #' in a summary, a value opening with a YAML indicator), found without
  YAML. The mirror reads a slipped line as the writer meant it (mend), lint and the hook's answer
  say how to mend it (advice): one rule, so the three agree.
"""

from __future__ import annotations

import json
import re

# -------------------------------------------------- flat and forgiving (memstore's own lines)


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
        return (value[1:-1].replace("''", "'") if value.endswith("'") and len(value) > 1
                else value[1:])
    return re.sub(r"[ \t]+#.*$", "", value)


# -------------------------------------------------- exact or nothing (lens files, before sync)
# (memstore.core.lenses.current_lenses reads a lens changed since the last sync with it.)

_PLAIN_FIRST = set("-?:,[]{}#&*!|>'\"%@`")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_DOUBLE = re.compile(r'(?:[^"\\]|\\["\\/bfnrtu])*')  # escapes JSON and YAML read alike
# what YAML 1.1 (PyYAML) reads as something other than a string
_NOT_STRING = re.compile(r"[0-9].*|[+-][0-9.].*|\.([0-9]|inf|nan).*|=|<<|y|Y|yes|Yes|YES|no|No|NO|"
                         r"true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF", re.IGNORECASE)


def _scalar(text: str) -> tuple[bool, object]:
    """(understood, value) of one YAML scalar on one line, as PyYAML's safe loader reads it;
    anything else is (False, None), and the caller leaves the file to sync."""
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
        # a collection, an anchor, a tag, a block scalar, a number, a date, a comment
        return False, None
    return True, text


def _odd_chars(text: str) -> bool:
    """Characters on which this reader and PyYAML could disagree: controls (C0 but CR, LF: a tab
    too; DEL; C1), the line breaks YAML knows and str.split does not (NEL, U+2028, U+2029, a lone
    CR), a byte-order mark, and every space but the ASCII one (str.strip takes NBSP or U+3000 away,
    YAML keeps them)."""
    if "\r" in text.replace("\r\n", ""):
        return True  # a lone CR is a line break to YAML, not to str.split("\n")
    return any((c < " " and c not in "\r\n") or "\x7f" <= c <= "\x9f"
               or c in "\u2028\u2029\ufeff"
               or (c.isspace() and c not in " \r\n") for c in text)


def read_frontmatter(text: str) -> tuple[dict[str, object], str] | None:
    """(mapping, body) of a lens file, or None when its frontmatter is more YAML than this reader
    takes on.

    Takes `key: scalar` lines, one level of `key: scalar` lines indented alike under a bare `key:`
    (trigger:), blank lines and # comment lines: what a lens needs, read as PyYAML reads it
    (tests/test_lens_fresh.py holds the two readers to the same answers)."""
    text = text[1:] if text.startswith("\ufeff") else text
    if not text.startswith("---"):
        return {}, text
    close = text.find("\n---", 3)
    if _odd_chars(text[:close if close >= 0 else len(text)]):
        # YAML would break or keep these where str.split/strip would not: sync's parser decides
        return None
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
            return ({k: (None if v == {} else v) for k, v in meta.items()},
                    "\n".join(lines[number + 1:]).lstrip("\n"))
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        width = len(line) - len(line.lstrip(" "))
        key, sep, rest = line.strip().partition(":")
        if "\t" in line[:width + 1] or not sep or not _KEY.fullmatch(key) or (
                rest and rest[0] != " "):
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


# -------------------------------------------------- the usual slips (the writer's meaning)

PROSE = ("summary", "description", "context")  # text keys: a '#' or an indicator there is text
# matched on a line stripped of its trailing blanks: a lazy value before a blank tail would rescan
# every run of blanks (a line of spaces cost the hook minutes)
_ENTRY_RE = re.compile(r"([A-Za-z_][\w-]*):(?:[ \t]+(.*))?")


def _entry(line: str) -> re.Match[str] | None:
    """A top-level `key: value` line: the key, and its value with no trailing blanks (None: no
    entry)."""
    return _ENTRY_RE.fullmatch(line.rstrip(" \t"))
_COMMENT = re.compile(r"[ \t]#")
_DOUBLE_HEAD = re.compile(r'"(?:[^"\\]|\\.)*"')
_SINGLE_HEAD = re.compile(r"'(?:[^']|'')*'")
_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*[ \t]*(?:#.*)?")
COLON, HASH, START, TAIL, STRAY, UNCLOSED = "colon", "hash", "start", "tail", "stray", "unclosed"
# (line index in the block, key, kind, the value as meant, lines the entry spans)
Slip = tuple[int, str, str, str, int]


def _spans(lines: list[str], at: int) -> int:
    """How many lines the top-level entry at `at` spans: itself and the indented lines after it."""
    end = at + 1
    while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip():
        end += 1
    return end - at


def _slip(key: str, value: str, more: list[str]) -> tuple[str, str] | None:
    """(kind, meant value) when a top-level `key: value` (and its continuation lines) is a usual
    slip."""
    prose = key in PROSE
    first = value[:1]
    if any(_entry(line.strip()) for line in more):
        return None  # a key indented by mistake, not a continuation: no reading of it is sure
    if first in ('"', "'"):
        head = (_DOUBLE_HEAD if first == '"' else _SINGLE_HEAD).match(value)
        tail = value[head.end():].strip() if head else ""
        if head and tail and not tail.startswith("#") and not more:
            return TAIL, value  # `"Webapp" redesign`: the writer's quotes are part of the text
        return None
    if first in ("[", "{"):
        closing = "]" if first == "[" else "}"
        return (START, value) if prose and not more and not value.endswith(closing) else None
    if first in ("|", ">"):
        return (START, value) if prose and not more and not _BLOCK_HEADER.fullmatch(value) else None
    meant = " ".join([value, *(line.strip() for line in more)])
    if prose and first == "#":
        return HASH, meant  # `summary: #ops`: all of it a comment to YAML
    if prose and (first in ("`", "@", "*", "&", "!", "%") or value[:2] in ("- ", "? ", ": ")
                  or value in ("-", "?")):
        return START, meant
    if not prose and (first in ("&", "*", "!", "|", ">", "%", "?", "#") or value[:2] == "- "):
        return None  # YAML syntax in a key memstore or the person writes: YAML's own reading stands
    if ": " in meant or meant.endswith(":") or ":\t" in meant:
        if not prose:
            meant = _COMMENT.split(meant, 1)[0].rstrip()
        return COLON, meant
    if first in ("`", "@"):
        return START, meant  # reserved characters: YAML reads no plain value that starts so
    if prose and _COMMENT.search(meant):
        return HASH, meant
    return None


def slips(front: str) -> list[Slip]:
    """The usual slips in a frontmatter block's text (between the fences), each as the writer meant
    it.

    Looked at: each top-level `key: value` line with its indented continuation lines, and lines at
    the top level that are no `key:` at all (STRAY). Anything YAML reads as the writer meant is left
    alone."""
    lines = front.split("\n")
    found: list[Slip] = []
    at, unsure = 0, False
    while at < len(lines):
        line = lines[at].rstrip("\r")
        entry = _entry(line)
        if entry is None:
            # no colon at all: no mapping entry, and no continuation at column 0
            if line.strip() and ":" not in line \
                    and line[:1] not in (" ", "\t", "#", "-", "?", '"', "'") and not unsure:
                found.append((at, "", STRAY, line.strip(), 1))
            at += 1
            continue
        key, value = entry.group(1), entry.group(2) or ""
        span = _spans(lines, at) if value else 1
        more = [part.rstrip("\r") for part in lines[at + 1:at + span]]
        if value and value[0] in "[{\"'" and (
                more or not value.rstrip().endswith(("]", "}", '"', "'"))):
            unsure = True  # a flow collection or quoted value over lines: what follows is not plain
        slipped = _slip(key, value, more) if value else None
        if slipped is not None:
            found.append((at, key, slipped[0], slipped[1], span))
        at += span
    return found


def mend(front: str, found: list[Slip]) -> str:
    """The block with each slipped value written as the writer meant it (double-quoted); every line
    keeps its number, so what YAML says of the rest still names the file's own lines."""
    lines = front.split("\n")
    for at, key, kind, meant, span in found:
        if kind in (STRAY, UNCLOSED):
            continue
        lines[at] = f"{key}: {json.dumps(meant, ensure_ascii=False)}"
        for later in range(at + 1, at + span):
            lines[later] = ""
    return "\n".join(lines)


_WHAT = {
    COLON: "holds an unquoted ': ', so YAML cannot read the frontmatter",
    HASH: "holds ' #', which YAML reads as the start of a comment and cuts the text there",
    START: "starts with a character YAML reads as syntax, not text",
    TAIL: "has text after its closing quote, so YAML cannot read the frontmatter",
}


def advice(slip: Slip, first: int) -> str:
    """One line saying what is wrong and how to mend it; `first` is the file's line number of the
    block's first line (2 when the opening --- is line 1). Holds no text of the file but its key."""
    at, key, kind, _meant, _span = slip
    line = at + first
    if kind == STRAY:
        return (f"line {line} is not a `key: value` line, so YAML cannot read the frontmatter: "
                "make it one (quote the value), or move it below the closing ---")
    if kind == UNCLOSED:
        return ("the frontmatter opened with --- on line 1 is never closed: "
                "add a line --- after its last key")
    return f"line {line} `{key}:` {_WHAT[kind]}: quote the value"


def entries(front: str) -> dict[str, str]:
    """Each top-level key's own lines (its nested or continuation lines too), slips mended: for
    reading the keys one at a time when the block as a whole is not YAML."""
    lines = mend(front, slips(front)).split("\n")
    out: dict[str, str] = {}
    at = 0
    while at < len(lines):
        entry = _entry(lines[at].rstrip("\r"))
        end = at + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][:1] in (" ", "\t", "-")):
            end += 1
        if entry is not None and entry.group(1) not in out:
            out[entry.group(1)] = "\n".join(lines[at:end])
        at = end
    return out


def check(text: str) -> tuple[list[Slip], int]:
    """(the slips of a file's frontmatter, the file's line number of the block's first line), for a
    whole file's text; a block opened and never closed is one UNCLOSED slip."""
    text = text[1:] if text.startswith("\ufeff") else text
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return [], 2
    front, _body = split_front(text)
    if not front and text.find("\n---", 3) == -1:
        return [(0, "", UNCLOSED, "", 0)], 2
    return slips(front), 2


MAX_TOLD = 5  # slips named in one answer; lint names the rest


def told(text: str, rel: str, *, whole: bool = True) -> str | None:
    """The hook's word to the agent on the memory it just wrote (a file's text, `rel` its
    root-relative path): each usual slip, where and how to mend it; None when there is none.
    `whole`: the text is the whole file (else a block left open may close past it). Inert: the
    file's text reaches the agent only as a line that inert_line leaves as it is."""
    found, first = check(text)
    if not whole:
        found = [slip for slip in found if slip[2] != UNCLOSED]
    if not found:
        return None
    from memstore.core.inert import inert_line

    name = inert_line(rel)
    lines = [f"memstore: mend the frontmatter of {name} now: YAML (and so lint, sharing with a "
             "team and other tools) does not read it as you meant it."]
    lines += [f"- {name}: {advice(slip, first)}{_written_as(slip)}" for slip in found[:MAX_TOLD]]
    if len(found) > MAX_TOLD:
        lines.append(f"- and {len(found) - MAX_TOLD} more: run memstore lint")
    return "\n".join(lines)


def _written_as(slip: Slip) -> str:
    """The slipped line as it should read, when it is inert as it is (else the form alone)."""
    from memstore.core.inert import inert_line

    _at, key, kind, meant, _span = slip
    if kind in (STRAY, UNCLOSED):
        return ""
    line = f"{key}: {json.dumps(meant, ensure_ascii=False)}"
    if len(line) <= 300 and inert_line(line) == line:
        return f" (in double quotes: {line})"
    return f' (in double quotes: {key}: "...", any " inside written \\")'

"""`memstore audit`: what the always-loaded files cost every session, and which lines are
narrative.

Every session pays for identity.md, CLAUDE.md and AGENTS.md (and what a CLAUDE.md
imports) whether or not a line mattered that time. A line earns that rent when it
changes what the next session does: a rule, or a fact about how things are. A line
that tells what happened (a date, a commit, a count, a status word, "we fixed") is
true and worth nothing next week. This module measures the files and points at
those lines; it reports, it does not judge, and it never edits anything.

The heuristics are plain regular expressions, one per reason (see REASONS); a line
may carry several. Markdown structure is never flagged: blank lines, headings,
code fences and every line inside them, YAML frontmatter, horizontal rules and
table separators, lines that hold only `@` imports, and memstore's own import block.

Cost: characters (Python str length of the UTF-8 text, newlines included) and an
estimate of tokens, ceil(characters / 4) (the usual rule of thumb for English text
with Claude's tokenizer; dense markdown, paths and hashes run nearer 3 per token).

Imports: the `@path` references in a CLAUDE*.md file are followed one level: each
file it pulls in is measured and audited as its own entry (imported_by names the
importer); its own imports are not followed. A file memstore renders (the root's
MEMORY.md, MEMORY-archive.md, current-state.md) is measured but its lines are not
audited when it arrives by import: it is rebuilt from the memories and bounded by
the render budgets, so its lines are not edited by hand.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from memstore.core.agent_root import RootPaths
from memstore.core.errors import NotFound
from memstore.core.results import AuditFile, AuditImport, AuditLine
from memstore.wiring.claude_code import user_rules_file
from memstore.wiring.install_base import BEGIN, END

CHARS_PER_TOKEN = 4
TEXT_CUT = 120


def estimate_tokens(chars: int) -> int:
    """The token estimate every audit figure uses: ceil(chars / 4)."""
    return math.ceil(chars / CHARS_PER_TOKEN)


# ---------------------------------------------------------------- the heuristics

_MONTHS = (r"(?:January|February|March|April|May|June|July|August|September|October|November"
           r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)")
_DATE = re.compile(
    r"\b(?:19|20)\d{2}-(?:0[1-9]|1[0-2])(?:-\d{2})?\b"  # 2026-07-30, 2026-07
    r"|\b\d{4}/\d{2}/\d{2}\b"  # 2026/07/30
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b"  # 7/30/2026, 30/7/26
    rf"|\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b"  # Jul 30, July 30th
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\b"  # 30 Jul
    r"|(?i:\byesterday\b|\blast\s+(?:week|night|month|session|time|sprint"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\bthis\s+(?:morning|afternoon|evening)\b|\bearlier\s+today\b"
    r"|\b\d+\s+(?:minutes?|hours?|days?|weeks?|months?)\s+ago\b)"
)
_COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_COUNT = re.compile(
    r"(?<![\w/.:-])\d{1,4}/\d{1,4}(?![\w/.:-])"  # 3/5, 12/12
    r"|(?i:\b\d[\d,]*\s+(?:[a-z-]+\s+){0,2}"
    r"(?:pass(?:es|ed|ing)?|fail(?:s|ed|ing|ures?)?|green|skipped|xfail(?:ed)?)\b"
    r"|\b(?:passed|passing|failed|failing|failures|skipped|green)\s*[:=]?\s*\d+\b"  # passed: 42
    r"|\b\d[\d,]*\s+(?:new\s+|more\s+|unit\s+|e2e\s+)?tests?\b"  # 42 tests
    r"|\b(?:gate|milestone|sprint|iteration|attempt|round)\s*#?\d+\b)"  # gate 3
)
# Status words, unless the word before makes them a condition ("once merged", "when done").
_STATUS_WORD = re.compile(
    r"(?i)\b(done|shipped|merged|completed|finished|landed|resolved|deployed)\b(?!-)")
_CONDITIONAL = frozenset(
    "when once until unless if before after as be being get gets getting mark of".split())
_STATUS_OTHER = re.compile(
    r"(?i)\bin[ -]progress\b|\bwip\b|\bnow\s+(?:works|passes|green)\b"
    r"|^\s*(?:[-*+]|\d+[.)])\s+\[[xX]\]"  # - [x] checked box
    r"|[\u2705\u2714\u2611]"  # check-mark emoji
)
# "fixed" as a past verb, not the adjective ("a fixed seed", "fixed-width").
_FIXED = re.compile(
    r"(?i)^\W*fixed\b(?!-)"
    r"|\b(?:is|was|are|were|been|now|got|get|gets|i|we|bug|issue|finally|also|and)"
    r"\s+fixed\b(?!-)"
    r"|\bfixed\s+(?:in|by|on|it|this|that|the|a|an|with|via|#)(?:\b|(?=\d))"
)
_PAST = (r"(?:ran|did|made|wrote|found|built|took|tried|saw|got|went|had|spent|broke|hit|began"
         r"|thought|chose|learned|learnt|kept|left|lost|sent|brought|caught|gave|came|\w*[^\We]ed)")
_FIRST_PERSON = re.compile(
    r"\b(?:I|[Ww]e)\s+(?:(?:also|then|just|finally|first|already|eventually|now|\w+ly)\s+)?"
    rf"{_PAST}\b"
    rf"|\b(?:I|[Ww]e)(?:'ve|\s+have|\s+had)\s+(?:\w+ly\s+)?(?:{_PAST}|done|been)\b"
    r"|(?i:\b(?:today|yesterday|tonight|earlier|this\s+(?:morning|afternoon|evening|session)"
    r"|last\s+(?:night|week|session))\s*,?\s+(?:i|we)\b)"
)
_TICKET = re.compile(
    r"(?<![\w&/])#\d+\b"  # #123
    r"|\b(?:PR|MR|(?i:pull\s+request|issue|ticket))\s*#?\d+\b"  # PR 123, issue #4
    r"|/(?:pull|issues|merge_requests)/\d+\b|\bgh-\d+\b"  # .../pull/123, gh-123
)


def _status(line: str) -> bool:
    if _STATUS_OTHER.search(line) or _FIXED.search(line):
        return True
    for match in _STATUS_WORD.finditer(line):
        before = re.findall(r"[A-Za-z]+", line[: match.start()])
        if not before or before[-1].lower() not in _CONDITIONAL:
            return True
    return False


REASONS: tuple[tuple[str, object], ...] = (
    ("date", _DATE.search),
    ("commit", _COMMIT.search),
    ("count", _COUNT.search),
    ("status", _status),
    ("first-person", _FIRST_PERSON.search),
    ("ticket", _TICKET.search),
)


def reasons(line: str) -> list[str]:
    """Which narrative reasons one line of prose carries, in REASONS order (empty: a rule or a
    fact)."""
    return [name for name, test in REASONS if test(line)]  # type: ignore[operator]


# ---------------------------------------------------------------- structure

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_RULE = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_IMPORT = re.compile(r"(?:(?<=\s)|^)@((?:~/|/|\.{1,2}/)?[^\s`'\"<>()\[\]]+)")
_IMPORT_ONLY = re.compile(r"^\s*(?:[-*+]\s+)?@\S+(?:\s+@\S+)*\s*$")
_CODE_SPAN = re.compile(r"`+[^`]*`+")


def _prose_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, line with its newline, line) for every line that is prose, not structure."""
    out = []
    fence: str | None = None
    in_block = in_front = False
    for number, raw in enumerate(text.splitlines(keepends=True), start=1):
        line = raw.rstrip("\r\n")
        if number == 1 and line.strip() == "---":
            in_front = True
            continue
        if in_front:
            if line.strip() in ("---", "..."):
                in_front = False
            continue
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line.strip()[len(opened.group(1)):].strip():
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if line.strip() == BEGIN:
            in_block = True
            continue
        if in_block:
            if line.strip() == END:
                in_block = False
            continue
        if (not line.strip() or _HEADING.match(line) or _RULE.match(line) or _TABLE_SEP.match(line)
                or _IMPORT_ONLY.match(line)):
            continue
        out.append((number, raw, line))
    return out


def audit_lines(text: str) -> list[AuditLine]:
    """The narrative lines of one file's text, with why each was flagged."""
    flagged = []
    for number, raw, line in _prose_lines(text):
        why = reasons(line)
        if why:
            shown = line.strip()
            if len(shown) > TEXT_CUT:
                shown = shown[: TEXT_CUT - 1] + "…"
            flagged.append(AuditLine(line=number, reasons=why, chars=len(raw), text=shown))
    return flagged


def imports_in(text: str, base: Path) -> list[tuple[str, Path]]:
    """The `@path` imports of a text, outside code fences and code spans: (as written, resolved
    path).

    A token counts as an import when it looks like a path (has a / or a file extension,
    or starts with ~), so "ask @alice" is not one. Trailing punctuation is dropped.
    """
    found: dict[str, Path] = {}
    fence: str | None = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        for match in _IMPORT.finditer(_CODE_SPAN.sub(" ", line)):
            ref = match.group(1).rstrip(".,;:!?")
            if not ("/" in ref or re.search(r"\.\w+$", ref) or ref.startswith("~")):
                continue
            target = Path(ref).expanduser()
            found.setdefault(f"@{ref}", target if target.is_absolute() else base / target)
    return list(found.items())


# ---------------------------------------------------------------- files

def default_files(root: Path, cwd: Path) -> list[tuple[Path, str]]:
    """The always-loaded files that exist, as Claude Code loads them: user memory
    (~/.claude/CLAUDE.md and ~/.claude/rules/*.md, where `install --scope user` imports identity.md
    and MEMORY.md), the project's CLAUDE.md, CLAUDE.local.md and .claude/rules/*.md, and CLAUDE.md
    in the root; then identity.md and the AGENTS.md files other clients load. (path, role)."""
    user_dir = user_rules_file().parent.parent  # ~/.claude, or $CLAUDE_CONFIG_DIR
    candidates = [(user_dir / "CLAUDE.md", "user"),
                  *((p, "user") for p in sorted((user_dir / "rules").glob("*.md")))]
    candidates += [(cwd / "CLAUDE.md", "project"), (cwd / "CLAUDE.local.md", "project"),
                   *((p, "project") for p in sorted((cwd / ".claude" / "rules").glob("*.md")))]
    candidates += [(root / "CLAUDE.md", "root"), (Path(RootPaths(root).identity), "identity"),
                   (cwd / "AGENTS.md", "project"), (root / "AGENTS.md", "root")]
    return [(path, role) for path, role in candidates if path.is_file()]


def _follows_imports(path: Path) -> bool:
    """Claude Code expands `@` imports in CLAUDE*.md and in rules files."""
    return path.name.startswith("CLAUDE") or path.parent.name == "rules"


_BLOCK_COMMENT = re.compile(r"^<!--.*?-->[ \t]*\n?", re.S | re.M)


def loaded_text(path: Path) -> str:
    """A file's text as Claude Code loads it into a session: without its YAML frontmatter."""
    text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    if text.startswith("---\n"):
        end = text.find("\n---", 3)
        if end != -1:
            text = text[end + 4:].lstrip("\n")
    # block-level HTML comments are not sent (Claude Code strips them), except inside code fences
    return _BLOCK_COMMENT.sub("", text) if "<!--" in text else text


def _key(path: Path) -> str:
    return os.path.realpath(path)


def _measure(path: Path, role: str, *, lines: bool = True, imported_by: str | None = None,
             follow: bool = False,
             note: str | None = None) -> tuple[AuditFile, list[tuple[str, Path]]]:
    # lines are judged (and numbered) in the file as the person sees it; the cost is what the
    # client sends: without frontmatter and block HTML comments (loaded_text)
    text = path.read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
    sent = len(loaded_text(path))
    flagged = audit_lines(text) if lines else []
    flagged_chars = sum(item.chars for item in flagged)
    found = imports_in(text, path.parent) if follow else []
    imports = []
    for ref, target in found:
        size = len(loaded_text(target)) if target.is_file() else 0
        imports.append(AuditImport(ref=ref, path=str(target), found=target.is_file(), chars=size,
                                   tokens=estimate_tokens(size)))
    return AuditFile(
        path=str(path), role=role, chars=sent, tokens=estimate_tokens(sent),
        lines=len(text.splitlines()), flagged=flagged, flagged_chars=flagged_chars,
        flagged_tokens=estimate_tokens(flagged_chars), imports=imports, imported_by=imported_by,
        note=note,
    ), found


def audit(root: Path, files: list[str | os.PathLike[str]] | None = None, cwd: Path | None = None, *,
          bundle: str | None = None) -> list[AuditFile]:
    """Audit the named files (relative to cwd), or the always-loaded ones; imports followed one
    level.

    Raises NotFound for a named file that does not exist. Each file appears once, by real path.
    """
    here = Path(cwd) if cwd is not None else Path.cwd()
    if files:
        chosen = []
        for name in files:
            path = Path(name).expanduser()
            path = path if path.is_absolute() else here / path
            if not path.is_file():
                raise NotFound(f"no such file: {name}" if not path.exists()
                               else f"not a file: {name}")
            chosen.append((path.absolute(), "named"))
    else:
        chosen = default_files(Path(root), here)
    paths = RootPaths(root)
    derived = {_key(Path(p)) for p in (paths.index, paths.archive, paths.current_state)}
    seen: set[str] = set()
    top: list[AuditFile] = []
    pulled: list[tuple[Path, str]] = []
    for path, role in chosen:
        if _key(path) in seen:
            continue
        seen.add(_key(path))
        entry, found = _measure(path, role, follow=_follows_imports(path))
        top.append(entry)
        pulled += [(target, str(path)) for _ref, target in found if target.is_file()]
    out = list(top)
    for target, importer in pulled:
        if _key(target) in seen:
            continue
        seen.add(_key(target))
        is_derived = _key(target) in derived
        note = ("rendered by memstore and bounded by its budgets; lines not audited"
                if is_derived else None)
        out.append(_measure(target, "import", lines=not is_derived, imported_by=importer,
                            note=note)[0])
    if bundle:  # not a file, but paid for in every session all the same
        out.append(AuditFile(path="(SessionStart bundle: memstore context)", role="session-start",
                             chars=len(bundle), tokens=estimate_tokens(len(bundle)),
                             lines=len(bundle.splitlines()), flagged=[], flagged_chars=0,
                             flagged_tokens=0,
                             note="in-flight list, open bugs, recent facts and lessons, dreams; "
                                  "bounded by its budget"))
    return out


def totals(files: list[AuditFile]) -> dict[str, int]:
    """What the audited files cost together, and what removing every flagged line would save."""
    chars = sum(f.chars for f in files)
    flagged_chars = sum(f.flagged_chars for f in files)
    return {
        "files": len(files),
        "chars": chars,
        "tokens": estimate_tokens(chars),
        "flagged_lines": sum(len(f.flagged) for f in files),
        "flagged_chars": flagged_chars,
        "flagged_tokens": estimate_tokens(flagged_chars),
    }

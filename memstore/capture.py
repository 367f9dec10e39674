"""Capture: one fact into T1 (`memstore note`), and the rule-shaped lessons of a session's
final answer (`memstore debrief --transcript`). Standard library only.

Every T1 file written here goes through one function, `_write_note`, under one lock
(runtime/state/capture.lock): one writer, so a check for "already there" and the write
that follows it never interleave with another note or debrief.

A note is `memory/short-term/YYMMDD-<slug>.md` (the slug: the text's first six words,
kebab-case ASCII; a different fact with the same slug on the same day gets -2, -3, ...)
with frontmatter `created: <ISO date>`, `source: note|debrief` and `kind` when given.
The same fact twice on one day (normalised: whitespace collapsed, case folded, a
trailing . or ! dropped) is written once.

THE RULE CUE (what debrief keeps from a session's final answer), deliberately narrow:
missing a rule costs one absent line, while a false positive is prose paid for in every
later prompt, so when in doubt nothing is kept.

The final answer is the last assistant message with text in the transcript (its text
blocks joined; an earlier message is never read). Code fences and table rows are
dropped; each remaining line loses its list marker, heading marks and ** / __; lines
are split into sentences after . ! or ? followed by a space. A sentence is KEPT only
when it matches one of these shapes (case-sensitive at the start):

  1. it starts with  Always | Never | Do not | Don't | Must | Avoid  followed by a space;
  2. it starts with  Prefer ... over|to|rather than ...;
  3. it starts with  When | Whenever | If | Before | After  <clause>,  and the part after
     the first comma starts with always | never | do not | don't | must | avoid | prefer
     or one of the imperative verbs in IMPERATIVES (run, check, use, ...);
  4. it contains  must never | must not | must always  (e.g. "The hook must never block.");
  5. it starts with an imperative verb (IMPERATIVES, capitalised: "Use UTC for all
     timestamps."), or Make sure | Be sure to | Remember to, whose next word does not make
     it an idiom (Check out, Keep in mind, Use case, Remember when ...);
  6. it starts with  You | We | One  should | must | need to  ("You should never commit
     secrets.") or  It is important | essential | best | safer to.

A rule-shaped start that is an idiom or narrative is no rule: Never mind | Never again |
Must have | Must be | Always a | Don't worry ...

and it is REJECTED, whatever it matches, when it
  - holds a ? (a question), or ends with : (the lead-in to a list);
  - is longer than 200 characters or shorter than 4 words;
  - holds a date (2026-07-30, 30/07/2026, 260730-..., "Jul 30", "yesterday", "today");
  - holds something like a commit hash (7-40 hex characters with a digit and a letter);
  - holds a file:line reference (name.ext:12, "line 12");
  - is numbers-heavy (3 or more tokens with a digit);
  - is first-person narrative (I, I'm, I've, me, my, or "we" followed by a past tense);
  - removes a safeguard or destroys work (`unsafe`: skip asking or review, delete or skip
    tests, disable checks or hooks, --no-verify, force-push, reset --hard, pipe into a
    shell, remove files, commit secrets). A final answer can be shaped by injected
    content; such a rule, kept, would be a standing instruction nobody chose.

A lesson reaches the agent marked as unreviewed until a person accepts it (`memstore
review`; see review.py).

Caps: at most LESSONS_PER_SESSION (3) lessons per session, and at most LESSONS_IN_WINDOW
(30) lesson files in the short-term window (memory/short-term/ itself, dated within
short_term_days): when that is full, none is kept and the report says so. A rule is
also dropped when a lesson with the same normalised text exists (in short-term/ or its
archive/, at any date). A session with nothing rule-shaped writes nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import select
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.agent_root import RootPaths
from memstore.context import _dated, split_front
from memstore.errors import BadUsage, NotFound
from memstore.kinds import KEBAB
from memstore.locks import atomic_write, file_lock

if TYPE_CHECKING:
    from memstore.results import DebriefResult
    from memstore.store import Store

SLUG_WORDS = 6
SLUG_CHARS = 60
LESSON = "lesson"
LESSONS_PER_SESSION = 3
LESSONS_IN_WINDOW = 30
RULE_MAX_CHARS = 200
RULE_MIN_WORDS = 4
TRANSCRIPT_MAX_BYTES = 200_000_000  # a transcript larger than this is read from its last part only
HOOK_STDIN_MAX = 1_000_000
HOOK_STDIN_WAIT_S = 2.0

IMPERATIVES = ("run", "check", "use", "read", "call", "make", "ensure", "confirm", "verify", "rebuild", "commit",
               "stage", "ask", "add", "write", "test", "re-run", "rerun", "pass", "keep", "set", "stop", "wait",
               "look", "search", "grep", "sync", "render", "restart", "pin", "quote", "escape", "lock", "take",
               "clear", "close", "open", "install", "update", "delete", "remove", "drop", "fix", "pin", "store",
               "log", "validate", "treat", "document", "put", "name", "give", "leave", "return", "split", "limit",
               "guard", "handle", "wrap", "measure", "record", "prefix", "reuse", "mark", "label", "sign",
               "squash", "rebase", "merge", "push", "pull", "deploy", "release", "tag", "back", "show", "print",
               "raise", "catch", "retry", "review")

_STARTS = re.compile(r"^(Always|Never|Do not|Don't|Must|Avoid) ")
# Rule-shaped openings that are idioms or narrative ("Never mind the flaky test", "Must have been the cache").
_IDIOM = re.compile(r"^(Never (mind|again|seen|ever|before|once|heard)|Must(n't)? (have|be|'ve)|"
                    r"(Always|Never) (a|an|the|one|so|too|been|was|were)|(Don't|Do not) (worry|mind|panic|bother)|"
                    r"Avoided)\b")
_MODAL = re.compile(r"^(You|We|One|Everyone|Agents?) (should|must|need to|have to|ought to)\b(?! (have|be)\b)")
_IMPORTANT = re.compile(r"^It is (important|essential|vital|best|safer|wise) to \w")
# After an imperative at the start, these words make an idiom or a noun, not a command.
_IMPERATIVE_IDIOM = frozenset({"yourself", "me", "us", "him", "her", "them", "you", "it's", "what", "if", "whether"})
_IDIOM_PAIRS = frozenset({("check", "out"), ("keep", "in"), ("use", "case"), ("use", "cases"), ("use", "of"),
                          ("remember", "when"), ("make", "sense"), ("back", "in"), ("back", "then"), ("log", "out")})
_PREFER = re.compile(r"^Prefer \S.*\s(over|to|rather than)\s\S")
_CONDITION = re.compile(r"^(When|Whenever|If|Before|After) [^,]+,\s*(?P<rest>.+)$")
_RULE_HEAD = re.compile(r"^(always|never|do not|don't|must|avoid|prefer)\b|^(" + "|".join(
    re.escape(v) for v in IMPERATIVES) + r")\b", re.I)
_MUST = re.compile(r"\bmust (never|not|always)\b", re.I)

_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
_DATE = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{6}-[a-z]|"
    rf"\b({_MONTHS})[a-z]*\.? \d{{1,2}}\b|\b\d{{1,2}} ({_MONTHS})[a-z]*\b|\b(yesterday|today|tonight|tomorrow)\b",
    re.I)
_HASH = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_FILE_LINE = re.compile(r"\S\.\w{1,8}:\d+|\bline \d+|\blines \d+")
_DIGIT_TOKEN = re.compile(r"\S*\d\S*")
_FIRST_PERSON = re.compile(
    r"\b(I|I'm|I've|I'd|I'll|me|my|mine|myself)\b|"
    r"\b[Ww]e('ve)? (\w+ed|ran|did|found|made|saw|got|wrote|took|had|were|went|spent|tried|built|kept|left)\b")

# Rules that take away a safeguard or destroy work: never captured, whatever their shape.
# Two kinds, told apart by polarity: prohibiting a destructive act is a good rule ("Never
# force-push to main"), enjoining it is not; dropping a safeguard is bad however it is
# said ("Never ask before pushing", "Skip the review"), unless a prohibition cancels it
# ("Never push without asking").
_DESTRUCTIVE = re.compile(
    r"\b(delet|remov|skip|disabl|comment\w* out|ignor|mute|xfail|bypass|turn\w* off|switch\w* off)\w*\s+"
    r"(\S+\s+){0,3}?(tests?|specs?|checks?|checkers?|hooks?|lint\w*|ci|guards?|safeguards?|assertions?|validation|"
    r"type.?check\w*|warnings?|errors?|failures?|protections?|pre-commit)\b"
    r"|--no-verify|\bforce[- ]push|\bpush\s+(\S+\s+){0,3}?(--force|-f)\b|--force-with-lease|\breset\s+--hard"
    r"|\|\s*(sudo\s+)?(ba|z|da)?sh\b|\bpip\w*\s+(\S+\s+){0,3}?(into|to)\s+(a\s+|the\s+)?(shell|bash|sh)\b"
    r"|\brm\s+-\w*[rf]|\b(delete|remove|wipe|erase|truncate|overwrite)\s+(\S+\s+){0,3}?"
    r"(files?|folders?|director\w+|branch\w*|history|data|databases?|backups?|repo\w*)\b"
    r"|\bchmod\s+(-R\s+)?777|\bcommit\w*\s+(\S+\s+){0,3}?(secrets?|credentials?|keys?|tokens?|passwords?)\b"
    r"|\b(disabl\w*|turn\w* off)\s+(\S+\s+){0,2}?(sandbox\w*|security|auth\w*|ssl|tls|certificates?)",
    re.I)
_SAFEGUARD = re.compile(r"^(ask|confirm|check|review|verif|approv|prompt|permission|tests?$|testing|lint|ci$|"
                        r"hooks?$|validat|backups?$|type-?check)", re.I)
# Safeguards named by a noun (tests, the linter): dropped only when the rule drops them wholesale,
# the noun ending the sentence or followed by a word of time ("Do not run the tests before committing").
_CHECKS = re.compile(r"^(tests?|testing|lint\w*|ci|hooks?|validat\w*|backups?|type-?check\w*)$", re.I)
_WHOLESALE = frozenset({None, "", "before", "after", "when", "until", "again", "anymore", "first", "at", "for"})
_NEGATORS = frozenset({"never", "not", "don't", "avoid", "stop", "without", "need", "skip", "skipping", "skips",
                       "disable", "disabling", "bypass", "bypassing", "ignore", "ignoring", "remove", "removing"})
# Ways around a safeguard or out of the person's reach that need no negation to be harmful.
_ALWAYS_UNSAFE = re.compile(
    r"\bcommit\w*\b[^.]*\s-n\b|\bHUSKY=0|\bSKIP=|--no-gpg-sign|core\.hooksPath|--no-hooks?\b"
    r"|\b(avoid|never|don't|do not|stop|no need to)\s+(\S+\s+){0,2}?(bother\w*|interrupt\w*|disturb\w*|pester\w*)"
    r"|\bgit\s+clean\b|\bpush\b[^.]*\s\+\S|\b(drop|truncate|wipe|purge|nuke|destroy)\w*\s+(\S+\s+){0,3}?"
    r"(databases?|tables?|schemas?|collections?|volumes?|buckets?)\b",
    re.I)
# Secret material: a rule that does anything with it but forbid it is no rule to keep.
_SECRETS = re.compile(r"~/\.ssh|\bid_(rsa|ed25519|ecdsa)\b|\.aws/|(^|\s)\.env\b|\.pem\b|private keys?|api keys?|"
                      r"secret keys?|passwords?|credentials?|\bsecrets?\b|\btokens?\b|\bsudo\b", re.I)
_PROHIBITS = re.compile(r"^(Never|Do not|Don't|Avoid)\b|\b(must|should) (never|not)\b"
                        r"|^(When|Whenever|If|Before|After) [^,]+,\s*(never|do not|don't|avoid)\b", re.I)


_DISGUISED = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")


def _mixed_script(word: str) -> bool:
    """A word whose letters come from Latin and another script at once (a homoglyph in disguise)."""
    scripts = set()
    for char in word:
        if char.isalpha():
            name = unicodedata.name(char, "")
            scripts.add("LATIN" if name.startswith("LATIN") else name.split(" ", 1)[0])
    return "LATIN" in scripts and len(scripts) > 1


def unsafe(sentence: str) -> bool:
    """Does the rule take away a safeguard or destroy work (see _DESTRUCTIVE and _SAFEGUARD)?"""
    prohibits = _PROHIBITS.search(sentence) is not None
    if _ALWAYS_UNSAFE.search(sentence):
        return True
    if (_DESTRUCTIVE.search(sentence) or _SECRETS.search(sentence)) and not prohibits:
        return True
    words = [w.strip(".,;:!()\"'`").lower() for w in sentence.split()]
    lead = 1 if words[:2] == ["do", "not"] else 0
    for i, word in enumerate(words):
        if not _SAFEGUARD.match(word):
            continue
        after = words[i + 1] if i + 1 < len(words) else None
        if _CHECKS.match(word) and after not in _WHOLESALE:
            continue  # "Never run the watcher tests in parallel ...": how to run them, not whether
        near = next((j for j in range(i - 1, max(i - 5, -1), -1) if words[j] in _NEGATORS), None)
        if near is None:
            continue
        if near == lead and prohibits:  # the prohibition itself falls on the safeguard: "Never ask ..."
            return True
        if not prohibits:  # "Skip the review", "without asking", "no need to check"
            return True
    return False


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+>]\s+|\d+[.)]\s+|#+\s+)+")


# ---------------------------------------------------------------- notes


@dataclass(frozen=True)
class Written:
    path: Path
    written: bool  # False: the same fact was already there (path names that file)


def normalise(text: str) -> str:
    """The form two facts are compared in: whitespace collapsed, case folded, a trailing . or ! dropped."""
    return " ".join(text.replace("\u2019", "'").split()).casefold().rstrip(".!").rstrip()


def slug(text: str) -> str:
    """kebab-case ASCII of the first SLUG_WORDS words (at most SLUG_CHARS characters); 'note' when none."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", ascii_text)[:SLUG_WORDS]
    out = ""
    for word in words:
        joined = f"{out}-{word}" if out else word
        if len(joined) > SLUG_CHARS:
            break
        out = joined
    return out or (words[0][:SLUG_CHARS] if words else "note")


def _front_value(value: str) -> str:
    return value if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value) else json.dumps(value)


def _note_bytes(text: str, day: dt.date, source: str, kind: str | None) -> bytes:
    front = {"created": day.isoformat(), "source": source, **({"kind": kind} if kind else {})}
    head = "".join(f"{key}: {_front_value(value)}\n" for key, value in front.items())
    return f"---\n{head}---\n\n{text.strip()}\n".encode()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").lstrip("\ufeff")
    except OSError:
        return ""


def _kind(front: str) -> str | None:
    match = re.search(r"^kind:\s*['\"]?([A-Za-z0-9_-]+)", front, re.M)
    return match.group(1) if match else None


def _t1_files(root: Path) -> Iterator[Path]:
    """Every T1 file: memory/short-term/*.md and memory/short-term/archive/*.md."""
    folder = Path(RootPaths(root).short_term)
    for where in (folder, folder / "archive"):
        if where.is_dir():
            yield from sorted(where.glob("*.md"))


def _lock(root: Path, timeout: float) -> Any:
    return file_lock(Path(RootPaths(root).state) / "capture.lock", timeout=timeout)


def _write_note(root: Path, text: str, day: dt.date, *, source: str, kind: str | None) -> Written:
    """The one writer of T1 notes (call with the capture lock held)."""
    stem = f"{day:%y%m%d}"
    wanted = normalise(text)
    for path in _t1_files(root):
        if path.name.startswith(stem + "-") and normalise(split_front(_read(path))[1]) == wanted:
            return Written(path, False)
    folder = Path(RootPaths(root).short_term)
    folder.mkdir(parents=True, exist_ok=True)
    base = f"{stem}-{slug(text)}"
    n = 1
    while True:
        name = f"{base}.md" if n == 1 else f"{base}-{n}.md"
        path = folder / name
        if not path.exists() and not (folder / "archive" / name).exists():
            break
        n += 1
    atomic_write(path, _note_bytes(text, day, source, kind))
    return Written(path, True)


NOTE_MAX_CHARS = 20_000  # a T1 fact is a line or a paragraph; the bundle shows 1,200 characters of it


def check_note(text: str, kind: str | None) -> str:
    if not text or not text.strip():
        raise BadUsage("nothing to note: the text is empty", hint='say the fact: memstore note "the fact"')
    if len(text) > NOTE_MAX_CHARS:
        raise BadUsage(f"the note is {len(text):,} characters, over the limit of {NOTE_MAX_CHARS:,}",
                       hint="a note is one fact; write a longer text as a memory: memstore new TYPE TOPIC")
    if kind is not None and not KEBAB.match(kind):
        raise BadUsage(f"kind {kind!r} is not kebab-case", hint="e.g. --kind lesson, --kind decision")
    return text.strip()


def note(root: Path, text: str, now: dt.datetime, *, kind: str | None = None, source: str = "note",
         lock_timeout: float = 10.0) -> Written:
    """One fact into memory/short-term/, unless the same fact is already there today."""
    text = check_note(text, kind)
    with _lock(root, lock_timeout):
        return _write_note(root, text, now.date(), source=source, kind=kind)


# ---------------------------------------------------------------- the transcript's final answer


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [block["text"] for block in content
             if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)]
    return "\n\n".join(p for p in parts if p.strip())


def _assistant_texts(lines: Iterable[bytes]) -> Iterator[tuple[str | None, str]]:
    """(message id, text) of each transcript line that is assistant text; everything else skipped."""
    for raw in lines:
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict) or entry.get("type") != "assistant" or entry.get("isSidechain") is True:
            continue
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role", "assistant") != "assistant":
            continue
        if message.get("model") == "<synthetic>" or entry.get("isApiErrorMessage") is True:
            continue  # Claude Code's own stand-ins ("No response requested.", API errors), not an answer
        text = _text_of(message.get("content"))
        if text.strip():
            ident = message.get("id")
            yield (ident if isinstance(ident, str) else None), text


def final_answer(transcript: Path) -> str | None:
    """The session's last assistant message with text (its text blocks joined), or None.

    Claude Code writes one API message as several lines (one per content block) that
    share message.id, so the text lines of the last message id are joined.
    """
    try:
        with open(transcript, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > TRANSCRIPT_MAX_BYTES:
                handle.seek(size - TRANSCRIPT_MAX_BYTES)
                handle.readline()  # a partial line
            found = list(_assistant_texts(handle))
    except FileNotFoundError:
        raise NotFound(f"no such transcript: {transcript}") from None
    except IsADirectoryError:
        raise NotFound(f"not a file: {transcript}") from None
    if not found:
        return None
    last_id, last_text = found[-1]
    if last_id is None:
        return last_text
    texts = []
    for ident, text in reversed(found):
        if ident != last_id:
            break
        texts.append(text)
    return "\n\n".join(reversed(texts))


# ---------------------------------------------------------------- the rule cue


def sentences(text: str) -> list[str]:
    """The prose sentences of a markdown answer: no code blocks, tables, list marks or emphasis."""
    out: list[str] = []
    fenced = False
    for line in text.replace("\u2019", "'").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith("|"):
            continue
        line = _LIST_MARK.sub("", line).replace("**", "").replace("__", "").strip()
        if line:
            out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def rejected(sentence: str) -> str | None:
    """Why a sentence cannot be a lesson even when it is rule-shaped, or None."""
    if "?" in sentence:
        return "question"
    if sentence.endswith(":"):
        return "lead-in"
    if len(sentence) > RULE_MAX_CHARS:
        return "too long"
    if len(sentence.split()) < RULE_MIN_WORDS:
        return "too short"
    if _DATE.search(sentence):
        return "date"
    if _HASH.search(sentence):
        return "commit hash"
    if _FILE_LINE.search(sentence):
        return "file:line reference"
    if len(_DIGIT_TOKEN.findall(sentence)) >= 3:
        return "numbers"
    if _FIRST_PERSON.search(sentence):
        return "first person"
    if _DISGUISED.search(sentence) or any(_mixed_script(word) for word in sentence.split()):
        return "disguised characters"  # "Never a\u200bsk", a Cyrillic "а" in "ask": a rule in disguise
    if unsafe(sentence):
        return "removes a safeguard"
    return None


def _imperative(sentence: str) -> bool:
    """Does the sentence open with a command ("Use UTC ...", "Make sure ...", "Remember to ...")?"""
    words = sentence.split()
    if len(words) < 2 or not words[0][:1].isupper():
        return False
    head, after = words[0].lower(), words[1].lower().strip(",.:;")
    if (head in ("make", "be") and after == "sure") or (head == "remember" and after == "to"):
        return True
    return head in IMPERATIVES and after not in _IMPERATIVE_IDIOM and (head, after) not in _IDIOM_PAIRS


def rule_shaped(sentence: str) -> bool:
    """Does the sentence match the cue (the module docstring) and pass every rejection?"""
    return rejected(sentence) is None and shaped(sentence)


UNSAFE_REASONS = ("removes a safeguard", "disguised characters")


def refused(answer: str) -> list[str]:
    """The answer's rule-shaped sentences that are never kept for safety (UNSAFE_REASONS)."""
    return [s for s in sentences(answer) if rejected(s) in UNSAFE_REASONS and shaped(s)]


def shaped(sentence: str) -> bool:
    """Does the sentence have a rule's shape (rejections aside)?"""
    if _IDIOM.match(sentence):
        return False
    if (_STARTS.match(sentence) or _PREFER.match(sentence) or _MUST.search(sentence) or _MODAL.match(sentence)
            or _IMPORTANT.match(sentence) or _imperative(sentence)):
        return True
    condition = _CONDITION.match(sentence)
    return bool(condition and _RULE_HEAD.match(condition.group("rest")))


def rules(answer: str) -> list[str]:
    """The rule-shaped sentences of an answer, in order, each once."""
    seen: set[str] = set()
    kept = []
    for sentence in sentences(answer):
        key = normalise(sentence)
        if rule_shaped(sentence) and key not in seen:
            seen.add(key)
            kept.append(sentence)
    return kept


# ---------------------------------------------------------------- lessons


@dataclass
class Captured:
    found: list[str] = field(default_factory=list)  # rule-shaped sentences in the final answer
    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (sentence, why)
    notes: list[str] = field(default_factory=list)


def capture_lessons(root: Path, answer: str, now: dt.datetime, window_days: int, *,
                    lock_timeout: float = 10.0) -> Captured:
    """Write the answer's rules as T1 lessons, within the caps and without duplicates."""
    result = Captured(found=rules(answer))
    result.skipped += [(s, "never kept: it removes a safeguard or destroys work") for s in refused(answer)]
    if not result.found:
        return result
    today = now.date()
    with _lock(root, lock_timeout):
        existing: set[str] = set()
        in_window = 0
        folder = Path(RootPaths(root).short_term)
        window = {path for day, path in _dated(folder) if 0 <= (today - day).days <= window_days}
        for path in _t1_files(root):
            front, body = split_front(_read(path))
            if _kind(front) == LESSON:
                existing.add(normalise(body))
                in_window += path in window
        room = max(0, LESSONS_IN_WINDOW - in_window)
        for sentence in result.found:
            if normalise(sentence) in existing:
                result.skipped.append((sentence, "already a lesson"))
            elif len(result.written) >= LESSONS_PER_SESSION:
                result.skipped.append((sentence, f"over the cap of {LESSONS_PER_SESSION} lessons per session"))
            elif len(result.written) >= room:
                result.skipped.append((sentence, f"{LESSONS_IN_WINDOW} lessons already in the short-term window"))
            else:
                written = _write_note(root, sentence, today, source="debrief", kind=LESSON)
                if written.written:
                    result.written.append(written.path)
                    existing.add(normalise(sentence))
                else:
                    result.skipped.append((sentence, "already noted today"))
        if room == 0:
            result.notes.append(f"the short-term window already holds {in_window} lessons (cap "
                                f"{LESSONS_IN_WINDOW}): none kept; let the nightly wake fold them into memories")
    return result


# ---------------------------------------------------------------- the SessionEnd hook


def read_hook_stdin(stream: Any) -> bytes:
    """Claude Code's hook JSON from stdin, without waiting forever for an EOF that may not come."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        data = stream.read(HOOK_STDIN_MAX + 1)
        return data.encode() if isinstance(data, str) else data
    chunks: list[bytes] = []
    total = 0
    deadline = time.monotonic() + HOOK_STDIN_WAIT_S
    while total <= HOOK_STDIN_MAX:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def hook_payload(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(payload, None) or (None, why it is not a hook payload)."""
    if len(raw) > HOOK_STDIN_MAX:
        return None, "stdin is too large for a hook payload"
    try:
        payload = json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None, "stdin is not JSON"
    if not isinstance(payload, dict):
        return None, "stdin is not a JSON object"
    return payload, None


def log_failure(root: str | os.PathLike[str] | None, message: str) -> None:
    """One line in the root's hook error log (runtime/state/hook-errors.log); never raises."""
    if root is None:
        return
    try:
        log = Path(RootPaths(root).hook_log)
        log.parent.mkdir(parents=True, exist_ok=True)
        if log.exists() and log.stat().st_size > 1_000_000:
            os.replace(log, str(log) + ".1")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} debrief: {' '.join(message.split())}\n")
    except OSError:
        pass


def run_debrief(store: Store, transcript: str | os.PathLike[str] | None = None,
                commit: bool = False) -> DebriefResult:
    """Store.debrief: sync, lessons from the transcript, lint, render, (commit); see its docstring."""
    from memstore import nightly
    from memstore.results import DebriefResult
    from memstore.timeutil import fmt

    now = store.now
    synced = store.sync(embed=False)  # first, so the report says what the session itself added
    captured = Captured()
    if transcript is not None:
        answer = final_answer(Path(transcript).expanduser())
        if answer is not None:
            captured = capture_lessons(store.root, answer, now, store.config.short_term_days,
                                               lock_timeout=store.config.lock_timeout_s)
        else:  # garbage or an empty file must not read like a session with nothing to learn
            captured.notes.append(f"no assistant answer found in {transcript}: is it a Claude Code "
                                  "transcript (JSON lines)?")
    problems = store.lint()  # lint and render catch the mirror up with the lessons just written
    errors = sum(1 for p in problems if p.level == "error")
    rendered = store.render()
    lessons = [p.relative_to(store.root).as_posix() for p in captured.written]
    committed: str | None = None
    if commit:
        derived = [f"memory/{name}" for name in rendered.written]
        if lessons or derived:
            committed = nightly.commit_paths(store.root, lessons, f"memstore debrief {fmt(now)}",
                                             tracked_only=derived)
        else:
            committed = "nothing to commit: debrief wrote no files"
    return DebriefResult(
        ran_at=fmt(now),
        sync=synced.summary(),
        added=synced.added,
        changed=synced.changed,
        removed=synced.removed,
        lint_errors=errors,
        lint_warnings=len(problems) - errors,
        render=rendered.summary(),
        transcript=str(transcript) if transcript is not None else None,
        rules_found=len(captured.found),
        lessons=lessons,
        skipped=[{"rule": rule, "why": why} for rule, why in captured.skipped],
        notes=captured.notes,
        committed=committed,
    )

"""Capture: one fact into T1 (`memstore note`), and the rule-shaped lessons of a session's
final answer (`memstore debrief --transcript`). Standard library only.

Every T1 file written here goes through one function, `_write_note`, under one lock
(runtime/state/capture.lock): one writer, so a check for "already there" and the write
that follows it never interleave with another note or debrief.

A note is `memory/short-term/YYMMDD-<slug>.md` (the slug: the text's first six words,
kebab-case ASCII; a different fact with the same slug on the same day gets -2, -3, ...)
with frontmatter `created: <ISO date>`, `source: note|debrief` and `kind` when given. A
lesson also says what its answer replied to, when the transcript has the prompt before it
(memstore.life.transcripts): `context:`, one line of at most CONTEXT_CHARS, embedded apart
and never shown (memstore.meaning.chunking).
The same fact twice on one day (normalised: whitespace collapsed, case folded, a
trailing . or ! dropped) is written once.

THE RULE CUE (what debrief keeps from a session's final answer), deliberately narrow:
missing a rule costs one absent line, while a false positive is prose paid for in every
later prompt, so when in doubt nothing is kept.

The final answer is the last assistant message with text in the transcript (its text
blocks joined; an earlier message is never read; memstore.life.transcripts). Code fences
and table rows are dropped; each remaining line loses its list marker, heading marks and ** / __;
lines are split into sentences after . ! or ? followed by a space. A sentence is KEPT only
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
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.agent_root import RootPaths
from memstore.core.errors import BadUsage
from memstore.core.frontreader import split_front
from memstore.core.kinds import KEBAB
from memstore.core.locks import atomic_write, file_lock
from memstore.core.projects import project_of
from memstore.core.results import DebriefResult
from memstore.core.session_end import hook_payload, log_failure
from memstore.core.timeutil import fmt
from memstore.hook.bundle import _dated
from memstore.hook.factform import normalise
from memstore.hook.rulecue import refused, rules
from memstore.life.commits import commit_paths
from memstore.life.date_stamping import annotate
from memstore.life.transcripts import final_answer, final_exchange  # noqa: F401 (read from here)
from memstore.meaning.chunking import one_line
from memstore.team.secrets import a, find, refuse

if TYPE_CHECKING:
    from memstore.core.config import Config
    from memstore.mirror.render import RenderResult
    from memstore.mirror.sync import SyncReport

SLUG_WORDS = 6
SLUG_CHARS = 60
LESSON = "lesson"
LESSONS_PER_SESSION = 3
LESSONS_IN_WINDOW = 30
CONTEXT_CHARS = 200  # of the prompt a lesson answered, kept as its `context:`

# ---------------------------------------------------------------- notes


@dataclass(frozen=True)
class Written:
    path: Path
    written: bool  # False: the same fact was already there (path names that file)


def slug(text: str) -> str:
    """kebab-case ASCII of the first SLUG_WORDS words (at most SLUG_CHARS characters), or 'note'."""
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


def _note_bytes(text: str, day: dt.date, source: str, kind: str | None, project: str | None = None,
                context: str | None = None) -> bytes:
    front = {"created": day.isoformat(), "source": source, **({"kind": kind} if kind else {}),
             **({"project": project} if project else {})}
    head = "".join(f"{key}: {_front_value(value)}\n" for key, value in front.items())
    # one printable line (prompt_context), so one JSON string is one YAML double-quoted scalar
    if context:
        head += f"context: {json.dumps(context, ensure_ascii=False)}\n"
    return f"---\n{head}---\n\n{text.strip()}\n".encode()


def prompt_context(prompt: str | None) -> str | None:
    """A lesson's `context:`: the prompt its answer replied to, one line of at most CONTEXT_CHARS.

    Embedded apart from the lesson, never shown (memstore.meaning.chunking). None without a
    prompt, and when the line looks like it holds a secret (memstore.team.secrets): a lesson is
    committed and may be shared, and the prompt is the person's, pasted tokens and all.
    """
    line = one_line(prompt or "")
    if len(line) > CONTEXT_CHARS:
        cut = line.rfind(" ", CONTEXT_CHARS // 2, CONTEXT_CHARS)
        line = line[: cut if cut > 0 else CONTEXT_CHARS - 1].rstrip() + "…"
    return line if line and not find(line) else None


def _read(path: Path) -> str:
    try:
        return (path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
                .lstrip("\ufeff"))
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


def _write_note(root: Path, text: str, day: dt.date, *, source: str, kind: str | None,
                project: str | None = None, context: str | None = None) -> Written:
    """The one writer of T1 notes (call with the capture lock held)."""
    text = annotate(text, day)  # "yesterday" gains its date (memstore.life.date_stamping)
    stem = f"{day:%y%m%d}"
    wanted = normalise(text)
    for path in _t1_files(root):
        if not path.name.startswith(stem + "-"):
            continue
        front, body = split_front(_read(path))
        theirs = re.search(r"^project:\s*['\"]?([^'\"\n]*)", front, re.M)
        if normalise(body) == wanted and (theirs.group(1).strip() if theirs else None) == project:
            return Written(path, False)  # the same fact, for the same project, already noted today
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
    atomic_write(path, _note_bytes(text, day, source, kind, project, context))
    return Written(path, True)


NOTE_MAX_CHARS = 20_000  # a T1 fact is a line or a paragraph; the bundle shows 1,200 characters


def check_note(text: str, kind: str | None) -> str:
    if not text or not text.strip():
        raise BadUsage("nothing to note: the text is empty",
                       hint='say the fact: memstore note "the fact"')
    if len(text) > NOTE_MAX_CHARS:
        raise BadUsage(f"the note is {len(text):,} characters, "
                       f"over the limit of {NOTE_MAX_CHARS:,}",
                       hint="a note is one fact; write a longer text as a memory: "
                            "memstore new TYPE TOPIC")
    if kind is not None and not KEBAB.match(kind):
        raise BadUsage(f"kind {kind!r} is not kebab-case",
                       hint="e.g. --kind lesson, --kind decision")
    return text.strip()


def note(root: Path, text: str, now: dt.datetime, *, kind: str | None = None, source: str = "note",
         project: str | None = None,
         lock_timeout: float = 10.0) -> Written:
    """One fact into memory/short-term/, unless the same fact is already there today."""
    text = check_note(text, kind)
    refuse(text, "note")
    with _lock(root, lock_timeout):
        return _write_note(root, text, now.date(), source=source, kind=kind, project=project)


# ---------------------------------------------------------------- lessons


@dataclass
class Captured:
    found: list[str] = field(default_factory=list)  # rule-shaped sentences in the final answer
    written: list[Path] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (sentence, why)
    notes: list[str] = field(default_factory=list)


def capture_lessons(root: Path, answer: str, now: dt.datetime, window_days: int, *,
                    project: str | None = None, prompt: str | None = None,
                    lock_timeout: float = 10.0) -> Captured:
    """Write the answer's rules as T1 lessons, within the caps and without duplicates; one that
    holds what looks like a secret is skipped (memstore.team.secrets). prompt: what the answer
    replied to, kept in each lesson as its `context:` (prompt_context)."""
    result = Captured(found=rules(answer))
    result.skipped += [(found[0].shown if (found := find(s)) else s,  # a secret in it: shown masked
                        "never kept: it removes a safeguard or destroys work")
                       for s in refused(answer)]
    if not result.found:
        return result
    today = now.date()
    context = prompt_context(prompt)
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
            if secret := find(sentence):  # the report shows the line masked, never the sentence
                result.skipped.append((secret[0].shown,
                                       f"not kept: it looks like it holds {a(secret[0].kind)}"))
            elif normalise(sentence) in existing:
                result.skipped.append((sentence, "already a lesson"))
            elif len(result.written) >= LESSONS_PER_SESSION:
                result.skipped.append(
                    (sentence, f"over the cap of {LESSONS_PER_SESSION} lessons per session"))
            elif len(result.written) >= room:
                result.skipped.append(
                    (sentence, f"{LESSONS_IN_WINDOW} lessons already in the short-term window"))
            else:
                written = _write_note(root, sentence, today, source="debrief", kind=LESSON,
                                      project=project, context=context)
                if written.written:
                    result.written.append(written.path)
                    existing.add(normalise(sentence))
                else:
                    result.skipped.append((sentence, "already noted today"))
        if room == 0:
            result.notes.append(f"the short-term window already holds {in_window} lessons (cap "
                                f"{LESSONS_IN_WINDOW}): none kept; "
                                "let the nightly wake fold them into memories")
    return result


# ---------------------------------------------------------------- the SessionEnd hook


@dataclass(frozen=True)
class Asked:
    """What the SessionEnd hook's payload asks of the debrief: a transcript (None: there is none)
    and the session's folder."""

    transcript: str | None
    cwd: str | None


def hook_asks(root: str | None, raw: bytes) -> Asked | None:
    """What the hook's payload asks of the debrief; None when it asks nothing (another event). An
    odd payload is logged and the debrief runs without a transcript."""
    payload, why = hook_payload(raw)
    transcript = None
    if payload is None:
        log_failure(root, f"{why}; ran without a transcript")
    else:
        event = payload.get("hook_event_name")
        if event not in (None, "SessionEnd", "Stop"):
            log_failure(root, f"called for {event!r}, not SessionEnd; nothing done")
            return None
        named = payload.get("transcript_path")
        if isinstance(named, str) and named and os.path.isfile(named):
            transcript = named
        # a session that wrote no transcript (nothing said, or persistence off) is no error:
        # the debrief runs without one and nothing is logged
    cwd = payload.get("cwd") if payload is not None else None
    return Asked(transcript, cwd if isinstance(cwd, str) else None)


def lessons_from(root: Path, config: Config, now: dt.datetime,
                 transcript: str | os.PathLike[str] | None, cwd: str | None) -> Captured:
    """The debrief's lessons: the rules of the transcript's final answer, for the session's project
    (its cwd), so they reach that project's sessions only. Nothing without a transcript."""
    captured = Captured()
    if transcript is None:
        return captured
    answer, prompt = final_exchange(Path(transcript).expanduser())
    if answer is None:  # garbage or an empty file must not read as a session with nothing to learn
        captured.notes.append(f"no assistant answer found in {transcript}: is it a Claude Code "
                              "transcript (JSON lines)?")
        return captured
    project = project_of(cwd or os.getcwd(), os.fspath(root))
    return capture_lessons(root, answer, now, config.short_term_days, project=project,
                           prompt=prompt, lock_timeout=config.lock_timeout_s)


def commit_debrief(root: Path, now: dt.datetime, captured: Captured, rendered: RenderResult) -> str:
    """Commit exactly the lessons written and the derived files rendered; what git said."""
    lessons = [p.relative_to(root).as_posix() for p in captured.written]
    derived = [f"memory/{name}" for name in rendered.written]
    if not lessons and not derived:
        return "nothing to commit: debrief wrote no files"
    return commit_paths(root, lessons, f"memstore debrief {fmt(now)}", tracked_only=derived)


def debrief_result(root: Path, now: dt.datetime, transcript: str | os.PathLike[str] | None,
                   synced: SyncReport, captured: Captured, problems: list[dict[str, str]],
                   rendered: RenderResult, committed: str | None) -> DebriefResult:
    """The debrief's report (Store.debrief)."""
    errors = sum(1 for p in problems if p["level"] == "error")
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
        lessons=[p.relative_to(root).as_posix() for p in captured.written],
        skipped=[{"rule": rule, "why": why} for rule, why in captured.skipped],
        notes=captured.notes,
        committed=committed,
    )

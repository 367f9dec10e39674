"""What waits for a person: captured lessons, wake proposals and cue items, and their answers.

Standard library only: the SessionStart bundle (context.py, on the hook's path) reads the
answers to mark lessons and drop answered proposals.

Every item has a short id that names its content, not a file: a lesson by its normalised
text, a proposal by its normalised line, a cue item by its kind and the files it names.
So the same lesson captured again on another day, or the same proposal dreamt again, is
the same item: answered once, it stays answered.

The answers are the person's. They live in `review/<clone>.jsonl` at the root (one file per clone,
as the journal is, so two machines never write the same file and a git merge never conflicts), one
JSON line per answer; the newest answer to an id wins. `review/` is one of the person's folders
(access.PERSON_OWNED): the agent cannot write it, and the hook refuses a shell command that runs
`memstore review accept|reject`. The command line answers only for a person at their terminal, after
a typed `y` (memstore.frontends.terminal). Nothing is deleted: a rejected lesson is moved to
short-term/archive/, a rejected proposal or cue item is only recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field

from memstore.hook.factform import normalise

KINDS = ("lesson", "proposal", "cue")
ACCEPTED, REJECTED = "accepted", "rejected"
DONE = "done"  # an accepted proposal the person marked carried out: no longer carried into bundles
DECISIONS = (ACCEPTED, REJECTED, DONE)
REVIEW_DIR = "review"
_ID = re.compile(r"^[lpc][0-9a-f]{7}$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)\s*$")


def item_id(kind: str, key: str) -> str:
    """`l3f9a0c1`: the kind's first letter and 7 hex digits of the key's digest."""
    return kind[0] + hashlib.blake2b(f"{kind}\0{key}".encode(), digest_size=4).hexdigest()[:7]


def lesson_id(text: str) -> str:
    return item_id("lesson", normalise(text))


def proposal_id(text: str) -> str:
    return item_id("proposal", normalise(text))


def cue_id(kind: str, paths: list[str]) -> str:
    return item_id("cue", kind + "\0" + "\0".join(sorted(paths)))


def looks_like_id(text: str) -> bool:
    return bool(_ID.match(text))


def proposal_lines(body: str) -> list[str]:
    """The proposals of a wake-proposals note: each list item (bullet or numbered) is one; a note
    with no list has each plain line as one (headings and wake's "Not applied." lead-in aside)."""
    found = [m.group(1) for m in map(_BULLET.match, body.splitlines()) if m]
    if found:
        return found
    return [line.strip() for line in body.splitlines()
            if line.strip() and not line.lstrip().startswith(("#", "Not applied."))]


def folder(root: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(root), REVIEW_DIR)


def answers(root: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """id -> the newest answer (its JSON object) across every clone's file; a bad line is
    skipped."""
    found: dict[str, dict[str, str]] = {}
    where = folder(root)
    try:
        names = sorted(n for n in os.listdir(where) if n.endswith(".jsonl"))
    except OSError:
        return found
    for name in names:
        path = os.path.join(where, name)
        try:
            if os.path.islink(path):
                continue  # a link out of the folder is never read (fsguard's rule)
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if not isinstance(answer, dict) or not isinstance(answer.get("id"), str) \
                    or answer.get("decision") not in DECISIONS \
                    or not isinstance(answer.get("at"), str):
                continue
            known = found.get(answer["id"])
            if known is None or (answer["at"], name) >= (known["at"], known.get("_file", "")):
                found[answer["id"]] = {**answer, "_file": name}
    return found


def decision(answered: dict[str, dict[str, str]], ident: str) -> str | None:
    answer = answered.get(ident)
    return answer["decision"] if answer else None


def record(root: str | os.PathLike[str], clone: str, answer: dict[str, object]) -> str:
    """Append one answer to this clone's file (one write of one whole line); returns its path.

    An answer carries `via`, where it came from (the terminal, the user, the parent processes).
    """
    from memstore.core.journal import append_line

    path = os.path.join(folder(root), f"{clone}.jsonl")
    append_line(path, (json.dumps(answer, ensure_ascii=False, sort_keys=True)
                       + "\n").encode("utf-8"))
    return path


def withheld(kind: str, body: str, answered: dict[str, dict[str, str]]) -> bool:
    """Is this T1 text a lesson that never reaches the agent or the dream: one the person rejected,
    or one that removes a safeguard (the debrief's own refusal, applied to lessons written by hand
    or by the agent)?"""
    if kind.strip().lower() != "lesson":
        return False
    text = " ".join(body.split())
    if decision(answered, lesson_id(text)) == REJECTED:
        return True
    # its patterns: only when a lesson is read
    from memstore.hook.rulecue import UNSAFE_REASONS, rejected, sentences

    return any(rejected(sentence) in UNSAFE_REASONS for sentence in sentences(text))


def standing_lessons(answered: dict[str, dict[str, str]], project: str | None = None
                     ) -> list[tuple[str, str]]:
    """(id, text) of every lesson the person accepted for this project (or person-wide), oldest
    answer first: they stand however old."""
    from memstore.core.projects import belongs

    found = [(a["at"], ident, a.get("text", "")) for ident, a in answered.items()
             if a.get("kind") == "lesson" and a["decision"] == ACCEPTED and a.get("text")
             and belongs(a.get("project"), project)]
    return [(ident, text) for _at, ident, text in sorted(found)]


def accepted_proposals(answered: dict[str, dict[str, str]], project: str | None = None
                       ) -> list[tuple[str, str]]:
    """(id, text) of every proposal the person accepted and has not marked done, for this project
    (or person-wide), oldest answer first: the bundle carries each as the person's instruction until
    done."""
    from memstore.core.projects import belongs

    found = [(a["at"], ident, a.get("text", "")) for ident, a in answered.items()
             if a.get("kind") == "proposal" and a["decision"] == ACCEPTED and a.get("text")
             and belongs(a.get("project"), project)]
    return [(ident, text) for _at, ident, text in sorted(found)]


@dataclass
class Item:
    """One thing that waits for a person (`memstore review --json` prints these)."""

    id: str
    kind: str  # lesson | proposal | cue
    text: str
    source: str  # the file it came from, or "tick <when>" for a cue item
    created: str | None
    paths: list[str] = field(default_factory=list)  # the files it is about
    # a lesson's project, or the dream's (memstore.core.projects); None: person-wide
    project: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "kind": self.kind, "text": self.text, "source": self.source,
                "created": self.created, "paths": self.paths, "project": self.project}


def _t1(root: str, archive: bool = False) -> list[tuple[str, str, dict[str, str], str]]:
    """(rel path, name, frontmatter values, body) of every T1 file in memory/short-term/ (and, with
    `archive`, in its archive/ too)."""
    from pathlib import Path

    from memstore.core.frontreader import front_values, split_front
    from memstore.core.fsguard import md_files, read_text

    out = []
    base = Path(root)
    files: list[Path] = []
    for where in (["short-term", "short-term/archive"] if archive else ["short-term"]):
        try:
            files += md_files(base / "memory" / where)
        except OSError:
            continue
    for path in files:
        front, body = split_front(read_text(path))
        out.append((path.relative_to(base).as_posix(), path.name, front_values(front), body))
    return out


def _value(values: dict[str, str], key: str) -> str:
    from memstore.core.frontreader import unquote

    return unquote(values.get(key, "")).strip()


T1 = list[tuple[str, str, dict[str, str], str]]  # (rel path, name, frontmatter values, body): _t1's


def _archived(rel: str) -> bool:
    return rel.startswith("memory/short-term/archive/")


def open_proposals(root: str | os.PathLike[str], answered: dict[str, dict[str, str]] | None = None,
                   notes: T1 | None = None) -> list[Item]:
    """Each unanswered proposal of the wake's own proposals notes, once, oldest note first.

    Only notes whose bytes match what the wake recorded count (memstore.hook.proposal_notes): a note
    the agent wrote with `kind: wake-proposals` is an ordinary fact, never a proposal. Notes
    rolled into short-term/archive/ count too: a proposal waits until it is answered, however
    old, and is never written twice (wake checks against this list). `notes`: genuine()'s list,
    when the caller has it already.
    """
    from memstore.hook.proposal_notes import genuine

    answered = answers(root) if answered is None else answered
    seen: set[str] = set()
    found = []
    files = genuine(root)[0] if notes is None else notes
    for rel, _name, values, body in sorted(files, key=lambda t: t[1]):
        if _value(values, "kind").lower() != "wake-proposals":
            continue
        for line in proposal_lines(body):
            ident = proposal_id(line)
            if ident in seen or decision(answered, ident):
                continue
            seen.add(ident)
            found.append(Item(ident, "proposal", line, rel, _value(values, "date") or None,
                              project=_value(values, "project") or None))
    return found


def pending(root: str | os.PathLike[str], cue: dict[str, object] | None,
            t1: T1 | None = None) -> list[Item]:
    """Everything unanswered: lessons, then proposals, then cue items (new facts are not questions).

    `t1`: the short-term files as the caller already has them (the web inspector reads them from
    the mirror), for the lessons; by default they are read from memory/short-term/. Proposals
    come from the wake's record and the notes' own bytes (open_proposals).
    """
    answered = answers(root)
    items: list[Item] = []
    seen: set[str] = set()
    # lessons wait in short-term/ only, not its archive/
    files = _t1(os.fspath(root)) if t1 is None else t1
    for rel, _name, values, body in sorted(files, key=lambda t: t[1]):
        if _archived(rel) or _value(values, "kind").lower() != "lesson":
            continue
        text = " ".join(body.split())
        ident = lesson_id(text)
        if not text or ident in seen or decision(answered, ident) or (
                withheld("lesson", body, answered)):
            continue
        seen.add(ident)
        items.append(Item(ident, "lesson", text, rel, _value(values, "created") or None, [rel],
                          _value(values, "project") or None))
    # from the wake's record, never from `t1` (the agent writes those)
    items += open_proposals(root, answered)
    raw = cue.get("items") if isinstance(cue, dict) else None
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, dict) or entry.get("kind") == "new-fact":
            continue
        paths = [p for p in entry.get("paths") or [] if isinstance(p, str)]
        # a stale reference is one item per memory and reference: the person answers each on its own
        ref = [entry["ref"]] if isinstance(entry.get("ref"), str) else []
        ident = cue_id(str(entry.get("kind")), paths + ref)
        if ident in seen or decision(answered, ident):
            continue
        seen.add(ident)
        items.append(Item(ident, "cue", f"{entry.get('kind')}: {entry.get('detail', '')}",
                          f"tick {cue.get('ran_at')}" if isinstance(cue, dict) else "tick",
                          str(cue.get("ran_at")) if isinstance(cue, dict) else None, paths))
    return items


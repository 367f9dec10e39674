"""A memory the person shared, once a team holds it: the person's own copy steps aside for the
team's, and stays aside when the team takes the memory out.

`share` records what it sent (machine state: memstore.core.agent_root.team_shared_file). Each
pull, and `team add`, then compares the person's memories with what the clone's HEAD holds:

- the person's own memory/<file>.md that was shared from that file, or whose body is the team's
  memory/<file>.md body, steps aside for the team's copy: `status: superseded`, `superseded_by:
  teams/<team>/memory/<file>.md`, `superseded_on` the day the team's commit added it (frontmatter
  edited byte-preservingly). It then has no row, no search hit and no cue item
  (memstore.mirror.stepping_aside), and `show` leads to the team's copy;
- a lesson the person accepted in review and shared (or whose text is the team file's body)
  leaves the bundle's standing lessons: the team's copy stands instead;
- when the team takes a memory out (a pull that removes it, or a share merged and taken out
  between two pulls), an own copy that stepped aside for it, or is the very text taken out,
  becomes `status: forgotten` with the team's reason (the commit's subject) in `forgotten_why`;
  every memory a pull takes out is kept in the record's `retired` list, with its reason, for the
  bundle to say.

Nothing is deleted, no team file is written, and a copy that stepped aside never comes back by
itself. A file whose frontmatter cannot be edited safely (memstore.mirror.fmedit) is left as it
is, and said.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstore.core.agent_root import team_shared_file
from memstore.core.frontreader import front_values, split_front
from memstore.core.locks import atomic_write, file_lock
from memstore.core.teams import Team
from memstore.hook.review import ACCEPTED, answers
from memstore.mirror.fmedit import CannotEdit, set_fields
from memstore.mirror.stepping_aside import edits_for_team_copy, edits_for_team_retired
from memstore.team.gitconf import GitError, git
from memstore.team.sharing import lesson_name

RETIRED_KEPT = 50  # the newest memories taken out, for the bundle (it shows those of recent days)
SHARED_KEPT = 500


@dataclass
class Handover:
    """What one team's reconciliation did to the person's memories."""

    # own files that stepped aside for the team's copy
    stepped_aside: list[str] = field(default_factory=list)
    # own files forgotten because the team took the memory out
    retired: list[str] = field(default_factory=list)
    # accepted lessons (ids) that left the standing lessons
    lessons: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # own files that could not be edited, and why

    def lines(self, team: str) -> list[str]:
        out = [f"{rel} steps aside for team {team}'s copy" for rel in self.stepped_aside]
        out += [f"{rel}: team {team} took it out (kept, forgotten)" for rel in self.retired]
        out += [f"lesson {ident} stands as team {team}'s memory" for ident in self.lessons]
        return out + self.left

    def __bool__(self) -> bool:
        return bool(self.stepped_aside or self.retired or self.lessons)


# ---------------------------------------------------------------- the record


def read_record(root: str | os.PathLike[str]) -> dict[str, Any]:
    try:
        with open(team_shared_file(root), encoding="utf-8") as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


@contextlib.contextmanager
def _record(root: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The record, read and written back under its lock."""
    target = Path(team_shared_file(root))
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.with_name(target.name + ".lock"), timeout=10):
        state = read_record(root)
        yield state
        atomic_write(target, (json.dumps(state, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def record_share(root: Path, team: Team, inner: str, source: str, commit: str, day: str) -> None:
    """Remember that `share` sent `source` (the own file, root-relative, or an accepted lesson's
    id) to `team` as `inner` (its path in the team's repository) in `commit`, made on the team's
    branch as it was."""
    base = next(iter(_lines(team.folder(root), "rev-parse", "--verify", "-q", f"{commit}^")), "")
    with _record(root) as state:
        shared = [e for e in state.get("shared", []) if isinstance(e, dict)
                  and not (e.get("team") == team.name and e.get("path") == inner)]
        shared.append({"team": team.name, "path": inner, "from": source, "on": day, "base": base})
        state["shared"] = shared[-SHARED_KEPT:]


# ---------------------------------------------------------------- what the clone says


def _lines(folder: str, *args: str) -> list[str]:
    try:
        done = git(folder, *args, check=False)
    except GitError:
        return []
    if done.returncode != 0:
        return []
    return [line for line in done.stdout.split("\0" if "-z" in args else "\n") if line]


def _text_at(folder: str, commit: str, inner: str) -> str | None:
    try:
        done = git(folder, "show", f"{commit}:{inner}", check=False)
    except GitError:
        return None
    return done.stdout if done.returncode == 0 else None


def _added_on(folder: str, inner: str) -> str:
    """The day the team's history last added `inner` ("" when it never did)."""
    found = _lines(folder, "log", "-1", "--diff-filter=A", "--format=%cs", "HEAD", "--", inner)
    return found[0] if found else ""


def _added_since(folder: str, inner: str, sent: dict[str, Any]) -> bool:
    """Did the team's history add `inner` after the share was made (its base commit)? Merged,
    that is."""
    base = str(sent.get("base") or "")
    known = base and _lines(folder, "cat-file", "-t", base) == ["commit"]
    span = f"{base}..HEAD" if known else "HEAD"
    return bool(_lines(folder, "log", "-1", "--diff-filter=A", "--format=%H", span, "--", inner))


def taken_out(folder: str, inner: str) -> tuple[str, str]:
    """(the day, the reason) of the commit that last took `inner` out of the team's history; ("",
    "") if none. The reason is the commit's subject, without the "Forget <name>: " a forget
    proposal starts it with."""
    found = _lines(folder, "log", "-1", "--diff-filter=D", "--format=%cs%x1f%s", "HEAD", "--",
                   inner)
    if not found or "\x1f" not in found[0]:
        return "", ""
    day, subject = found[0].split("\x1f", 1)
    prefix = f"Forget {inner.rsplit('/', 1)[-1][:-3]}:"
    why = subject[len(prefix):] if subject.startswith(prefix) else subject
    return day, " ".join(why.split()) or "no reason given"


def reconcile(root: Path, team: Team, before: str = "") -> Handover:
    """Step the person's copies aside for what `team`'s clone holds at HEAD, and mark those the
    team took out (`before`: the HEAD a pull moved from, whose removals are said in the bundle)."""
    done = Handover()
    folder = team.folder(root)
    if not os.path.isdir(os.path.join(folder, ".git")):
        return done
    held = {p for p in _lines(folder, "ls-tree", "-z", "--name-only", "HEAD", "--", "memory/")
            if p.endswith(".md") and p.count("/") == 1}
    # inner -> (day, why, its text before) for what this pull took out
    gone: dict[str, tuple[str, str, str]] = {}
    if before:
        for inner in _lines(folder, "diff", "-z", "--name-only", "--diff-filter=D", before, "HEAD",
                            "--", "memory/"):
            if inner.endswith(".md") and inner.count("/") == 1:
                gone[inner] = (*taken_out(folder, inner), _text_at(folder, before, inner) or "")
    with _record(root) as state:
        # only what share itself records: a memory/<file>.md of the team's, from a memory/<file>.md
        # of the person's or a lesson's id (a forged record must not edit a lens or identity.md)
        sent = {e["path"]: e for e in state.get("shared", [])
                if isinstance(e, dict) and e.get("team") == team.name and _inner(e.get("path"))
                and (_inner(e.get("from"))
                     or (isinstance(e.get("from"), str) and "/" not in e["from"]))}
        for inner in sorted(held | set(gone) | set(sent)):
            _own(root, team, folder, inner, inner in held, gone.get(inner), sent.get(inner), done)
        _lessons(root, team, folder, held, gone, sent, state, done)
        retired = [e for e in state.get("retired", []) if isinstance(e, dict)]
        for inner, (day, why, text) in sorted(gone.items()):
            summary = front_values(split_front(text)[0]).get("summary", "") if text else ""
            retired.append({"team": team.name, "path": inner, "name": inner.rsplit("/", 1)[-1][:-3],
                            "summary": summary[:200], "on": day, "why": why[:300]})
        state["retired"] = retired[-RETIRED_KEPT:]
    return done


def _inner(path: object) -> bool:
    """memory/<file>.md: the one place a shared memory lives, in the person's root and in a
    team's."""
    return isinstance(path, str) and re.fullmatch(r"memory/[^/\\\x00]+\.md", path) is not None \
        and path != "memory/MEMORY.md" and ".." not in path


def _own(root: Path, team: Team, folder: str, inner: str, held: bool,
         gone: tuple[str, str, str] | None, sent: dict[str, Any] | None, done: Handover) -> None:
    """One own memory/<file>.md against the team's file of that name."""
    path = root / inner
    if not _inner(inner):
        return
    try:
        raw = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        raw = None
    if raw is None:
        # no own file of that name (forgotten into the archive, renamed): nothing of theirs here
        return
    text = raw.decode("utf-8", "replace")
    values = front_values(split_front(text.lstrip("\ufeff").replace("\r\n", "\n"))[0])
    status = values.get("status", "").strip().lower()
    team_rel = f"teams/{team.name}/{inner}"
    shared_from_here = sent is not None and sent.get("from") == inner
    if held:
        if status.startswith(("superseded", "forgotten")):
            return  # aside already: for this team's copy, or by the person's own word
        # only a memory the person shared from here: a teammate who copies the person's text into
        # the team must not be able to put the person's own memory away
        if shared_from_here:
            day = (_added_on(folder, inner)
                   or next(iter(_lines(folder, "log", "-1", "--format=%cs", "HEAD")), ""))
            if _edit(path, edits_for_team_copy(team_rel, day), done):
                done.stepped_aside.append(inner)
        return
    if status.startswith("forgotten"):
        return
    handed = status.startswith("superseded") and values.get("superseded_by", "").strip() == team_rel
    if not handed:
        if status.startswith("superseded"):
            return  # superseded by the person's own word
        if not (sent is not None and shared_from_here and _added_since(folder, inner, sent)):
            return  # not (yet) the team's: an unmerged share, or another memory of the same name
    day, why = (gone[0], gone[1]) if gone else taken_out(folder, inner)
    if day and _edit(path, edits_for_team_retired(team.name, why, day), done):
        done.retired.append(inner)


def _lessons(root: Path, team: Team, folder: str, held: set[str],
             gone: dict[str, tuple[str, str, str]], sent: dict[str, dict[str, Any]],
             state: dict[str, Any], done: Handover) -> None:
    """The person's accepted lessons that went to the team: out of the standing lessons
    (state["lessons"])."""
    marks = state.setdefault("lessons", {})
    for ident, answer in answers(root).items():
        if (answer.get("kind") != "lesson" or answer.get("decision") != ACCEPTED
                or not answer.get("text")):
            continue
        text = " ".join(str(answer["text"]).split())
        inner = f"memory/{lesson_name(text)}"
        mark = marks.get(ident) if isinstance(marks.get(ident), dict) else None
        from_here = inner in sent and sent[inner].get("from") == ident
        if inner in held:
            if mark is None and from_here:
                marks[ident] = {"team": team.name, "path": inner, "state": "held",
                                "on": _added_on(folder, inner)}
                done.lessons.append(ident)
        elif (mark and mark.get("team") == team.name and mark.get("state") == "held") or (
                mark is None and from_here and _added_since(folder, inner, sent[inner])):
            day, why = ((gone[inner][0], gone[inner][1]) if inner in gone
                        else taken_out(folder, inner))
            if day:
                marks[ident] = {"team": team.name, "path": inner, "state": "retired", "on": day,
                                "why": why[:300]}
                done.lessons.append(ident)


def _edit(path: Path, updates: dict[str, Any], done: Handover) -> bool:
    try:
        atomic_write(path, set_fields(path.read_bytes(), updates))
    except (CannotEdit, OSError) as exc:
        done.left.append(f"{path.parent.name}/{path.name}: left as it is, "
                         f"its frontmatter cannot be edited ({exc})")
        return False
    return True


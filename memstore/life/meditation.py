"""Which meditation object the nightly sit takes: a deterministic rotation.

The objects are `meditations/*.md` (frontmatter `type: meditation`, `shelf: awareness` or
`instrumental`, `cadence_weight`). When each was last sat with is read from the dream
journal (entries with `kind: meditation`, `object: <stem>` and `date`, in
`memory/dream-journal/` or its `archive/` folder), never written into the object: a
person places and edits those files, the machine only reads them.

The rules, in order:

1. The object of the most recent sit is excluded, so no object comes up twice running.
2. The awareness floor: if none of the last three sits was on an awareness object, only
   the awareness shelf is eligible (if that leaves nothing, every object rule 1 left is).
   Fewer than three sits so far count as the window they make, so the very first sit is
   an awareness one. A sit's shelf is the one its entry recorded, else the object's.
3. score = cadence_weight x (1 - 0.5 ** (days since last use / 7)): the factor climbs from
   0 on the day of a sit to a half after a week; a never-used object has factor 1 and
   scores its full weight. Highest score wins; ties go to the name that sorts first.

Sits are ordered by date, then file name. Entries dated after `now` are not counted: the
choice is what the journal said as of `now`, so a pinned clock gives a pinned answer.

`choose` is a pure function of (objects, sits, now); `load_objects` and `load_sits` read
them from a root, and `next_choice` does both.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

from memstore.core.fsguard import md_files, read_regular
from memstore.core.results import Candidate, Choice
from memstore.core.tamper import is_held
from memstore.core.tamper_state import load
from memstore.core.timeutil import parse_date
from memstore.mirror.parsing import decode, split_frontmatter

SHELVES = ("awareness", "instrumental")
DEFAULT_WEIGHT = 0.95
HALF_LIFE_DAYS = 7.0
FLOOR_WINDOW = 3
_DATED = re.compile(r"^(\d{2})(\d{2})(\d{2})-")


@dataclass(frozen=True)
class MeditationObject:
    stem: str
    path: str  # relative to the root
    shelf: str
    weight: float
    text: str  # the whole file, frontmatter included


@dataclass(frozen=True)
class Sit:
    """One meditation entry in the dream journal."""

    date: dt.date
    object: str  # the object's file stem
    shelf: str | None  # as the entry recorded it (None when it did not)
    path: str  # relative to the root


def factor(days: int | None) -> float:
    """How far an object has come back since its last use: 0 on the day, 1 if never used."""
    if days is None:
        return 1.0
    return 1.0 - 0.5 ** (max(days, 0) / HALF_LIFE_DAYS)


def choose(objects: list[MeditationObject], sits: list[Sit], now: dt.date | dt.datetime) -> Choice:
    """The object for a sit at `now`, and why: every candidate with its numbers and exclusion."""
    today = now.date() if isinstance(now, dt.datetime) else now
    history = sorted((s for s in sits if s.date <= today),
                     key=lambda s: (s.date, Path(s.path).name, s.path))
    shelf_of = {o.stem: o.shelf for o in objects}
    last_used: dict[str, dt.date] = {}
    for sit in history:
        last_used[sit.object] = sit.date  # history is in date order: the last one wins

    def sit_shelf(sit: Sit) -> str | None:
        return sit.shelf if sit.shelf in SHELVES else shelf_of.get(sit.object)

    rules: list[str] = []
    excluded: dict[str, str] = {}
    by_name = sorted(objects, key=lambda o: o.stem)
    if history:
        last = history[-1]
        if last.object in shelf_of:
            if len(objects) > 1:
                excluded[last.object] = "last-sit"
                rules.append(f"no repeat: {last.object} was the last sit ({last.date.isoformat()})")
            else:
                rules.append(f"no repeat waived: {last.object} is the only object in meditations/")

    window = history[-FLOOR_WINDOW:]
    if not any(sit_shelf(s) == "awareness" for s in window):
        awareness = [o for o in by_name if o.shelf == "awareness" and o.stem not in excluded]
        seen = ", ".join(s.object for s in window) or "no sits yet"
        if awareness:
            for obj in by_name:
                if obj.shelf != "awareness" and obj.stem not in excluded:
                    excluded[obj.stem] = "awareness-floor"
            rules.append(f"awareness floor: no awareness object in the last {FLOOR_WINDOW} sits "
                         f"({seen}); only the awareness shelf is eligible")
        elif objects:
            rules.append(f"awareness floor: no awareness object in the last {FLOOR_WINDOW} sits "
                         f"({seen}), but none is eligible; every remaining object stays in")

    candidates = []
    for obj in by_name:
        used = last_used.get(obj.stem)
        days = (today - used).days if used is not None else None
        f = factor(days)
        candidates.append(Candidate(
            name=obj.stem,
            shelf=obj.shelf,
            weight=obj.weight,
            last_used=used.isoformat() if used else None,
            days=days,
            factor=round(f, 6),
            score=round(obj.weight * f, 6),
            excluded_by=excluded.get(obj.stem),
        ))
    # Rounded scores rank: equal weights and days always tie exactly, and a tie goes by name.
    candidates.sort(key=lambda c: (c.excluded_by is not None, -c.score, c.name))
    winner = candidates[0] if candidates and candidates[0].excluded_by is None else None
    chosen = next((o for o in objects if winner and o.stem == winner.name), None)
    return Choice(
        date=today.isoformat(),
        object=chosen.stem if chosen else None,
        shelf=chosen.shelf if chosen else None,
        path=chosen.path if chosen else None,
        score=winner.score if winner else None,
        rules=rules,
        recent=[{"date": s.date.isoformat(), "object": s.object, "shelf": sit_shelf(s)}
                for s in window],
        candidates=candidates,
    )


# ---------------------------------------------------------------- reading them from a root


def _front(raw: bytes) -> tuple[dict[str, object] | None, str]:
    """(frontmatter mapping or None with why, text). Never raises on content."""
    problems: list = []
    text = decode(raw, problems)
    meta, _body, had = split_frontmatter(text, problems)
    errors = [p.message for p in problems if p.level == "error"]
    if errors:
        return None, errors[0]
    if not had:
        return None, "no frontmatter"
    return meta, text


def _weight(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def load_objects(root: Path) -> tuple[list[MeditationObject], list[dict[str, str]], list[str]]:
    """(objects, skipped files with the reason, notes such as a defaulted weight)."""
    objects: list[MeditationObject] = []
    skipped: list[dict[str, str]] = []
    notes: list[str] = []
    try:
        paths = md_files(root / "meditations")  # regular files only: a link or a FIFO is never read
    except OSError:
        paths = []
    tampered = load(str(root))
    for path in paths:
        rel = f"meditations/{path.name}"
        if is_held(str(root), rel, tampered):
            skipped.append({"path": rel, "reason": "changed during an agent session; not sat with "
                                                   f"until the person runs memstore trust {rel}"})
            continue
        try:
            raw = read_regular(path)
        except OSError as exc:
            skipped.append({"path": rel, "reason": f"unreadable ({exc.strerror})"})
            continue
        meta, text = _front(raw)
        if meta is None:
            skipped.append({"path": rel, "reason": text})
            continue
        if meta.get("type") != "meditation":
            skipped.append({"path": rel,
                            "reason": f"type is {meta.get('type')!r}, not 'meditation'"})
            continue
        shelf = meta.get("shelf")
        if shelf not in SHELVES:
            skipped.append({"path": rel,
                            "reason": f"shelf is {shelf!r}, not one of {', '.join(SHELVES)}"})
            continue
        weight = _weight(meta.get("cadence_weight"))
        if weight is None:
            if "cadence_weight" in meta:
                notes.append(f"{rel}: cadence_weight {meta['cadence_weight']!r} "
                             f"is not a number >= 0; using {DEFAULT_WEIGHT}")
            weight = DEFAULT_WEIGHT
        objects.append(MeditationObject(path.name[:-3], rel, str(shelf), weight, text))
    return objects, skipped, notes


def _entry_date(meta: dict[str, object], name: str) -> dt.date | None:
    when = parse_date(meta.get("date"))
    if when is not None:
        return when
    match = _DATED.match(name)  # an entry without a usable date: its file name's YYMMDD
    if match:
        try:
            return dt.date(2000 + int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            return None
    return None


def load_sits(root: Path) -> list[Sit]:
    """Every meditation entry in memory/dream-journal/, its sub-folders (archive/) included."""
    folder = root / "memory" / "dream-journal"
    sits: list[Sit] = []
    try:
        paths = md_files(folder, recursive=True)  # regular files only; linked folders not walked
    except OSError:
        paths = []
    for path in paths:
        try:
            raw = read_regular(path)
        except OSError:
            continue
        if b"meditation" not in raw:  # cheap: most entries are dreams; skip their YAML
            continue
        meta, _ = _front(raw)
        if meta is None or meta.get("kind") != "meditation":
            continue
        stem = meta.get("object")
        when = _entry_date(meta, path.name)
        if not isinstance(stem, str) or not stem.strip() or when is None:
            continue
        shelf = meta.get("shelf")
        sits.append(Sit(when, stem.strip(), shelf if isinstance(shelf, str) else None,
                        path.relative_to(root).as_posix()))
    return sits


def next_choice(root: Path, now: dt.date | dt.datetime) -> tuple[Choice, list[MeditationObject]]:
    """The rotation's choice at `now` for the objects and journal under `root`."""
    objects, skipped, notes = load_objects(root)
    choice = choose(objects, load_sits(root), now)
    return replace(choice, skipped=skipped, notes=notes), objects

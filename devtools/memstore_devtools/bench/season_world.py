"""The season benchmark's world: a year of working days, sessions and turns, from one seed.

Deterministic: everything comes from `random.Random(seed)`. The catalog (season_catalog) gives
the projects, the hand-made memories and the templates; here they are placed on a calendar of
working days. Each project runs over a span of the year; each memory is born on a day (written
in a session of its project, or any session for a person-wide one), and may step aside later
(superseded by a successor born in the same turn, forgotten, or past its valid_until). Filler
references (a component's dashboard, runbook, owner...) are added per project, so that the
memory outgrows the index.

Each session is a few turns, each carrying BrainBench's gold: should_retrieve, gold (the
memories the turn needs), acceptable (memories that would also do). Kinds: `silent` (chatter:
nothing must be pushed), `plain` (the prompt uses the memory's words), `para` (a paraphrase
sharing no content word with the memory), `tool` (an edit; a lens may name the memory it needs,
else silent), `write` (the agent writes a memory: neutral, not scored).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

from memstore_devtools.bench.season_catalog import (
    ASPECTS,
    CHATTER,
    CHATTER_COMP,
    LENSES,
    PROJECTS,
    TOOL_PATHS,
    TOPICS,
    Spec,
)

START = dt.date(2025, 1, 6)  # a Monday; the year is in the past, so no file is stamped ahead
HOLIDAYS = frozenset(dt.date(2025, m, d) for m, d in (
    (1, 20), (2, 17), (4, 18), (5, 26), (7, 4), (9, 1), (11, 27), (11, 28), (12, 24), (12, 25),
    (12, 26), (12, 31)))
YEAR_DAYS = 250
QUICK_DAYS = 22
HOURS = (9, 11, 14, 16)
NEED_STOP = frozenset(("need", "want", "like", "use", "get", "got", "one", "ok", "okay"))
_WORD = re.compile(r"[a-z0-9]+")


def remote(project: str) -> str:
    """The project name memstore gives a clone of git@github.com:acme/<project>.git."""
    return f"github.com/acme/{project}"


def working_days(count: int) -> list[dt.date]:
    days: list[dt.date] = []
    day = START
    while len(days) < count:
        if day.weekday() < 5 and day not in HOLIDAYS:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


def content_stems(text: str) -> set[str]:
    """Stems of the content words: lower case, split on anything not a letter or digit (so a
    name's `_` and `-` split too), three letters or more, no function words, no pure numbers."""
    from memstore.core.words import STOP_WORDS

    return {_stem(w) for w in _WORD.findall(text.lower())
            if len(w) >= 3 and not w.isdigit() and w not in STOP_WORDS}


def shares_no_word(prompt: str, memory_text: str) -> bool:
    return not (content_stems(prompt) - {_stem(w) for w in NEED_STOP}) & content_stems(memory_text)


@dataclass
class Memory:
    name: str
    type: str
    project: str | None
    summary: str
    body: str
    plain: tuple[str, ...]
    para: tuple[str, ...]
    related: tuple[str, ...]
    weight: float
    born: int  # the working day it is due on; once placed, the day it was written
    retire: int | None = None  # day index it steps aside from (planned)
    how: str | None = None  # supersede | forget | expire
    by: str | None = None
    in_flight: str | None = None
    valid_until: str | None = None  # for an expiring one: the day before it steps aside
    born_session: int | None = None
    aside_session: int | None = None  # the first session in which it has stepped aside

    def text(self) -> str:
        return f"{self.name} {self.summary} {self.body}"

    def live(self, session: int) -> bool:
        return (self.born_session is not None and self.born_session < session
                and (self.aside_session is None or session < self.aside_session))


@dataclass
class Turn:
    kind: str  # silent | plain | para | tool | write
    prompt: str | None = None
    path: str | None = None  # a tool turn's file, relative to the session's folder
    should_retrieve: bool = False
    gold: tuple[str, ...] = ()
    acceptable: tuple[str, ...] = ()
    writes: str | None = None  # the memory this turn writes
    event: tuple[str, ...] = ()  # ("supersede", old, new) or ("forget", name, why)


@dataclass
class Session:
    index: int
    day: int
    at: str  # ISO instant of its start
    sid: str
    project: str | None
    turns: list[Turn] = field(default_factory=list)


@dataclass
class World:
    seed: int
    days: list[dt.date]
    memories: dict[str, Memory]
    sessions: list[Session]
    dropped_para: int

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "days": [d.isoformat() for d in self.days],
                "memories": {k: dataclasses.asdict(m) for k, m in self.memories.items()},
                "sessions": [dataclasses.asdict(s) for s in self.sessions]}


def _span(project: str | None, n: int) -> tuple[int, int]:
    for p in PROJECTS:
        if p.key == project:
            start = int(p.start * n)
            return start, max(start + 2, min(n, round(p.end * n)))
    return 0, n


def _memories(rng: random.Random, n: int) -> tuple[dict[str, Memory], int]:
    found: dict[str, Memory] = {}
    dropped = 0

    def add(spec: Spec, born: int) -> None:
        nonlocal dropped
        text = f"{spec.key} {spec.summary} {spec.body}"
        para = tuple(p for p in spec.para if shares_no_word(p, text))
        dropped += len(spec.para) - len(para)
        found[spec.key] = Memory(spec.key, spec.key.split("_", 1)[0], spec.project, spec.summary,
                                 spec.body, spec.plain, para, spec.related,
                                 min(8.0, rng.paretovariate(1.2)) * 2.0, born)

    successors = {s.life["by"]: s for s in TOPICS if s.life.get("by")}
    for spec in TOPICS:
        if spec.key in successors:
            continue
        start, end = _span(spec.project, n)
        born = start + int(spec.life["born"] * (end - start))
        add(spec, born)
        if "retire" not in spec.life:
            continue
        retire = start + int(spec.life["retire"] * (end - start))
        if retire <= born + 1:
            continue  # too short a span (the quick month): it never steps aside
        mem = found[spec.key]
        mem.retire, mem.how, mem.by = retire, spec.life["how"], spec.life.get("by")
        if mem.by:
            add(next(s for s in TOPICS if s.key == mem.by), retire)
    for s in TOPICS:  # an in-flight memory that never retires still says so
        if s.key in found and s.life.get("in_flight"):
            found[s.key].in_flight = s.life["in_flight"]
    for p in PROJECTS:
        start, end = _span(p.key, n)
        for comp, cpara in p.components:
            aspects = rng.sample(sorted(ASPECTS), rng.randint(5, 10))
            names = [f"reference_{p.key}-{comp}-{a}" for a in aspects]
            for aspect, name in zip(aspects, names, strict=True):
                summary, body, plain, para = ASPECTS[aspect]
                slots = {"comp": comp, "Comp": comp.capitalize(), "compu": comp.replace("-", "_"),
                         "proj": p.key, "cpara": cpara, "team": p.team}
                born = start + int(rng.random() * 0.85 * (end - start))
                spec = Spec(name, p.key, summary.format(**slots), body.format(**slots),
                            tuple(t.format(**slots) for t in plain),
                            tuple(t.format(**slots) for t in para), {},
                            tuple(x for x in names if x != name))
                add(spec, born)
                found[name].weight *= 0.5
    return found, dropped


def _skeleton(rng: random.Random, seed: int, days: list[dt.date]) -> list[Session]:
    n = len(days)
    sessions: list[Session] = []
    for d, day in enumerate(days):
        active = [p for p in PROJECTS if _span(p.key, n)[0] <= d < _span(p.key, n)[1]]
        hours = sorted(rng.sample(HOURS, rng.choice((1, 2, 2, 3, 3, 4))))
        for j, hour in enumerate(hours):
            project = (None if rng.random() < 0.1 or not active
                       else rng.choices(active, [p.weight for p in active])[0].key)
            at = dt.datetime(day.year, day.month, day.day, hour, rng.randrange(0, 50),
                             tzinfo=dt.UTC)
            sessions.append(Session(len(sessions), d, at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                    f"season-{seed}-{d:03d}-{j}", project))
    return sessions


def _in_scope(mem: Memory, project: str | None) -> bool:
    return mem.project is None or mem.project == project


def _place_lives(sessions: list[Session], mems: dict[str, Memory], days: list[dt.date]
                 ) -> dict[int, list[Turn]]:
    """Births and steps aside, each in the first session (on or after its day) of its scope."""
    placed: dict[int, list[Turn]] = {}
    successors = {m.by for m in mems.values() if m.by}
    pending = sorted((m for m in mems.values() if m.name not in successors),
                     key=lambda m: (m.born, m.name))
    retiring = sorted((m for m in mems.values() if m.retire is not None),
                      key=lambda m: (m.retire or 0, m.name))
    for m in retiring:
        if m.how == "expire" and m.retire is not None:
            m.valid_until = days[m.retire - 1].isoformat()  # aside from the next day on
    for s in sessions:
        for m in [m for m in pending if m.born <= s.day and _in_scope(m, s.project)]:
            m.born_session, m.born = s.index, s.day
            placed.setdefault(s.index, []).append(Turn("write", f"from now on: {m.summary}",
                                                       writes=m.name))
            pending.remove(m)
        for m in [m for m in retiring if m.retire is not None and m.retire <= s.day]:
            if m.born_session is None or m.born_session >= s.index:
                continue
            if m.how == "expire":
                m.aside_session = s.index
                retiring.remove(m)
                continue
            if not _in_scope(m, s.project):
                continue
            if m.how == "forget":
                event = ("forget", m.name,
                         f"replaced by {m.by}" if m.by else "the work it tracked is done")
            else:
                event = ("supersede", m.name, m.by or "")
            succ = mems[m.by] if m.by else None
            if succ is not None:
                succ.born_session, succ.born = s.index, s.day
            placed.setdefault(s.index, []).append(Turn(
                "write", f"that changed: {succ.summary}" if succ else f"{m.name} no longer holds",
                writes=succ.name if succ else None, event=event))
            m.aside_session = s.index + 1
            retiring.remove(m)
    for name in [k for k, m in mems.items() if m.born_session is None]:
        del mems[name]  # never placed: its project had no session left
    for m in mems.values():
        if m.by and m.by not in mems:
            m.by = None
    return placed


def _need(rng: random.Random, s: Session, mems: list[Memory], kind: str, used: set[str]
          ) -> Memory | None:
    pool = [m for m in mems if m.name not in used and (kind == "plain" or m.para)]
    if not pool:
        return None
    weights = [m.weight * (1 + 3 * math.exp(-(s.day - (m.born or 0)) / 10)) for m in pool]
    return rng.choices(pool, weights)[0]


def _comps(project: str | None) -> list[str]:
    for p in PROJECTS:
        if p.key == project:
            return [c for c, _ in p.components]
    return ["core"]


def _turns(rng: random.Random, s: Session, mems: dict[str, Memory], extra: list[Turn]
           ) -> list[Turn]:
    live = [m for m in mems.values() if m.live(s.index) and _in_scope(m, s.project)
            and m.born < s.day and (m.retire is None or m.retire > s.day)]
    live.sort(key=lambda m: m.name)
    names = {m.name for m in live}
    turns: list[Turn] = []
    used: set[str] = set()
    for _ in range(rng.randint(3, 8)):
        roll, comp = rng.random(), rng.choice(_comps(s.project))
        kind = "silent" if roll < 0.36 else "plain" if roll < 0.66 else "para" if roll < 0.84 \
            else "tool"
        mem = _need(rng, s, live, kind, used) if kind in ("plain", "para") else None
        if mem is not None:
            used.add(mem.name)
            prompt = rng.choice(mem.plain if kind == "plain" else mem.para)
            turns.append(Turn(kind, prompt, should_retrieve=True, gold=(mem.name,),
                              acceptable=tuple(r for r in mem.related if r in names)))
            continue
        if kind == "tool":
            path, lens = rng.choice(TOOL_PATHS)
            path = path.format(n=rng.randrange(1, 200), proj=s.project or "scratch", comp=comp)
            named = [x for x in next((lz[4] for lz in LENSES if lz[0] == lens), ()) if x in names]
            if lens is None or named:
                turns.append(Turn("tool", path=path, should_retrieve=bool(named),
                                  gold=tuple(named[:1]), acceptable=tuple(named[1:])))
                continue
        text = (rng.choice(CHATTER_COMP).format(comp=comp) if s.project and rng.random() < 0.3
                else rng.choice(CHATTER))
        turns.append(Turn("silent", text))
    for turn in extra:
        turns.insert(rng.randrange(0, len(turns) + 1), turn)
    return turns


def build(seed: int, quick: bool = False) -> World:
    """The world of one seed: a year of working days (a month with `quick`)."""
    rng = random.Random(seed)
    days = working_days(QUICK_DAYS if quick else YEAR_DAYS)
    mems, dropped = _memories(rng, len(days))
    sessions = _skeleton(rng, seed, days)
    placed = _place_lives(sessions, mems, days)
    for s in sessions:
        s.turns = _turns(rng, s, mems, placed.get(s.index, []))
    return World(seed, days, mems, sessions, dropped)

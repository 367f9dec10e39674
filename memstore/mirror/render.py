"""Rank the T2 memories into bands and render MEMORY.md, MEMORY-archive.md, current-state.md.

A pure function of the mirror and `now`: the index never reads its own previous
output, so regenerating it can never lose anything, and curated summaries live in
the memory files, not here. The four passes:

1. superseded files go straight to the archive;
2. Hot takes rows in (-score, filename) order while they fit its budget (pins always);
3. New takes files born within `new_days`, newest birth first (every newborn scores
   about the same, so score order would really be filename order), rows cut to
   `new_row_chars`;
4. Cold takes the rest by score within its budget; everything else is archived in
   the same order, unbudgeted.

A row that does not fit is pushed down, never cut. Budgets count the rendered row
including its newline. A final guard keeps the whole of MEMORY.md within the line
and byte limits of harnesses that auto-load it and silently drop what is past them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import gc
import math
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from memstore.core.agent_root import RootPaths
from memstore.core.config import Config
from memstore.core.inert import clean_text, inert_line  # noqa: F401 (clean_text: render's API)
from memstore.core.loaded import publish
from memstore.core.policy import score_days
from memstore.core.teams import team_of
from memstore.core.timeutil import to_utc
from memstore.mirror.index_rows import link, make_row
from memstore.mirror.stale_refs import read_stale

BANDS = ("hot", "new", "cold", "archive", "superseded")


@dataclass(slots=True)
class Entry:
    path: str
    name: str
    filename: str
    summary: str
    score: float
    created: dt.date | None
    pin: bool
    superseded: bool
    in_flight: bool
    state: str | None
    access_count: int
    stability: float
    last_accessed: str | None
    last_reinforced: str | None
    importance: float
    full_row: str = ""  # the row as the archive and Hot/Cold show it
    row: str = ""  # the row as its band shows it (New cuts it)
    band: str = "archive"
    rolled: bool = False  # pushed to the archive by the whole-index guard
    # why a stepped-aside entry (superseded=True) stepped aside, when it is its dates and not its
    # status: "expired" (valid_until passed) or "early" (valid_from ahead); the archive heads them
    out_of_time: str = ""
    team: str = ""  # the team whose memory this is (memstore.core.teams), "" for the person's own
    # stepped aside by forget: nothing replaced it (list calls its band "forgotten")
    forgotten: bool = False


@dataclass
class Bands:
    entries: list[Entry]
    hot: list[Entry] = field(default_factory=list)
    new: list[Entry] = field(default_factory=list)
    cold: list[Entry] = field(default_factory=list)
    archive: list[Entry] = field(default_factory=list)
    superseded: list[Entry] = field(default_factory=list)
    used: dict[str, int] = field(default_factory=dict)
    team_rest: dict[str, int] = field(default_factory=dict)  # team memories in no band, per team


def render_minute(now: dt.datetime) -> dt.datetime:
    """Scores are taken at the minute, so two renders within one minute are byte-identical."""
    return to_utc(now).replace(second=0)


_ENTRIES_SQL = """
    SELECT f.path, f.row_text, f.index_row, f.created, f.pin, f.status, f.in_flight, f.state,
           f.importance, COALESCE(p.access_count, 0), COALESCE(p.stability, ?),
           -- days since last access; a never-touched file counts from its mtime
           CASE WHEN p.last_accessed IS NOT NULL THEN julianday(?) - julianday(p.last_accessed)
                ELSE (? - f.mtime_ns / 1e9) / 86400.0 END,
           p.last_accessed, p.last_reinforced,
           f.valid_until, f.valid_from
    FROM files f LEFT JOIN policy p ON p.path = f.path
    WHERE f.kind = 't2'
"""


def _date(text: str | None) -> dt.date | None:
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def load_entries(conn: sqlite3.Connection, now: dt.datetime, config: Config,
                 only: str | None = None) -> list[Entry]:
    """Every T2 file with its score, in the total order (-score, filename).

    The days since last access come from SQLite's julianday over the mirror's canonical
    timestamps: parsing each one into a datetime in Python cost more than the rest of a render.
    """
    return _load(conn, now, config, only)[0]


def _load(
    conn: sqlite3.Connection, now: dt.datetime, config: Config, only: str | None = None,
    marks: dict[str, str] | None = None,
) -> tuple[list[Entry], int]:
    """load_entries, and the length of the shortest row (0 when there is none), for assign.

    This runs once per T2 file, so it is written for speed: the row comes built from the
    mirror (files.index_row, made by sync with make_row), dates are parsed once per distinct
    value, Entry is built positionally (in field order), and the sort is two stable passes
    on plain keys.
    """
    params = (config.initial_stability, now.strftime("%Y-%m-%dT%H:%M:%S"), now.timestamp())
    day = now.date().isoformat()
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: much cheaper than sqlite3.Row over every T2 file
    entries: list[Entry] = []
    append = entries.append
    date = functools.lru_cache(maxsize=None)(_date)  # created dates repeat a lot
    shortest = -1
    with _gc_paused():
        for (path, row_text, full_row, created, pin, status, in_flight, state, importance, count,
             stability, days, last, reinf, until, since) in (
            cursor.execute(_ENTRIES_SQL + " AND f.path = ?", (*params, only)) if only
            else cursor.execute(_ENTRIES_SQL, params)
        ):
            filename = path.rsplit("/", 1)[-1]
            name = filename[:-3]
            summary = row_text or ""
            if full_row is None:  # not built at sync (cannot be after m004; a safe default)
                full_row = make_row(name, filename, summary)
            if marks and path in marks and (mark := inert_line(marks[path])[:200]):
                full_row += " " + mark  # read from a state file: as inert as the row it joins
            if len(full_row) < shortest or shortest < 0:
                shortest = len(full_row)
            retired = (status is not None
                       and status.strip().lower().startswith(("superseded", "forgotten")))
            timing = "" if retired else "expired" if until is not None and until < day else (
                "early" if since is not None and since > day else "")
            append(
                Entry(
                    path,
                    name,
                    filename,
                    summary,
                    score_days(count, stability, days if days is not None else 0.0, importance,
                               config),
                    date(created),
                    bool(pin),
                    # stepped aside (mirror.stepping_aside): superseded, forgotten, out of its dates
                    retired or bool(timing),
                    bool(in_flight),
                    state,
                    count,
                    stability,
                    last,
                    reinf,
                    importance,
                    full_row,
                    full_row,
                    out_of_time=timing,
                    team=team_of(path) or "",
                    forgotten=retired and status.strip().lower().startswith("forgotten"),
                )
            )
    # = sort(key=(-score, filename)): the second sort is stable, reverse=True included, so
    # files of equal score keep the filename order of the first (T2 filenames are unique).
    entries.sort(key=attrgetter("filename", "path"))  # a team's file may share an own file's name
    entries.sort(key=attrgetter("score"), reverse=True)
    return entries, max(shortest, 0)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a render builds one object per T2 file.

    Each allocation batch would otherwise start a collection that walks every Entry built
    so far (a tenth of a render at 100,000 files). Nothing here makes reference cycles.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def row_for(entry: Entry) -> str:
    """One index line: a link the agent can Read, and the file's own summary."""
    return make_row(entry.name, entry.filename, entry.summary)


def cut(row: str, limit: int) -> str:
    return row if len(row) <= limit else row[: limit - 1].rstrip() + "…"


HEADER = """\
# Memory index

Rows are one-line summaries of memory files in this folder. When a row looks
relevant to the task, Read that file: reading is what keeps a memory in this index.
Hot holds the most used (a new memory too, while there is room), New the recently
written that did not reach Hot, Cold the tail. Everything else
is listed in MEMORY-archive.md and found with `memstore search "words"`.
"""


def assign(entries: list[Entry], now: dt.datetime, config: Config) -> Bands:
    """The four passes, then the whole-index guard."""
    for entry in entries:  # as load_entries makes them
        entry.row = entry.full_row
        entry.band = "archive"
    shortest = min(map(len, map(attrgetter("full_row"), entries)), default=0)
    return _assign(entries, now, config, shortest)


def _assign(entries: list[Entry], now: dt.datetime, config: Config, shortest: int) -> Bands:
    """assign, for entries as load_entries makes them (row = full_row, band archive).

    A pass that looked at every T2 file would pay a cache miss per look, since after the sort
    the entries lie all over memory: at 100,000 files the passes cost as much as the
    query. Here one loop splits off the superseded and picks out the pins and the newborns;
    Hot and Cold stop once their budget has no room for even the shortest row (`shortest`,
    without its newline), and the files they did not reach stay in the archive untouched.

    A team's memories (memstore.core.teams) come second. Hot is the person's: their own rows are
    placed there exactly as if no team existed, and team rows get only what is left. New and Cold
    each keep room for team rows, as much as the team would fill and at most `team_share` of the
    band, so what a team learned this week shows beside the person's own; the rest of each band
    is the person's, as before. A team file's pin counts for nobody (a team of pins would fill
    Hot), and team rows reaching no band are counted, not listed, in the archive: search finds them.
    """
    bands = Bands(entries)
    own: list[Entry] = []
    team: list[Entry] = []
    pins: list[Entry] = []
    born: list[Entry] = []
    team_born: list[Entry] = []
    today = now.date()
    # a whole number of days between dates is within new_days iff within this
    new_days = math.floor(config.new_days)
    try:
        first_day = today - dt.timedelta(days=new_days)
    except OverflowError:  # more days than the calendar holds
        first_day = dt.date.min if new_days > 0 else dt.date.max
    for entry in entries:
        if entry.superseded:
            entry.band = "superseded"
            if not entry.team:
                bands.superseded.append(entry)
            continue
        theirs = bool(entry.team)
        (team if theirs else own).append(entry)
        if entry.pin and not theirs:
            pins.append(entry)
        created = entry.created
        # = 0 <= (today - created).days <= new_days, without a timedelta per file
        if created is not None and first_day <= created <= today:
            (team_born if theirs else born).append(entry)
    shortest += 1  # budgets count the newline
    share = min(max(float(config.team_share), 0.0), 1.0) if team else 0.0
    # New and Cold keep room for the team's rows, as much as they would fill and at most `share`
    # of each; Hot keeps none: it is the person's most used, and a team row only gets what it leaves
    new_kept = min(int(config.new_budget * share),
                   sum(min(len(e.full_row), config.new_row_chars) + 1 for e in team_born[:50]))
    cold_kept = min(int(config.cold_budget * share), sum(len(e.full_row) + 1 for e in team[:50]))
    budgets = (config.hot_budget, config.new_budget - new_kept, config.cold_budget - cold_kept)
    used = _fill(bands, own, pins, born, budgets, config, shortest)
    if team:
        full = (config.hot_budget, config.new_budget, config.cold_budget)
        hot, new, cold = (max(0, min(budget - spent, int(budget * share)))
                          for budget, spent in zip(full, used, strict=True))
        _fill(bands, team, [], team_born, (hot, new, cold), config, shortest)

    _guard(bands, config)
    bands.used = {
        "hot": sum(len(e.row) + 1 for e in bands.hot),
        "new": sum(len(e.row) + 1 for e in bands.new),
        "cold": sum(len(e.row) + 1 for e in bands.cold),
    }
    bands.archive = [e for e in own if e.band == "archive"]
    for entry in team:
        if entry.band == "archive":
            bands.team_rest[entry.team] = bands.team_rest.get(entry.team, 0) + 1
    return bands


def _fill(bands: Bands, live: list[Entry], pins: list[Entry], born: list[Entry],
          budgets: tuple[int, int, int], config: Config, shortest: int) -> tuple[int, int, int]:
    """Hot, then New, then Cold for `live` (in score order) within `budgets`; characters used."""
    hot_budget, new_budget, cold_budget = budgets
    honour_pins = bool(pins)  # the person's own pass; a team's pins count for nobody
    used_hot = 0
    hot = bands.hot
    rest: list[Entry] = []
    for at, entry in enumerate(live):
        if used_hot + shortest > hot_budget:
            # Only pins still get in, whatever their size; every other file is in `rest`.
            late_pins = [e for e in pins if e.band != "hot"]
            if late_pins:
                hot += late_pins
                for pin in late_pins:
                    pin.band = "hot"
                    used_hot += len(pin.row) + 1
                rest += [e for e in live[at:] if not e.pin]
            else:
                rest += live[at:]
            break
        size = len(entry.row) + 1
        if (entry.pin and honour_pins) or used_hot + size <= hot_budget:
            entry.band = "hot"
            hot.append(entry)
            used_hot += size
        else:
            rest.append(entry)

    newborns = [e for e in born if e.band != "hot"]
    newborns.sort(key=lambda e: (-(e.created.toordinal() if e.created else 0), e.filename))
    used_new = 0
    for entry in newborns:
        row = cut(entry.row, config.new_row_chars)
        if used_new + len(row) + 1 <= new_budget:
            entry.row = row
            entry.band = "new"
            bands.new.append(entry)
            used_new += len(row) + 1

    # A newborn that did not fit New competes uncut: only New's rows were cut.
    used_cold = 0
    cold = bands.cold
    for entry in rest:
        if used_cold + shortest > cold_budget:
            break  # the rest stay in the archive
        if entry.band == "new":
            continue
        size = len(entry.row) + 1
        if used_cold + size <= cold_budget:
            entry.band = "cold"
            cold.append(entry)
            used_cold += size
    return used_hot, used_new, used_cold


def _guard(bands: Bands, config: Config) -> None:
    """Roll rows off the tail (Cold, then New, then Hot) until MEMORY.md fits its limits."""

    def fits() -> bool:
        text = compose_index(bands.hot, bands.new, bands.cold)
        return (len(text.splitlines()) <= config.index_max_lines
                and len(text.encode()) <= config.index_max_bytes)

    while not fits():
        # a team's rows roll off before any of the person's own (they sit last in each band)
        group = next((g for g in (bands.cold, bands.new, bands.hot) if g and g[-1].team), None) \
            or bands.cold or bands.new or bands.hot
        if not group:
            return
        entry = group.pop()
        entry.band = "archive"
        entry.rolled = True
        entry.row = entry.full_row


def compose_index(hot: list[Entry], new: list[Entry], cold: list[Entry]) -> str:
    parts = [HEADER]
    for title, group in (("Hot", hot), ("New", new), ("Cold", cold)):
        if group:
            parts.append(f"\n## {title}\n\n" + "\n".join([e.row for e in group]) + "\n")
    return "".join(parts)


def compose_archive(bands: Bands) -> str:
    parts = [
        "# Memory archive\n\n"
        "Every memory that is not in MEMORY.md, most relevant first. Nothing here is deleted:\n"
        "Read a file and it climbs back into the index.\n"
    ]
    if bands.archive:
        parts.append("\n## Rolled off\n\n" + "\n".join([e.full_row for e in bands.archive]) + "\n")
    if bands.team_rest:
        parts.append("\n## Teams\n\n" + "".join(
            f"- team {name}: {count} more memories in teams/{name}/memory/; "
            "`memstore search` finds them\n"
            for name, count in sorted(bands.team_rest.items())))
    # An expired memory is not superseded: nothing replaced it, its time ran out (valid_until)
    for title, why in (("Superseded", ""), ("Expired", "expired"), ("Not yet valid", "early")):
        rows = [e.full_row for e in bands.superseded if e.out_of_time == why]
        if rows:
            parts.append(f"\n## {title}\n\n" + "\n".join(rows) + "\n")
    return "".join(parts)


def compose_state(entries: list[Entry]) -> str:
    flying = sorted([e for e in entries if e.in_flight and not e.superseded and not e.team],
                    key=attrgetter("filename"))
    lines = ["# In flight\n",
             "\nRendered from the `in_flight` and `state` fields of the memory files.\n\n"]
    if not flying:
        lines.append("Nothing is in flight.\n")
    for entry in flying:
        raw = entry.state or ""
        state = inert_line(raw) or ("(no readable state: run memstore lint)" if raw.strip()
                                    else "(no state given)")
        lines.append(f"- {link(entry.name, entry.filename)}: {state}\n")
    return "".join(lines)


@dataclass
class RenderResult:
    bands: Bands
    written: list[str]

    def __repr__(self) -> str:  # the bands hold every entry: a repr of them all would be huge
        return f"RenderResult({self.summary()!r})"

    def to_json(self) -> dict[str, object]:
        b = self.bands
        return {"hot": len(b.hot), "new": len(b.new), "cold": len(b.cold),
                "archive": len(b.archive), "superseded": len(b.superseded), "used": dict(b.used),
                "written": list(self.written), "team_rest": dict(b.team_rest)}

    def summary(self) -> str:
        b = self.bands
        rolled = sum(1 for e in b.entries if e.rolled)
        text = (
            f"hot {len(b.hot)}, new {len(b.new)}, cold {len(b.cold)}, archive {len(b.archive)}, "
            f"superseded {len(b.superseded)}"
        )
        if rolled:
            text += f" ({rolled} rolled off by the index size guard)"
        return text + (f"; wrote {', '.join(self.written)}" if self.written else "; unchanged")


def compute_bands(conn: sqlite3.Connection, now: dt.datetime, config: Config,
                  marks: dict[str, str] | None = None) -> Bands:
    """marks: text appended to a memory's row (path -> text), e.g. the tick's stale references."""
    minute = render_minute(now)
    entries, shortest = _load(conn, minute, config, marks=marks)
    return _assign(entries, minute, config, shortest)


def score_of(conn: sqlite3.Connection, path: str, now: dt.datetime, config: Config) -> float | None:
    """One T2 memory's score, exactly as render and `list` compute it at `now`; None if not T2."""
    found = load_entries(conn, render_minute(now), config, only=path)
    return found[0].score if found else None


def render(conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config) -> RenderResult:
    """Write the three derived files atomically, under the render lock."""
    stale = read_stale(RootPaths(root).state)
    marks = {path: f"(stale: {', '.join(refs[:2])}{' ...' if len(refs) > 2 else ''})"
             for path, refs in stale.items()}
    bands = compute_bands(conn, now, config, marks)
    outputs = {
        "MEMORY.md": compose_index(bands.hot, bands.new, bands.cold),
        "MEMORY-archive.md": compose_archive(bands),
        "current-state.md": compose_state(bands.entries),
    }
    # the one writer of these files
    written = publish(root / "memory", outputs, Path(RootPaths(root).render_lock))
    return RenderResult(bands, written)

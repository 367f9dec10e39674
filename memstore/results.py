"""The small typed records the Store returns. Each one also gives its JSON shape (`to_json`),
so every front end (the CLI's --json, the MCP server, scripts) prints the same objects.

Field order is the JSON key order. The shapes are a contract (DESIGN.md): `search --json`
items hold at least path, name, type, summary, score, snippet; `list --json` items hold
at least path, name, type, band, score, access_count, stability, last_accessed,
last_reinforced, importance, pin, created.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


class Record:
    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True, slots=True)
class Hit(Record):
    """One search result."""

    path: str  # relative to the root
    name: str
    type: str
    kind: str
    summary: str
    score: float
    snippet: str


@dataclass(frozen=True, slots=True)
class MemoryRow(Record):
    """One T2 memory as `list` shows it: its band, score and policy state."""

    path: str
    name: str
    type: str
    band: str  # hot, new, cold, archive or superseded
    score: float
    access_count: int
    stability: float
    last_accessed: str | None
    last_reinforced: str | None
    importance: float
    pin: bool
    created: str | None
    summary: str


@dataclass(frozen=True, slots=True)
class Problem(Record):
    """One lint finding."""

    path: str
    level: str  # error or warning
    message: str


@dataclass(frozen=True, slots=True)
class Memory(Record):
    """One file as `show` shows it: where it is, its policy state, problems and text."""

    path: str
    name: str | None
    kind: str
    type: str | None
    summary: str | None
    created: str | None
    status: str | None
    pin: bool
    importance: float
    access_count: int | None = None
    stability: float | None = None
    last_accessed: str | None = None
    last_reinforced: str | None = None
    journal_touches: int | None = None
    score: float | None = None
    problems: list[dict[str, str]] = field(default_factory=list)
    body: str = ""


@dataclass(frozen=True, slots=True)
class BandUse(Record):
    band: str
    rows: int
    chars: int | None
    budget: int | None
    use: str


@dataclass(frozen=True, slots=True)
class Status(Record):
    """What the mirror holds, and each band's use of its budget."""

    bands: list[BandUse]
    rolled_by_guard: int
    root: str
    mirror: str
    mirror_bytes: int
    files: int
    kinds: dict[str, int]
    errors: int
    warnings: int
    events: int
    t2_touched: int


@dataclass(frozen=True, slots=True)
class Touch(Record):
    """What one recorded access did."""

    path: str  # relative to the root
    tool: str
    applied: bool  # the mirror moved now (else the next sync folds the journal line in)
    message: str


@dataclass(frozen=True, slots=True)
class Check(Record):
    """One verify finding: what Claude Code will do with one piece of the wiring."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class TickStatus(Record):
    """What one nightly tick did (also written to runtime/state/tick-status.json)."""

    ran_at: str
    sync: str
    flush: str
    render: str
    lint_errors: int
    lint_warnings: int
    live_session: bool  # a memory file changed within flush_quiet_minutes: only sync, lint and the cue ran
    live_because: str | None = None  # which file, and how long ago
    rolled: int = 0  # T1 facts and dream entries moved into archive/
    cue_items: int = 0  # items written to runtime/state/cue.json
    cue_kinds: dict[str, int] = field(default_factory=dict)  # kind -> how many found (the cue holds <= 25 each)
    committed: str | None = None  # what --commit did (None: not asked)

    def summary(self) -> str:
        if self.live_session:
            return (f"tick {self.ran_at}: live session ({self.live_because}), scanned only: {self.sync} | "
                    f"lint {self.lint_errors} error(s), {self.lint_warnings} warning(s) | cue {self.cue_items} item(s)")
        return (f"tick {self.ran_at}: {self.sync} | {self.flush} | {self.render} | "
                f"rolled {self.rolled} | cue {self.cue_items} item(s)")


@dataclass(frozen=True, slots=True)
class Candidate(Record):
    """One meditation object as the rotation weighed it."""

    name: str  # the object's file stem
    shelf: str
    weight: float  # cadence_weight
    last_used: str | None  # ISO date of its last sit, from the dream journal
    days: int | None  # since that sit; None when never used
    factor: float  # 1 - 0.5 ** (days / 7); 1 when never used
    score: float  # weight x factor
    excluded_by: str | None  # None (eligible), "last-sit" or "awareness-floor"


@dataclass(frozen=True, slots=True)
class Choice(Record):
    """The meditation object the rotation picks for tonight's sit, and why."""

    date: str
    object: str | None  # None when meditations/ holds no usable object
    shelf: str | None
    path: str | None  # relative to the root
    score: float | None
    rules: list[str]  # which rule excluded what, in words
    recent: list[dict[str, str | None]]  # the last three sits (the awareness floor's window)
    candidates: list[Candidate]  # eligible first, by score then name
    skipped: list[dict[str, str]] = field(default_factory=list)  # malformed objects: path, reason
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WakeResult(Record):
    """What one `memstore wake` did (paths relative to the root)."""

    ran: bool  # False: no cue, or the cue had nothing; no model was called
    reason: str
    ran_at: str
    dream: str | None = None
    meditation: str | None = None
    object: str | None = None
    shelf: str | None = None
    proposals: str | None = None  # the T1 note holding the dream's proposed memory changes
    commit: str | None = None  # with --commit: what git did ("committed 3 file(s) as abc1234", or why not)
    notes: list[str] = field(default_factory=list)

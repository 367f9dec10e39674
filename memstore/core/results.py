"""The small typed records the Store returns. Each one also gives its JSON shape (`to_json`),
so every front end (the CLI's --json, the MCP server, scripts) prints the same objects.

Field order is the JSON key order. The shapes are a contract (docs/reference.md): `search --json`
items hold at least path, name, type, summary, score, snippet; `list --json` items hold
at least path, name, type, band, score, access_count, stability, last_accessed,
last_reinforced, importance, pin, created.
"""

from __future__ import annotations

import threading
from dataclasses import Field, asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, dataclass_transform


class Record:
    if TYPE_CHECKING:  # every Record is a dataclass: what asdict needs to see
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


R = TypeVar("R", bound=type[Record])
_BUILDING = threading.Lock()


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: R) -> R:
    """A frozen dataclass, made one on its first instance: making all of them at import cost every
    command 17 ms (dataclass compiles six methods each), and a command uses one or two."""

    built = False

    def new(made: type, /, *args: object, **kwargs: object) -> object:
        nonlocal built
        if not built:
            with _BUILDING:  # a first instance in another thread waits until the class is whole
                if not built:
                    dataclass(frozen=True)(cls)  # in place: the class keeps its identity
                    built = True
        return object.__new__(made)

    cls.__new__ = staticmethod(new)  # type: ignore[assignment]
    return cls


@record
class Hit(Record):
    """One search result."""

    path: str  # relative to the root
    name: str
    type: str
    kind: str
    summary: str
    score: float  # bm25 with coverage (FTS alone), or the fused 0-1 score (hybrid)
    snippet: str
    signals: list[str] = field(default_factory=lambda: ["fts"])  # what found it: "fts", "vector"
    fts_score: float | None = None
    vector_score: float | None = None  # cosine with the query, when the file has a vector
    team: str | None = None  # the team whose memory it is (teams/<team>/...), None: the person's
    rejected: bool = False  # a lesson the person rejected in review (only `search --all` shows one)


@record
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
    team: str | None = None  # the team whose memory it is, None for the person's own


@record
class Problem(Record):
    """One lint finding."""

    path: str
    level: str  # error or warning
    message: str


@record
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
    project: str | None = None  # the project it belongs to; None: person-wide
    access_count: int | None = None
    stability: float | None = None
    last_accessed: str | None = None
    last_reinforced: str | None = None
    journal_touches: int | None = None
    score: float | None = None
    problems: list[dict[str, str]] = field(default_factory=list)
    body: str = ""
    # stepping aside (memstore.mirror.stepping_aside): why it stepped aside, what replaced it (to
    # the end of the chain), what it replaced, and the code it cites the last tick could not find
    aside: str | None = None
    superseded_by: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)
    stale_references: list[str] = field(default_factory=list)
    # a team's memory (memstore.core.teams): the team, and its git history in the team's clone,
    # newest first ({"commit", "author", "date", "subject"}): who added it and when is the last one
    team: str | None = None
    history: list[dict[str, str]] = field(default_factory=list)


@record
class Retired(Record):
    """What `supersede` or `forget` did: the memory steps aside, never deleted."""

    action: str  # superseded | forgotten
    path: str  # where the memory is now
    was: str  # where it was
    by: str | None = None  # superseded: the memory that replaced it
    chain: list[str] = field(default_factory=list)  # superseded: from `by` to the one holding now
    message: str = ""


@record
class Restored(Record):
    """What `restore` did: an archived copy back where the memory was, its marks taken off."""

    path: str  # where the memory is now (where it was before it went)
    was: str  # the archived copy it came from
    how: str  # deleted | forgotten: how it had gone
    message: str = ""


@record
class BandUse(Record):
    band: str
    rows: int
    chars: int | None
    budget: int | None
    use: str


@record
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
    semantic: dict[str, Any] = field(default_factory=dict)  # state, model, embedded, pending
    # this_machine; machines: identity, events, newest
    journal: dict[str, Any] = field(default_factory=dict)
    # memories deleted outside memstore, kept in memory/archive/ and not yet acknowledged
    # (memstore.mirror.deletions): count, since (a day), kept: [{path, was, deleted_at}]
    deleted: dict[str, Any] = field(default_factory=dict)
    # tick, wake (last ran, or None), late, hint (lastrun.py)
    nightly: dict[str, Any] = field(default_factory=dict)
    # each joined team: name, memories, lenses (mirror)
    teams: list[dict[str, Any]] = field(default_factory=list)
    unchecked: int = 0  # files whose dates and secrets no lint has checked (status checks a few)
    # the prompt's pointers over the last days: pushes, sessions, pointers, opened (Read in their
    # session), the floor and when it was measured (memstore.mirror.pushes)
    pointers: dict[str, Any] = field(default_factory=dict)


@record
class Touch(Record):
    """What one recorded access did."""

    path: str  # relative to the root
    tool: str
    applied: bool  # the mirror moved now (else the next sync folds the journal line in)
    message: str


@record
class Check(Record):
    """One verify finding: what Claude Code will do with one piece of the wiring."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


@record
class TickStatus(Record):
    """What one nightly tick did (also written to runtime/state/tick-status.json)."""

    ran_at: str
    sync: str
    flush: str
    render: str
    lint_errors: int
    lint_warnings: int
    live_session: bool  # a memory file changed within flush_quiet_minutes: only sync, lint, cue ran
    live_because: str | None = None  # which file, and how long ago
    rolled: int = 0  # T1 facts and dream entries moved into archive/
    cue_items: int = 0  # items written to runtime/state/cue.json
    # kind -> how many found (the cue holds <= 25 each)
    cue_kinds: dict[str, int] = field(default_factory=dict)
    committed: str | None = None  # what --commit did (None: not asked)
    # the person's files and the wiring (tamper.py), one line each
    tamper: list[str] = field(default_factory=list)
    # each team pull that did not just come up to date, one line each
    teams: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return self._summary() + "".join(f"\n  {line}" for line in (*self.teams, *self.tamper))

    def _summary(self) -> str:
        if self.live_session:
            return (f"tick {self.ran_at}: live session ({self.live_because}), scanned only: "
                    f"{self.sync} | lint {self.lint_errors} error(s), {self.lint_warnings} "
                    f"warning(s) | cue {self.cue_items} item(s)")
        return (f"tick {self.ran_at}: {self.sync} | {self.flush} | {self.render} | "
                f"rolled {self.rolled} | cue {self.cue_items} item(s)")


@record
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


@record
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


@record
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
    commit: str | None = None  # --commit: what git did ("committed 3 file(s) as abc1234", or why)
    notes: list[str] = field(default_factory=list)
    dreams: list[str] = field(default_factory=list)  # a dream entry a scope (person, each project)
    proposal_notes: list[str] = field(default_factory=list)  # a proposals note per dream proposing


@record
class NewMemory(Record):
    """A T2 memory `new` wrote."""

    path: str  # relative to the root
    name: str
    type: str
    summary: str


@record
class Bug(Record):
    """One entry of the open-bug ledger (memory/bugs/<id>-<slug>.md), as read from its file."""

    id: str  # zero-padded, e.g. "0007"; the file stem when the file carries no number
    title: str
    status: str  # open or closed (anything else is listed as open, with a problem)
    filed_at: str | None
    filed_by: str | None
    closed_at: str | None
    why: str | None
    path: str  # relative to the root
    body: str
    problems: list[str] = field(default_factory=list)  # what could not be read; empty: well-formed


@record
class NoteResult(Record):
    """What one `memstore note` did."""

    path: str  # relative to the root: the file written, or the one that already holds the fact
    written: bool  # False: the same fact was already noted today, nothing written
    message: str


@record
class DebriefResult(Record):
    """What one `memstore debrief` did: the mechanical half of the end-of-session debrief."""

    ran_at: str
    sync: str  # the sync report: what the session added or changed since the last sync
    added: int
    changed: int
    removed: int
    lint_errors: int
    lint_warnings: int
    render: str
    transcript: str | None = None  # the transcript read, if any
    rules_found: int = 0  # rule-shaped sentences in the session's final answer
    lessons: list[str] = field(default_factory=list)  # T1 lesson files written (root-relative)
    skipped: list[dict[str, str]] = field(default_factory=list)  # rule, why (duplicate, cap)
    notes: list[str] = field(default_factory=list)
    committed: str | None = None  # what --commit did (None: not asked)


@record
class AuditLine(Record):
    """One always-loaded line that reads as narrative (`memstore audit`)."""

    line: int  # 1-based
    reasons: list[str]  # date, commit, count, status, first-person, ticket
    chars: int  # what the line costs, its newline included
    text: str  # the line, stripped and cut to 120 characters


@record
class AuditImport(Record):
    """One `@` import of an audited CLAUDE.md."""

    ref: str  # as written, e.g. @identity.md
    path: str  # resolved against the importing file's folder
    found: bool
    chars: int = 0  # what it pulls in (0 when not found); the file is also its own entry
    tokens: int = 0


@record
class AuditFile(Record):
    """One always-loaded file: what it costs every session, and its narrative lines."""

    path: str  # absolute
    role: str  # identity, project (cwd), root, named, or import
    chars: int
    tokens: int  # estimate: ceil(chars / 4)
    lines: int
    flagged: list[AuditLine]
    flagged_chars: int  # what removing every flagged line would save, per session
    flagged_tokens: int
    imports: list[AuditImport] = field(default_factory=list)
    imported_by: str | None = None  # role import: the file whose @ import pulled it in
    note: str | None = None

"""`Store`: one agent root, and everything a front end can do with it.

The command line, the nightly cycle, the watcher and the MCP server are front ends of
this one class: they parse their input, call a method, and report what it returns.
The Store owns the mirror's life cycle (open, repair a corrupt or missing mirror and
retry once, close), the order of every multi-step operation (flush is lock, sync,
flush, sync), how a memory is named (a root-relative path, an absolute path or a
name), and the clock (`now`, pinned or real).

    from memstore import Store
    store = Store("~/agents/me")                 # now=None: the real clock
    store.search("what did we decide about the export", limit=5)
    store.touch("memory/feedback_x.md")          # as the hook records a Read
    store.render()

Errors are the project's own (memstore.errors); nothing else escapes a method except
a bug. Only the standard library is imported at module level: sqlite-utils, YAML and
the rest load when a method needs them, so `import memstore` stays cheap.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memstore.agent_root import RootPaths, find_root
from memstore.config import Config, load_config
from memstore.errors import BadUsage, Busy, MemstoreError, NotFound, read_only_failure
from memstore.results import Hit, Memory, MemoryRow, Problem, Restored, Retired, Status, TickStatus, Touch
from memstore.store_ledgers import LedgerMixin
from memstore.store_wiring import WiringMixin
from memstore.timeutil import UTC, fmt, to_utc

if TYPE_CHECKING:
    from memstore.flush import FlushReport
    from memstore.render import RenderResult
    from memstore.results import AuditFile, Choice, DebriefResult, NoteResult, WakeResult
    from memstore.review import Item as ReviewItem
    from memstore.scaffold import Plan
    from memstore.sync import SyncReport
    from memstore.vectors import EmbedReport

T = TypeVar("T")
Notify = Callable[[str], None]
Progress = Callable[[int, int], None]


class NotFlushHost(MemstoreError):
    """memstore.toml names another clone as the one that flushes."""


class Store(WiringMixin, LedgerMixin):
    """One agent root. `now` pins the clock (a datetime); None reads the real clock at each call."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        now: dt.datetime | None = None,
        *,
        config: Config | None = None,
        notify: Notify | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.root = Path(find_root(root, None, Path.cwd()))
        # The root as named, when a symlink leads to it: install registers both spellings,
        # since Claude Code matches its rules against the path a tool call gives.
        named = Path(os.path.abspath(os.path.expanduser(os.fspath(root))))
        self.alias = named if named != self.root and named.is_dir() else None
        self.paths = RootPaths(self.root)
        self._now = to_utc(now) if now is not None else None
        self._config = config
        self.notify: Notify = notify or (lambda _message: None)  # one-line notices (a mirror rebuilt, ...)
        self.progress = progress  # (done, total) during long walks

    @classmethod
    def locate(cls, root: str | os.PathLike[str] | None = None, now: dt.datetime | None = None,
               **options: Any) -> Store:
        """The root named, else $MEMSTORE_ROOT, else the nearest folder at or above cwd holding memory/."""
        named = root or os.environ.get("MEMSTORE_ROOT")
        found = find_root(root, os.environ.get("MEMSTORE_ROOT"), Path.cwd())
        store = cls(found, now, **options)
        if not named:
            from memstore.agent_root import installed_root

            installed = installed_root()
            if installed and os.path.realpath(installed) != os.path.realpath(found):
                # a project holding its own memory/ folder wins by the lookup order; say so, every time
                store.notify(f"using the agent root at {found} (a memory/ folder at or above here), not the "
                             f"installed {installed}; pass --root to choose")
        if named:  # keep the spelling through a symlink (install registers both)
            alias = Path(os.path.abspath(os.path.expanduser(os.fspath(named))))
            store.alias = alias if alias != store.root else None
        return store

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    @property
    def now(self) -> dt.datetime:
        return self._now if self._now is not None else dt.datetime.now(UTC)

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = load_config(self.root)
        return self._config

    # ------------------------------------------------------------ the mirror's life cycle

    def _with_mirror(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """fn on the live mirror (rebuilt first if missing, corrupt or foreign).

        A mirror found corrupt half-way is rebuilt from the files and fn runs once more:
        the mirror is derived, so nothing is lost by rebuilding it.
        """
        from memstore import mirror
        from memstore.locks import LockTimeout
        from memstore.sync import open_mirror, rebuild

        try:
            conn = open_mirror(self.root, self.config, self.notify, self.progress)
            try:
                return fn(conn)
            except sqlite3.DatabaseError as exc:
                if not mirror.corrupt_error(exc):
                    raise
                conn.close()
                self.notify(f"mirror is corrupt ({exc}); rebuilding it from the files")
                rebuild(self.root, self.config, self.progress)
                conn = open_mirror(self.root, self.config, self.notify, self.progress)
                return fn(conn)
            finally:
                conn.close()
        except LockTimeout as exc:
            raise Busy(f"another memstore process holds the mirror lock ({exc})",
                       hint="wait for it to finish (a rebuild of a large root takes a while), then try again") from None
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise Busy(f"the mirror is busy ({exc})", hint="try again in a moment") from None
            raise MemstoreError(f"database: {exc}", hint="run: memstore rebuild") from None
        except sqlite3.DatabaseError as exc:
            raise MemstoreError(f"database: {exc}", hint="run: memstore rebuild") from None

    def _read(self, fn: Callable[[sqlite3.Connection], T], *, catch_up: str = "quick") -> T:
        """fn after catching the mirror up with the files: 'quick', 'full' or 'none'."""
        from memstore.sync import sync_locked

        if catch_up not in ("quick", "full", "none"):
            raise BadUsage(f"catch_up must be quick, full or none, not {catch_up!r}")

        def run(conn: sqlite3.Connection) -> T:
            if catch_up != "none":
                sync_locked(conn, self.root, self.config, self.progress, quick=catch_up == "quick", now=self.now)
            return fn(conn)

        try:
            return self._with_mirror(run)
        except (OSError, sqlite3.OperationalError, MemstoreError) as exc:
            if not read_only_failure(exc):
                raise
        return self._read_frozen(fn)

    def _read_frozen(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """fn on the mirror as it stands, opened read-only: for a root this process cannot write
        (a read-only mount, another user's root). Nothing is caught up, locked or written."""
        from memstore.mirror import connect_frozen

        db = Path(self.paths.db)
        if not db.is_file():
            raise MemstoreError(f"{self.root} cannot be written here and has no mirror to read",
                                hint=f"run memstore sync once where {self.root}/runtime/ is writable")
        self.notify("the root is read-only here: answering from the mirror as it stands "
                    "(files changed since its last sync are not seen)")
        conn = connect_frozen(db)
        try:
            return fn(conn)
        finally:
            conn.close()

    def sync(self, full: bool = True, *, embed: bool = True) -> SyncReport:
        """Bring the mirror up to date: a full walk, or (full=False) the quick folder check.

        With the `semantic` extra (and embed=True), then embed changed files for at most
        `embed_budget_s` (report.vectors says how many are left for `embed`). Capture
        (note, debrief at SessionEnd) passes embed=False: it must be quick, and it does not search.
        """
        from memstore.semantic import embed_briefly
        from memstore.sync import sync_locked

        report = self._with_mirror(
            lambda conn: sync_locked(conn, self.root, self.config, self.progress, quick=not full, now=self.now)
        )
        if embed:
            report.vectors = embed_briefly(self, self.config.embed_budget_s)
        return report

    def rebuild(self) -> SyncReport:
        """Build the mirror afresh from the files and the journal, and swap it in.

        Vectors of unchanged text are carried over from the old mirror when it can be read;
        the rest are embedded for at most `embed_budget_s`, as after a sync.
        """
        from memstore.semantic import embed_briefly
        from memstore.sync import rebuild

        report = rebuild(self.root, self.config, self.progress, now=self.now)
        assert report is not None  # only_if_unhealthy was not asked for
        report.vectors = embed_briefly(self, self.config.embed_budget_s)
        return report

    # ------------------------------------------------------------ semantic search (memstore.semantic)

    def embed(
        self, budget_s: float | None = None, *, required: bool = True, progress: Progress | None = None
    ) -> EmbedReport | None:
        """Embed every searchable file whose vector is missing or stale (budget_s bounds the time).

        Catches the mirror up first (a full walk), so what is embedded is what the files say.
        None when the extra is absent or semantic search is off and required is False.
        """
        from memstore.semantic import run_embed

        return run_embed(self, budget_s, required, progress)

    # ------------------------------------------------------------ reading

    def search(
        self, query: str, limit: int = 10, type: str | None = None, *, catch_up: str = "quick", mode: str = "auto",
        cwd: str | os.PathLike[str] | None = None, this_project: bool = False, include_all: bool = False,
    ) -> list[Hit]:
        """Ranked hits; a plain-English question works, FTS5 syntax too. catch_up: quick, full or none.

        mode "auto" fuses FTS5 with vector similarity when the `semantic` extra is installed
        (and memstore.toml does not turn it off), else FTS alone; "fts" is FTS alone;
        "hybrid" insists on the fusion and fails with a hint when the extra is missing.
        """
        from memstore.hybrid import hybrid, lexical
        from memstore.search import check_query, rank_scores
        from memstore.semantic import catch_up_vectors, embedder_for

        if mode not in ("auto", "fts", "hybrid"):
            raise BadUsage(f"unknown search mode {mode!r}", hint="use auto, fts or hybrid")
        check_query(query)  # before the mirror is opened (and perhaps rebuilt) for nothing
        embedder = None if mode == "fts" else embedder_for(self, required=mode == "hybrid")

        from memstore.projects import by_project

        project = self._project(cwd)
        pool = limit if project is None else max(limit * 3, 30)  # room to bring this project's hits forward

        def run(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            from memstore.freshness import stepped_aside

            # superseded, forgotten and out-of-date memories only with include_all (`search --all`)
            aside = set() if include_all else stepped_aside(conn, self.now)
            wanted = pool + min(len(aside), 200)
            if embedder is None:
                hits = lexical(conn, query, wanted, type, self.config)
            else:
                if catch_up != "none":  # "none": the mirror as it is, vectors included
                    catch_up_vectors(self, conn, embedder)
                hits = hybrid(conn, query, wanted, type, self.config, embedder)
            hits = [hit for hit in hits if hit["path"] not in aside]
            # the score shown is the one the order comes from: this project's hits come first
            return rank_scores(by_project(conn, hits, project, only=this_project)[:limit])

        return [Hit(**hit) for hit in self._read(run, catch_up=catch_up)]

    def supersede(self, old: str | os.PathLike[str], *, by: str | os.PathLike[str]) -> Retired:
        """OLD steps aside for BY: recorded in OLD's frontmatter, out of MEMORY.md and default search."""
        from memstore.freshness import supersede

        was, new, onward = self._read(lambda conn: supersede(conn, self.root, self._key(old), self._key(by), self.now))
        self._after_retire()
        end = f" (which leads on to {onward[-1]})" if onward else ""
        return Retired("superseded", was, was, new, onward, f"{was}: superseded by {new}{end}; kept, found by "
                                                             "search --all")

    def forget(self, memory: str | os.PathLike[str], *, why: str) -> Retired:
        """The memory steps aside into memory/archive/, with why: never deleted, found by search --all."""
        from memstore.freshness import forget

        was, now_at = self._read(lambda conn: forget(conn, self.root, self._key(memory), why, self.now))
        self._after_retire()
        return Retired("forgotten", now_at, was, message=f"{was}: forgotten, kept at {now_at}; found by search --all")

    def restore(self, memory: str | os.PathLike[str]) -> Restored:
        """A memory deleted outside memstore (or forgotten) back from memory/archive/ to where it was,
        its deletion marks taken off byte for byte. NotFound when no copy has that name; refused when
        something is at the original path now."""
        from memstore.deletions import restore

        self.sync(full=False, embed=False)  # a deletion not yet seen is kept first
        kept = restore(self.root, self._key(memory))
        self._after_retire()
        return Restored(kept.was, kept.path, kept.how, f"{kept.was}: restored from {kept.path}")

    def acknowledge_deletions(self) -> int:
        """The person saw the deletions kept so far: status and the bundle stop saying so (how many)."""
        from memstore.deletions import acknowledge

        self.sync(full=False, embed=False)
        return acknowledge(self.root, fmt(self.now))

    def _after_retire(self) -> None:
        """The mirror and MEMORY.md follow the edit at once (the agent's next session sees it)."""
        self.sync(full=False, embed=False)
        self.render()

    def list(self, band: str | None = None) -> list[MemoryRow]:
        """Every T2 memory in rank order with its band, score and policy state."""
        from memstore.views import list_view

        if band is not None and band not in BANDS:
            raise BadUsage(f"unknown band {band!r}", hint=f"use one of: {', '.join(BANDS)}")
        rows = self._read(lambda conn: list_view(conn, self.root, self.now, self.config, band))
        return [MemoryRow(**row) for row in rows]

    def show(self, memory: str | os.PathLike[str]) -> Memory:
        """One file: a root-relative path (as results carry), an absolute path, or a name."""
        from memstore.views import file_view, find_file

        key = self._key(memory)
        return Memory(**self._read(lambda conn: file_view(conn, find_file(conn, key), self.now, self.config)))

    def status(self) -> Status:
        from memstore.deletions import summary
        from memstore.results import BandUse
        from memstore.views import status_view

        view = self._read(lambda conn: status_view(conn, self.root, self.now, self.config))
        from memstore.lastrun import view as nightly

        return Status(**{**view, "bands": [BandUse(**b) for b in view["bands"]], "deleted": summary(self.root),
                         "nightly": nightly(self.root, self.now)})

    def lint(self) -> list[Problem]:
        """Malformed or missing fields, name mismatches, oversize files, lenses that cannot fire."""
        from memstore.views import lint_view

        # a full sync first: a file broken by hand in place changes no folder, and a quick one would miss it
        def view(conn: sqlite3.Connection) -> list[dict[str, str]]:
            from memstore.proposal_notes import forged  # a note posing as the wake's proposals

            rows = [(r[0], r[1]) for r in conn.execute("SELECT path, meta FROM files WHERE kind = 'short-term'")]
            return lint_view(conn, self.root) + [{"path": rel, "level": "warning", "message": why}
                                                 for rel, why in forged(self.root, rows)]

        return [Problem(**item) for item in self._read(view, catch_up="full")]

    def context(self, cwd: str | os.PathLike[str] | None = None) -> str:
        """The cold-start bundle SessionStart injects in a session at cwd (read straight from the files):
        person-wide items and cwd's project's own, never another project's."""
        from memstore.context import bundle

        return bundle(self.root, self.now, self.config, self._project(cwd))

    def lens_matcher(self) -> str | None:
        """The union of the lenses' tool_match: the matcher install registers for lenses."""
        from memstore.lenses import tool_union

        return self._read(tool_union, catch_up="full")

    # ------------------------------------------------------------ writing

    def touch(self, memory: str | os.PathLike[str], tool: str = "Read", *, session: str | None = None) -> Touch:
        """Record one access exactly as the hook does (journal line, then one transaction)."""
        from memstore.kinds import REINFORCING_TOOLS
        from memstore.policy import record_touch

        if tool not in REINFORCING_TOOLS:
            raise BadUsage(f"{tool} does not reinforce", hint=f"use one of: {', '.join(REINFORCING_TOOLS)}")
        target = self._file(memory)
        result = record_touch(self.root, str(target), tool, self.now, self.config, session=session)
        if not result.recorded:
            raise NotFound(result.message, hint="only T2 memories (memory/<type>_<topic>.md) are reinforced")
        return Touch(result.rel or "", tool, result.applied, result.message)

    def render(self) -> RenderResult:
        """Write MEMORY.md, MEMORY-archive.md and current-state.md from an up-to-date mirror."""
        from memstore.render import render

        return self._read(lambda conn: render(conn, self.root, self.now, self.config), catch_up="full")

    def flush(self, force: bool = False) -> FlushReport:
        """Fold policy state into each memory's frontmatter (files in use are skipped unless forced).

        Raises NotFlushHost on a clone that memstore.toml's flush_host does not name.
        """
        refusal = self.flush_refusal()
        if refusal:
            raise NotFlushHost(refusal, hint="flush on that machine: the reads recorded here reach it "
                               "through the journal in git (or change flush_host in memstore.toml)")
        return self._with_mirror(lambda conn: self._flush_locked(conn, force))

    def flush_refusal(self) -> str | None:
        """Why this clone must not flush (flush_host names another one), or None."""
        from memstore import journal

        wanted = self.config.flush_host.strip()
        if not wanted:
            return None
        me = journal.identity(self.root)
        if journal.names_clone(wanted, me):
            return None
        return f"flush_host is {wanted!r} in memstore.toml, and this machine is {me!r}"

    def flush_warnings(self, conn: sqlite3.Connection | None = None) -> list[str]:
        """What is off about who flushes, given the machines whose journals the mirror has read."""
        from memstore import journal
        from memstore.views import known_machines

        if conn is None:
            return self._read(self.flush_warnings, catch_up="none")
        return journal.flush_host_warnings(self.config.flush_host.strip(), journal.identity(self.root),
                                           known_machines(conn))

    def _flush_locked(self, conn: sqlite3.Connection, force: bool) -> FlushReport:
        from memstore.flush import flush
        from memstore.locks import file_lock
        from memstore.sync import sync_into

        # Under the mirror lock: sync so flush sees every change, flush, then sync again
        # so the mirror takes in the files flush just rewrote.
        with file_lock(Path(self.paths.mirror_lock), timeout=self.config.lock_timeout_s):
            sync_into(conn, self.root, self.config, self.progress, self.now)
            report = flush(conn, self.root, self.now, self.config, force)
            sync_into(conn, self.root, self.config, now=self.now)
        for line in self.flush_warnings(conn):
            self.notify(line)
        return report

    def rotate_logs(self) -> None:
        """The cron jobs' logs and the hook's, each kept under locks.LOG_LIMIT (one older copy beside it)."""
        from memstore.locks import rotate

        state = Path(self.paths.state)
        for name in ("tick.log", "wake.log", "hook-errors.log"):
            rotate(state / name)

    def tick(self, commit: bool = False) -> TickStatus:
        """The nightly tick: the cheap, deterministic half of the nightly cycle.

        A full sync and lint always. When no memory file changed in the last
        `flush_quiet_minutes` (nobody is mid-session), also flush, roll the T1 and
        dream-journal windows into archive/ (moved, never deleted) and render. Then the
        cue (runtime/state/cue.json: what a model should look at) and the status file.
        commit=True stages and commits exactly the files tick wrote or moved, where the
        root is inside a git work tree.
        """
        from memstore.nightly import run_tick

        self.rotate_logs()
        return run_tick(self, commit)

    # ------------------------------------------------------------ the nightly wake

    def meditate_next(self) -> Choice:
        """The meditation object the rotation picks at `now`, with every candidate's numbers and why."""
        from memstore.meditation import next_choice

        return next_choice(self.root, self.now)[0]

    def wake(self, model_cmd: str | None = None, timeout: float = 600.0, *, commit: bool = False) -> WakeResult:
        """The nightly dream and sit, when the tick's cue has items: two model calls, all or nothing.

        No cue, or `anything: false`: nothing happens and no model is called. A failed call
        raises WakeFailed (exit 1) and writes nothing; the cue is kept for the next try.
        model_cmd is split like a shell would (default: wake.DEFAULT_MODEL_CMD, no tools and no MCP servers); the
        prompt goes on stdin. A failure is also recorded for `status` (lastrun.wake_failed).
        """
        from memstore import lastrun
        from memstore.wake import run

        self.rotate_logs()
        try:
            result = run(self.root, self.now, self.config, model_cmd=model_cmd, timeout=timeout, commit=commit,
                         sync=self.sync)
        except MemstoreError as exc:  # said by status every day until a wake works (cron shows no one stderr)
            lastrun.wake_failed(self.root, self.now, str(exc))
            raise
        lastrun.wake_failed(self.root, self.now, None)
        return result

    # ------------------------------------------------------------ capture: note and debrief

    def review(self) -> list[ReviewItem]:
        """What waits for the person: captured lessons, wake proposals, cue items (memstore.review)."""
        from memstore import review
        from memstore.reviewing import read_cue

        return review.pending(self.root, read_cue(self.root))

    def review_answer(self, ident: str, *, accept: bool, via: dict[str, object] | None = None,
                      confirm: Callable[[ReviewItem], bool] | None = None) -> ReviewItem | None:
        """Accept or reject one pending item by its id; a rejected lesson moves to short-term/archive/.

        The library's answer, for the person's own Python: the command line is where an answer
        needs the person at their terminal (memstore.terminal). `via` is recorded with the answer
        (where it came from; by default this process's terminal, user and parents, as "library").
        `confirm(item)` is asked first, when given: false records nothing and returns None.
        """
        from memstore.reviewing import answer, find

        if confirm is not None and not confirm(find(self.root, ident, accept)):
            return None
        item, moved = answer(self.root, ident, accept, fmt(self.now), via)
        if moved:
            self.sync()
        return item

    def note(self, text: str, *, kind: str | None = None, everywhere: bool = False,
             cwd: str | os.PathLike[str] | None = None) -> NoteResult:
        """One fact into memory/short-term/YYMMDD-<slug>.md (T1), then a quick sync.

        The same fact twice on one day (whitespace collapsed, case folded) is written once:
        the second call writes nothing and names the file that holds it. Empty text: BadUsage.
        """
        from memstore import capture
        from memstore.results import NoteResult

        project = self._project(cwd, everywhere)
        done = capture.note(self.root, text, self.now, kind=kind, project=project,
                            lock_timeout=self.config.lock_timeout_s)
        rel = done.path.relative_to(self.root).as_posix()
        if not done.written:
            return NoteResult(rel, False, f"already noted today: {rel}")
        try:
            self.sync(full=False, embed=False)
        except MemstoreError as exc:
            self.notify(f"wrote {rel}, but the mirror did not take it in yet ({exc}); the next sync will")
        return NoteResult(rel, True, f"noted: {rel}" + (
            f" (project {project}: its sessions see it; `memstore note --global` notes for every project)"
            if project else " (every project)"))

    def debrief(self, transcript: str | os.PathLike[str] | None = None, commit: bool = False,
                cwd: str | None = None) -> DebriefResult:
        """The mechanical half of the end-of-session debrief: full sync, lint, render, and a report.

        With a transcript (Claude Code's JSONL), the rule-shaped sentences of the session's
        final answer become T1 lessons (`kind: lesson`), by the narrow cue and caps in
        memstore/capture.py; nothing rule-shaped, nothing written. commit=True stages and
        commits exactly the files debrief wrote (lessons, and derived files git already tracks).
        """
        from memstore.capture import run_debrief

        return run_debrief(self, transcript, commit, cwd)

    def _project(self, cwd: str | os.PathLike[str] | None, everywhere: bool = False) -> str | None:
        """The project of cwd (memstore.projects), or None: person-wide (everywhere, or no project)."""
        from memstore.projects import project_of

        return None if everywhere else project_of(os.fspath(cwd) if cwd else os.getcwd(), os.fspath(self.root))

    # ------------------------------------------------------------ audit

    def audit(self, files: list[str | os.PathLike[str]] | None = None, *,
              cwd: str | os.PathLike[str] | None = None) -> list[AuditFile]:
        """What the always-loaded files cost every session, and which of their lines read as narrative.

        files: the files to audit (relative to cwd); None: identity.md in the root, and
        CLAUDE.md and AGENTS.md where present in cwd (the project) and in the root. The `@`
        imports of a CLAUDE*.md are followed one level. Reads files only; the mirror is not
        opened. A named file that does not exist raises NotFound.
        """
        from memstore.audit import audit

        bundle = None if files else self.context(cwd)  # the default set: what every session pays for
        return audit(self.root, files, Path(cwd) if cwd is not None else None, bundle=bundle)

    # ------------------------------------------------------------ set-up

    @staticmethod
    def plan_init(root: str | os.PathLike[str]) -> Plan:
        """What `init` would do at root (a new or existing folder); nothing is written."""
        if not os.fspath(root).strip():
            raise BadUsage("the root to lay out is empty", hint="name a folder: memstore init ~/agents/me --apply")
        from memstore.scaffold import plan_init

        target = Path(root).expanduser().resolve()
        config = load_config(target) if target.is_dir() else Config()
        return plan_init(target, config)

    @classmethod
    def init(cls, plan: Plan, *, notify: Notify | None = None, progress: Progress | None = None
             ) -> tuple[Store, SyncReport]:
        """Carry out an init plan, build the mirror, and return the new root's Store."""
        from memstore.scaffold import apply_plan
        from memstore.tamper import record_person

        apply_plan(plan)
        record_person(str(plan.root), "init")  # the person's files as laid out: what tamper evidence compares with
        store = cls(plan.root, notify=notify, progress=progress)
        return store, store.rebuild()

    # ------------------------------------------------------------ naming a memory

    def _key(self, memory: str | os.PathLike[str]) -> str:
        """A memory named as results name it: an absolute path inside the root becomes root-relative."""
        text = os.fspath(memory)
        if not text:
            raise BadUsage("no memory named", hint="give a name, or a path such as memory/feedback_x.md")
        if os.path.isabs(text):
            real = os.path.realpath(text)
            base = os.path.realpath(self.root)
            if real.startswith(base + os.sep):
                return os.path.relpath(real, base).replace(os.sep, "/")
        return text

    def promote(self, memory: str | os.PathLike[str]) -> str:
        """Make a memory, note or lesson person-wide (`project: global`, edited in place); its path."""
        from memstore.fmedit import set_fields
        from memstore.locks import atomic_write
        from memstore.projects import GLOBAL

        target = self._note_file(memory)
        raw = target.read_bytes()
        edited = set_fields(raw, {"project": GLOBAL})
        if edited == raw:
            return target.relative_to(self.root).as_posix()  # person-wide already
        if not atomic_write(target, edited, expect=raw):
            raise Busy(f"{target} changed while it was being promoted", hint="run it again")
        rel = target.relative_to(self.root).as_posix()
        self._sync_written(rel)
        return rel

    def _note_file(self, memory: str | os.PathLike[str]) -> Path:
        """Like _file, and a bare name also finds a T1 note or lesson (short-term/, its archive/)."""
        text = os.fspath(memory)
        stem = text[:-3] if text.endswith(".md") else text
        if "/" not in text and os.sep not in text and not (self.root / "memory" / f"{stem}.md").exists():
            for folder in ("short-term", "short-term/archive"):
                candidate = self.root / "memory" / folder / f"{stem}.md"
                if candidate.is_file():
                    return candidate.absolute()
        return self._file(memory)

    def _file(self, memory: str | os.PathLike[str]) -> Path:
        """The file a memory names: an absolute path, a path relative to cwd or to the root, or a name."""
        text = os.fspath(memory)
        target = Path(text).expanduser()
        if not target.is_absolute() and not target.exists():
            if (self.root / target).exists():
                target = self.root / target  # a path relative to the root, as results carry
            elif "/" not in text and os.sep not in text:
                stem = text[:-3] if text.endswith(".md") else text
                target = self.root / "memory" / f"{stem}.md"  # a name
        if not target.exists():
            raise NotFound(f"no such file: {target}", hint="give a path under memory/, or a memory's name")
        if not target.is_file():
            raise NotFound(f"not a file: {target}")
        return target.absolute()


BANDS = ("hot", "new", "cold", "archive", "superseded")

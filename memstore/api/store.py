"""`Store`: one agent root, and everything a front end can do with it.

    store = Store("~/agents/me")                 # now=None: the real clock
    store.search("what did we decide about the export", limit=5)

The CLI, the nightly cycle, the watcher and the MCP server parse their input, call a method
and report what it returns. The Store owns the mirror's life cycle (memstore.api.mirroring),
the order of every multi-step operation, how a memory is named (memstore.api.naming) and the
clock (`now`, pinned or real); each method hands the layers below what they need (paths,
config, the clock, a way to the mirror). Errors are memstore.core.errors'. Only the standard
library loads at module level (the layers load when a method needs them), so importing stays cheap.
"""

from __future__ import annotations

import builtins  # builtins.list in the Store's annotations: its method `list` shadows the type there
import datetime as dt
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memstore.api import mirroring, naming, queries
from memstore.api.mirroring import Mirror
from memstore.core.agent_root import RootPaths, find_root
from memstore.core.config import Config, load_config
from memstore.core.errors import BadUsage, MemstoreError, NotFound
from memstore.core.results import Hit, Memory, MemoryRow, Problem, Restored, Retired, Status, TickStatus, Touch
from memstore.core.teams import team_of
from memstore.core.timeutil import UTC, fmt, to_utc

if TYPE_CHECKING:
    from memstore.api.teams import Teams
    from memstore.core.results import AuditFile, Bug, Check, Choice, DebriefResult, NewMemory, NoteResult, WakeResult
    from memstore.hook.review import Item as ReviewItem
    from memstore.life.scaffold import Plan
    from memstore.meaning.vectors import EmbedReport
    from memstore.mirror.flush import FlushReport
    from memstore.mirror.render import RenderResult
    from memstore.mirror.sync import SyncReport
    from memstore.wiring.install_base import InstallPlan
    from memstore.wiring.layout import Layout

T = TypeVar("T")
Notify = Callable[[str], None]
Progress = Callable[[int, int], None]
BANDS = ("hot", "new", "cold", "archive", "superseded", "forgotten", "expired", "early")  # as list shows them


class NotFlushHost(MemstoreError):
    """memstore.toml names another clone as the one that flushes."""


class Store:
    """One agent root. `now` pins the clock (a datetime); None reads the real clock at each call."""

    def __init__(self, root: str | os.PathLike[str], now: dt.datetime | None = None, *, config: Config | None = None,
                 notify: Notify | None = None, progress: Progress | None = None) -> None:
        self.root = Path(find_root(root, None, Path.cwd()))
        self.alias = naming.alias(root, self.root)  # the root as named, through a symlink
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
        if not named and (notice := naming.other_root_notice(found)):
            store.notify(notice)
        if named:  # keep the spelling through a symlink (install registers both)
            store.alias = naming.alias(named, store.root, must_be_dir=False)
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

    # ------------------------------------------------------------ the mirror (memstore.api.mirroring), reading, writing

    def _mirror(self) -> Mirror:
        return Mirror(self.root, self.config, self.now, self.notify, self.progress)

    def with_mirror(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """fn on the live mirror (for a pass that runs rounds of its own: the background embedding)."""
        return self._with_mirror(fn)

    def _with_mirror(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """fn on the live mirror (rebuilt first if missing, corrupt or foreign; once more if found corrupt)."""
        return self._mirror().run(fn)

    def _read(self, fn: Callable[[sqlite3.Connection], T], *, catch_up: str = "quick") -> T:
        """fn after catching the mirror up: 'quick', 'full' or 'none' (a read-only root: as it stands)."""
        return self._mirror().read(fn, catch_up)

    def sync(self, full: bool = True, *, embed: bool = True) -> SyncReport:
        """Bring the mirror up to date: a full walk, or the quick folder check; then (the `semantic` extra, embed)
        embed changed files for at most `embed_budget_s`. Capture passes embed=False: it must be quick."""
        from memstore.mirror.semantic import embed_briefly
        from memstore.mirror.sync import sync_locked
        report = self._with_mirror(lambda conn: sync_locked(conn, self.root, self.config, self.progress,
                                                            quick=not full, now=self.now))
        if embed:
            report.vectors = embed_briefly(self, lambda fn: self._read(fn, catch_up="none"), self.config.embed_budget_s)
        return report

    def rebuild(self) -> SyncReport:
        """Build the mirror afresh from the files and the journal, and swap it in. Vectors of unchanged
        text are carried over from the old mirror; the rest are embedded as after a sync."""
        from memstore.mirror.semantic import embed_briefly
        from memstore.mirror.sync import rebuild
        report = rebuild(self.root, self.config, self.progress, now=self.now)
        assert report is not None  # only_if_unhealthy was not asked for
        report.vectors = embed_briefly(self, lambda fn: self._read(fn, catch_up="none"), self.config.embed_budget_s)
        return report

    def embed(self, budget_s: float | None = None, *, required: bool = True, progress: Progress | None = None
              ) -> EmbedReport | None:
        """After a full sync, embed every searchable file whose vector is missing or stale (budget_s bounds
        the time). None when the extra is absent or semantic search is off and required is False."""
        from memstore.mirror.semantic import run_embed
        return run_embed(self, self._with_mirror, budget_s, required, progress)

    def search(self, query: str, limit: int = 10, type: str | None = None, *, catch_up: str = "quick",
               mode: str = "auto", cwd: str | os.PathLike[str] | None = None, this_project: bool = False,
               include_all: bool = False) -> list[Hit]:
        """Ranked hits, for a plain-English question or FTS5 syntax. mode "auto": FTS5 fused with vectors when
        the `semantic` extra is there (and on), else FTS alone; "fts": FTS alone; "hybrid": the fusion or fail."""
        from memstore.mirror.search import check_query
        from memstore.mirror.semantic import embedder_for
        if mode not in ("auto", "fts", "hybrid"):
            raise BadUsage(f"unknown search mode {mode!r}", hint="use auto, fts or hybrid")
        check_query(query)  # before the mirror is opened (and perhaps rebuilt) for nothing
        embedder = None if mode == "fts" else embedder_for(self, required=mode == "hybrid")
        project = self.project_of(cwd)
        hits = self._read(lambda conn: queries.ranked(conn, self, self.now, query, limit, type, embedder=embedder,
                                                      catch_up=catch_up, project=project, this_project=this_project,
                                                      include_all=include_all), catch_up=catch_up)
        return [Hit(**hit, team=team_of(hit["path"])) for hit in hits]

    def list(self, band: str | None = None) -> builtins.list[MemoryRow]:
        """Every T2 memory in rank order with its band, score and policy state."""
        from memstore.mirror.views import list_view
        if band is not None and band not in BANDS:
            raise BadUsage(f"unknown band {band!r}", hint=f"use one of: {', '.join(BANDS)}")
        rows = self._read(lambda conn: list_view(conn, self.root, self.now, self.config, band))
        return [MemoryRow(**row) for row in rows]

    def show(self, memory: str | os.PathLike[str]) -> Memory:
        """One file: a root-relative path (as results carry), an absolute path, or a name."""
        from memstore.mirror.lookup import find_file
        from memstore.mirror.views import file_view
        key = self._key(memory)
        found = Memory(**self._read(lambda conn: file_view(conn, find_file(conn, key), self.now, self.config)))
        return self.teams.with_history(found) if found.team else found  # who added it, from the team's git log

    @property
    def teams(self) -> Teams:
        """The teams joined (memstore.api.teams): add, list, remove, pull, share, a team memory's history."""
        from memstore.api.teams import Teams
        return Teams(self)

    def status(self) -> Status:
        # a full catch-up, as lint's: a file broken in place changes no folder, and both count its problems
        return self._read(lambda conn: queries.status(conn, self.root, self.now, self.config), catch_up="full")

    def lint(self) -> builtins.list[Problem]:
        """Malformed or missing fields, name mismatches, oversize files, lenses that cannot fire."""
        # a full sync first: a file broken by hand in place changes no folder, and a quick one would miss it
        rows = self._read(lambda conn: queries.lint_rows(conn, self.root), catch_up="full")
        return [Problem(**item) for item in rows]

    def context(self, cwd: str | os.PathLike[str] | None = None) -> str:
        """SessionStart's cold-start bundle at cwd, from the files: person-wide items and cwd's project's only."""
        from memstore.hook.bundle import bundle
        return bundle(self.root, self.now, self.config, self.project_of(cwd))

    def lens_matcher(self) -> str | None:
        """The union of the lenses' tool_match: the matcher install registers for lenses."""
        from memstore.core.lenses import tool_union
        return self._read(tool_union, catch_up="full")

    def audit(self, files: builtins.list[str | os.PathLike[str]] | None = None, *,
              cwd: str | os.PathLike[str] | None = None) -> builtins.list[AuditFile]:
        """What the always-loaded files cost every session, and which lines read as narrative: files (from cwd),
        else identity.md and cwd's and the root's CLAUDE.md and AGENTS.md, `@` imports one level deep."""
        from memstore.wiring.audit import audit
        bundle = None if files else self.context(cwd)  # the default set: what every session pays for
        return audit(self.root, files, Path(cwd) if cwd is not None else None, bundle=bundle)

    def touch(self, memory: str | os.PathLike[str], tool: str = "Read", *, session: str | None = None) -> Touch:
        """Record one access exactly as the hook does (journal line, then one transaction)."""
        from memstore.core.kinds import REINFORCING_TOOLS
        from memstore.core.policy import record_touch
        if tool not in REINFORCING_TOOLS:
            raise BadUsage(f"{tool} does not reinforce", hint=f"use one of: {', '.join(REINFORCING_TOOLS)}")
        result = record_touch(self.root, str(self._file(memory)), tool, self.now, self.config, session=session)
        if not result.recorded:
            raise NotFound(result.message, hint="only T2 memories (memory/<type>_<topic>.md) are reinforced")
        return Touch(result.rel or "", tool, result.applied, result.message)

    def supersede(self, old: str | os.PathLike[str], *, by: str | os.PathLike[str]) -> Retired:
        """OLD steps aside for BY: recorded in OLD's frontmatter, out of MEMORY.md and default search."""
        from memstore.mirror.freshness import supersede
        was, new, onward = self._read(lambda conn: supersede(conn, self.root, self._key(old), self._key(by), self.now))
        self._after_retire()
        end = f" (which leads on to {onward[-1]})" if onward else ""
        return Retired("superseded", was, was, new, onward, f"{was}: superseded by {new}{end}; kept, found by "
                                                             "search --all")

    def forget(self, memory: str | os.PathLike[str], *, why: str) -> Retired:
        """The memory steps aside into memory/archive/, with why: never deleted, found by search --all."""
        from memstore.mirror.freshness import forget
        was, now_at = self._read(lambda conn: forget(conn, self.root, self._key(memory), why, self.now))
        self._after_retire()
        return Retired("forgotten", now_at, was, message=f"{was}: forgotten, kept at {now_at}; found by search --all")

    def restore(self, memory: str | os.PathLike[str]) -> Restored:
        """A memory deleted outside memstore (or forgotten) back from memory/archive/ to where it was, its
        deletion marks taken off byte for byte. NotFound: no such copy; refused: its path is taken now."""
        from memstore.mirror.deletions import restore
        self.sync(full=False, embed=False)  # a deletion not yet seen is kept first
        kept = restore(self.root, self._key(memory))
        self._after_retire()
        return Restored(kept.was, kept.path, kept.how, f"{kept.was}: restored from {kept.path}")

    def acknowledge_deletions(self) -> int:
        """The person saw the deletions kept so far: status and the bundle stop saying so (how many)."""
        from memstore.mirror.deletions import acknowledge
        self.sync(full=False, embed=False)
        return acknowledge(self.root, fmt(self.now))

    def _after_retire(self) -> None:
        """The mirror and MEMORY.md follow the edit at once (the agent's next session sees it)."""
        self.sync(full=False, embed=False)
        self.render()

    def promote(self, memory: str | os.PathLike[str]) -> str:
        """Make a memory, note or lesson person-wide (`project: global`, edited in place); its path."""
        from memstore.life.promotion import promote
        rel, written = promote(self.root, self._note_file(memory))
        if written:
            self._sync_written(rel)
        return rel

    def render(self) -> RenderResult:
        """Write MEMORY.md, MEMORY-archive.md and current-state.md from an up-to-date mirror."""
        from memstore.mirror.render import render
        return self._read(lambda conn: render(conn, self.root, self.now, self.config), catch_up="full")

    def flush(self, force: bool = False) -> FlushReport:
        """Fold policy state into each memory's frontmatter (files in use are skipped unless forced).
        Raises NotFlushHost on a clone that memstore.toml's flush_host does not name."""
        refusal = self.flush_refusal()
        if refusal:
            raise NotFlushHost(refusal, hint="flush on that machine: the reads recorded here reach it "
                               "through the journal in git (or change flush_host in memstore.toml)")
        return self._with_mirror(lambda conn: self._flush_locked(conn, force))

    def flush_refusal(self) -> str | None:
        """Why this clone must not flush (flush_host names another one), or None."""
        return mirroring.flush_refusal(self.root, self.config)

    def flush_warnings(self, conn: sqlite3.Connection | None = None) -> builtins.list[str]:
        """What is off about who flushes, given the machines whose journals the mirror has read."""
        if conn is None:
            return self._read(self.flush_warnings, catch_up="none")
        return mirroring.flush_warnings(conn, self.root, self.config)

    def _flush_locked(self, conn: sqlite3.Connection, force: bool) -> FlushReport:
        report = self._mirror().flush_locked(conn, force)
        for line in self.flush_warnings(conn):
            self.notify(line)
        return report

    # ------------------------------------------------------------ the memory's life: nightly, capture, review, ledgers

    def rotate_logs(self) -> None:
        """The cron jobs' logs and the hook's, each kept under locks.LOG_LIMIT (one older copy beside it)."""
        from memstore.core.locks import rotate
        for name in ("tick.log", "wake.log", "hook-errors.log"):
            rotate(Path(self.paths.state) / name)

    def tick(self, commit: bool = False) -> TickStatus:
        """The nightly tick, the cheap half: a full sync and lint; when no memory changed in `flush_quiet_minutes`,
        flush, roll the T1 and dream-journal windows into archive/ and render; then the cue and the status
        file. commit=True commits exactly the files tick wrote or moved (the root in a git work tree)."""
        from memstore.life.nightly import run_tick
        self.rotate_logs()
        return run_tick(self, self._with_mirror, commit)

    def meditate_next(self) -> Choice:
        """The meditation object the rotation picks at `now`, with every candidate's numbers and why."""
        from memstore.life.meditation import next_choice
        return next_choice(self.root, self.now)[0]

    def wake(self, model_cmd: str | None = None, timeout: float = 600.0, *, commit: bool = False) -> WakeResult:
        """The nightly dream and sit, when the tick's cue has items: model calls, all or nothing (no cue:
        none). A failed call raises WakeFailed, writes nothing, keeps the cue and is recorded for `status`.
        model_cmd is split like a shell would (default: wake.DEFAULT_MODEL_CMD); the prompt goes on stdin."""
        from memstore.life import lastrun
        from memstore.life.wake import run
        self.rotate_logs()
        try:
            result = run(self.root, self.now, self.config, model_cmd=model_cmd, timeout=timeout, commit=commit,
                         sync=self.sync)
        except MemstoreError as exc:  # said by status every day until a wake works (cron shows no one stderr)
            lastrun.wake_failed(self.root, self.now, str(exc))
            raise
        lastrun.wake_failed(self.root, self.now, None)
        return result

    def review(self) -> builtins.list[ReviewItem]:
        """What waits for the person: captured lessons, wake proposals, cue items (memstore.hook.review)."""
        from memstore.hook import review
        from memstore.life.reviewing import read_cue
        return review.pending(self.root, read_cue(self.root))

    def review_answer(self, ident: str, *, accept: bool, via: dict[str, object] | None = None,
                      confirm: Callable[[ReviewItem], bool] | None = None) -> ReviewItem | None:
        """Accept or reject one pending item by id (a rejected lesson moves to short-term/archive/), for the person's
        own Python; `via` is recorded with it (default: this process's provenance); `confirm(item)` false: None."""
        from memstore.life.reviewing import answer, find
        if confirm is not None and not confirm(find(self.root, ident, accept)):
            return None
        item, moved = answer(self.root, ident, accept, fmt(self.now), via)
        if moved:
            self.sync()
        return item

    def note(self, text: str, *, kind: str | None = None, everywhere: bool = False,
             cwd: str | os.PathLike[str] | None = None) -> NoteResult:
        """One fact into memory/short-term/YYMMDD-<slug>.md (T1), then a quick sync. The same fact twice on
        one day (whitespace and case aside) is written once: the file that holds it. Empty text: BadUsage."""
        from memstore.life.noting import note
        return note(self.root, self.config, self.now, text, kind=kind, project=self.project_of(cwd, everywhere),
                    take_in=lambda: self.sync(full=False, embed=False), notify=self.notify)

    def debrief(self, transcript: str | os.PathLike[str] | None = None, commit: bool = False,
                cwd: str | None = None) -> DebriefResult:
        """The end-of-session debrief's mechanical half: full sync, lint, render, a report; a transcript's rule-shaped
        final sentences become T1 lessons (memstore.life.capture); commit=True commits the files it wrote."""
        from memstore.life.capture import run_debrief
        return run_debrief(self, transcript, commit, cwd)

    def new(self, type: str, topic: str, *, summary: str, importance: float | None = None, pin: bool = False,
            body: str | None = None, everywhere: bool = False, cwd: str | os.PathLike[str] | None = None
            ) -> NewMemory:
        """Write a T2 memory `memory/<type>_<kebab-topic>.md` with full frontmatter, sync and render it in.
        Refused: an unknown type, an empty topic or summary, importance outside 0-10, a name taken."""
        from memstore.core.results import NewMemory
        from memstore.life import ledgers
        target, name, line = ledgers.write_new(self.paths, self.now, self.config, type, topic, summary, importance,
                                               pin, body, self.project_of(cwd, everywhere))
        rel = target.relative_to(self.root).as_posix()
        self._sync_written(rel)
        try:  # the new row is in MEMORY.md at once, not at the next render
            self.render()
        except MemstoreError as exc:
            self.notify(f"wrote {rel}, but MEMORY.md was not rendered yet ({exc}); the next render will")
        return NewMemory(path=rel, name=name, type=type, summary=line)

    def bug_add(self, title: str, *, body: str | None = None, by: str | None = None) -> Bug:
        """File a bug: memory/bugs/<id>-<slug>.md, id = the highest existing + 1, picked under a lock."""
        from memstore.life import ledgers
        target = ledgers.file_bug(self.paths, self.now, self.config, title, body, by)
        self._sync_written(target.relative_to(self.root).as_posix())
        return ledgers.read_bug(target, self.root, self.config)

    def bug_list(self, all: bool = False) -> builtins.list[Bug]:
        """Every open bug (every bug with all=True), sorted by id; never filtered by run, session or filer.
        An unreadable folder raises; a malformed file is listed with what could be read and its problems."""
        from memstore.life.ledger_reads import list_bugs
        return list_bugs(self.paths, self.config, all)

    def bug_close(self, bug: str, why: str | None = None) -> Bug:
        """Close a bug named by 1, 0001 or its file name: only status, closed_at and why change."""
        from memstore.life import ledgers
        found, target = ledgers.close_bug(self.paths, self.now, self.config, lambda: self.bug_list(all=True), bug, why)
        self._sync_written(found.path)
        return ledgers.read_bug(target, self.root, self.config)

    def _sync_written(self, rel: str) -> None:
        """Take a file a verb just wrote into the mirror now; the file stands even if this fails."""
        self._mirror().take_in(rel)

    # ------------------------------------------------------------ wiring, tamper evidence, set-up, naming

    def layout(self, scope: str = "project", settings: str | None = None, claude_md: str | None = None,
               cwd: str | os.PathLike[str] | None = None) -> Layout:
        """Which files carry the hooks, the read grant and the imports for this scope."""
        from memstore.wiring.layout import layout_for
        return layout_for(self.root, scope, settings, claude_md, Path(cwd) if cwd else Path.cwd(), alias=self.alias)

    def plan_install(self, layout: Layout, *, keep_auto_memory: bool = False, cron: bool = False,
                     crontab_file: str | os.PathLike[str] | None = None, cron_time: str | None = None,
                     uninstall: bool = False, model_cmd: str | None = None, mcp: bool = False,
                     cron_only: bool = False) -> InstallPlan:
        """What install (or uninstall) would change, as diffs, written by plan.apply(). cron / crontab_file: the nightly
        jobs too, tick at cron_time (HH:MM, default 03:30; wake 5 min later); cron_only: those alone."""
        from memstore.wiring.install_options import plan
        return plan(self.root, layout, self.lens_matcher, keep_auto_memory=keep_auto_memory, cron=cron,
                    crontab_file=crontab_file, cron_time=cron_time, uninstall=uninstall, model_cmd=model_cmd,
                    mcp=mcp, cron_only=cron_only)

    def install(self, plan: InstallPlan) -> builtins.list[Path]:
        """Write an install plan, then render so the imported index exists."""
        written = plan.apply()
        self.render()
        return written

    def plan_install_client(self, client: str, scope: str = "user", *, uninstall: bool = False,
                            cwd: str | os.PathLike[str] | None = None) -> InstallPlan:
        """install --client codex|gemini: that client's hook files (memstore.wiring.install_clients)."""
        from memstore.wiring.install_options import plan_client
        return plan_client(self.root, client, scope, Path(cwd) if cwd else Path.cwd(), uninstall=uninstall)

    def verify(self, layout: Layout, *, cron: bool = False, crontab_file: str | os.PathLike[str] | None = None
               ) -> builtins.list[Check]:
        """What Claude Code will do with each piece of the wiring, then a real reinforcement probe."""
        from memstore.wiring.verify import run_checks
        cron_file = Path(crontab_file).expanduser().absolute() if crontab_file else None
        return [*run_checks(self.root, self.config, self.now, layout, self.lens_matcher(),
                            cron=cron or bool(crontab_file), crontab_file=cron_file), self.tamper_verdict()]

    def verify_client(self, client: str, scope: str = "user", cwd: str | os.PathLike[str] | None = None
                      ) -> builtins.list[Check]:
        """verify --client codex|gemini: what that client will do with the wiring, then a real read through it."""
        from memstore.wiring.client_verify import client_checks
        return [*client_checks(self.root, self.now, client, scope, Path(cwd) if cwd else Path.cwd()),
                self.tamper_verdict()]

    def record_wiring(self, files: builtins.list[Path] | tuple[Path, ...], client: str, fix: str, *,
                      forget: bool = False) -> None:
        """After install --apply: these wiring files as the person accepted them; forget: after --uninstall."""
        from memstore.wiring.evidence import record
        record(self.root, files, client, fix, forget=forget)

    def tamper_check(self, cwd: str | os.PathLike[str] | None = None) -> builtins.list[Any]:
        """The person's files and the wiring against what the person accepted (tamper.check): hand edits
        accepted (each returned once, to be said), changes made during a session held."""
        from memstore.core import tamper
        return tamper.check(str(self.root), cwd=os.fspath(cwd) if cwd else None)

    def tamper_lines(self, found: builtins.list[Any]) -> builtins.list[str]:
        from memstore.core.tamper_lines import describe
        return [describe(str(self.root), item) for item in found]

    def trust(self, files: builtins.list[str]) -> builtins.list[str]:
        """Accept these files as they are now (none: all that differ; the CLI asks the person first); the
        mirror follows, so a trusted lens's text is the one injected."""
        from memstore.wiring.evidence import trust
        accepted = trust(self.root, files)
        if accepted:
            self.sync(full=False, embed=False)
        return accepted

    def untrusted(self) -> builtins.list[Any]:
        """What `trust` with no FILE would accept: the tracked files that differ now (read only)."""
        from memstore.wiring.evidence import untrusted
        return untrusted(self.root, time.time())

    def tamper_verdict(self) -> Check:
        """verify's check of the person's files and the wiring: fails while anything is held or gone."""
        from memstore.wiring.evidence import tamper_verdict
        return tamper_verdict(self.root)

    @staticmethod
    def plan_init(root: str | os.PathLike[str]) -> Plan:
        """What `init` would do at root (a new or existing folder); nothing is written."""
        if not os.fspath(root).strip():
            raise BadUsage("the root to lay out is empty", hint="name a folder: memstore init ~/agents/me --apply")
        from memstore.life.scaffold import plan_init
        target = Path(root).expanduser().resolve()
        return plan_init(target, load_config(target) if target.is_dir() else Config())

    @classmethod
    def init(cls, plan: Plan, *, notify: Notify | None = None, progress: Progress | None = None
             ) -> tuple[Store, SyncReport]:
        """Carry out an init plan, build the mirror, and return the new root's Store."""
        from memstore.core.tamper import record_person
        from memstore.life.scaffold import apply_plan
        apply_plan(plan)
        record_person(str(plan.root), "init")  # the person's files as laid out: what tamper evidence compares with
        store = cls(plan.root, notify=notify, progress=progress)
        return store, store.rebuild()

    def _key(self, memory: str | os.PathLike[str]) -> str:
        return naming.key(self.root, memory)

    def _file(self, memory: str | os.PathLike[str]) -> Path:
        return naming.memory_file(self.root, memory)

    def _note_file(self, memory: str | os.PathLike[str]) -> Path:
        return naming.note_file(self.root, memory)

    def project_of(self, cwd: str | os.PathLike[str] | None, everywhere: bool = False) -> str | None:
        """The project a folder belongs to, as the bundle and note scope it (None: no project)."""
        return naming.project(self.root, cwd, everywhere)

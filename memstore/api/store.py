"""`Store`: one agent root, and everything a front end can do with it.

    store = Store("~/agents/me")                 # now=None: the real clock
    store.search("what did we decide about the export", limit=5)

The CLI, the nightly cycle, the watcher and the MCP server parse their input, call a method
and report what it returns: what the command line does, a library user does by the same method.
The Store is the root's state (memstore.api.state: root, clock, config, notices) with a method
per action; one of more than a step or two hands over to the api module that holds its order:
memstore.api.flows (sync, embedding, flush, the tick, the debrief, the wake, an edit the mirror
follows), memstore.api.writes (a memory, a bug, a touch or a review answer written, then taken
in), memstore.api.queries (search, show, lint, status), memstore.api.teams (`store.teams`).
Errors are memstore.core.errors'. Only the standard library loads at module level (the layers
load when a method needs them), so importing stays cheap.
"""

from __future__ import annotations

import builtins  # builtins.list in the annotations: the Store's method `list` shadows the type
import datetime as dt
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memstore.api import naming
from memstore.api.mirroring import NotFlushHost
from memstore.api.state import Notify, Progress, RootState
from memstore.core.agent_root import find_root
from memstore.core.config import Config, load_config
from memstore.core.errors import BadUsage
from memstore.core.results import MemoryRow, Problem

if TYPE_CHECKING:
    from memstore.api.teams import Teams
    from memstore.core.results import (
        AuditFile,
        Bug,
        Check,
        Choice,
        DebriefResult,
        Hit,
        Memory,
        NewMemory,
        NoteResult,
        Restored,
        Retired,
        Status,
        TickStatus,
        Touch,
        WakeResult,
    )
    from memstore.hook.review import Item as ReviewItem
    from memstore.life.scaffold import Plan
    from memstore.meaning.embedding import Embedder
    from memstore.meaning.vectors import EmbedReport
    from memstore.mirror.flush import FlushReport
    from memstore.mirror.render import RenderResult
    from memstore.mirror.sync import SyncReport
    from memstore.wiring.install_base import InstallPlan
    from memstore.wiring.layout import Layout

# as list shows them
BANDS = ("hot", "new", "cold", "archive", "superseded", "forgotten", "expired", "early")
__all__ = ["BANDS", "NotFlushHost", "Notify", "Progress", "Store"]


class Store(RootState):
    """One agent root. `now` pins the clock (a datetime); None reads the real clock at each call."""

    @classmethod
    def locate(cls, root: str | os.PathLike[str] | None = None, now: dt.datetime | None = None,
               **options: Any) -> Store:
        """The root named, else $MEMSTORE_ROOT, else the nearest folder at or above cwd holding
        memory/."""
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

    # ------------------------------------------------------------ the mirror (api.flows), reading

    def sync(self, full: bool = True, *, embed: bool = True) -> SyncReport:
        """Bring the mirror up to date: a full walk, or the quick folder check; then (the `semantic`
        extra, embed) embed changed files for at most `embed_budget_s`. Capture passes embed=False:
        it must be quick."""
        from memstore.api import flows
        return flows.sync(self.mirror(), full, embed)

    def rebuild(self) -> SyncReport:
        """Build the mirror afresh from the files and the journal, and swap it in. Vectors of
        unchanged text are carried over from the old mirror; the rest are embedded as after a
        sync."""
        from memstore.api import flows
        return flows.rebuild_mirror(self.mirror())

    def embed(self, budget_s: float | None = None, *, required: bool = True,
              progress: Progress | None = None) -> EmbedReport | None:
        """After a full sync, embed every searchable file whose vector is missing or stale (budget_s
        bounds the time). None when the extra is absent or semantic search is off and required is
        False."""
        from memstore.api import flows
        return flows.embed(self.mirror(), budget_s, required, progress)

    def embed_background(self) -> EmbedReport | None:
        """`memstore embed --background`, the detached pass a sync starts: rounds until nothing
        waits or SIGTERM asks it to end. None: meaning is off, or another pass runs."""
        from memstore.api import flows
        return flows.embed_background(self.mirror())

    def embedder(self, required: bool = False) -> Embedder | None:
        """The model, when semantic search is on and the extra loads (required: else an error)."""
        from memstore.mirror.semantic import embedder_for
        return embedder_for(self.config, self.notify, required)

    def search(self, query: str, limit: int = 10, type: str | None = None, *,
               catch_up: str = "quick", mode: str = "auto",
               cwd: str | os.PathLike[str] | None = None, this_project: bool = False,
               include_all: bool = False) -> list[Hit]:
        """Ranked hits, for a plain-English question or FTS5 syntax. mode "auto": FTS5 fused with
        vectors when the `semantic` extra is there (and on), else FTS alone; "fts": FTS alone;
        "hybrid": the fusion or fail."""
        from memstore.api import queries
        return queries.search(self.mirror(), query, limit, type, catch_up=catch_up, mode=mode,
                              project=self.project_of(cwd), this_project=this_project,
                              include_all=include_all)

    def list(self, band: str | None = None) -> builtins.list[MemoryRow]:
        """Every T2 memory in rank order with its band, score and policy state."""
        from memstore.mirror.views import list_view
        if band is not None and band not in BANDS:
            raise BadUsage(f"unknown band {band!r}", hint=f"use one of: {', '.join(BANDS)}")
        m = self.mirror()
        rows = m.read(lambda conn: list_view(conn, m.root, m.now, m.config, band))
        return [MemoryRow(**row) for row in rows]

    def show(self, memory: str | os.PathLike[str]) -> Memory:
        """One file: a root-relative path (as results carry), an absolute path, or a name."""
        from memstore.api import queries
        return queries.show(self.mirror(), memory)  # a team's: who added it, from its git log

    @property
    def teams(self) -> Teams:
        """The teams joined (memstore.api.teams): add, list, remove, pull, share, a team memory's
        history."""
        from memstore.api.teams import Teams
        return Teams(self)  # the root's state, which the Store is

    def status(self) -> Status:
        # a full catch-up, as lint's: a file broken in place changes no folder, both count it
        from memstore.api import queries
        m = self.mirror()
        return m.read(lambda conn: queries.status(conn, m.root, m.now, m.config), catch_up="full")

    def lint(self) -> builtins.list[Problem]:
        """Malformed or missing fields, name mismatches, oversize files, lenses that cannot fire."""
        # a full sync first: a file broken by hand in place changes no folder (quick would miss it)
        from memstore.api import queries
        rows = self.mirror().read(lambda conn: queries.lint_rows(conn, self.root), catch_up="full")
        return [Problem(**item) for item in rows]

    def context(self, cwd: str | os.PathLike[str] | None = None) -> str:
        """SessionStart's cold-start bundle at cwd, from the files: person-wide items and cwd's
        project's only."""
        from memstore.hook.bundle import bundle
        return bundle(self.root, self.now, self.config, self.project_of(cwd))

    def lens_matcher(self) -> str | None:
        """The union of the lenses' tool_match: the matcher install registers for lenses."""
        from memstore.core.lenses import tool_union
        return self.mirror().read(tool_union, catch_up="full")

    def audit(self, files: builtins.list[str | os.PathLike[str]] | None = None, *,
              cwd: str | os.PathLike[str] | None = None) -> builtins.list[AuditFile]:
        """What the always-loaded files cost every session, and which lines read as narrative: files
        (from cwd), else identity.md and cwd's and the root's CLAUDE.md and AGENTS.md, `@` imports
        one level deep."""
        from memstore.wiring.audit import audit
        bundle = None if files else self.context(cwd)  # the default set: what every session pays
        return audit(self.root, files, Path(cwd) if cwd is not None else None, bundle=bundle)

    def touch(self, memory: str | os.PathLike[str], tool: str = "Read", *,
              session: str | None = None) -> Touch:
        """Record one access exactly as the hook does (journal line, then one transaction)."""
        from memstore.api import writes
        return writes.touch(self, memory, tool, session)

    def supersede(self, old: str | os.PathLike[str], *, by: str | os.PathLike[str]) -> Retired:
        """OLD steps aside for BY: recorded in OLD's frontmatter, out of MEMORY.md and default
        search."""
        from memstore.api import flows
        return flows.supersede(self.mirror(), old, by)

    def forget(self, memory: str | os.PathLike[str], *, why: str) -> Retired:
        """The memory steps aside into memory/archive/, with why: never deleted, found by search
        --all."""
        from memstore.api import flows
        return flows.forget(self.mirror(), memory, why)

    def restore(self, memory: str | os.PathLike[str]) -> Restored:
        """A memory deleted outside memstore (or forgotten) back from memory/archive/ to where it
        was, its deletion marks taken off byte for byte. NotFound: no such copy; refused: its path
        is taken now."""
        from memstore.api import flows
        return flows.restore(self.mirror(), memory)

    def acknowledge_deletions(self) -> int:
        """The person saw the deletions kept so far: status and the bundle stop saying so (how
        many)."""
        from memstore.api import flows
        return flows.acknowledge_deletions(self.mirror())

    def promote(self, memory: str | os.PathLike[str]) -> str:
        """Make a memory, note or lesson person-wide (`project: global`, edited in place); its
        path."""
        from memstore.api import writes
        return writes.promote(self, memory)

    def render(self) -> RenderResult:
        """Write MEMORY.md, MEMORY-archive.md and current-state.md from an up-to-date mirror."""
        from memstore.api import flows
        return flows.render_index(self.mirror())

    def flush(self, force: bool = False) -> FlushReport:
        """Fold policy state into each memory's frontmatter (files in use are skipped unless
        forced). Raises NotFlushHost on a clone that memstore.toml's flush_host does not name."""
        from memstore.api import flows
        return flows.flush_memories(self.mirror(), force)

    def flush_refusal(self) -> str | None:
        """Why this clone must not flush (flush_host names another one), or None."""
        from memstore.api.mirroring import flush_refusal
        return flush_refusal(self.root, self.config)

    def flush_warnings(self) -> builtins.list[str]:
        """What is off about who flushes, given the machines whose journals the mirror has read."""
        from memstore.api.mirroring import flush_warnings
        m = self.mirror()
        return m.read(lambda conn: flush_warnings(conn, m.root, m.config), catch_up="none")

    # ----------------------------------------- the memory's life: nightly, capture, review, ledgers

    def rotate_logs(self) -> None:
        """The cron jobs' logs and the hook's, each under logs.LOG_LIMIT (one older copy beside)."""
        from memstore.api import flows
        flows.rotate_logs(self)

    def tick(self, commit: bool = False) -> TickStatus:
        """The nightly tick, the cheap half: a full sync and lint; when no memory changed in
        `flush_quiet_minutes`, flush, roll the T1 and dream-journal windows into archive/ and
        render; then the cue and the status file. commit=True commits exactly the files tick wrote
        or moved (the root in a git work tree)."""
        from memstore.api import flows
        return flows.tick(self, commit)

    def meditate_next(self) -> Choice:
        """The meditation object the rotation picks at `now`, with every candidate's numbers and
        why."""
        from memstore.life.meditation import next_choice
        return next_choice(self.root, self.now)[0]

    def wake(self, model_cmd: str | None = None, timeout: float = 600.0, *,
             commit: bool = False) -> WakeResult:
        """The nightly dream and sit, when the tick's cue has items: model calls, all or nothing (no
        cue: none). A failed call raises WakeFailed, writes nothing, keeps the cue and is recorded
        for `status`. model_cmd is split like a shell would (default: wake.DEFAULT_MODEL_CMD); the
        prompt goes on stdin."""
        from memstore.api import flows
        return flows.wake(self, model_cmd, timeout, commit)

    def review(self) -> builtins.list[ReviewItem]:
        """What waits for the person: captured lessons, wake proposals, cue items
        (memstore.hook.review)."""
        from memstore.hook import review
        from memstore.life.reviewing import read_cue
        return review.pending(self.root, read_cue(self.root))

    def review_answer(self, ident: str, *, accept: bool, via: dict[str, object] | None = None,
                      confirm: Callable[[ReviewItem], bool] | None = None) -> ReviewItem | None:
        """Accept or reject one pending item by id (a rejected lesson moves to short-term/archive/),
        for the person's own Python; `via` is recorded with it (default: this process's provenance);
        `confirm(item)` false: None."""
        from memstore.api import writes
        return writes.review_answer(self, ident, accept, via, confirm)

    def review_done(self, ident: str, *, via: dict[str, object] | None = None,
                    confirm: Callable[[ReviewItem], bool] | None = None) -> ReviewItem | None:
        """Mark an accepted proposal done: the bundles stop carrying it as the person's instruction.
        The person's, like an answer: refused in an agent's session; `confirm(item)` false: None."""
        from memstore.api import writes
        return writes.review_done(self, ident, via, confirm)

    @staticmethod
    def check_review_id(ident: str) -> None:
        """BadUsage unless `ident` is shaped like a review id (a letter and 7 hex digits)."""
        from memstore.life.reviewing import check_id
        check_id(ident)

    def note(self, text: str, *, kind: str | None = None, everywhere: bool = False,
             cwd: str | os.PathLike[str] | None = None) -> NoteResult:
        """One fact into memory/short-term/YYMMDD-<slug>.md (T1), then a quick sync. The same fact
        twice on one day (whitespace and case aside) is written once: the file that holds it. Empty
        text: BadUsage."""
        from memstore.api import writes
        return writes.note(self, text, kind, self.project_of(cwd, everywhere))

    def debrief(self, transcript: str | os.PathLike[str] | None = None, commit: bool = False,
                cwd: str | None = None) -> DebriefResult:
        """The end-of-session debrief's mechanical half: full sync, lint, render, a report; a
        transcript's rule-shaped final sentences become T1 lessons (memstore.life.capture);
        commit=True commits the files it wrote."""
        from memstore.api import flows
        return flows.debrief(self, transcript, commit, cwd)

    @classmethod
    def debrief_hook(cls, stdin: IO[Any], *, root: str | None = None, now: str | None = None,
                     commit: bool = False, detach: bool = False, notify: Notify | None = None
                     ) -> None:
        """`debrief --hook`: the client's SessionEnd payload on stdin names the transcript; detach
        hands the work to a process of its own. Never raises, never prints: a failure goes to the
        root's hook error log. root and now as --root and --now give them."""
        from memstore.api import flows
        asked = flows.debrief_asked(stdin, root, now, commit, detach)
        if asked is not None:
            located, wanted = asked
            try:
                store = cls.locate(root, flows.hook_clock(now), notify=notify)
                store.debrief(wanted.transcript, commit=commit, cwd=wanted.cwd)
            except Exception as exc:  # the session is ending: nothing may stop it
                flows.hook_failed(located, exc)

    def new(self, type: str, topic: str, *, summary: str, importance: float | None = None,
            pin: bool = False, body: str | None = None, everywhere: bool = False,
            cwd: str | os.PathLike[str] | None = None) -> NewMemory:
        """Write a T2 memory `memory/<type>_<kebab-topic>.md` with full frontmatter, sync and render
        it in. Refused: an unknown type, an empty topic or summary, importance outside 0-10, a name
        taken."""
        from memstore.api import writes
        return writes.new_memory(self, type, topic, summary, importance, pin, body, cwd, everywhere)

    def bug_add(self, title: str, *, body: str | None = None, by: str | None = None) -> Bug:
        """File a bug: memory/bugs/<id>-<slug>.md, id = the highest existing + 1, picked under a
        lock."""
        from memstore.api import writes
        return writes.file_bug(self, title, body, by)

    def bug_list(self, all: bool = False) -> builtins.list[Bug]:
        """Every open bug (every bug with all=True), sorted by id; never filtered by run, session or
        filer. An unreadable folder raises; a malformed file is listed with what could be read and
        its problems."""
        from memstore.life.ledger_reads import list_bugs
        return list_bugs(self.paths, self.config, all)

    def bug_close(self, bug: str, why: str | None = None) -> Bug:
        """Close a bug named by 1, 0001 or its file name: only status, closed_at and why change."""
        from memstore.api import writes
        return writes.close_bug(self, bug, why)

    # ------------------------------------------------------ wiring, tamper evidence, set-up, naming

    def layout(self, scope: str = "project", settings: str | None = None,
               claude_md: str | None = None, cwd: str | os.PathLike[str] | None = None) -> Layout:
        """Which files carry the hooks, the read grant and the imports for this scope."""
        from memstore.wiring.layout import layout_for
        return layout_for(self.root, scope, settings, claude_md, Path(cwd) if cwd else Path.cwd(),
                          alias=self.alias)

    def plan_install(self, layout: Layout, *, keep_auto_memory: bool = False, cron: bool = False,
                     crontab_file: str | os.PathLike[str] | None = None,
                     cron_time: str | None = None, uninstall: bool = False,
                     model_cmd: str | None = None, mcp: bool = False,
                     cron_only: bool = False) -> InstallPlan:
        """What install (or uninstall) would change, as diffs, written by plan.apply(). cron /
        crontab_file: the nightly jobs too, tick at cron_time (HH:MM, default 03:30; wake 5 min
        later); cron_only: those alone."""
        from memstore.wiring.install_options import plan
        return plan(self.root, layout, self.lens_matcher, keep_auto_memory=keep_auto_memory,
                    cron=cron, crontab_file=crontab_file, cron_time=cron_time, uninstall=uninstall,
                    model_cmd=model_cmd, mcp=mcp, cron_only=cron_only)

    def install(self, plan: InstallPlan, *, render: bool = True) -> builtins.list[Path]:
        """Write an install plan, then render so the imported index exists (render=False: the
        nightly jobs alone, which import nothing)."""
        written = plan.apply()
        if render:
            self.render()
        return written

    def uninstall(self, plan: InstallPlan, layout: Layout) -> builtins.list[Path]:
        """Write an uninstall plan, and forget the wiring files it took memstore out of."""
        written = plan.apply()
        self.record_wiring(layout.wiring, "claude", "", forget=True)
        return written

    def install_client(self, plan: InstallPlan, client: str, scope: str, *, uninstall: bool = False
                       ) -> builtins.list[Path]:
        """Write install --client's plan, and remember that client's wiring files as written now
        (tamper evidence: how to put them back), or forget them after an uninstall."""
        from memstore.wiring.install_clients import client_wiring
        written = plan.apply()
        fix = f"memstore --root {self.root} install --client {client} --scope {scope} --apply"
        self.record_wiring(client_wiring(client, scope), client, fix, forget=uninstall)
        return written

    def plan_install_client(self, client: str, scope: str = "user", *, uninstall: bool = False,
                            cwd: str | os.PathLike[str] | None = None) -> InstallPlan:
        """install --client codex|gemini: that client's hook files
        (memstore.wiring.install_clients)."""
        from memstore.wiring.install_options import plan_client
        return plan_client(self.root, client, scope, Path(cwd) if cwd else Path.cwd(),
                           uninstall=uninstall)

    def verify(self, layout: Layout, *, cron: bool = False,
               crontab_file: str | os.PathLike[str] | None = None) -> builtins.list[Check]:
        """What Claude Code will do with each piece of the wiring, then a real reinforcement
        probe."""
        from memstore.wiring.verify import run_checks
        cron_file = Path(crontab_file).expanduser().absolute() if crontab_file else None
        return [*run_checks(self.root, self.config, self.now, layout, self.lens_matcher(),
                            cron=cron or bool(crontab_file), crontab_file=cron_file),
                self.tamper_verdict()]

    def verify_client(self, client: str, scope: str = "user",
                      cwd: str | os.PathLike[str] | None = None) -> builtins.list[Check]:
        """verify --client codex|gemini: what that client will do with the wiring, then a real read
        through it."""
        from memstore.wiring.client_verify import client_checks
        here = Path(cwd) if cwd else Path.cwd()
        return [*client_checks(self.root, self.now, client, scope, here), self.tamper_verdict()]

    def record_wiring(self, files: builtins.list[Path] | tuple[Path, ...], client: str, fix: str, *,
                      forget: bool = False) -> None:
        """After install --apply: these wiring files as the person accepted them; forget: after
        --uninstall."""
        from memstore.wiring.evidence import record
        record(self.root, files, client, fix, forget=forget)

    def tamper_check(self, cwd: str | os.PathLike[str] | None = None) -> builtins.list[Any]:
        """The person's files and the wiring against what the person accepted (tamper.check): hand
        edits accepted (each returned once, to be said), changes made during a session held."""
        from memstore.core import tamper
        return tamper.check(str(self.root), cwd=os.fspath(cwd) if cwd else None)

    def tamper_lines(self, found: builtins.list[Any]) -> builtins.list[str]:
        from memstore.core.tamper_lines import describe
        return [describe(str(self.root), item) for item in found]

    def trust(self, files: builtins.list[str]) -> builtins.list[str]:
        """Accept these files as they are now (none: all that differ; the CLI asks the person
        first); the mirror follows, so a trusted lens's text is the one injected."""
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
        """verify's check of the person's files and the wiring: fails while anything is held or
        gone."""
        from memstore.wiring.evidence import tamper_verdict
        return tamper_verdict(self.root)

    @staticmethod
    def plan_init(root: str | os.PathLike[str]) -> Plan:
        """What `init` would do at root (a new or existing folder); nothing is written."""
        if not os.fspath(root).strip():
            raise BadUsage("the root to lay out is empty",
                           hint="name a folder: memstore init ~/agents/me --apply")
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
        # the person's files as laid out: what tamper evidence compares with
        record_person(str(plan.root), "init")
        store = cls(plan.root, notify=notify, progress=progress)
        return store, store.rebuild()

    def _key(self, memory: str | os.PathLike[str]) -> str:
        return naming.key(self.root, memory)

    def _file(self, memory: str | os.PathLike[str]) -> Path:
        return naming.memory_file(self.root, memory)

    def _note_file(self, memory: str | os.PathLike[str]) -> Path:
        return naming.note_file(self.root, memory)

    def project_of(self, cwd: str | os.PathLike[str] | None,
                   everywhere: bool = False) -> str | None:
        """The project a folder belongs to, as the bundle and note scope it (None: no project)."""
        return naming.project(self.root, cwd, everywhere)

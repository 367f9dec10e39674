"""Store's set-up methods: wiring a client (install, verify, for Claude Code and the other clients)
and the web inspector. A part of the Store class (mixed in), kept apart by meaning: store.py holds
the mirror's life cycle, reading and writing memories.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.errors import BadUsage, MemstoreError

if TYPE_CHECKING:
    from memstore.install import InstallPlan, Layout
    from memstore.results import Check
    from memstore.web.inspector import Inspector


class WiringMixin:
    """install / verify (every client) and the inspector; the Store supplies root, config, now, alias."""

    def layout(self, scope: str = "project", settings: str | None = None, claude_md: str | None = None,
               cwd: str | os.PathLike[str] | None = None) -> Layout:
        """Which files carry the hooks, the read grant and the imports for this scope."""
        from memstore.install import layout_for

        return layout_for(self.root, scope, settings, claude_md, Path(cwd) if cwd else Path.cwd(), alias=self.alias)

    def plan_install(self, layout: Layout, *, keep_auto_memory: bool = False, cron: bool = False,
                     crontab_file: str | os.PathLike[str] | None = None, cron_time: str | None = None,
                     uninstall: bool = False, model_cmd: str | None = None, mcp: bool = False,
                     cron_only: bool = False) -> InstallPlan:
        """Everything install (or uninstall) would change, as diffs; nothing is written until plan.apply().

        cron / crontab_file: also the nightly tick and wake jobs, in the user's crontab or in
        that file; cron_time: when tick runs (HH:MM, default 03:30; wake runs 5 minutes later).
        cron_only: the two nightly jobs and nothing else (no settings file, no CLAUDE.md): the
        nightly cycle of a root the Claude Code plugin wires.
        """
        from memstore.cron import DEFAULT_AT, Source, parse_time
        from memstore.install import plan_cron_only, plan_install, plan_uninstall
        from memstore.plugin_config import wiring

        source = Source(Path(crontab_file).expanduser().absolute()) if crontab_file else Source() if cron else None
        if cron_only:
            if mcp or keep_auto_memory:
                raise BadUsage("--cron-only wires the nightly jobs and nothing else",
                               hint="leave out --mcp and --keep-auto-memory")
            source = source or Source()
        if cron_time is not None and (source is None or uninstall):
            raise BadUsage("a cron time needs --cron or --crontab-file, and no --uninstall")
        at = parse_time(cron_time) if cron_time is not None else DEFAULT_AT
        if cron_only and source is not None:
            return plan_cron_only(self.root, source, at=at, model_cmd=model_cmd, remove=uninstall)
        if uninstall:
            return plan_uninstall(layout, cron=source)
        plugin = wiring(self.root)
        if plugin is not None:
            # the plugin already delivers hooks, imports and MCP: a settings-file install beside it loads all twice
            raise BadUsage(f"the Claude Code plugin {plugin} already wires {self.root}; a second wiring in "
                           f"{layout.settings} would load identity and the index twice",
                           hint=f"for the nightly jobs alone: memstore --root {self.root} install --cron-only "
                                "--apply (add --crontab-file F for a file)")
        return plan_install(layout, self.lens_matcher(), disable_auto_memory=not keep_auto_memory,
                            cron=source, cron_at=at, model_cmd=model_cmd, mcp=mcp)

    def install(self, plan: InstallPlan) -> list[Path]:
        """Write an install plan, then render so the imported index exists."""
        written = plan.apply()
        self.render()
        return written

    # ------------------------------------------------------------ tamper evidence (memstore.tamper)

    def record_wiring(self, files: list[Path] | tuple[Path, ...], client: str, fix: str, *, forget: bool = False
                      ) -> None:
        """After install --apply: memstore's part of these wiring files as the person accepted it (and the
        person's files not recorded yet). forget: after --uninstall, these files carry no wiring any more."""
        from memstore import tamper

        paths = [os.path.abspath(os.path.expanduser(os.fspath(f))) for f in files]
        if forget:
            tamper.forget_wiring(str(self.root), paths)
            return
        tamper.record_wiring(str(self.root), paths, "install", client, fix)
        tamper.record_person(str(self.root), "install")

    def tamper_check(self, cwd: str | os.PathLike[str] | None = None) -> list[Any]:
        """Compare the person's files and the wiring with what the person accepted (tamper.check): hand
        edits are accepted (each returned once, to be said), changes made during a session held."""
        from memstore import tamper

        return tamper.check(str(self.root), cwd=os.fspath(cwd) if cwd else None)

    def tamper_lines(self, found: list[Any]) -> list[str]:
        from memstore import tamper

        return [tamper.describe(str(self.root), item) for item in found]

    def trust(self, files: list[str]) -> list[str]:
        """Accept these files as they are now (none: every one that differs); the person's, at a terminal
        (the CLI asks first). The mirror follows, so a trusted lens's text is the one injected."""
        from memstore import tamper

        try:
            accepted = tamper.trust(str(self.root), files)
        except ValueError as exc:
            from memstore.errors import NotFound

            raise NotFound(str(exc), hint="memstore status lists what is held") from None
        if accepted:
            self.sync(full=False, embed=False)
        return accepted

    def untrusted(self) -> list[Any]:
        """What `trust` with no FILE would accept: the tracked files that differ now (read only)."""
        from memstore import tamper

        state = tamper.load(str(self.root))
        if state is None:
            return []
        import time

        return [f for f in tamper.compare(state, str(self.root), time.time()) if f.state in ("held", "gone", "hand")]

    def verify(self, layout: Layout, *, cron: bool = False, crontab_file: str | os.PathLike[str] | None = None
               ) -> list[Check]:
        """What Claude Code will do with each piece of the wiring, then a real reinforcement probe."""
        from memstore.verify import run_checks

        cron_file = Path(crontab_file).expanduser().absolute() if crontab_file else None
        return [*run_checks(self.root, self.config, self.now, layout, self.lens_matcher(),
                            cron=cron or bool(crontab_file), crontab_file=cron_file), self.tamper_verdict()]

    def tamper_verdict(self) -> Check:
        """verify's check of the person's files and the wiring: fails while anything is held or gone."""
        from memstore.results import Check

        found = self.tamper_check()
        bad = [f for f in found if f.state in ("held", "gone")]
        said = "; ".join(self.tamper_lines(bad or found))
        if bad:
            # wiring gone is put back by install; a held change is accepted by the person, or restored
            fixes = dict.fromkeys(f.fix for f in bad if f.state == "gone" and f.fix)
            held = [f.key for f in bad if f.state == "held"]
            if held:
                fixes[f"memstore trust {' '.join(held)} (at your own terminal) once you have looked, or restore "
                      f"{'it' if len(held) == 1 else 'them'}"] = None
            return Check("person's files and wiring", False, said, "; ".join(fixes) or "memstore install --apply")
        return Check("person's files and wiring", True, said or "as the person last accepted them")


    def plan_install_client(self, client: str, scope: str = "user", *, uninstall: bool = False,
                            cwd: str | os.PathLike[str] | None = None) -> InstallPlan:
        """install --client codex|gemini: that client's hook files (memstore.install_clients)."""
        from memstore.install_clients import plan_codex, plan_gemini

        if client == "codex":
            if scope != "user":
                raise BadUsage("Codex hooks are installed for the user ($CODEX_HOME/hooks.json) only",
                               hint="use --scope user")
            return plan_codex(self.root, uninstall=uninstall)
        if client == "gemini":
            return plan_gemini(self.root, scope, Path(cwd) if cwd else Path.cwd(), uninstall=uninstall)
        raise BadUsage(f"unknown client {client!r}", hint="use claude, codex or gemini")

    def verify_client(self, client: str, scope: str = "user", cwd: str | os.PathLike[str] | None = None
                      ) -> list[Check]:
        """verify --client codex|gemini: what that client will do with the wiring, then a real read through it."""
        from functools import partial

        from memstore.install_clients import verify_codex, verify_gemini
        from memstore.verify import check_hook_errors, check_mirror, check_reinforcement

        probe = partial(check_reinforcement, self.root, now=self.now)

        def run(command: str, payload: Any, **kwargs: Any) -> Check:
            return probe(command, payload_for=payload, **kwargs)

        checks = [check_mirror(self.root)]
        if client == "codex":
            checks += verify_codex(self.root, run)
        elif client == "gemini":
            checks += verify_gemini(self.root, scope, Path(cwd) if cwd else Path.cwd(), run)
        else:
            raise BadUsage(f"unknown client {client!r}", hint="use claude, codex or gemini")
        return [*checks, check_hook_errors(self.root), self.tamper_verdict()]


    def inspector(self) -> Inspector:
        """The read-only view the web inspector pages come from (memstore.web.inspector)."""
        from memstore.semantic import embedder_for
        from memstore.web.inspector import Inspector

        return Inspector(self.root, self.config, lambda: self.now, lambda required: embedder_for(self, required))

    def web_app(self, *, exposed: bool = False) -> Any:
        """The ASGI application of `memstore serve` (needs the `serve` extra)."""
        try:
            from memstore.web.app import create_app
        except ImportError as exc:
            from memstore.embedding import extra_hint

            raise MemstoreError(f"memstore serve needs the serve extra ({exc.name} is not installed)",
                                hint=extra_hint("serve", "'starlette>=0.37' 'jinja2>=3.1' 'uvicorn>=0.30'")) from None
        return create_app(self.inspector(), exposed=exposed)

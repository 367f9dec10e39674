"""What `install` was asked, turned into a plan: the options of Store.plan_install (the nightly
jobs, their time, cron only, uninstall, a plugin already wiring the root) and of
Store.plan_install_client (Codex, Gemini), checked and handed to the planners in install, cron and
install_clients."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from memstore.core import plugin_config
from memstore.core.errors import BadUsage
from memstore.wiring.cron import DEFAULT_AT, Source, parse_time
from memstore.wiring.install import plan_cron_only, plan_install, plan_uninstall
from memstore.wiring.install_base import InstallPlan
from memstore.wiring.install_clients import plan_codex, plan_gemini
from memstore.wiring.layout import Layout


def plan(root: Path, layout: Layout, lens_matcher: Callable[[], str | None], *,
         keep_auto_memory: bool = False, cron: bool = False,
         crontab_file: str | os.PathLike[str] | None = None, cron_time: str | None = None,
         uninstall: bool = False, model_cmd: str | None = None, mcp: bool = False,
         cron_only: bool = False) -> InstallPlan:
    """Store.plan_install (see its docstring). lens_matcher is asked only for a settings-file
    install: it reads the mirror."""
    source = (Source(Path(crontab_file).expanduser().absolute()) if crontab_file
              else Source() if cron else None)
    if cron_only:
        if mcp or keep_auto_memory:
            raise BadUsage("--cron-only wires the nightly jobs and nothing else",
                           hint="leave out --mcp and --keep-auto-memory")
        source = source or Source()
    if cron_time is not None and (source is None or uninstall):
        raise BadUsage("a cron time needs --cron or --crontab-file, and no --uninstall")
    at = parse_time(cron_time) if cron_time is not None else DEFAULT_AT
    if cron_only and source is not None:
        return plan_cron_only(root, source, at=at, model_cmd=model_cmd, remove=uninstall)
    if uninstall:
        return plan_uninstall(layout, cron=source)
    plugin = plugin_config.wiring(root)
    if plugin is not None:
        # the plugin already delivers hooks, imports and MCP: a settings-file install beside it
        # loads all twice
        raise BadUsage(f"the Claude Code plugin {plugin} already wires {root}; a second wiring in "
                       f"{layout.settings} would load identity and the index twice",
                       hint=f"for the nightly jobs alone: memstore --root {root} install "
                            "--cron-only --apply (add --crontab-file F for a file)")
    return plan_install(layout, lens_matcher(), disable_auto_memory=not keep_auto_memory,
                        cron=source, cron_at=at, model_cmd=model_cmd, mcp=mcp)


def plan_client(root: Path, client: str, scope: str, cwd: Path, *,
                uninstall: bool = False) -> InstallPlan:
    """Store.plan_install_client: that client's hook files (memstore.wiring.install_clients)."""
    if client == "codex":
        if scope != "user":
            raise BadUsage("Codex hooks are installed for the user ($CODEX_HOME/hooks.json) only",
                           hint="use --scope user")
        return plan_codex(root, uninstall=uninstall)
    if client == "gemini":
        return plan_gemini(root, scope, cwd, uninstall=uninstall)
    raise BadUsage(f"unknown client {client!r}", hint="use claude, codex or gemini")

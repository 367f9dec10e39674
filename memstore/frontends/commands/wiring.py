"""Claude Code and other clients: the hook, the cold-start bundle, the MCP server, install and
verify."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from memstore.core.errors import BadUsage
from memstore.frontends.cligroup import App, cli, common, emit_json, json_option
from memstore.hook.clients import CLIENTS

if TYPE_CHECKING:
    from memstore.wiring.install_base import Change

DIFF_LINES = 40  # a longer diff is said in one line unless --diff asks for it whole

# ---------------------------------------------------------------- Claude Code: hook / context


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("extra", nargs=-1, type=click.UNPROCESSED, metavar="[ARGS]...")
@click.pass_context
def hook(ctx: click.Context, extra: tuple[str, ...]) -> None:
    """The Claude Code hook: one JSON object on stdin; always exits 0.

    Options after `hook` go to the hook as they are (it ignores any it does not know),
    so no argument can make it fail; only -h/--help is taken here, and prints this.
    """
    from memstore.hook.handler import main as hook_main

    app: App = ctx.obj
    args = []
    if app.root_opt:
        args += ["--root", app.root_opt]
    if app.now_opt:
        args += ["--now", app.now_opt]
    args += extra
    hook_main(args, stdin=getattr(sys.stdin, "buffer", sys.stdin), stdout=sys.stdout)


@cli.command()
@json_option
@common
def context(app: App, as_json: bool) -> None:
    """Print the cold-start bundle that SessionStart injects."""
    text = app.store.context()
    if as_json:
        emit_json({"text": text, "chars": len(text)})
        return
    if not text:  # a silent command reads as broken: say why the bundle is empty here
        where = app.store.project_of(os.getcwd())
        scope = (f"in project {where}" if where
                 else "in no project, where only person-wide items count")
        app.say(f"the bundle is empty at {os.getcwd()}, {scope}: no open bug, recent fact, lesson, "
                "dream entry or review waits; a session started here gets identity and MEMORY.md "
                "alone")
        return
    click.echo(text, nl=False)


# ---------------------------------------------------------------- trust (tamper evidence)


@cli.command()
@click.argument("files", nargs=-1, metavar="[FILE]...")
@common
def trust(app: App, files: tuple[str, ...]) -> None:
    """Accept the current content of the person's files or the wiring after you looked at it.

    FILE: identity.md, lenses/x.md, meditations/x.md, memstore.toml (relative to the root) or a
    wiring file (~/.claude/settings.json ...); none: every one that differs from what you last
    accepted. The person's alone: it needs a terminal on stdin and asks `trust FILE? [y/N]` for
    each.
    """
    from memstore.core.inert import for_terminal
    from memstore.frontends.terminal import confirmed, person_at_terminal

    person_at_terminal("trust")  # the same rule as review answers: a person at their own terminal
    if files:
        names = list(files)
    else:
        names = [item.key for item in app.store.untrusted()]
        if not names:
            click.echo("nothing to trust: the person's files and the wiring are as you last "
                       "accepted them")
            return
    accepted = []
    for name in names:
        if confirmed(f"trust {for_terminal(name)}?"):
            accepted.append(name)
    if not accepted:
        click.echo("nothing trusted")
        return
    for key in app.store.trust(accepted):
        click.echo(f"trusted  {for_terminal(key)}")


# ---------------------------------------------------------------- mcp


@cli.command()
@common
def mcp(app: App) -> None:
    """Serve this memory over stdio as an MCP server (tools, resources, a prompt)."""
    from memstore.frontends.mcp_server import serve

    # the server lives for hours: the real clock at each call unless one was pinned
    serve(app.live_store)


# ---------------------------------------------------------------- install / verify


@cli.command()
@click.option("--apply", "do_apply", is_flag=True,
              help="Write the changes (default: print a diff only).")
@click.option("--diff", "full_diff", is_flag=True,
              help=f"Show every diff whole (a diff over {DIFF_LINES} lines is otherwise said in "
                   "one line).")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project",
              show_default=True,
              help="user: one agent for every project (~/.claude); project: this project "
                   "(./.claude, ./CLAUDE.md).")
@click.option("--settings", default=None,
              help="The settings.json to merge the hooks into (overrides --scope).")
@click.option("--claude-md", default=None,
              help="The file to add the @ import block to (overrides --scope).")
@click.option("--cron", is_flag=True,
              help="Also the nightly jobs (tick, then wake 5 minutes later) in the user's crontab "
                   "(needs `crontab`).")
@click.option("--crontab-file", default=None,
              help="The nightly jobs go into this crontab file instead of `crontab`.")
@click.option("--cron-time", default=None, metavar="HH:MM",
              help="When tick runs (default 03:30; wake 5 minutes later).")
@click.option("--keep-auto-memory", is_flag=True,
              help="Leave Claude Code's own auto memory switched on.")
@click.option("--model-cmd", default=None, metavar="CMD",
              help="The model command the wake job runs (default: claude -p --tools '', with "
                   "claude's absolute path).")
@click.option("--mcp", "with_mcp", is_flag=True,
              help="Also register the MCP server (project: .mcp.json; user: prints the `claude mcp "
                   "add` command).")
@click.option("--cron-only", is_flag=True,
              help="Only the nightly jobs (user's crontab, or --crontab-file), no other file: for "
                   "the plugin.")
@click.option("--uninstall", is_flag=True,
              help="Take out this root's hooks and import block (and, with --cron/--crontab-file, "
                   "its cron jobs).")
@click.option("--client", type=click.Choice(CLIENTS), default="claude", show_default=True,
              help="The client to wire: Claude Code, Codex CLI ($CODEX_HOME) or Gemini CLI "
                   "(~/.gemini).")
@common
def install(app: App, do_apply: bool, full_diff: bool, scope: str, settings: str | None,
            claude_md: str | None, cron: bool, crontab_file: str | None, cron_time: str | None,
            keep_auto_memory: bool, model_cmd: str | None, with_mcp: bool, cron_only: bool,
            uninstall: bool, client: str) -> None:
    """Register the hooks, the read grant and the imports, optionally the cron jobs (dry run unless
    --apply).

    With --uninstall: remove this root's hook handlers from the settings file of the scope,
    its @ import block, and with --cron or --crontab-file its tick and wake jobs. Left as
    they are: the read grant, autoMemoryEnabled, the .gitignore line, and everything that
    is not memstore's for this root (other roots' jobs, foreign jobs, comments, MAILTO=...).
    """
    if client != "claude":
        _only_claude(settings=settings, claude_md=claude_md, cron=cron, crontab_file=crontab_file,
                     cron_time=cron_time, keep_auto_memory=keep_auto_memory, model_cmd=model_cmd,
                     mcp=with_mcp, cron_only=cron_only)
        _install_client(app, client, _client_scope(scope), do_apply, uninstall, full_diff)
        return
    if cron_only and (settings or claude_md):
        raise BadUsage("--cron-only touches no settings file and no CLAUDE.md",
                       hint="leave out --settings and --claude-md")
    layout = app.store.layout(scope, settings, claude_md)
    plan = app.store.plan_install(layout, keep_auto_memory=keep_auto_memory, cron=cron,
                                  crontab_file=crontab_file, cron_time=cron_time,
                                  uninstall=uninstall, model_cmd=model_cmd, mcp=with_mcp,
                                  cron_only=cron_only)
    changed = [c for c in plan.changes if c.changed]
    _show(changed, full_diff)
    for warning in plan.warnings:
        app.say(f"warning: {warning}")
    for step in plan.next_steps:
        click.echo(f"next: {step}")
    if not do_apply:
        click.echo(f"{len(changed)} file(s) would change; nothing written. Run again with --apply.")
        return
    if cron_only:
        written = app.store.install(plan, render=False)
        where = f"--crontab-file {crontab_file}" if crontab_file else "--cron"
        done = ("taken out" if uninstall
                else f"wired; check them with: memstore --root {app.root} verify {where}")
        click.echo(f"{len(written)} file(s) changed; the nightly tick and wake for {app.root} "
                   f"{done}.")
        return
    if uninstall:
        written = app.store.uninstall(plan, layout)
        gone = [c.path for c in plan.changes if c.remove]
        left = (f"Removed {', '.join(map(str, gone))}: install made them, and nothing else was "
                "in them. " if gone else "")
        click.echo(f"{len(written)} file(s) changed; memstore's wiring for {app.root} taken out. "
                   f"{left}Any read grant and autoMemoryEnabled in files that stay were left as "
                   "they are.")
        return
    written = app.store.install(plan)
    where = plan.verify_with or ("--scope user" if layout.scope == "user"
                                 else f"--settings {layout.settings}")
    # tamper evidence: memstore's part of these files as written now, and how to put it back
    app.store.record_wiring(layout.wiring, "claude",
                            f"memstore --root {app.root} install --apply {where}")
    if layout.imports is not None and layout.scope == "project" and plan.verify_with is None:
        where += f" --claude-md {layout.imports}"
    if crontab_file:
        where += f" --crontab-file {crontab_file}"
    elif cron:
        where += " --cron"
    click.echo(f"{len(written)} file(s) changed; index rendered. Check the wiring with: "
               f"memstore --root {app.root} verify {where}")


def _show(changed: list[Change], full_diff: bool) -> None:
    """Each change as its diff, or in one line when the diff is long (a new settings file is
    hundreds of lines of hook handlers)."""
    for change in changed:
        diff = change.diff()
        if full_diff or diff.count("\n") <= DIFF_LINES:
            click.echo(diff)
        else:
            click.echo(f"{change.summary()} ({diff.count(chr(10))} lines of diff: add --diff)")


def _client_scope(scope: str) -> str:
    """--scope for another client: "user" unless given (the default "project" is Claude Code's)."""
    source = click.get_current_context().get_parameter_source("scope")
    return scope if source == click.core.ParameterSource.COMMANDLINE else "user"


def _only_claude(**given: object) -> None:
    used = [name.replace("_", "-") for name, value in given.items() if value]
    if used:
        raise BadUsage(f"--{used[0]} is for Claude Code's wiring, not --client's",
                       hint="run it in its own `memstore install` "
                            "(the nightly jobs serve every client)")


def _install_client(app: App, client: str, scope: str, do_apply: bool, uninstall: bool,
                    full_diff: bool) -> None:
    plan = app.store.plan_install_client(client, scope, uninstall=uninstall)
    changed = [c for c in plan.changes if c.changed]
    _show(changed, full_diff)
    for warning in plan.warnings:
        app.say(f"warning: {warning}")
    if not do_apply:
        click.echo(f"{len(changed)} file(s) would change; nothing written. Run again with --apply.")
        return
    # the Store records the client's wiring as written now (tamper evidence) or forgets it
    written = app.store.install_client(plan, client, scope, uninstall=uninstall)
    done = "taken out" if uninstall else "wired"
    click.echo(f"{len(written)} file(s) changed; {client} {done} for {app.root}.")
    for step in plan.next_steps:
        click.echo(f"next: {step}")


@cli.command()
@click.option("--scope", type=click.Choice(["project", "user"]), default="project",
              show_default=True)
@click.option("--settings", default=None, help="The settings.json to check (overrides --scope).")
@click.option("--claude-md", default=None,
              help="The file with the @ import block to check (overrides --scope).")
@click.option("--cron", is_flag=True,
              help="Also require the nightly tick and wake jobs in the user's crontab.")
@click.option("--crontab-file", default=None,
              help="Require the nightly tick and wake jobs in this crontab file.")
@click.option("--client", type=click.Choice(CLIENTS), default="claude", show_default=True,
              help="The client whose wiring to check.")
@json_option
@common
def verify(app: App, scope: str, settings: str | None, claude_md: str | None, cron: bool,
           crontab_file: str | None, client: str, as_json: bool) -> None:
    """Say what the client will do with the wiring, then prove a read reinforces. Exit 1 if anything
    fails."""
    if client != "claude":
        _only_claude(settings=settings, claude_md=claude_md, cron=cron, crontab_file=crontab_file)
        # Codex has user hooks only; Gemini's default is the user's settings too
        checks = app.store.verify_client(client, _client_scope(scope))
    else:
        layout = app.store.layout(scope, settings, claude_md)
        checks = app.store.verify(layout, cron=cron, crontab_file=crontab_file)
    failed = [c for c in checks if not c.ok]
    if as_json:
        emit_json([c.to_json() for c in checks])
    else:
        for check in checks:
            mark = "ok  " if check.ok else "FAIL"
            fix = f"\n      fix: {check.fix}" if not check.ok and check.fix else ""
            click.echo(f"{mark:5} {check.name}: {check.detail}" + fix)
        click.echo(f"{len(checks) - len(failed)}/{len(checks)} checks passed")
    if failed:
        sys.exit(1)

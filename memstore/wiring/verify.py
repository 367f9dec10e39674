"""`memstore verify`: say what the real Claude Code will do with the wiring, then prove a Read
reinforces.

Each check judges a piece by what the client does with it, not by whether a file holds
the right text: a read grant in a file Claude Code ignores, `@` imports it will not
expand, or a settings file git tracks are failures, each with the fix in one line.
Claude Code's state file is read for that (trust and import approvals), never written.

The last check feeds a synthetic PostToolUse Read of a throwaway probe memory through
the command registered in settings.json, exactly as Claude Code would run it, and
looks at the policy state that results. The probe leaves no trace: its journal line
goes to a file of its own host name, which is removed with every row it made.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstore.core import plugin_config, processes
from memstore.core.agent_root import RootPaths
from memstore.core.config import Config
from memstore.core.journal import PROBE_HOST
from memstore.core.kinds import REINFORCING_TOOLS
from memstore.core.results import Check
from memstore.hook.session_imports import IMPORT_PARTS, PART_CHARS, imports_text
from memstore.mirror import db as mirror
from memstore.mirror.queries import forget_host, policy_reads
from memstore.mirror.sync import sync
from memstore.mirror.views import hook_errors
from memstore.wiring import claude_code, protect
from memstore.wiring import cron as cron_jobs
from memstore.wiring.install_base import BEGIN, END, approved_tools, hook_command, is_ours
from memstore.wiring.layout import Layout
from memstore.wiring.registrations import outdated, own_argv

PROBE = "process_memstore-verify-probe"


def _handlers(settings: dict[str, Any], event: str) -> list[tuple[str | None, dict[str, Any]]]:
    found = []
    for group in (settings.get("hooks") or {}).get(event) or []:
        if isinstance(group, dict):
            for handler in group.get("hooks") or []:
                if is_ours(handler):
                    found.append((group.get("matcher"), handler))
    return found


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def install_fix(layout: Layout) -> str:
    where = "--scope user" if layout.scope == "user" else f"--settings {layout.settings}"
    return f"memstore --root {layout.root} install --apply {where}"


def check_settings(layout: Layout, lens_matcher: str | None) -> tuple[list[Check], str | None]:
    settings_path, root = layout.settings, layout.root
    fix = install_fix(layout)
    if not settings_path.is_file():
        return [Check("settings", False, f"{settings_path} does not exist", fix)], None
    settings = _load(settings_path)
    if settings is None:
        return [Check("settings", False, f"{settings_path} is not readable JSON",
                      "fix the file by hand")], None
    checks = [Check("settings", True, str(settings_path))]
    command = None
    approved = approved_tools(layout.external)
    for event, tools in (("SessionStart", (None,)), ("PreToolUse", approved),
                         ("PostToolUse", REINFORCING_TOOLS)):
        handlers = _handlers(settings, event)
        for tool in tools:
            hit = [h for m, h in handlers
                   if (tool is None and "--part" not in h["command"]) or m == tool]
            label = f"hook {event}" + (f" {tool}" if tool else "")
            if not hit:
                checks.append(Check(label, False, "not registered", fix))
                continue
            handler = hit[0]
            command = command or handler["command"]
            if tool and str(root) not in str(handler.get("if", "")):
                checks.append(Check(label, False,
                                    f"filter {handler.get('if')!r} does not name {root}/memory",
                                    fix))
            elif event == "PostToolUse" and tool == "Read" and not any(
                    "/teams/*/memory/" in str(h.get("if", "")) and str(root) in str(h.get("if", ""))
                    for h in hit):
                # an install from before teams: a read of a team memory would never reach the hook
                checks.append(Check(label, False,
                                    "registered, but not for a joined team's memories "
                                    "(teams/*/memory/: their reads would not reinforce)", fix))
            else:
                checks.append(Check(label, True, "registered"))
    missing = protect.missing_rules(settings, layout.forms, layout.wiring)
    guards = [h for m, h in _handlers(settings, "PreToolUse")
              if m == "Write" and "identity.md" in str(h.get("if", ""))]
    checks.append(Check(
        "person's files", not missing and bool(guards),
        "identity.md, lenses/, meditations/, memstore.toml, review/, teams/, runtime/ and the "
        "rendered index: Claude Code's deny rules and the hook refuse writes"
        if not missing and guards else
        f"not protected: {len(missing)} deny rules missing{'' if guards else ', no refusing hook'} "
        "(the agent could change them under acceptEdits)", fix))
    debriefs = [h for _m, h in _handlers(settings, "SessionEnd") if " debrief" in h["command"]
                and str(root) in h["command"]]
    waited = debriefs and not any("--detach" in h["command"] for h in debriefs)
    checks.append(Check("hook SessionEnd", bool(debriefs),
                        ("registered: the end-of-session debrief" + (
                            f" (an older install's: the client waits for it; `{fix}` hands it "
                            "to a process of its own)" if waited else ""))
                        if debriefs else "not registered (no end-of-session debrief)", fix))
    prompts = [h for _m, h in _handlers(settings, "UserPromptSubmit")
               if str(root) in h["command"] and "hookrun.py" in h["command"]]
    checks.append(Check("hook UserPromptSubmit", bool(prompts),
                        "registered: pointers to the memories a prompt points at" if prompts else
                        f"not registered (an older install: `{fix}` adds the prompt's pointers)",
                        fix))
    if layout.session_imports:
        parts = [h for _m, h in _handlers(settings, "SessionStart")
                 if "--part imports:" in h["command"]]
        checks.append(Check("hook SessionStart imports", len(parts) == IMPORT_PARTS,
                            f"{len(parts)} of {IMPORT_PARTS} handlers that carry identity.md and "
                            "MEMORY.md", fix))
    if lens_matcher:
        unfiltered = [(m, h) for m, h in _handlers(settings, "PreToolUse") if "if" not in h]
        # this release's lens gate
        gated = any(m == "*" and "hookgate.sh" in h["command"] for m, h in unfiltered)
        # an earlier release baked the lenses' tools in
        older = lens_matcher in [m for m, _h in unfiltered]
        detail = ("through the lens gate (every tool; lens changes count from the next session)"
                  if gated else
                  f"registered by an older memstore with matcher {lens_matcher!r}: a lens on "
                  "another tool never fires, and lens changes wait for a reinstall" if older else
                  f"lenses listen to {lens_matcher!r} but the registration has "
                  f"{[m for m, _h in unfiltered] or 'none'}")
        checks.append(Check("hook PreToolUse lenses", gated, detail, fix))
    if command:
        program = shlex.split(command)[0]
        exists = Path(program).is_file() and os.access(program, os.X_OK)
        checks.append(Check("hook command", exists,
                            program if exists else f"{program} is not an executable file", fix))
    stale = outdated(settings, Path(__file__).resolve().parents[1])
    checks.append(Check("hook paths", not stale,
                        "every registration runs this memstore's files" if not stale else
                        f"{len(stale)} registration(s) from an older layout or another install: "
                        + "; ".join(stale), fix))
    return checks, command


def _installed_in(path: Path, root: Path) -> bool:
    settings = _load(path) if path.is_file() else None
    return bool(settings) and any(
        f"--root {root}" in h["command"]
        for event in ("SessionStart", "PostToolUse")
        for _m, h in _handlers(settings or {}, event)
    )


def check_single_install(layout: Layout) -> Check:
    """The same root wired at user scope and in a project: identity and the index would arrive
    twice."""
    if layout.scope == "project":
        others = [claude_code.user_settings()]
        fix = f"keep one: remove memstore's hooks from {others[0]}, or this project's install"
    else:
        project = Path.cwd() / ".claude"
        others = [project / "settings.json", project / "settings.local.json"]
        fix = f"keep one: remove memstore's hooks from {project}, or the user-scope install"
    twice = [str(p) for p in others if p != layout.settings and _installed_in(p, layout.root)]
    if twice:
        return Check("one install", False,
                     f"{layout.root} is also wired in {', '.join(twice)}; every session "
                     "would load identity and the index twice", fix)
    return Check("one install", True, "no second install of this root in scope")


def check_grant(layout: Layout, state: dict[str, Any]) -> Check:
    """Will Claude Code let the agent Read files under the root without asking?"""
    root, fix = layout.root, install_fix(layout)
    if layout.scope == "project" and layout.grant is None:
        return Check("read grant", True,
                     f"not needed: the root is inside the project {layout.project}")
    user = _load(claude_code.user_settings()) or {}
    if claude_code.grants_read(user, root):
        return Check("read grant", True, f"granted in {claude_code.user_settings()}")
    if layout.scope == "user":
        return Check("read grant", False, f"{layout.settings} grants no read of {root}", fix)
    assert layout.grant is not None and layout.project is not None
    local = _load(layout.grant) or {}
    if claude_code.grants_read(local, root):
        if claude_code.git_tracks(layout.grant):
            return Check("read grant", False,
                         f"git tracks {layout.grant}, so Claude Code ignores the grant in it",
                         f"git -C {layout.grant.parent} rm --cached {layout.grant.name}")
        return Check("read grant", True, f"granted in {layout.grant} (not tracked by git)")
    shared = _load(layout.settings) or {}
    if claude_code.grants_read(shared, root):
        if claude_code.trust_accepted(state, layout.project):
            return Check("read grant", True, f"granted in {layout.settings} (folder trusted)")
        return Check("read grant", False, f"the grant in {layout.settings} is ignored until the "
                                          "folder's trust dialog is accepted", fix)
    return Check("read grant", False, f"no file Claude Code reads grants access to {root}",
                 fix)


def _imports_in(path: Path) -> list[str] | None:
    """The @ lines of memstore's block in path; None when the file or the block is absent."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    match = re.search(re.escape(BEGIN) + r"(.*?)" + re.escape(END), text, re.S)
    if not match:
        return None
    return [line for line in match.group(1).split("\n") if line.startswith("@")]


def _target(line: str, base: Path) -> Path:
    target = Path(line[1:]).expanduser()
    return target if target.is_absolute() else base / target


def check_imports(layout: Layout, state: dict[str, Any]) -> list[Check]:
    """Will identity.md and MEMORY.md reach the model, whole, at every start?"""
    checks = []
    if layout.imports is not None:
        md = layout.imports
        lines = _imports_in(md)
        if lines is None:
            return [Check("imports", False,
                          f"{md} has no memstore import block" if md.is_file()
                          else f"{md} does not exist", install_fix(layout))]
        for line in lines:
            target = _target(line, md.parent)
            hint = "memstore render" if target.name == "MEMORY.md" else f"create {target}"
            checks.append(Check(f"import {line}", target.is_file(),
                                "resolves" if target.is_file() else f"{target} does not exist",
                                hint))
        expands, why = _expansion(md, [_target(line, md.parent) for line in lines], layout,
                                  state)
        checks.append(Check("imports expanded", expands, why, "" if expands else
                            f"run `claude` once in {layout.project} and approve external imports, "
                            f"or use: memstore --root {layout.root} install --apply --scope user"))
    elif layout.project is not None:
        stale = _imports_in(layout.project / "CLAUDE.md")
        if stale:
            expands, why = _expansion(layout.project / "CLAUDE.md",
                                      [_target(x, layout.project) for x in stale], layout, state)
            if not expands:
                checks.append(Check("imports expanded", False,
                                    f"{layout.project / 'CLAUDE.md'}: {why}", install_fix(layout)))
    if layout.session_imports:
        size = len(imports_text(layout.root))
        room = IMPORT_PARTS * PART_CHARS
        checks.append(Check("identity and index via SessionStart", size <= room,
                            f"identity.md + MEMORY.md ({size:,} characters) reach the model "
                            f"through {IMPORT_PARTS} SessionStart handlers (room for {room:,}), "
                            "because Claude Code does not import files outside the project",
                            "shorten identity.md, or lower the index budgets in memstore.toml"))
    return checks


def _expansion(md: Path, targets: list[Path], layout: Layout,
               state: dict[str, Any]) -> tuple[bool, str]:
    if claude_code.is_user_memory(md):
        return True, f"{md} is user memory: Claude Code expands its imports in every project"
    project = layout.project or md.parent
    outside = [t for t in targets if not claude_code.inside(t, project)]
    if not outside:
        return True, f"every import lies inside the project {project}"
    if claude_code.external_imports_approved(state, project):
        return True, f"external imports approved for {project} ({claude_code.state_file()})"
    return False, (f"Claude Code will not expand {len(outside)} import(s) of files outside "
                   f"{project} until external imports are approved once")


def check_index(root: Path, config: Config) -> Check:
    index = Path(RootPaths(root).index)
    if not index.is_file():
        return Check("index", False, "memory/MEMORY.md does not exist", "memstore render")
    data = index.read_bytes()
    lines = len(data.decode("utf-8", "replace").splitlines())
    ok = lines <= config.index_max_lines and len(data) <= config.index_max_bytes
    detail = (f"{lines} lines, {len(data):,} bytes "
              f"(limits {config.index_max_lines}, {config.index_max_bytes:,})")
    return Check("index", ok, detail, "memstore render")


def check_mirror(root: Path) -> Check:
    try:
        conn = mirror.open_checked(Path(RootPaths(root).db))
    except mirror.MirrorUnhealthy as exc:
        return Check("mirror", False, exc.reason, "memstore rebuild")
    try:
        result = mirror.quick_check(conn)
    finally:
        conn.close()
    return Check("mirror", result == "ok", f"quick_check: {result}", "memstore rebuild")


def check_cron(root: Path, crontab_file: Path | None = None, layout: Layout | None = None, *,
               plugin: bool = False) -> list[Check]:
    """`cron tick` and `cron wake`: root's two nightly jobs in the crontab file, else the user's
    crontab. plugin: the root is the plugin's, so the fix installs the jobs alone (--cron-only)."""
    source = cron_jobs.Source(crontab_file)
    scope = "--cron-only" if plugin else "" if layout is None else (
        "--scope user" if layout.scope == "user" else f"--settings {layout.settings}")
    return cron_jobs.checks(cron_jobs.read(source), root, source, scope=scope)


def _forget_probe(root: Path) -> None:
    """Remove every trace of the probe: its journal file and the rows it made."""
    for path in Path(RootPaths(root).journal).glob(f"{PROBE_HOST}-*.jsonl"):
        path.unlink(missing_ok=True)
    if not Path(RootPaths(root).db).exists():
        return
    rel = f"memory/{PROBE}.md"
    conn = mirror.connect(Path(RootPaths(root).db))
    try:
        forget_host(conn, PROBE_HOST, rel, file_gone=not Path(root, rel).exists())
    finally:
        conn.close()


def check_reinforcement(root: Path, command: str, now: dt.datetime,
                        payload_for: Callable[[Path], dict[str, Any]] | None = None, *,
                        client: str = "Claude Code",
                        extra_env: dict[str, str] | None = None) -> Check:
    """Run the registered command on a synthetic Read of a probe memory and look at its state.

    payload_for: the client's own payload for a read of the probe (default: Claude Code's Read);
    The probe runs the registration's words itself, once read as memstore's own
    (registrations.own_argv), never through a shell, whether or not the client uses one."""
    argv, why = own_argv(command, Path(__file__).resolve().parents[1], sys.executable)
    # a project's settings file can name any command: only memstore's own hook is run
    if argv is None:
        return Check("reinforcement", False,
                     f"the registered command was not run: {why}: {command[:200]!r}",
                     "memstore install --apply (it registers this memstore's hook)")
    probe = root / "memory" / f"{PROBE}.md"
    journal = Path(RootPaths(root).journal)
    had_journal = journal.is_dir()
    probe.write_text(f"---\nname: {PROBE}\ntype: process\n"
                     "summary: written and removed by memstore verify\n---\n")
    try:
        sync(root)
        payload = payload_for(probe) if payload_for is not None else {
            "hook_event_name": "PostToolUse", "session_id": "memstore-verify", "cwd": str(root),
            "tool_name": "Read", "tool_input": {"file_path": str(probe)}}
        env = {"MEMSTORE_NOW": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "MEMSTORE_HOST": PROBE_HOST,
               **(extra_env or {})}
        try:
            # memstore's own argv, read from the registration above: no shell (`shell` clients run
            # the same words through bash), and from the root, where no project's files are on
            # Python's path
            proc = processes.run(argv, input=json.dumps(payload), timeout=30, env=env, cwd=root)
        except (OSError, processes.TimeoutExpired) as exc:
            return Check("reinforcement", False, f"the registered command could not run: {exc}",
                         "memstore install --apply")
        conn = mirror.connect(Path(RootPaths(root).db))
        try:
            row = policy_reads(conn, f"memory/{PROBE}.md")
        finally:
            conn.close()
        if proc.returncode != 0:
            return Check("reinforcement", False,
                         f"hook exited {proc.returncode}: {proc.stderr.strip()[:200]}")
        if not row or row[0] != 1:
            return Check("reinforcement", False,
                         f"a {client} read through the hook left the probe at {row}",
                         f"see {RootPaths(root).hook_log}")
        return Check("reinforcement", True,
                     f"a {client} read through the registered hook moved the probe to "
                     f"access_count {row[0]}, last_accessed {row[1]}")
    finally:
        probe.unlink(missing_ok=True)
        _forget_probe(root)
        if not had_journal and journal.is_dir() and not any(journal.iterdir()):
            journal.rmdir()
        sync(root)


def check_hook_errors(root: Path) -> Check:
    """The hook never fails the agent, so its failures are seen only here and in `status`."""
    found = hook_errors(root)
    if not found["lines"]:
        return Check("hook errors", True, "none logged")
    return Check("hook errors", False,
                 f"{found['lines']} line(s) in {found['file']}; the newest: {found['newest']}",
                 f"read {root / found['file']}; once the cause is fixed, delete the log "
                 "(it holds nothing else)")


def plugin_install(root: Path) -> str | None:
    """The id of the Claude Code plugin (memstore@...) wired to this root, or None
    (plugin_config)."""
    return plugin_config.wiring(root)


def plugin_checks(root: Path, config: Config, now: dt.datetime, layout: Layout,
                  ident: str) -> list[Check]:
    """verify for a root the plugin wires: no settings-file install beside it, then the probe
    through the plugin's hook (this installation's hook in plugin mode, the root handed over as
    Claude Code does)."""
    twice = [str(p) for p in dict.fromkeys([layout.settings, claude_code.user_settings(),
                                            Path.cwd() / ".claude" / "settings.json",
                                            Path.cwd() / ".claude" / "settings.local.json"])
             if _installed_in(p, root)]
    checks = [Check("plugin", True,
                    f"wired by the Claude Code plugin {ident} (hooks, MCP server, commands)")]
    if twice:
        checks.append(Check("one install", False,
                            f"{root} is wired by the plugin and also in {', '.join(twice)}: "
                            "every session would load identity and the index twice",
                            f"keep one: memstore --root {root} install --uninstall --apply "
                            f"(that scope), or claude plugin uninstall {ident}"))
    checks += [check_index(root, config), check_mirror(root), check_hook_errors(root)]
    # the root handed over as Claude Code hands the plugin's option to its hooks
    checks.append(check_reinforcement(root, hook_command(root, "--plugin"), now,
                                      extra_env={"CLAUDE_PLUGIN_OPTION_ROOT": str(root)},
                                      client="plugin"))
    return checks


def run_checks(root: Path, config: Config, now: dt.datetime, layout: Layout,
               lens_matcher: str | None, *, cron: bool, crontab_file: Path | None) -> list[Check]:
    """Store.verify: every check in order, the real reinforcement probe last."""
    ident = plugin_install(root)
    if ident is not None:
        return [*plugin_checks(root, config, now, layout, ident),
                *(check_cron(root, crontab_file, plugin=True) if cron else [])]
    state = claude_code.read_state()
    checks, command = check_settings(layout, lens_matcher)
    checks.append(check_single_install(layout))
    checks.append(check_grant(layout, state))
    checks += check_imports(layout, state)
    checks.append(check_index(root, config))
    checks.append(check_mirror(root))
    checks.append(check_hook_errors(root))
    if cron:
        checks += check_cron(root, crontab_file, layout)
    if command:
        checks.append(check_reinforcement(root, command, now))
    return checks

"""install merges without disturbing anything, idempotently;
verify proves the wiring or lists what is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import memory, write

EXISTING = {
    "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
    "model": "some-model",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash",
                        "hooks": [{"type": "command", "command": "echo theirs"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    """A project whose agent root lies inside it (proj/agent); other layouts:
    test_install_layouts.py."""
    root = tmp_path / "proj" / "agent"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha"))
    write(root, "identity.md", "# who I am\n")
    write(root, "lenses/git.md", "---\ntype: lens\ntrigger:\n  tool_match: ^Bash$\n---\ngit care\n")
    settings = tmp_path / "proj/.claude/settings.json"
    write(tmp_path, "proj/.claude/settings.json", json.dumps(EXISTING))
    claude_md = tmp_path / "proj/CLAUDE.md"
    write(tmp_path, "proj/CLAUDE.md", "# Project rules\n\nBe careful.\n")
    cron = tmp_path / "crontab.txt"
    cron.write_text("MAILTO=me\n0 1 * * * backup.sh\n")
    return {"root": root, "settings": settings, "claude_md": claude_md, "cron": cron}


def install(run, p: dict[str, Path], *extra: str):
    return run(p["root"], "install", "--settings", str(p["settings"]), "--claude-md",
               str(p["claude_md"]), "--crontab-file", str(p["cron"]), *extra)


def snapshot(p: dict[str, Path]) -> dict[str, bytes]:
    return {k: p[k].read_bytes() for k in ("settings", "claude_md", "cron")}


# install bakes the absolute path of `claude` into the wake job: give every test a stand-in
pytestmark = pytest.mark.usefixtures("claude_on_path")


def test_dry_run_changes_nothing_and_shows_a_diff(run, project) -> None:
    before = snapshot(project)
    result = install(run, project)
    assert result.exit_code == 0
    assert "+++" in result.stdout and "would change; nothing written" in result.stdout
    assert snapshot(project) == before


def test_a_long_settings_diff_is_said_in_one_line_unless_asked_for(run, project) -> None:
    """Failure caught (issue 44's newcomer): the dry run printed a 794-line diff of settings.json
    (a handler for each write tool and path), burying the three files it would touch."""
    short = install(run, project)
    said = next(line for line in short.stdout.splitlines()
                if line.startswith(f"{project['settings']}: hook handlers"))
    assert "PreToolUse +" in said and "UserPromptSubmit +1" in said and "add --diff" in said
    assert '"hooks"' not in short.stdout  # none of the settings file's own lines
    whole = install(run, project, "--diff")
    assert f"+++ {project['settings']} (after)" in whole.stdout and '"hooks"' in whole.stdout
    assert len(whole.stdout.splitlines()) > len(short.stdout.splitlines()) + 100


def test_apply_merges_keeps_everything_else_and_is_idempotent(run, project) -> None:
    assert install(run, project, "--apply").exit_code == 0
    settings = json.loads(project["settings"].read_text())
    # the person's deny rules are kept; ours (the person's files under the root) come after them
    ours = [rule for rule in settings["permissions"]["deny"]
            if rule not in EXISTING["permissions"]["deny"]]
    assert settings["permissions"] == {**EXISTING["permissions"],
                                       "deny": [*EXISTING["permissions"]["deny"], *ours]}
    assert ours and all(rule.startswith("Edit(//") for rule in ours) and \
        settings["model"] == "some-model"
    assert settings["hooks"]["Stop"] == EXISTING["hooks"]["Stop"]
    assert settings["hooks"]["PreToolUse"][0] == EXISTING["hooks"]["PreToolUse"][0]
    assert settings["autoMemoryEnabled"] is False
    ours = [h for g in settings["hooks"]["PostToolUse"] for h in g["hooks"]]
    root = str(project["root"])
    # the reads of a joined team's memories too (teams/<name>/memory/: reinforced for this person)
    assert {h["if"] for h in ours} == \
        {f"{t}(/{root}/memory/**)" for t in ("Read", "Edit", "Write", "MultiEdit")} \
        | {f"Read(/{root}/teams/*/memory/**)"}
    assert all(h["command"].endswith(f"memstore/hookrun.py --root {root}")
               and " -S " in h["command"] for h in ours)
    # the lenses: every tool call through the gate, which starts the hook only for a lens's tool
    lens_groups = [g for g in settings["hooks"]["PreToolUse"] if g.get("matcher") == "*"]
    assert len(lens_groups) == 1 and " --lenses-only " in lens_groups[0]["hooks"][0]["command"]
    assert lens_groups[0]["hooks"][0]["command"].endswith(f"memstore/hookrun.py --root {root}")
    claude = project["claude_md"].read_text()
    assert claude.startswith("# Project rules\n\nBe careful.\n") and \
        claude.count("memstore:begin") == 1
    assert "@agent/memory/MEMORY.md" in claude and "@agent/identity.md" in claude
    assert (project["root"] / "memory/MEMORY.md").is_file()  # so the import resolves
    cron = project["cron"].read_text()
    assert cron.startswith("MAILTO=me\n0 1 * * * backup.sh\n")  # the foreign lines kept
    # our two jobs, once each
    assert cron.count(" tick >> ") == 1 and cron.count(" wake --model-cmd ") == 1

    first = snapshot(project)
    again = install(run, project, "--apply")
    assert "0 file(s) changed" in again.stdout
    assert snapshot(project) == first


def test_a_lens_change_needs_no_reinstall_and_a_reinstall_duplicates_nothing(run, project) -> None:
    """Failure caught: the lens handler's matcher was the union of the lenses' tool_match at install
    time, so a lens on a new tool never fired until a reinstall (now one `*` group behind the gate);
    and a reinstall that added a second group."""
    install(run, project, "--apply")
    first = project["settings"].read_text()
    write(project["root"], "lenses/edits.md", "---\ntype: lens\ntrigger:\n  tool_match: ^Edit$\n"
                                              "---\nedit care\n")
    install(run, project, "--apply")
    # nothing in the registration depends on the lenses
    assert project["settings"].read_text() == first
    settings = json.loads(first)
    matchers = [g.get("matcher") for g in settings["hooks"]["PreToolUse"]
                if not any("if" in h for h in g["hooks"])]
    assert matchers == ["Bash", "*"]
    assert len(settings["hooks"]["SessionStart"]) == 1


def test_older_style_registrations_are_replaced(run, project) -> None:
    old = json.loads(project["settings"].read_text())
    old["hooks"]["PostToolUse"] = [{"matcher": "Read", "hooks": [
        {"type": "command", "command": f"/old/venv/bin/memstore --root {project['root']} hook"},
        {"type": "command", "command": "their-logger"}]}]
    project["settings"].write_text(json.dumps(old))
    install(run, project, "--apply")
    post = json.loads(project["settings"].read_text())["hooks"]["PostToolUse"]
    commands = [h["command"] for g in post for h in g["hooks"]]
    assert "their-logger" in commands and not any(c.startswith("/old/") for c in commands)
    assert sum("hookrun.py" in c for c in commands) == 5  # Read twice: memory/ and teams/*/memory/


def test_invalid_settings_json_is_refused_untouched(run, project) -> None:
    project["settings"].write_text("{ not json")
    result = install(run, project, "--apply")
    assert result.exit_code == 1 and "not valid JSON" in result.stderr and \
        "Traceback" not in result.output
    assert project["settings"].read_text() == "{ not json"


def test_verify_lists_what_is_missing_then_passes(run, project) -> None:
    args = ["verify", "--settings", str(project["settings"]), "--claude-md",
            str(project["claude_md"]), "--crontab-file", str(project["cron"]), "--json"]
    before = run(project["root"], *args)
    assert before.exit_code == 1
    missing = {c["name"] for c in json.loads(before.stdout) if not c["ok"]}
    assert {"hook SessionStart", "hook PostToolUse Read", "imports", "cron tick", "cron wake",
            "index"} <= missing

    install(run, project, "--apply")
    after = run(project["root"], *args)
    checks = json.loads(after.stdout)
    assert after.exit_code == 0, [c for c in checks if not c["ok"]]
    probe = next(c for c in checks if c["name"] == "reinforcement")
    assert probe["ok"] and "access_count 1" in probe["detail"]
    assert not list((project["root"] / "memory").glob("*verify-probe*"))  # the probe is cleaned up


def test_verify_catches_a_registered_command_that_does_not_exist(run, project) -> None:
    install(run, project, "--apply")
    text = project["settings"].read_text()
    command = json.loads(text)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    program = command.split(" ")[0]
    project["settings"].write_text(text.replace(program, "/nonexistent/memstore"))
    result = run(project["root"], "verify", "--settings", str(project["settings"]), "--claude-md",
                 str(project["claude_md"]))
    assert result.exit_code == 1 and "is not an executable file" in result.stdout


def test_seed_style_wrapper_scripts(project, tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[1]
    target = tmp_path / "fresh-agent"
    dry = subprocess.run([sys.executable, str(repo / "scripts/bootstrap_memory.py"), str(target)],
                         capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0 and "nothing written" in dry.stdout and not target.exists()
    done = subprocess.run([sys.executable, str(repo / "scripts/bootstrap_memory.py"), str(target),
                           "--apply"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and (target / "memory").is_dir()
    settings = tmp_path / "s.json"
    env = {**os.environ, "HOME": str(tmp_path / "home")}  # never the real ~/.claude
    inst = subprocess.run([sys.executable, str(repo / "scripts/install_memory_hooks.py"), "--root",
                           str(target), "--settings", str(settings), "--claude-md",
                           str(tmp_path / "C.md"), "--apply"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert inst.returncode == 0, inst.stderr
    ver = subprocess.run([sys.executable, str(repo / "scripts/verify_memory_install.py"), "--root",
                          str(target), "--settings", str(settings), "--claude-md",
                          str(tmp_path / "C.md")],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert ver.returncode == 0, ver.stdout + ver.stderr


def test_tick_syncs_flushes_renders_and_records(run, project) -> None:
    result = run(project["root"], "tick")
    assert result.exit_code == 0 and "tick 2026-07-30T12:00:00Z" in result.stdout
    status = json.loads((project["root"] / "runtime/state/tick-status.json").read_text())
    assert status["lint_errors"] == 0 and "hot 1" in status["render"]

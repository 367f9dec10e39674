"""One agent root, many projects: install writes what Claude Code honours,
and verify tells the truth.

The real Claude Code behaviour behind each rule is proven in tests/e2e; these tests hold
install and verify to it on real files, real git repositories and a real state file.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memstore.hook.session_imports import IMPORT_PARTS, PART_CHARS, parts
from tests.helpers import git, memory, write

needs_git = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
    reason="git is not installed")


@pytest.fixture
def home_root(private_home: Path) -> Path:
    """An agent root where a person keeps it: ~/agents/me, outside every project."""
    root = private_home / "agents" / "me"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha"))
    write(root, "identity.md", "# who I am\n\nIDENTITY-LINE\n")
    return root


@pytest.fixture
def project(private_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git project the person works in; the CLI runs from inside it."""
    folder = private_home / "code" / "proj"
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    monkeypatch.chdir(folder)
    return folder


def checks(run, home_root: Path, *args: str) -> dict[str, dict]:
    result = run(home_root, "verify", "--json", *args)
    return {c["name"]: c for c in json.loads(result.stdout)}


def test_user_scope_puts_hooks_grant_and_imports_in_user_files(
        run, home_root, project, private_home) -> None:
    """Failure caught: the root outside the project is neither readable nor imported (issue: denied
    Read, literal @ lines). User scope must grant the root and import from user memory."""
    (project / "CLAUDE.md").write_text("# team rules\n")
    result = run(home_root, "install", "--apply", "--scope", "user")
    assert result.exit_code == 0, result.output
    settings = json.loads((private_home / ".claude/settings.json").read_text())
    assert settings["permissions"]["additionalDirectories"] == [str(home_root)]
    assert {"SessionStart", "PreToolUse", "PostToolUse"} <= set(settings["hooks"])
    # user memory imports: no SessionStart parts needed
    assert len(settings["hooks"]["SessionStart"]) == 1
    rules = (private_home / ".claude/rules/memstore.md").read_text()
    assert f"@{home_root}/identity.md" in rules and f"@{home_root}/memory/MEMORY.md" in rules
    assert (project / "CLAUDE.md").read_text() == "# team rules\n"  # the project is not touched
    assert not (project / ".claude").exists()
    again = run(home_root, "install", "--apply", "--scope", "user")
    assert "0 file(s) changed" in again.stdout
    found = checks(run, home_root, "--scope", "user")
    assert all(c["ok"] for c in found.values()), [c for c in found.values() if not c["ok"]]
    assert "user memory" in found["imports expanded"]["detail"]


@needs_git
def test_project_scope_with_root_elsewhere(run, home_root, project) -> None:
    """Failure caught: project scope put imports Claude Code never expands into CLAUDE.md and no
    read grant anywhere. Now: grant in settings.local.json (git-ignored), Read approval hook,
    SessionStart parts."""
    (project / "CLAUDE.md").write_text("# team rules\n")
    result = run(home_root, "install", "--apply")
    assert result.exit_code == 0, result.output
    local = json.loads((project / ".claude/settings.local.json").read_text())
    assert local == {"permissions": {"additionalDirectories": [str(home_root)]}}
    assert ".claude/settings.local.json" in (project / ".gitignore").read_text().splitlines()
    shared = json.loads((project / ".claude/settings.json").read_text())
    # a grant there waits until the folder is trusted (deny rules, the person's files, count now)
    assert "additionalDirectories" not in shared["permissions"]
    assert f"Edit(/{home_root}/identity.md)" in shared["permissions"]["deny"]
    reads = [h for g in shared["hooks"]["PreToolUse"] if g.get("matcher") == "Read"
             for h in g["hooks"]]
    assert [h["if"] for h in reads] == [f"Read(/{home_root}/memory/**)"]
    parts_registered = [h["command"] for g in shared["hooks"]["SessionStart"] for h in g["hooks"]]
    assert [c.endswith(f"--part imports:{n}") for n, c in enumerate(parts_registered)] == [
        False, *([True] * IMPORT_PARTS)]
    # no import block it would not expand
    assert (project / "CLAUDE.md").read_text() == "# team rules\n"
    found = checks(run, home_root)
    assert all(c["ok"] for c in found.values()), [c for c in found.values() if not c["ok"]]
    assert "not tracked by git" in found["read grant"]["detail"]
    assert "SessionStart" in found["identity and index via SessionStart"]["detail"]
    assert run(home_root, "install", "--apply").stdout.startswith("0 file(s) changed")


def test_root_inside_the_project_needs_no_grant(run, private_home, monkeypatch) -> None:
    project = private_home / "proj"
    write(project, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha"))
    write(project, "identity.md", "# me\n")
    monkeypatch.chdir(project)
    assert run(project, "install", "--apply").exit_code == 0
    assert not (project / ".claude/settings.local.json").exists()
    assert "@memory/MEMORY.md" in (project / "CLAUDE.md").read_text()
    shared = json.loads((project / ".claude/settings.json").read_text())
    assert len(shared["hooks"]["SessionStart"]) == 1
    assert not any(g.get("matcher") == "Read" for g in shared["hooks"]["PreToolUse"])
    found = checks(run, project)
    assert found["read grant"]["ok"] and "not needed" in found["read grant"]["detail"]
    assert all(c["ok"] for c in found.values()), [c for c in found.values() if not c["ok"]]


@needs_git
def test_verify_fails_when_git_tracks_the_local_settings(run, home_root, project) -> None:
    """Failure caught: a grant in a settings.local.json that git tracks, which Claude Code ignores,
    reported as fine."""
    run(home_root, "install", "--apply")
    git(project, "add", "-f", ".claude/settings.local.json")
    git(project, "commit", "-q", "-m", "oops")
    found = checks(run, home_root)
    assert not found["read grant"]["ok"] and "git tracks" in found["read grant"]["detail"]
    assert found["read grant"]["fix"].endswith("rm --cached settings.local.json")
    again = run(home_root, "install")
    assert "git tracks" in again.stderr


@needs_git
def test_verify_fails_on_imports_claude_code_will_not_expand(
        run, home_root, project, private_home) -> None:
    """Failure caught: `@/abs/...` lines in the project's CLAUDE.md reported ok although Claude Code
    leaves them unexpanded until the person approved external imports (kept in ~/.claude.json)."""
    claude_md = project / "CLAUDE.md"
    run(home_root, "install", "--apply", "--claude-md", str(claude_md))
    found = checks(run, home_root, "--claude-md", str(claude_md))
    assert not found["imports expanded"]["ok"], found["imports expanded"]
    assert "approve external imports" in found["imports expanded"]["fix"]
    state = private_home / ".claude.json"
    state.write_text(
        json.dumps({"projects": {str(project): {"hasClaudeMdExternalIncludesApproved": True}}}))
    before = state.read_bytes(), state.stat().st_mtime_ns
    found = checks(run, home_root, "--claude-md", str(claude_md))
    assert found["imports expanded"]["ok"] and "approved" in found["imports expanded"]["detail"]
    assert (state.read_bytes(), state.stat().st_mtime_ns) == before  # read, never written


@needs_git
def test_stale_import_block_is_flagged_and_removed(run, home_root, project) -> None:
    """Failure caught: an import block an older install left in the project's CLAUDE.md stays,
    unexpanded."""
    claude_md = project / "CLAUDE.md"
    run(home_root, "install", "--apply", "--claude-md", str(claude_md))
    assert "memstore:begin" in claude_md.read_text()
    found = checks(run, home_root)
    assert not found["imports expanded"]["ok"]
    run(home_root, "install", "--apply")
    assert "memstore:begin" not in claude_md.read_text()
    assert all(c["ok"] for c in checks(run, home_root).values())


def test_grant_in_shared_settings_counts_only_for_a_trusted_folder(
        run, home_root, project, private_home) -> None:
    run(home_root, "install", "--apply")
    (project / ".claude/settings.local.json").unlink()
    shared_path = project / ".claude/settings.json"
    shared = json.loads(shared_path.read_text())
    shared["permissions"] = {"additionalDirectories": [str(home_root)]}
    shared_path.write_text(json.dumps(shared))
    found = checks(run, home_root)
    assert not found["read grant"]["ok"] and "trust dialog" in found["read grant"]["detail"]
    (private_home / ".claude.json").write_text(json.dumps({"projects": {str(project.parent): {
        "hasTrustDialogAccepted": True}}}))
    assert checks(run, home_root)["read grant"]["ok"]


def test_verify_probe_leaves_no_trace(run, home_root, project) -> None:
    """Failure caught: every verify added a journal event (which travels in git) and policy rows."""
    run(home_root, "install", "--apply", "--scope", "user")
    run(home_root, "touch", "memory/feedback_alpha.md")
    journal = home_root / "runtime/journal"
    before_files = {p.name: p.read_bytes() for p in journal.iterdir()}
    before_list = run(home_root, "list", "--json").stdout
    found = checks(run, home_root, "--scope", "user")
    assert found["reinforcement"]["ok"], found["reinforcement"]
    assert {p.name: p.read_bytes() for p in journal.iterdir()} == before_files
    assert run(home_root, "list", "--json").stdout == before_list
    assert "probe" not in run(home_root, "status", "--json").stdout


def test_oversize_identity_fails_the_session_start_route(run, home_root, project) -> None:
    write(home_root, "identity.md", "# me\n" + "a long line of identity\n" * 2000)
    run(home_root, "install", "--apply")
    found = checks(run, home_root)
    assert not found["identity and index via SessionStart"]["ok"]


def test_parts_keep_everything_that_fits_and_say_where_they_cut() -> None:
    text = "".join(f"line {i} " + "x" * 80 + "\n" for i in range(200))  # ~17,800 chars
    pieces = parts(text)
    assert "".join(pieces) == text and all(len(p) <= PART_CHARS for p in pieces) and \
        len(pieces) == 2
    big = text * 3
    cut = parts(big)
    assert len(cut) == IMPORT_PARTS and all(len(p) <= PART_CHARS for p in cut)
    assert "cut here" in cut[-1]
    assert parts("y" * (PART_CHARS * 2 + 5)) == ["y" * PART_CHARS, "y" * PART_CHARS, "y" * 5]


@needs_git
def test_hooks_in_local_settings_stay_out_of_git(run, home_root, project) -> None:
    """Failure caught: hooks with this machine's absolute paths committed to a shared settings.json;
    --settings .claude/settings.local.json keeps all of it local and out of git."""
    local = project / ".claude/settings.local.json"
    assert run(home_root, "install", "--apply", "--settings", str(local)).exit_code == 0
    data = json.loads(local.read_text())
    assert data["permissions"]["additionalDirectories"] == [str(home_root)] and \
        "PostToolUse" in data["hooks"]
    assert not (project / ".claude/settings.json").exists()
    assert ".claude/settings.local.json" in (project / ".gitignore").read_text().splitlines()
    found = checks(run, home_root, "--settings", str(local))
    assert all(c["ok"] for c in found.values()), [c for c in found.values() if not c["ok"]]


def test_verify_flags_a_root_wired_at_both_scopes(run, home_root, project) -> None:
    """Failure caught: the same root installed for the user and for a project passed verify, while
    every session then loaded identity and the index twice."""
    run(home_root, "install", "--apply", "--scope", "user")
    run(home_root, "install", "--apply")
    found = checks(run, home_root)
    assert not found["one install"]["ok"] and "twice" in found["one install"]["detail"]
    assert not checks(run, home_root, "--scope", "user")["one install"]["ok"]


def test_an_empty_bundle_injects_nothing(run, home_root) -> None:
    """Failure caught: a bare '# memstore: where things stand' heading injected into every
    session."""
    import io

    from memstore.hook.handler import main as hook_main

    out = io.StringIO()
    payload = json.dumps({"hook_event_name": "SessionStart", "session_id": "s"}).encode()
    assert hook_main(["--root", str(home_root)], stdin=io.BytesIO(payload), stdout=out) == 0
    assert out.getvalue() == ""
    assert run(home_root, "context").stdout == ""
    write(home_root, "memory/bugs/0001-x.md", "---\ntitle: BUGMARK\nstatus: open\n---\n")
    out = io.StringIO()
    hook_main(["--root", str(home_root)], stdin=io.BytesIO(payload), stdout=out)
    assert "BUGMARK" in out.getvalue()


def test_install_mcp_registers_the_server_and_approves_its_tools(run, home_root, project) -> None:
    """Failure caught: an MCP server Claude Code never starts or whose tool calls `claude -p` denies
    (the real-binary run is tests/e2e/test_mcp_claude.py); other servers must be kept."""
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"theirs": {"command": "/bin/true"}}}))
    assert run(home_root, "install", "--apply", "--mcp").exit_code == 0
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["theirs"] == {"command": "/bin/true"}
    assert servers["memstore"]["args"][-3:] == ["--root", str(home_root), "mcp"]
    shared = json.loads((project / ".claude/settings.json").read_text())
    assert shared["enabledMcpjsonServers"] == ["memstore"]
    assert any(g.get("matcher", "").startswith("^mcp__memstore__(")
               for g in shared["hooks"]["PreToolUse"])
    assert run(home_root, "install", "--apply", "--mcp").stdout.startswith("0 file(s) changed")
    assert run(home_root, "install", "--apply", "--uninstall").exit_code == 0
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"] == \
        {"theirs": {"command": "/bin/true"}}
    # install made it: it goes when nothing else is left in it
    shared_after = project / ".claude/settings.json"
    assert not shared_after.exists() or \
        "enabledMcpjsonServers" not in json.loads(shared_after.read_text())


def test_install_mcp_at_user_scope_prints_the_one_time_command(
        run, home_root, project, private_home) -> None:
    """memstore never writes ~/.claude.json, where Claude Code keeps user-scope MCP servers."""
    result = run(home_root, "install", "--apply", "--mcp", "--scope", "user")
    step = next(line for line in result.stdout.splitlines() if line.startswith("next: "))
    assert "claude mcp add --scope user memstore -- " in step and step.endswith(" mcp")
    assert not (private_home / ".claude.json").exists()

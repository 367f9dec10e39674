"""One person, many projects: the CLI finds the installed root, a project's memories stay in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest  # noqa: F401


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("MEMSTORE_ROOT",)}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "memstore", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120)


def test_the_cli_finds_the_root_install_recorded_from_any_folder(tmp_path: Path) -> None:
    """Failure caught: after `install --scope user`, `cd ~/code/projA && memstore search ...` said
    "no agent root" and its hint made a second root."""
    home = Path(os.environ["HOME"])
    root = home / "agents" / "me"
    project = home / "code" / "projA"
    project.mkdir(parents=True)
    assert cli(home, "init", str(root), "--apply").returncode == 0
    before = cli(project, "status")
    assert before.returncode == 1 and "--root DIR" in before.stderr and "install --scope user" in before.stderr
    assert cli(home, "--root", str(root), "install", "--scope", "user", "--apply").returncode == 0
    recorded = home / ".config" / "memstore" / "config.toml"
    assert f'root = "{root}"' in recorded.read_text()
    found = cli(project, "status", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["root"] == str(root)
    # --root and $MEMSTORE_ROOT still win
    other = home / "agents" / "other"
    assert cli(home, "init", str(other), "--apply").returncode == 0
    assert json.loads(cli(project, "status", "--json", env={"MEMSTORE_ROOT": str(other)}).stdout)["root"] == str(other)
    # uninstall forgets it
    assert cli(home, "--root", str(root), "install", "--scope", "user", "--uninstall", "--apply").returncode == 0
    assert "root =" not in recorded.read_text()
    assert cli(project, "status").returncode == 1


def test_mcp_on_top_of_a_user_install_adds_no_second_set_of_hooks(tmp_path: Path) -> None:
    """Failure caught: `install --mcp --apply` in a project, with the root installed at user scope, wrote the
    hooks into the project's settings as well; only verify noticed the double install."""
    home = Path(os.environ["HOME"])
    root = home / "agents" / "me"
    project = home / "code" / "projA"
    project.mkdir(parents=True)
    assert cli(home, "init", str(root), "--apply").returncode == 0
    assert cli(home, "--root", str(root), "install", "--scope", "user", "--apply").returncode == 0
    added = cli(project, "--root", str(root), "install", "--mcp", "--apply")
    assert added.returncode == 0, added.stderr
    assert "only the MCP server is added here" in added.stdout + added.stderr
    shared = json.loads((project / ".claude" / "settings.json").read_text())
    assert "hooks" not in shared and shared["enabledMcpjsonServers"] == ["memstore"]
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["memstore"]["args"][-1] == "mcp"
    user = json.loads((home / ".claude" / "settings.json").read_text())
    assert any(g["matcher"].startswith("^mcp__memstore__(") for g in user["hooks"]["PreToolUse"])
    verified = cli(project, "--root", str(root), "verify", "--scope", "user", "--json")
    failed = [c for c in json.loads(verified.stdout) if not c["ok"]]
    assert verified.returncode == 0 and not failed, failed


# ---------------------------------------------------------------- the command line, as a person meets it


def test_every_commands_json_parses(tmp_path: Path, run, claude_on_path) -> None:
    """Failure caught: --json was missing on tick, wake, sync, render, flush, new, bug add/close, touch and
    context, and had no help text where it existed."""
    from memstore.cli import cli as group

    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    calls = [["sync"], ["render"], ["flush", "--force"], ["tick"], ["wake"], ["context"],
             ["new", "project", "json check", "--summary", "a memory made for the JSON check"],
             ["touch", "memory/project_json-check.md"], ["bug", "add", "a bug for the JSON check"],
             ["bug", "close", "1"], ["bug", "list"], ["note", "a fact for the JSON check"], ["status"], ["lint"],
             ["list"], ["show", "project_json-check"], ["search", "JSON check"], ["review"], ["meditate"],
             ["audit"]]
    for argv in calls:
        result = run(root, *argv, "--json")
        assert result.exit_code in (0, 1), (argv, result.output)
        json.loads(result.stdout)
    # every --json anywhere says what it does
    def walk(command, path):
        for param in command.params:
            if "--json" in getattr(param, "opts", []):
                assert param.help, f"{' '.join(path)} --json has no help"
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])
    walk(group, ["memstore"])


def test_usage_errors_exit_2_and_bare_memstore_is_help(tmp_path: Path, run) -> None:
    """Failure caught: bare `memstore` printed usage as an error (exit 2); an empty --summary gave 1 where an
    empty note gave 2; `meditate` alone was an error."""
    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    bare = run(None)
    assert bare.exit_code == 0 and "Usage:" in bare.stdout
    assert run(root, "note", "").exit_code == 2
    assert run(root, "new", "project", "x", "--summary", "").exit_code == 2
    assert run(root, "meditate").exit_code == 0


def test_bug_add_refuses_the_same_open_title(tmp_path: Path, run) -> None:
    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    assert run(root, "bug", "add", "Flush skips quoted files").exit_code == 0
    again = run(root, "bug", "add", "flush  skips quoted files")
    assert again.exit_code == 1 and "already has this title" in again.stderr


def test_rows_are_valid_links_and_broken_frontmatter_has_no_dash_summary(root: Path, run) -> None:
    """Failure caught: a row for a name with spaces was no CommonMark link; a file with broken frontmatter
    showed `---` as its summary."""
    from tests.conftest import write

    write(root, "memory/feedback_two words.md", "---\nname: feedback_two words\ntype: feedback\nsummary: s\n---\nx\n")
    write(root, "memory/feedback_broken.md", "---\nname: \"unclosed\ntype: [\n---\n")
    assert run(root, "render").exit_code == 0
    index = (root / "memory" / "MEMORY.md").read_text()
    assert "[feedback_two words](<feedback_two words.md>)" in index
    assert "[feedback_broken](feedback_broken.md): (no readable summary" in index

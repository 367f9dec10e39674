"""One person, many projects: the CLI finds the installed root, a project's memories stay in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest  # noqa: F401

from tests.helpers import git_project


def cli(cwd: Path, *args: str,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("MEMSTORE_ROOT",)}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "memstore", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=120)


def test_the_cli_finds_the_root_install_recorded_from_any_folder(tmp_path: Path) -> None:
    """Failure caught: after `install --scope user`, `cd ~/code/projA && memstore search ...` said
    "no agent root" and its hint made a second root."""
    home = Path(os.environ["HOME"])
    root = home / "agents" / "me"
    project = home / "code" / "projA"
    project.mkdir(parents=True)
    assert cli(home, "init", str(root), "--apply").returncode == 0
    before = cli(project, "status")
    assert (before.returncode == 1 and "--root DIR" in before.stderr
            and "install --scope user" in before.stderr)
    assert cli(home, "--root", str(root), "install", "--scope", "user", "--apply").returncode == 0
    recorded = home / ".config" / "memstore" / "config.toml"
    assert f'root = "{root}"' in recorded.read_text()
    found = cli(project, "status", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["root"] == str(root)
    # --root and $MEMSTORE_ROOT still win
    other = home / "agents" / "other"
    assert cli(home, "init", str(other), "--apply").returncode == 0
    assert json.loads(cli(project, "status", "--json",
                          env={"MEMSTORE_ROOT": str(other)}).stdout)["root"] == str(other)
    # uninstall forgets it
    assert cli(home, "--root", str(root), "install", "--scope", "user", "--uninstall",
               "--apply").returncode == 0
    assert "root =" not in recorded.read_text()
    assert cli(project, "status").returncode == 1


def test_mcp_on_top_of_a_user_install_adds_no_second_set_of_hooks(tmp_path: Path) -> None:
    """Failure caught: `install --mcp --apply` in a project, with the root installed at user scope,
    wrote the hooks into the project's settings as well; only verify noticed the double install."""
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
    assert json.loads(
        (project / ".mcp.json").read_text())["mcpServers"]["memstore"]["args"][-1] == "mcp"
    user = json.loads((home / ".claude" / "settings.json").read_text())
    assert any(g["matcher"].startswith("^mcp__memstore__(") for g in user["hooks"]["PreToolUse"])
    verified = cli(project, "--root", str(root), "verify", "--scope", "user", "--json")
    failed = [c for c in json.loads(verified.stdout) if not c["ok"]]
    assert verified.returncode == 0 and not failed, failed


# ----------------------------------------------------------- the command line, as a person meets it


def test_every_commands_json_parses(tmp_path: Path, run, claude_on_path) -> None:
    """Failure caught: --json was missing on tick, wake, sync, render, flush, new, bug add/close,
    touch and context, and had no help text where it existed."""
    from memstore.frontends.cli import cli as group

    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    calls = [["sync"], ["render"], ["flush", "--force"], ["tick"], ["wake"], ["context"],
             ["new", "project", "json check", "--summary", "a memory made for the JSON check"],
             ["touch", "memory/project_json-check.md"], ["bug", "add", "a bug for the JSON check"],
             ["bug", "close", "1"], ["bug", "list"], ["note", "a fact for the JSON check"],
             ["status"], ["lint"], ["list"], ["show", "project_json-check"],
             ["search", "JSON check"], ["review"], ["meditate"], ["audit"]]
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
    """Failure caught: bare `memstore` printed usage as an error (exit 2); an empty --summary gave 1
    where an empty note gave 2; `meditate` alone was an error."""
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
    """Failure caught: a row for a name with spaces was no CommonMark link; a file with broken
    frontmatter showed `---` as its summary."""
    from tests.helpers import write

    write(root, "memory/feedback_two words.md",
          "---\nname: feedback_two words\ntype: feedback\nsummary: s\n---\nx\n")
    write(root, "memory/feedback_broken.md", "---\nname: \"unclosed\ntype: [\n---\n")
    assert run(root, "render").exit_code == 0
    index = (root / "memory" / "MEMORY.md").read_text()
    assert "[feedback_two words](feedback_two%20words.md)" in index
    assert "[feedback_broken](feedback_broken.md): (no readable summary" in index


# ---------------------------------------------------------------- a project's memories stay in it


def two_projects() -> tuple[Path, Path, Path, Path]:
    """(home, an agent root laid out in it, projA and projB: git repositories with their own
    remotes)."""
    home = Path(os.environ["HOME"])
    root = home / "agents" / "me"
    proj_a = git_project(home / "code" / "projA", "git@example.com:me/proja.git")
    proj_b = git_project(home / "code" / "projB", "git@example.com:me/projb.git")
    assert cli(home, "init", str(root), "--apply").returncode == 0
    return home, root, proj_a, proj_b


def test_a_project_is_named_by_its_remote_the_same_on_every_machine(tmp_path: Path) -> None:
    from memstore.core.projects import normalise_url, project_of

    for url in ("git@github.com:Me/ProjA.git", "https://me@github.com/me/proja",
                "ssh://git@github.com:22/me/proja.git", "https://github.com/me/proja/"):
        assert normalise_url(url) == "github.com/me/proja", url
    one = git_project(tmp_path / "laptop" / "code" / "a", "git@github.com:me/projA.git")
    two = git_project(tmp_path / "desktop" / "work" / "elsewhere",
                      "https://github.com/me/proja.git")
    assert project_of(str(one / "src")) == project_of(str(two)) == "github.com/me/proja"
    assert project_of(str(git_project(tmp_path / "Plain", None))) == "plain"
    assert project_of(str(tmp_path)) is None  # no work tree: person-wide
    worktree = tmp_path / "wt"
    subprocess.run(["git", "-C", str(one), "commit", "-q", "--allow-empty", "-m", "x"], check=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"})
    subprocess.run(["git", "-C", str(one), "worktree", "add", "-q", str(worktree)], check=True)
    assert project_of(str(worktree)) == "github.com/me/proja"


def test_notes_and_lessons_stay_in_their_project(tmp_path: Path) -> None:
    """Failure caught: projA's lesson "Never run the deploy script without the dry-run flag" was
    injected into projB's sessions."""
    home, root, proj_a, proj_b = two_projects()
    r = ("--root", str(root))
    assert cli(proj_a, *r, "note", "NOTE-PA the deploy box for A moved").returncode == 0
    assert cli(proj_b, *r, "note", "NOTE-B the B staging db moved").returncode == 0
    assert cli(proj_a, *r, "note", "--global",
               "NOTE-ALL I prefer short commit messages").returncode == 0
    transcript = home / "t.jsonl"
    transcript.write_text(
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Never run the deploy script without the dry-run flag."}]}})
        + "\n")
    end = json.dumps(
        {"hook_event_name": "SessionEnd", "transcript_path": str(transcript), "cwd": str(proj_a)})
    done = subprocess.run([sys.executable, "-m", "memstore", *r, "debrief", "--hook"], input=end,
                          cwd=proj_a, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    in_a, in_b = cli(proj_a, *r, "context").stdout, cli(proj_b, *r, "context").stdout
    assert ("NOTE-PA" in in_a and "dry-run flag" in in_a and "NOTE-ALL" in in_a
            and "NOTE-B" not in in_a)
    assert ("NOTE-B" in in_b and "NOTE-ALL" in in_b and "NOTE-PA" not in in_b
            and "dry-run flag" not in in_b)
    # promoted, the lesson reaches every project
    lesson = next(p for p in (root / "memory" / "short-term").glob("*.md")
                  if "dry-run" in p.read_text())
    assert cli(proj_b, *r, "promote", str(lesson)).returncode == 0
    assert "dry-run flag" in cli(proj_b, *r, "context").stdout


def test_search_ranks_this_projects_memories_first_and_can_keep_to_them(tmp_path: Path) -> None:
    _home, root, proj_a, proj_b = two_projects()
    r = ("--root", str(root))
    for project, topic in ((proj_b, "b deploy"), (proj_a, "a deploy")):
        made = cli(project, *r, "new", "project", topic, "--summary",
                   f"how the {topic} script deploys to staging")
        assert made.returncode == 0, made.stderr
    ranked = json.loads(
        cli(proj_a, *r, "search", "deploy script staging", "--json", "--mode", "fts").stdout)
    assert ranked[0]["path"] == "memory/project_a-deploy.md"
    only = json.loads(cli(proj_a, *r, "search", "deploy script staging", "--json", "--this-project",
                          "--mode", "fts").stdout)
    assert [h["path"] for h in only] == ["memory/project_a-deploy.md"]


def test_walkthrough_fixes_for_many_projects(tmp_path: Path) -> None:
    """Failures caught (walkthrough): install --mcp on a user install pointed at a verify that
    failed 14 checks; a note taken in projA was "already noted" in projB and with --global; promote
    could not find a note by name and failed on anything person-wide; init "" laid out a root in the
    current folder; a project with its own memory/ silently became the root."""
    home = Path(os.environ["HOME"])
    root = home / "agents" / "me"
    proj_a = git_project(home / "code" / "projA", "git@example.com:me/proja.git")
    proj_b = git_project(home / "code" / "projB", "git@example.com:me/projb.git")
    assert cli(home, "init", str(root), "--apply").returncode == 0
    assert cli(home, "--root", str(root), "install", "--scope", "user", "--apply").returncode == 0
    added = cli(proj_b, "install", "--mcp", "--apply")
    assert added.returncode == 0 and "verify --scope user" in added.stdout, added.stdout
    fact = "Run migrations with the lock flag"
    assert cli(proj_a, "note", fact).returncode == 0
    in_b = cli(proj_b, "note", fact)
    assert (in_b.returncode == 0 and "already noted" not in in_b.stdout
            and "project example.com/me/projb" in in_b.stdout)
    assert "already noted" not in cli(proj_a, "note", "--global", fact).stdout
    note = next(p for p in (root / "memory" / "short-term").glob("*.md")
                if "proja" in p.read_text())
    assert cli(proj_a, "promote", note.stem).returncode == 0
    assert cli(proj_a, "promote", note.stem).returncode == 0  # person-wide already: no error
    assert fact in cli(proj_b, "context").stdout
    for argv in (["init", "", "--apply"], ["--root", "", "status"], ["--now", "", "status"]):
        assert cli(home, *argv).returncode == 2, argv
    (proj_b / "memory").mkdir()
    shadowed = cli(proj_b, "status")
    assert "not the installed" in shadowed.stderr


def test_audit_counts_the_bundle_and_drops_html_comments(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    root = home / "agents" / "me"
    proj = git_project(home / "code" / "projA", None)
    assert cli(home, "init", str(root), "--apply").returncode == 0
    assert cli(proj, "--root", str(root), "note", "a fact in the bundle").returncode == 0
    (proj / "CLAUDE.md").write_text(
        "<!-- a note for people, not sent -->\n# Rules\n\nQuote paths.\n")
    files = json.loads(cli(proj, "--root", str(root), "audit", "--json").stdout)
    files = files["files"] if isinstance(files, dict) else files
    claude_md = next(f for f in files if f["path"].endswith("CLAUDE.md"))
    assert claude_md["chars"] == len("# Rules\n\nQuote paths.\n")
    assert any(f["role"] == "session-start" and f["chars"] > 0 for f in files)


def test_in_flight_work_stays_in_its_project(tmp_path: Path) -> None:
    """Failure caught: the bundle's "In flight" list carried every project's in-flight memories
    into every session (seen in the season benchmark: projA's hand-off in projB's sessions)."""
    from memstore.core.projects import project_of

    home, root, proj_a, proj_b = two_projects()
    r = ("--root", str(root))
    for name, project, marker in (("project_a-migration", project_of(str(proj_a)), "FLYPROJA"),
                                  ("project_shared-rota", "global", "FLY-ALL")):
        (root / "memory" / f"{name}.md").write_text(
            f"---\nname: {name}\ntype: project\nsummary: {marker} work\nproject: {project}\n"
            f"in_flight: true\nstate: {marker} half done\n---\n\nbody\n", encoding="utf-8")
    assert cli(home, *r, "render").returncode == 0
    in_a, in_b = cli(proj_a, *r, "context").stdout, cli(proj_b, *r, "context").stdout
    assert "FLYPROJA half done" in in_a and "FLY-ALL half done" in in_a
    assert "FLYPROJA" not in in_b and "FLY-ALL half done" in in_b

"""Stale flags only on code that is gone (issue 42, item 6): a cited path counts as gone only if the
project's git history once had it, a placeholder (`release/x.y.z`) is no path, and the flag says
until which commit the project had it. Real git repositories in tmp_path."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memstore.mirror import code_history
from memstore.mirror.stale_refs import check_references, references
from tests.helpers import git, memory, write

LATER = "2026-07-31T12:00:00Z"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """src/exporter.py and src/pkg/mod.py committed then deleted, src/old_name.py renamed;
    src/reader.py live."""
    repo = tmp_path / "proj"
    (repo / "src" / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name in ("exporter.py", "reader.py", "old_name.py", "pkg/mod.py"):
        (repo / "src" / name).write_text("x = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    git(repo, "rm", "-q", "src/exporter.py", "src/pkg/mod.py")
    git(repo, "mv", "src/old_name.py", "src/new_name.py")
    git(repo, "commit", "-qm", "drop the exporter, rename old_name")
    return repo


def _session_in(run: Any, root: Path, folder: Path) -> None:
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(folder),
               "source": "startup"}
    assert run(root, "hook", input=json.dumps(payload)).exit_code == 0


def _stale(root: Path) -> dict[str, list[str]]:
    return json.loads((root / "runtime" / "state" / "stale.json").read_text())["stale"]


def test_only_a_path_the_project_once_had_is_flagged(root: Path, run: Any, project: Path) -> None:
    """Catches: a cited path that was never in the repository flagged "no longer in" the project
    every morning, with "(stale: ...)" on its MEMORY.md row (broken: the last_commits filter at the
    end of stale_refs._check_project removed), while the deleted, renamed and subfolder-cited ones
    still are; and a flag that does not say until which commit the project had the path."""
    _session_in(run, root, project)
    write(root, "memory/project_code.md", memory(
        "project_code", "Where the code lives", project=str(project),
        body="Export via src/exporter.py; read via src/reader.py.\n"
             "The plan is docs/plan/new_api.py (not written yet).\n"
             "The helper was in src/old_name.py; the module pkg/mod.py.\n"
             "Cut hotfixes from release/x.y.z."))
    result = run(root, "--now", LATER, "tick")
    assert result.exit_code == 0, result.stderr
    assert _stale(root) == {
        "memory/project_code.md": ["src/exporter.py", "src/old_name.py", "pkg/mod.py"]}
    row = next(line for line in (root / "memory" / "MEMORY.md").read_text().splitlines()
               if "project_code" in line)
    assert "(stale: " in row and "new_api" not in row and "x.y.z" not in row
    texts = [w["text"] for w in json.loads(run(root, "review", "--json").stdout)]
    sha = git(project, "log", "-1", "--format=%h").strip()
    assert any(t.endswith(
        f"cites src/exporter.py, no longer in {project}, which had it until commit {sha} of "
        f"{git(project, 'log', '-1', '--format=%as').strip()}") for t in texts), texts
    assert not [t for t in texts if "new_api" in t or "x.y.z" in t]


@pytest.mark.parametrize("text",
                         ["Cut hotfixes from release/x.y.z.", "Tag it vX.Y.Z in release/vX.Y.Z.",
                          "Notes go in docs/N.N.N.md.", "Branch hotfix/1.2.x off main.",
                          "Config is deploy/$ENV/app.yaml.", "Logs rotate in logs/*.log.",
                          "Per service: services/<service>/config.yaml."])
def test_a_placeholder_is_no_path(text: str) -> None:
    """Catches: a branch pattern or a template in prose taken for a cited file (broken: the
    placeholder() filter in stale_refs.references, or the template characters in PATH_REF's guards,
    removed): a project that once had such a name would flag it."""
    assert references(text) == []


def test_real_paths_are_still_cited() -> None:
    """Catches: the placeholder rule eating real files (a.c, 1.2.3.tar.gz, foo.min.js)."""
    text = "See src/a.c, dist/1.2.3.tar.gz, lib/foo.min.js and lib/v1.2.3/x.py."
    assert [r.path for r in references(text)] == ["src/a.c", "dist/1.2.3.tar.gz", "lib/foo.min.js",
                                                  "lib/v1.2.3/x.py"]


def test_history_is_read_once_per_head(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches: `git log` over the whole history on every render or tick (broken: the memo in
    code_history.last_commits not kept): at one HEAD, a path asked again starts git only for HEAD; a
    new commit asks again."""
    from memstore.core import processes

    calls: list[str] = []
    real = processes.run_git

    def counting(cwd: Any, *args: str, **kw: Any) -> Any:
        calls.append(args[0])
        return real(cwd, *args, **kw)

    monkeypatch.setattr(processes, "run_git", counting)
    memo: dict[str, Any] = {}
    first = code_history.last_commits(str(project), ["src/exporter.py", "docs/never.py"], memo)
    assert list(first) == ["src/exporter.py"] and calls == ["rev-parse", "log"]
    calls.clear()
    assert code_history.last_commits(str(project), ["src/exporter.py", "docs/never.py"],
                                     memo) == first
    assert calls == ["rev-parse"]
    (project / "docs").mkdir()
    (project / "docs" / "never.py").write_text("y = 2\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "now it was")
    calls.clear()
    assert set(code_history.last_commits(str(project), ["src/exporter.py", "docs/never.py"],
                                         memo)) == {"src/exporter.py", "docs/never.py"}
    assert calls == ["rev-parse", "log"]


def test_an_unreadable_history_flags_nothing_and_says_why(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches: a history git cannot read (no git, a timeout, a repository git refuses) taken as
    "gone" (everything flagged) or as a traceback in the tick, or its empty answer cached so the
    next tick never asks again."""
    from memstore.core import processes

    def broken(cwd: Any, *args: str, **kw: Any) -> Any:
        raise OSError("no git here")

    monkeypatch.setattr(processes, "run_git", broken)
    rows = [("memory/project_a.md", str(project), "Export via src/exporter.py.")]
    cache: dict[str, Any] = {}
    unchecked: dict[str, str] = {}
    found = check_references(rows, {"proj": str(project)}, lambda path, ref: False, None, cache,
                             unchecked)
    assert found == [] and cache == {}
    assert "git history cannot be read: no git here" in unchecked[str(project)]
    monkeypatch.undo()
    found = check_references(rows, {"proj": str(project)}, lambda path, ref: False, None, cache,
                             unchecked)
    assert [(one.path, one.missing) for one in found] == [
        ("memory/project_a.md", ["src/exporter.py"])]


def test_a_project_with_no_commit_had_nothing(tmp_path: Path) -> None:
    """Catches: a fresh repository (no HEAD yet) read as an error, or its cited paths flagged."""
    repo = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    rows = [("memory/project_a.md", str(repo), "The plan: src/exporter.py.")]
    unchecked: dict[str, str] = {}
    assert check_references(rows, {"fresh": str(repo)}, lambda path, ref: False, None, {},
                            unchecked) == []
    assert unchecked == {}


def test_a_project_config_with_log_follow_still_has_its_history_read(project: Path) -> None:
    """Catches: `log.follow = true` in the project's .git/config making git abort on the one-path
    log memstore runs (a BUG in git's tree-diff), so the stale check was silently off for that
    project."""
    git(project, "config", "log.follow", "true")
    assert "src/exporter.py" in code_history.last_commits(str(project), ["src/exporter.py"], {})

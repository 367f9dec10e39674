"""Freshness through the command line, with real git repositories: supersede, forget, valid dates,
and references to code that is gone. Nothing is ever deleted."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest

from memstore import Store
from tests.helpers import git, memory, write

NOW = "2026-07-30T12:00:00Z"
LATER = "2026-07-31T12:00:00Z"  # the tick runs on another day: no file is "live" then


def ok(run, root: Path, *args: str) -> str:
    result = run(root, *args)
    assert result.exit_code == 0, result.output + result.stderr
    return result.stdout


def paths(run, root: Path, query: str, *extra: str) -> list[str]:
    return [hit["path"] for hit in json.loads(ok(run, root, "search", query, "--json", *extra))]


def index(root: Path) -> str:
    return (root / "memory" / "MEMORY.md").read_text()


@pytest.fixture
def three(root: Path, run) -> Path:
    for name, summary in (("feedback_export-csv", "The export writes CSV files"),
                          ("feedback_export-parquet", "The export writes parquet files"),
                          ("feedback_export-arrow", "The export writes arrow files")):
        write(root, f"memory/{name}.md", memory(name, summary, body="Notes on the export format."))
    ok(run, root, "render")
    return root


def test_supersede_steps_aside_keeps_the_file_and_a_chain_resolves(three: Path, run) -> None:
    """Failure caught: a superseded memory still in MEMORY.md or default search, or gone for good; a
    chain that does not lead to the memory that holds now; the frontmatter rewritten beyond the
    fields."""
    old = three / "memory" / "feedback_export-csv.md"
    before = old.read_bytes()
    ok(run, three, "supersede", "feedback_export-csv", "--by", "feedback_export-parquet")
    ok(run, three, "supersede", "feedback_export-parquet", "--by", "feedback_export-arrow")
    after = old.read_bytes()
    assert after.startswith(before.split(b"---\n")[0]) and b"Notes on the export format." in after
    assert b"status: superseded\n" in after and b"superseded_by: feedback_export-arrow" not in after
    # only fields added: every line of the file as it was is still there
    assert after.replace(b"status: superseded\nsuperseded_by: feedback_export-parquet\n", b"") \
        .count(b"\n") >= before.count(b"\n")
    for line in before.decode().splitlines():
        assert line in after.decode().splitlines(), line
    assert "feedback_export-csv" not in index(three) and \
        "feedback_export-parquet" not in index(three)
    assert "feedback_export-arrow" in index(three)
    assert paths(run, three, "export files") == ["memory/feedback_export-arrow.md"]
    assert set(paths(run, three, "export files", "--all")) == {f"memory/feedback_export-{x}.md"
                                                               for x in ("csv", "parquet", "arrow")}
    shown = json.loads(ok(run, three, "show", "feedback_export-csv", "--json"))
    assert shown["superseded_by"] == \
        ["feedback_export-parquet", "feedback_export-arrow"]  # to its end
    assert shown["aside"] == "superseded"
    newest = json.loads(ok(run, three, "show", "feedback_export-arrow", "--json"))
    assert newest["supersedes"] == ["feedback_export-parquet"] and newest["aside"] is None
    loop = run(three, "supersede", "feedback_export-arrow", "--by", "feedback_export-csv")
    assert loop.exit_code == 2 and "loop" in loop.stderr


def test_forget_moves_aside_with_why_and_search_all_finds_it(three: Path, run) -> None:
    """Failure caught: forget deleting the memory, losing its text, or leaving it in the index and
    search."""
    text = (three / "memory" / "feedback_export-csv.md").read_text()
    ok(run, three, "forget", "feedback_export-csv", "--why", "we export parquet now")
    assert not (three / "memory" / "feedback_export-csv.md").exists()
    kept = (three / "memory" / "archive" / "feedback_export-csv.md").read_text()
    assert 'forgotten_why: "we export parquet now"' in kept and text.split("---\n", 2)[2] in kept
    assert "feedback_export-csv" not in index(three)
    assert "memory/archive/feedback_export-csv.md" not in paths(run, three, "CSV files")
    assert "memory/archive/feedback_export-csv.md" in paths(run, three, "CSV files", "--all")
    empty = run(three, "forget", "feedback_export-parquet", "--why", "  ")
    assert empty.exit_code == 2 and (three / "memory" / "feedback_export-parquet.md").exists()


def test_valid_until_in_the_past_steps_aside_and_is_up_for_review(root: Path, run) -> None:
    """Failure caught: a memory past its valid_until still loaded and found as if it held."""
    write(root, "memory/reference_old-vpn.md", memory("reference_old-vpn", "The old VPN host",
                                                      valid_until="2026-06-30"))
    write(root, "memory/reference_new-vpn.md", memory("reference_new-vpn", "The new VPN host",
                                                      valid_until="2027-06-30"))
    ok(run, root, "render")
    assert "reference_old-vpn" not in index(root) and "reference_new-vpn" in index(root)
    assert paths(run, root, "VPN host") == ["memory/reference_new-vpn.md"]
    assert "memory/reference_old-vpn.md" in paths(run, root, "VPN host", "--all")
    ok(run, root, "--now", LATER, "tick")
    waiting = json.loads(ok(run, root, "review", "--json"))
    assert next(w["text"] for w in waiting
                if "reference_old-vpn" in " ".join(w["paths"])).startswith(
        "expired: memory/reference_old-vpn.md was valid until 2026-06-30")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = tmp_path / "proj"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "src" / "exporter.py").write_text("def export_rows():\n    pass\n")
    (repo / "src" / "reader.py").write_text("def read_rows():\n    pass\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return repo


def test_a_memory_citing_deleted_code_is_flagged_and_one_citing_live_code_is_not(
        root: Path, run, project: Path) -> None:
    """Failure caught: nothing noticing a memory about code that no longer exists (or a memory
    flagged whose references all resolve); a reference the person said is not stale flagged
    again."""
    # a project: value that is the work tree's absolute path, where a session was seen
    where = str(project)
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": where,
               "source": "startup"}
    assert run(root, "hook", input=json.dumps(payload)).exit_code == 0
    write(root, "memory/project_exporter.md", memory(
        "project_exporter", "Where the exporter lives", project=where,
        body="The entry point is `export_rows` in src/exporter.py:1."))
    write(root, "memory/project_reader.md", memory(
        "project_reader", "Where the reader lives", project=where,
        body="See `read_rows` in src/reader.py."))
    write(root, "memory/project_renamed.md", memory(
        "project_renamed", "A function that was renamed", project=where,
        body="Call `load_rows` in src/reader.py."))
    # found by a newcomer: a symbol only part of a word in the file, or of the file's name, is gone
    write(root, "memory/project_partial.md", memory(
        "project_partial", "A prefix of a name", project=where,
        body="Call `read` in src/reader.py."))
    ok(run, root, "--now", LATER, "tick")
    stale = json.loads((root / "runtime" / "state" / "stale.json").read_text())["stale"]
    # not in the file it names
    assert list(stale) == ["memory/project_partial.md", "memory/project_renamed.md"]
    assert stale["memory/project_renamed.md"] == ["`load_rows` in src/reader.py"]
    # `read_rows` is another name
    assert stale["memory/project_partial.md"] == ["`read` in src/reader.py"]

    (project / "src" / "exporter.py").unlink()
    git(project, "commit", "-qam", "drop the exporter")
    ok(run, root, "--now", LATER, "tick")
    stale = json.loads((root / "runtime" / "state" / "stale.json").read_text())["stale"]
    # named once, not per line or symbol
    assert stale["memory/project_exporter.md"] == ["src/exporter.py"]
    assert "memory/project_reader.md" not in stale
    shown = json.loads(ok(run, root, "show", "project_exporter", "--json"))
    assert shown["stale_references"] == ["src/exporter.py"]
    assert "project_exporter.md) (stale: src/exporter.py)" in index(root) or \
        "(stale: src/exporter.py)" in index(root)
    waiting = {w["text"]: w["id"] for w in json.loads(ok(run, root, "review", "--json"))}
    said = "stale-reference: memory/project_exporter.md cites src/exporter.py, no longer in " + \
        where + ", which had it"
    ident = next(ident for text, ident in waiting.items() if text.startswith(said))
    # "not stale": never flagged again (the library's answer; the CLI asks the person at a terminal)
    assert Store(root, dt.datetime.fromisoformat(NOW)).review_answer(
        ident, accept=False) is not None
    ok(run, root, "--now", LATER, "tick")
    stale = json.loads((root / "runtime" / "state" / "stale.json").read_text())["stale"]
    assert "memory/project_exporter.md" not in stale and "memory/project_renamed.md" in stale
    assert "memory/project_reader.md" not in stale  # `read_rows` in src/reader.py: there, whole


def test_the_project_of_a_session_is_found_where_the_hook_saw_it(
        root: Path, run, project: Path) -> None:
    """Failure caught: memories recorded under a project's remote name never checked (no way from
    the name to the code on this machine)."""
    git(project, "remote", "add", "origin", "git@github.com:me/proj.git")
    (project / "src" / "missing.py").write_text("x = 1\n")  # a file the project had, then lost
    git(project, "add", "-A")
    git(project, "commit", "-qm", "add missing.py")
    git(project, "rm", "-q", "src/missing.py")
    git(project, "commit", "-qm", "drop missing.py")
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(project),
               "source": "startup"}
    assert run(root, "hook", input=json.dumps(payload)).exit_code == 0
    known = json.loads((root / "runtime" / "state" / "worktrees.json").read_text())
    assert known == {"github.com/me/proj": str(project.resolve())}
    write(root, "memory/project_gone.md",
          memory("project_gone", "Cites a missing file", project="github.com/me/proj",
                 body="See src/missing.py for the details."))
    ok(run, root, "--now", LATER, "tick")
    stale = json.loads((root / "runtime" / "state" / "stale.json").read_text())["stale"]
    assert stale == {"memory/project_gone.md": ["src/missing.py"]}


def test_only_a_date_counts_as_a_valid_date(root: Path, run) -> None:
    """Failure caught: a `valid_until` that is no date (free text from a file) compared as a string,
    stepping a memory aside or carrying its text into the cue the nightly wake reads."""
    write(root, "memory/reference_odd.md", memory("reference_odd", "An odd date",
                                                  valid_until="\"0 <b>soon</b>\""))
    ok(run, root, "render")
    assert "reference_odd" in index(root)
    assert paths(run, root, "odd date") == ["memory/reference_odd.md"]
    ok(run, root, "--now", LATER, "tick")
    assert not [w for w in json.loads(ok(run, root, "review", "--json"))
                if "reference_odd" in " ".join(w["paths"])]


def test_a_project_named_by_a_local_remote_path_is_checked(tmp_path: Path) -> None:
    """Failure caught (issue 32's newcomer): a project whose git remote is a path on disk
    (`origin` = ~/remotes/alpha.git) is named by that absolute path; the tick took the name for a
    work tree no session was seen in and said so every night, never checking the project at all."""
    from memstore.mirror.stale_refs import worktree_of

    tree = tmp_path / "code" / "alpha"
    tree.mkdir(parents=True)
    name = str(tmp_path / "remotes" / "alpha")  # the project's name: its remote, a path
    assert worktree_of(name, {name: str(tree)}) == str(tree)
    # a path seen nowhere: none
    assert worktree_of(str(tmp_path / "elsewhere"), {name: str(tree)}) is None

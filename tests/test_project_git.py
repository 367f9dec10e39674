"""Reading a project never executes anything of it (issue 30, item 2). The stale-reference check
reads git's index file itself; the git processes memstore still starts (all in the agent root, or
the project's settings at install) run with every executing setting turned off. Real git
repositories whose .git/config names commands that write marker files: a test passes only when no
marker is written AND the check still did its work."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memstore.core.processes import run_git
from memstore.core.projects import UnreadableIndex, listing, read_index, read_inside
from tests.helpers import git, memory, write

# The test's own git runs whatever a repository's config names: with these, nothing (a config
# made hostile by make_hostile starts no program of the test's).
OFF = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=", "-c", "commit.gpgSign=false",
       "-c", "filter.x.clean=", "-c", "filter.x.smudge=")

LATER = "2026-07-31T12:00:00Z"
HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
         "post-index-change", "reference-transaction", "pre-auto-gc")


def make_hostile(repo: Path, marks: Path) -> None:
    """Every way a repository's config makes git start a program, each one writing marks/<its
    name>."""
    bin_dir = marks.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    hooks = marks.parent / "hooks"
    hooks.mkdir(exist_ok=True)

    def script(path: Path, name: str, tail: str = "") -> str:
        path.write_text(f"#!/bin/sh\ntouch '{marks / name}'\n{tail}")
        path.chmod(0o755)
        return str(path)

    for hook in HOOKS:
        script(hooks / hook, f"hook-{hook}", "exit 0\n")
    config = {
        "core.fsmonitor": script(bin_dir / "fsmonitor", "fsmonitor", "exit 1\n"),
        "core.hooksPath": str(hooks),
        "core.pager": script(bin_dir / "pager", "pager", "cat\n"),
        "core.editor": script(bin_dir / "editor", "editor"),
        "filter.x.clean": script(bin_dir / "clean", "filter-clean", "cat\n"),
        "filter.x.smudge": script(bin_dir / "smudge", "filter-smudge", "cat\n"),
        "filter.x.required": "true",
        "alias.ls-files": f"!touch '{marks / 'alias-ls-files'}'",
        "alias.st": f"!touch '{marks / 'alias-st'}'",
        "commit.gpgSign": "true",
        "gpg.program": script(bin_dir / "gpg", "gpg", "exit 1\n"),
        "diff.external": script(bin_dir / "diff", "diff-external"),
    }
    for key, value in config.items():
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    (repo / ".gitattributes").write_text("* filter=x\n")


def no_marks(marks: Path) -> None:
    assert sorted(p.name for p in marks.iterdir()) == [], "a command the repository chose ran"


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    folder = tmp_path / "evil" / "marks"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def hostile(tmp_path: Path, marks: Path) -> Path:
    """A project whose src/exporter.py was deleted and committed, src/reader.py live, its config
    hostile."""
    repo = tmp_path / "hostile"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "src" / "exporter.py").write_text("def export_rows():\n    pass\n")
    (repo / "src" / "reader.py").write_text("def read_rows():\n    pass\n")
    git(repo, *OFF, "add", "-A")
    git(repo, *OFF, "commit", "-qm", "init")
    git(repo, *OFF, "rm", "-q", "src/exporter.py")
    git(repo, *OFF, "commit", "-qm", "drop the exporter")
    git(repo, *OFF, "remote", "add", "origin", "git@github.com:me/hostile.git")
    make_hostile(repo, marks)
    # stat data differs from the index: git would look again (and filter)
    (repo / "src" / "reader.py").touch()
    return repo


def ok(run, root: Path, *args: str, input: str | None = None):
    result = run(root, *args, input=input)
    assert result.exit_code == 0, result.output + result.stderr
    assert "Traceback" not in result.output + result.stderr
    return result


def session_in(run, root: Path, folder: Path) -> None:
    payload = {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(folder),
               "source": "startup"}
    ok(run, root, "hook", input=json.dumps(payload))


def stale(root: Path) -> dict[str, list[str]]:
    return json.loads((root / "runtime" / "state" / "stale.json").read_text())["stale"]


def test_the_tick_runs_nothing_a_project_chose_and_still_finds_stale_code(
        root: Path, run, hostile: Path, marks: Path) -> None:
    """Failure caught: the stale check running git in the project (core.fsmonitor, hooks, filters,
    an alias or pager run from cron), by either route to the work tree; or a check that stopped
    working (the deleted-and-committed path no longer flagged, or the live one flagged)."""
    session_in(run, root, hostile)  # the SessionStart hook records where the project's sessions run
    assert json.loads((root / "runtime" / "state" / "worktrees.json").read_text()) == {
        "github.com/me/hostile": str(hostile.resolve())}
    for name, project in (("by-path", str(hostile)), ("by-name", "github.com/me/hostile")):
        write(root, f"memory/project_{name}.md", memory(
            f"project_{name}", "Where the code lives", project=project,
            body="The exporter was `export_rows` in src/exporter.py:1.\n"
                 "The reader is `read_rows` in src/reader.py."))
    write(root, "memory/project_renamed.md", memory(
        "project_renamed", "A renamed function", project="github.com/me/hostile",
        body="Call `load_rows` in src/reader.py."))
    ok(run, root, "--now", LATER, "tick")
    assert stale(root) == {"memory/project_by-name.md": ["src/exporter.py"],
                           "memory/project_by-path.md": ["src/exporter.py"],
                           "memory/project_renamed.md": ["`load_rows` in src/reader.py"]}
    for reader in (("render",), ("show", "project_by-path"), ("status",), ("lint",)):
        ok(run, root, "--now", LATER, *reader)
    no_marks(marks)


def test_an_absolute_project_path_no_session_was_seen_in_is_not_read(root: Path, run, hostile: Path,
                                                                      marks: Path) -> None:
    """Failure caught: any absolute folder a memory's frontmatter names being read (and, before, git
    run there) when no session ever started in it; the person not told why it went unchecked."""
    write(root, "memory/project_elsewhere.md", memory(
        "project_elsewhere", "Cites a deleted file", project=str(hostile),
        body="See src/exporter.py."))
    told = ok(run, root, "--now", LATER, "tick")
    assert stale(root) == {}
    assert f"stale references of {hostile} not checked tonight: no session was seen" in told.stderr
    no_marks(marks)
    session_in(run, root, hostile)  # once a session was seen there, the same memory is checked
    ok(run, root, "--now", LATER, "tick")
    assert stale(root) == {"memory/project_elsewhere.md": ["src/exporter.py"]}
    no_marks(marks)


@pytest.mark.parametrize("damage",
                         ["truncated", "garbage", "bad-checksum", "empty", "huge-count", "fifo"])
def test_a_damaged_index_means_not_checked_tonight_never_a_traceback(
        root: Path, run, hostile: Path, marks: Path, damage: str) -> None:
    """Failure caught: a torn or hostile .git/index ending the tick in a traceback (every night),
    read as if whole (stale flags from half a list), or (a FIFO in its place) hanging the tick."""
    session_in(run, root, hostile)
    write(root, "memory/project_x.md",
          memory("project_x", "Cites code", project="github.com/me/hostile",
                 body="See src/reader.py and src/exporter.py."))
    index = hostile / ".git" / "index"
    data = index.read_bytes()
    if damage == "fifo":
        index.unlink()
        os.mkfifo(index)
    else:
        index.write_bytes({"truncated": data[: len(data) // 2], "garbage": os.urandom(len(data)),
                           "bad-checksum": data[:-1] + bytes([data[-1] ^ 1]), "empty": b"",
                           "huge-count": data[:8] + b"\xff\xff\xff\xff" + data[12:]}[damage])
    told = ok(run, root, "--now", LATER, "tick")
    assert stale(root) == {}
    assert ("stale references of github.com/me/hostile not checked tonight: its git "
            "index cannot be read" in told.stderr)
    no_marks(marks)


def _entries(repo: Path) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "ls-files", "-s", "-z"], check=True,
                          capture_output=True).stdout


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_index_versions_2_3_4_read_as_git_lists_them(tmp_path: Path, object_format: str) -> None:
    """Failure caught: a reader that knows only version 2 (v3's extended flags from skip-worktree
    and intent-to-add, v4's prefix-compressed paths), a path longer than the 12-bit length field, a
    conflicted file's stages, or a SHA-256 repository's 32-byte ids: every entry must come out as
    `git ls-files -s` prints it."""
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", f"--object-format={object_format}", str(repo)], check=True)
    for rel in ("a.txt", "src/pkg/mod.py", "src/pkg/mod2.py", "src/pkg/sub/deep.py", "src/z.py",
                "é/名.txt"):
        write(repo, rel, rel)
    git(repo, *OFF, "add", "-A")
    blob = git(repo, *OFF, "hash-object", "-w", "a.txt").strip()
    # 4,400 bytes: more than the 12-bit name length holds
    long = "/".join(["d" * 200] * 22) + "/f.txt"
    git(repo, *OFF, "update-index", "--add", "--cacheinfo", f"100644,{blob},{long}")
    git(repo, *OFF, "update-index", "--index-version", "2")
    assert (repo / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\2"
    assert listing(read_index(str(repo))) == _entries(repo)
    write(repo, "ita.txt", "later")
    git(repo, *OFF, "add", "-N", "ita.txt")  # intent to add: an extended flag
    git(repo, *OFF, "update-index", "--skip-worktree", "src/z.py")  # skip-worktree: another one
    for version in (3, 4):
        git(repo, *OFF, "update-index", "--index-version", str(version))
        assert (repo / ".git" / "index").read_bytes()[4:8] == bytes([0, 0, 0, version])
        entries = read_index(str(repo))
        assert listing(entries) == _entries(repo), version
        assert long.encode() in {name for *_, name in entries} and len(entries) == 8
    # a conflict: stages 1-3 of one path
    stages = "".join(f"100644 {blob} {n}\tconflict.txt\n" for n in (1, 2, 3))
    subprocess.run(["git", "-C", str(repo), "update-index", "--index-info"], input=stages.encode(),
                   check=True)
    assert listing(read_index(str(repo))) == _entries(repo)


def test_a_worktree_and_a_submodule_are_read_through_their_git_file(tmp_path: Path) -> None:
    """Failure caught: a `.git` file (a linked worktree, a submodule) not followed to its own index,
    or the main work tree's index read in its place."""
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    write(main, "one.py", "1")
    git(main, *OFF, "add", "-A")
    git(main, *OFF, "commit", "-qm", "one")
    linked = tmp_path / "linked"
    git(main, *OFF, "worktree", "add", "-q", str(linked))
    write(linked, "two.py", "2")
    git(linked, *OFF, "add", "two.py")
    assert (linked / ".git").is_file()
    assert [e[3] for e in read_index(str(linked))] == [b"one.py", b"two.py"]
    assert [e[3] for e in read_index(str(main))] == [b"one.py"]
    lib = tmp_path / "lib"
    subprocess.run(["git", "init", "-q", str(lib)], check=True)
    write(lib, "lib.py", "l")
    git(lib, *OFF, "add", "-A")
    git(lib, *OFF, "commit", "-qm", "lib")
    git(main, *OFF, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib),
        "vendor/lib")
    assert (main / "vendor" / "lib" / ".git").is_file()
    assert listing(read_index(str(main / "vendor" / "lib"))) == _entries(main / "vendor" / "lib")
    # entries that are deltas of another file: said, not misread
    git(main, *OFF, "update-index", "--split-index")
    with pytest.raises(UnreadableIndex, match="split index"):
        read_index(str(main))


def test_a_cited_file_is_read_through_no_symlink(tmp_path: Path, root: Path, run) -> None:
    """Failure caught: the symbol check following a tracked symlink, or a folder swapped for a
    symlink, out of the work tree (reading, and telling through stale marks, what is in a file
    elsewhere)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("nothing here\n")
    repo = tmp_path / "proj"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "src" / "link.py").symlink_to(outside / "secret.py")
    (repo / "lib").mkdir()
    (repo / "lib" / "real.py").write_text("def real_fn():\n    pass\n")
    git(repo, *OFF, "add", "-A")
    git(repo, *OFF, "commit", "-qm", "init")
    assert read_inside(str(repo), "lib/real.py") == b"def real_fn():\n    pass\n"
    (repo / "lib" / "real.py").unlink()
    (repo / "lib").rmdir()
    (repo / "lib").symlink_to(outside)  # the tracked folder, swapped in the work tree
    (outside / "real.py").write_text("nothing here either\n")
    assert (read_inside(str(repo), "src/link.py") is None
            and read_inside(str(repo), "lib/real.py") is None)
    os.mkfifo(repo / "fifo.py")
    assert read_inside(str(repo), "fifo.py") is None  # and a FIFO does not hang the tick
    session_in(run, root, repo)
    write(root, "memory/project_links.md", memory(
        "project_links", "Symbols", project=str(repo),
        body="`secret_fn` in src/link.py.\n`real_fn` in lib/real.py."))
    ok(run, root, "--now", LATER, "tick")
    # neither file outside was read, so neither symbol was found missing there
    assert stale(root) == {}


def test_the_git_memstore_runs_in_a_hostile_root_runs_none_of_it(root: Path, run, marks: Path,
                                                                 private_home: Path) -> None:
    """Failure caught: `tick --commit` (and status's journal check, install's git checks) starting
    the hooks, filters, fsmonitor, signing program or editor an agent root's .git/config names; or
    the commit no longer the person's (their identity in ~/.gitconfig, which is otherwise not
    read)."""
    from memstore.wiring import claude_code

    (private_home / ".gitconfig").write_text(
        "[user]\n\tname = The Person\n\temail = person@example.invalid\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write(root, "memory/feedback_a.md", memory("feedback_a", "A memory"))
    ok(run, root, "render")  # MEMORY.md tracked: the next tick has a file to commit
    git(root, *OFF, "add", "-A")
    git(root, *OFF, "commit", "-qm", "start")
    make_hostile(root, marks)
    write(root, "memory/feedback_b.md", memory("feedback_b", "Another memory"))  # MEMORY.md changes
    ticked = ok(run, root, "--now", LATER, "tick", "--commit", "--json")
    assert json.loads(ticked.stdout)["committed"].startswith("committed "), ticked.stdout
    log = git(root, *OFF, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%s")
    assert log.startswith(
        "The Person <person@example.invalid>|The Person <person@example.invalid>|memstore tick")
    ok(run, root, "--now", LATER, "status")
    assert claude_code.git_tracks(root / "memory" / "feedback_a.md") is True
    assert claude_code.git_ignores(root / "memory" / "feedback_a.md") is False
    assert claude_code.git_toplevel(root / "memory") == root.resolve()
    assert run_git(root, "ls-files", "-s").returncode == 0
    no_marks(marks)


def test_a_fifo_where_git_keeps_a_file_blocks_nothing(tmp_path: Path) -> None:
    """Failure caught: the SessionStart hook (which names the project from .git and its config) or
    the index reader waiting for ever on a FIFO a project put where git keeps a file."""
    import signal

    from memstore.core.projects import locate

    folder = tmp_path / "odd"
    folder.mkdir()
    os.mkfifo(folder / ".git")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".git" / "config").unlink()
    os.mkfifo(repo / ".git" / "config")
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("blocked on a FIFO"))
    signal.alarm(5)
    try:
        assert locate(str(folder)) == ("odd", str(folder.resolve()))
        assert locate(str(repo)) == ("repo", str(repo.resolve()))
        assert read_index(str(repo)) == []  # no index yet; its config (a FIFO) read as no config
        with pytest.raises(UnreadableIndex):
            read_index(str(folder))
    finally:
        signal.alarm(0)

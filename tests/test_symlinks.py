"""Links out of the agent root's folders, and files that are not regular files.

git carries symlinks, so a pull can plant `memory/feedback_x.md -> /etc/passwd`. Such a
file is never read into the mirror, an index, a bundle, a prompt or a search result;
`memstore lint` names it. A link that stays inside memory/ is skipped too (its target is
read under its own name; the same text under two names would show twice). A FIFO or a
device in memory/ is skipped without being opened: opening a FIFO blocks.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memstore.api.store import Store
from tests.helpers import NOW, memory, write

pytestmark = pytest.mark.skipif(sys.platform == "win32",
                                reason="symlinks and FIFOs need a POSIX system")

TOKEN = "ZQXSECRETTOKEN"
TODAY = "260730"  # NOW's date, so short-term facts are inside their window
SECRET = (f"---\nname: feedback_x\nsummary: {TOKEN} summary\nstatus: open\n---\n"
          f"- {TOKEN} in flight\n\n{TOKEN} body words\n")
LENS = f"---\ntype: lens\ntrigger:\n  tool_match: .*\n---\n{TOKEN} lens rule\n"
MEDITATION = f"---\ntype: meditation\nshelf: awareness\ncadence_weight: 1\n---\n{TOKEN} object\n"

# link (root-relative) -> the file or folder outside the root it points at (relative to `outside`)
LINKS = {
    "memory/feedback_x.md": "secret.md",
    f"memory/short-term/{TODAY}-leak.md": "secret.md",
    "memory/dream-journal/260729-leak.md": "secret.md",
    "memory/bugs/0099-leak.md": "secret.md",
    "lenses/leak.md": "lens.md",
    "meditations/leak.md": "meditation.md",
    "memory/linked-dir": "folder",
    "memory/short-term/linked-dir": "folder",
    "memory/dream-journal/linked-dir": "folder",
}


def init_root(run: Callable[..., Result], tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    result = run(None, "init", str(root), "--apply")
    assert result.exit_code == 0, result.output + result.stderr
    return root


def plant_outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    write(outside, "secret.md", SECRET)
    write(outside, "lens.md", LENS)
    write(outside, "meditation.md", MEDITATION)
    write(outside, "folder/feedback_y.md", SECRET)
    write(outside, f"folder/{TODAY}-fact.md", SECRET)
    write(outside, "folder/260729-dream.md", SECRET)
    return outside


@pytest.fixture
def planted(run: Callable[..., Result], tmp_path: Path) -> Path:
    """An agent root made by `memstore init`, one honest memory, and every kind of link out."""
    root = init_root(run, tmp_path)
    outside = plant_outside(tmp_path)
    write(root, "memory/feedback_honest.md",
          memory("feedback_honest", "an honest memory", body="plain words"))
    for rel, target in LINKS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(outside / target, root / rel)
    return root


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output + result.stderr
    return result.stdout


def test_links_out_reach_no_bundle_index_search_or_rendered_file(
        planted: Path, run: Callable[..., Result]) -> None:
    """Failure caught: a link out of memory/ (or lenses/, meditations/) was indexed, so its
    target's text came back in search snippets, the MEMORY.md row and the SessionStart bundle."""
    root = planted
    # The bundle first: it reads the files directly, with or without a mirror.
    assert TOKEN not in ok(run(root, "context"))
    ok(run(root, "sync"))
    for query in (TOKEN, "body words", "flight"):
        assert TOKEN not in ok(run(root, "search", query, "--json")), query
        assert TOKEN not in ok(run(root, "search", query)), query
    assert json.loads(ok(run(root, "search", TOKEN, "--json"))) == []
    store = Store(root, now=dt.datetime(2026, 7, 30, 12, tzinfo=dt.UTC))
    assert store.search(TOKEN) == []  # what the MCP server's search tool calls
    ok(run(root, "render"))
    for rel in ("memory/MEMORY.md", "memory/MEMORY-archive.md", "memory/current-state.md"):
        text = (root / rel).read_text(encoding="utf-8")
        assert TOKEN not in text and "feedback_x" not in text and "feedback_y" not in text, rel
    assert TOKEN not in ok(run(root, "context"))
    assert TOKEN not in ok(run(root, "bug", "list", "--json"))
    assert TOKEN not in ok(run(root, "list", "--json"))
    status = json.loads(ok(run(root, "status", "--json")))
    # init's own, not leak.md
    assert status["kinds"]["lens"] == 1 and status["kinds"]["meditation"] == 4

    # The nightly passes read files on their own: the meditation shelf, dream facts and named files.
    from memstore.life import meditation, wake

    objects, skipped, _notes = meditation.load_objects(root)
    assert "meditations/leak.md" not in [o.path for o in objects] + [s["path"] for s in skipped]
    assert all(TOKEN not in o.text for o in objects)
    assert all(TOKEN not in sit.path for sit in meditation.load_sits(root))
    facts = wake.recent_facts(root, dt.date(2026, 7, 30), 7)
    assert facts == [] and TOKEN not in repr(facts)
    named = wake.named_files(root,
                             [{"paths": ["memory/feedback_x.md", "memory/linked-dir/feedback_y.md",
                                         "memory/feedback_honest.md"]}])
    assert [rel for rel, _ in named] == ["memory/feedback_honest.md"]


def test_lint_names_every_link_and_where_it_points(
        planted: Path, run: Callable[..., Result]) -> None:
    """Failure caught: a planted link was silent; lint said nothing about it."""
    root = planted
    ok(run(root, "sync"))
    found = json.loads(run(root, "lint", "--json").stdout)
    by_path = {item["path"]: item for item in found}
    for rel, target in LINKS.items():
        assert rel in by_path, rel
        item = by_path[rel]
        assert item["level"] == "error", item
        assert ("symlink" in item["message"]
                and str(root.parent / "outside" / target) in item["message"]), item
    text = run(root, "lint").stdout
    for rel in LINKS:
        assert f"{rel}: error: symlink" in text, rel


def test_linked_folders_are_not_read(run: Callable[..., Result], tmp_path: Path) -> None:
    """Failure caught: the bundle, the bug list and the meditation shelf listed a folder that
    a pull had replaced by a link out (memory/bugs -> elsewhere), which the sync walk never
    enters."""
    from memstore.life import meditation, wake

    root = init_root(run, tmp_path)
    outside = plant_outside(tmp_path)
    linked = {"memory/short-term": outside / "folder", "memory/dream-journal": outside / "folder",
              "memory/bugs": outside / "folder", "meditations": outside}
    for rel, target in linked.items():
        (root / rel).rename(root / f"{rel}-was")
        os.symlink(target, root / rel)
    assert TOKEN not in ok(run(root, "context"))
    assert TOKEN not in run(root, "bug", "list", "--json").stdout
    objects, skipped, _notes = meditation.load_objects(root)
    assert objects == [] and skipped == []
    assert (meditation.load_sits(root) == []
            and wake.recent_facts(root, dt.date(2026, 7, 30), 7) == [])
    ok(run(root, "sync"))
    assert json.loads(ok(run(root, "search", TOKEN, "--json"))) == []
    found = {item["path"]: item for item in json.loads(run(root, "lint", "--json").stdout)}
    for rel in linked:
        assert found[rel]["level"] == "error" and "symlink leaving" in found[rel]["message"], rel


def test_regular_file_becoming_a_link_leaves_the_mirror(
        run: Callable[..., Result], tmp_path: Path) -> None:
    """Failure caught: a file indexed while regular, then replaced by a link out (a pull),
    kept being indexed, now with the target's text (full sync and search's quick sync)."""
    root = init_root(run, tmp_path)
    outside = plant_outside(tmp_path)
    for name in ("feedback_full", "feedback_quick"):
        write(root, f"memory/{name}.md",
              memory(name, f"ordinary {name[9:]}", body="ordinary words"))
    ok(run(root, "sync"))
    assert {hit["path"] for hit in json.loads(ok(run(root, "search", "ordinary", "--json")))} == {
        "memory/feedback_full.md", "memory/feedback_quick.md"}

    # Only a search (its quick sync) runs after this one is swapped.
    (root / "memory/feedback_quick.md").unlink()
    os.symlink(outside / "secret.md", root / "memory/feedback_quick.md")
    out = ok(run(root, "search", TOKEN, "--json"))
    assert TOKEN not in out and json.loads(out) == []
    hits = json.loads(ok(run(root, "search", "ordinary", "--json")))
    assert [hit["path"] for hit in hits] == ["memory/feedback_full.md"]

    # A full sync after this one is swapped.
    (root / "memory/feedback_full.md").unlink()
    os.symlink(outside / "secret.md", root / "memory/feedback_full.md")
    ok(run(root, "sync"))
    assert json.loads(ok(run(root, "search", "ordinary", "--json"))) == []
    assert json.loads(ok(run(root, "search", TOKEN, "--json"))) == []
    ok(run(root, "render"))
    assert TOKEN not in (root / "memory/MEMORY.md").read_text(encoding="utf-8")
    assert "feedback_full" not in (root / "memory/MEMORY.md").read_text(encoding="utf-8")


def test_link_inside_memory_is_skipped_and_named(
        run: Callable[..., Result], tmp_path: Path) -> None:
    """A link that stays in memory/ is not indexed: its target is, under its own name (no double
    hits)."""
    root = init_root(run, tmp_path)
    write(root, "memory/feedback_real.md",
          memory("feedback_real", "the real one", body="walrus words"))
    os.symlink(root / "memory/feedback_real.md", root / "memory/feedback_alias.md")
    os.symlink("../feedback_real.md", root / "memory/short-term/260730-alias.md")
    ok(run(root, "sync"))
    hits = json.loads(ok(run(root, "search", "walrus", "--json")))
    assert [hit["path"] for hit in hits] == ["memory/feedback_real.md"]
    found = {item["path"]: item for item in json.loads(run(root, "lint", "--json").stdout)}
    assert found["memory/feedback_alias.md"]["level"] == "warning"
    assert "memory/feedback_real.md" in found["memory/feedback_alias.md"]["message"]
    assert "memory/short-term/260730-alias.md" in found
    from memstore.life import wake

    named = wake.named_files(root,
                             [{"paths": ["memory/feedback_alias.md", "memory/feedback_real.md"]}])
    assert [rel for rel, _ in named] == ["memory/feedback_real.md"]


def test_identity_and_derived_files_linked_out_are_not_imported(
        run: Callable[..., Result], tmp_path: Path) -> None:
    """The SessionStart imports (identity.md, MEMORY.md) and the in-flight list refuse a link
    out."""
    from memstore.hook.session_imports import imports_text

    root = init_root(run, tmp_path)
    outside = plant_outside(tmp_path)
    for rel in ("identity.md", "memory/MEMORY.md", "memory/current-state.md"):
        (root / rel).unlink(missing_ok=True)
        os.symlink(outside / "secret.md", root / rel)
    assert TOKEN not in imports_text(root)
    assert TOKEN not in ok(run(root, "context"))


def test_fifo_and_device_in_memory_do_not_hang(run: Callable[..., Result], tmp_path: Path) -> None:
    """Failure caught: sync (and the bundle, bug list) opened a FIFO named like a memory and blocked
    forever."""
    root = init_root(run, tmp_path)
    write(root, "memory/feedback_real.md",
          memory("feedback_real", "the real one", body="walrus words"))
    for rel in ("memory/feedback_fifo.md", f"memory/short-term/{TODAY}-fifo.md",
                "memory/bugs/0098-fifo.md",
                "memory/dream-journal/260729-fifo.md", "lenses/fifo.md", "meditations/fifo.md"):
        os.mkfifo(root / rel)
    if os.path.exists("/dev/zero"):
        os.symlink("/dev/zero", root / "memory/feedback_zero.md")
    exe = [sys.executable, "-m", "memstore", "--root", str(root), "--now", NOW]
    for args in (["sync"], ["context"], ["search", "walrus", "--json"], ["bug", "list"], ["render"],
                 ["meditate", "--next", "--json"], ["lint", "--json"],
                 ["init", str(root), "--apply"]):
        done = subprocess.run([*exe, *args], capture_output=True, text=True, timeout=30)
        assert done.returncode == (1 if args[0] == "lint" else 0), (args, done.stdout, done.stderr)
    nightly = ("import datetime as dt, sys; from pathlib import Path; from memstore.life import "
               "meditation, wake; root = Path(sys.argv[1]); meditation.load_objects(root); "
               "meditation.load_sits(root); wake.recent_facts(root, dt.date(2026, 7, 30), 7)")
    done = subprocess.run([sys.executable, "-c", nightly, str(root)], capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    lint = json.loads(
        subprocess.run([*exe, "lint", "--json"], capture_output=True, text=True, timeout=30).stdout)
    assert "memory/feedback_fifo.md" in {item["path"] for item in lint}
    hits = json.loads(
        subprocess.run([*exe, "search", "walrus", "--json"], capture_output=True, text=True,
                       timeout=30).stdout)
    assert [hit["path"] for hit in hits] == ["memory/feedback_real.md"]


def test_init_again_does_not_copy_a_link_target_into_memory(
        planted: Path, run: Callable[..., Result]) -> None:
    """Failure caught: `init --apply` over an existing root normalised memory/feedback_x.md, writing
    the link's target (with frontmatter added) into memory/ as a regular file."""
    ok(run(None, "init", str(planted), "--apply"))
    assert (planted / "memory/feedback_x.md").is_symlink()


def test_file_swapped_for_a_link_after_the_walk_is_not_read(
        run: Callable[..., Result], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught: sync read the file the walk had listed by following whatever the name
    was by then, so a link (or FIFO) swapped in between was read (or blocked the sync)."""
    import memstore.mirror.sync
    from memstore.core.config import load_config

    root = init_root(run, tmp_path)
    outside = plant_outside(tmp_path)
    write(root, "memory/feedback_swap.md", memory("feedback_swap", "ordinary swap"))
    write(root, "memory/feedback_fifo.md", memory("feedback_fifo", "ordinary fifo"))
    tree = memstore.mirror.sync.walk(root)  # what the walk saw: two regular files
    (root / "memory/feedback_swap.md").unlink()
    os.symlink(outside / "secret.md", root / "memory/feedback_swap.md")
    (root / "memory/feedback_fifo.md").unlink()
    os.mkfifo(root / "memory/feedback_fifo.md")
    monkeypatch.setattr(memstore.mirror.sync, "walk", lambda *_args, **_kw: tree)

    def hung(*_args: object) -> None:
        raise TimeoutError("sync blocked opening a FIFO")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    try:
        report = memstore.mirror.sync.sync(root, load_config(root))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert {"memory/feedback_swap.md", "memory/feedback_fifo.md"} <= set(report.unreadable)
    monkeypatch.undo()
    assert json.loads(ok(run(root, "search", TOKEN, "--json"))) == []

"""Freshness section: what the nightly tick's stale-reference check costs, side by side.

Two copies of one 10k-memory corpus, and a git project of 50k tracked files. In copy A every
memory belongs to that project (`project:` its absolute path) and cites two of its files, a
symbol in one of them, and (for a tenth of the memories) a file that is gone; in copy B the same
memories carry no project, so the check finds nothing to do. `memstore tick` (the CLI, a whole
process, on a later day so no file counts as live) runs on A and B alternately; the goal is that A
takes under 10% longer than B.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import time
from pathlib import Path

from memstore_devtools.bench.common import (
    Bench,
    Goal,
    Outcome,
    fmt_n,
    fmt_s,
    log,
    md_table,
    median,
    text_table,
)

MEMORIES = 10_000
PROJECT_FILES = 50_000
QUICK_MEMORIES, QUICK_FILES = 1_000, 5_000
GOAL = 1.10
LATER = "2026-08-02T12:00:00Z"
_FRONT = re.compile(r"^---\n", re.M)


def _project(folder: Path, files: int) -> list[str]:
    """A git work tree of `files` tracked files (one commit), and their paths."""
    if (folder / ".git").is_dir() and (folder / ".bench-files").read_text() == str(files):
        return (folder / ".bench-list").read_text().splitlines()
    shutil.rmtree(folder, ignore_errors=True)
    rels = [f"src/pkg{i // 500:03d}/mod_{i:05d}.py" for i in range(files)]
    for rel in rels:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def func_{rel[-8:-3]}():\n    return 1\n")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(folder), "-c", "user.email=b@e", "-c", "user.name=b",
                    "commit", "-qm", "x"], check=True)
    (folder / ".bench-files").write_text(str(files))
    (folder / ".bench-list").write_text("\n".join(rels))
    return rels


def _cite(root: Path, project: Path, rels: list[str], with_project: bool) -> None:
    """Give every T2 memory a project and citations (copy A),
    or the same text with no project (B)."""
    rng = random.Random(7)
    for path in sorted((root / "memory").glob("*_*.md")):
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            continue
        a, b = rng.sample(rels, 2)
        gone = rng.random() < 0.1
        line = (f"\nCode: {a}, and `func_{b[-8:-3]}` in {b}"
                + (f"; also src/removed/{path.stem[:20]}.py" if gone else "") + ".\n")
        head = f"---\nproject: {project}\n" if with_project else "---\n"
        path.write_text(_FRONT.sub(head, text, count=1) + line, encoding="utf-8")


def _seen(root: Path, project: Path) -> None:
    """Record the project's work tree as the SessionStart hook does: an absolute `project:` is
    checked only for a folder a session was seen in."""
    from memstore.core.agent_root import state_dir
    from memstore.core.projects import locate, remember_worktree

    name, top = locate(str(project))
    remember_worktree(state_dir(root), name, top)


def _list_times(project: Path, reps: int) -> tuple[float, float]:
    """Medians (s) of reading the project's tracked files: memstore's index reader, and the
    `git ls-files -s -z` process (with its output parsed as the check did) that it replaced."""
    from memstore.mirror.stale_refs import tracked_files

    new, old = [], []
    for _ in range(reps):
        start = time.perf_counter()
        tracked_files(str(project))
        new.append(time.perf_counter() - start)
        start = time.perf_counter()
        out = subprocess.run(["git", "-C", str(project), "ls-files", "-s", "-z"],
                             capture_output=True, check=True).stdout
        {entry.partition("\t")[2] for entry in out.decode("utf-8", "replace").split("\0")}
        old.append(time.perf_counter() - start)
    return median(new), median(old)


def section_freshness(b: Bench) -> Outcome:
    memories, files = (QUICK_MEMORIES, QUICK_FILES) if b.quick else (MEMORIES, PROJECT_FILES)
    reps = 3
    log(f"freshness: a git project of {fmt_n(files)} files")
    project = b.workdir / f"fresh-project-{files}"
    rels = _project(project, files)
    source = b.corpus(memories)
    copies = {}
    for label, with_project in (("A", True), ("B", False)):
        root = b.workdir / f"fresh-{label}-{memories}"
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("runtime"))
        _cite(root, project, rels, with_project)
        _seen(root, project)
        b.cli(root, "--now", LATER, "sync", "--quiet")
        # the first tick flushes and renders; the timed ones are steady
        b.cli(root, "--now", LATER, "tick")
        copies[label] = root
    times: dict[str, list[float]] = {"A": [], "B": [], "cold": []}
    cache = copies["A"] / "runtime" / "state" / "stale-cache.json"
    for _ in range(reps):
        for label in ("A", "B", "cold"):
            # as after a commit in the project or an edit of the memories: checked again
            if label == "cold":
                cache.unlink(missing_ok=True)
            times[label].append(b.cli(copies["A" if label == "cold" else label], "--now", LATER,
                                      "tick").seconds)
    stale = (copies["A"] / "runtime" / "state" / "stale.json").read_text()
    flagged = stale.count('"memory/')
    a, bb, cold = median(times["A"]), median(times["B"]), median(times["cold"])
    index_s, git_s = _list_times(project, 15)
    ratio = a / bb
    headers = ["memories", "project files", "tick, no project (B)", "tick, A, nothing changed",
               "A / B", "tick, A, checked again", "checked again / B", "memories flagged"]
    rows = [[fmt_n(memories), fmt_n(files), fmt_s(bb), fmt_s(a), f"{ratio:.3f}x", fmt_s(cold),
             f"{cold / bb:.3f}x", str(flagged)]]
    list_headers = ["project files", "index reader", "`git ls-files -s -z`", "reader / git"]
    list_rows = [[fmt_n(files), fmt_s(index_s), fmt_s(git_s), f"{index_s / git_s:.2f}x"]]
    intro = (f"`memstore tick` through the CLI (medians of {reps}, A and B alternating). A: every "
             "memory belongs to the project (its absolute path) and cites two of its files and a "
             "symbol, a tenth also a file that is gone; B: the same memories, no project. A night "
             "on which neither the project (its index entries) nor the memories changed reuses the "
             "last findings: one read of the project's index. After a change every memory of that "
             "project is checked again (its text parsed, each file a symbol names read): the "
             "'checked again' column, with the cache removed before each of those ticks. The "
             "project's file list comes from its git index, read by memstore (no git process: "
             "nothing the project's config names runs); the second table sets that read (medians "
             "of 15, in-process) beside the `git ls-files -s -z` process it replaced.")
    goal = Goal(f"the reference check at {fmt_n(memories)} memories over {fmt_n(files)} files "
                f"adds under {GOAL - 1:.0%} to a tick",
                f"{ratio:.3f}x (after a change: {cold / bb:.3f}x)", ratio < GOAL,
                "a night with nothing changed; after a change the check costs more (see the table)")
    return Outcome(text=(intro + "\n" + text_table(headers, rows) + "\n"
                         + text_table(list_headers, list_rows)),
                   markdown=(intro + "\n\n" + md_table(headers, rows) + "\n\n"
                             + md_table(list_headers, list_rows)),
                   goals=[goal])

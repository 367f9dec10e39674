"""A synthetic team repository for benchmarks:
many people's history of topic memories, lenses, a bare remote.

`build_team` writes the T2 files of a seed-8 corpus (memstore_devtools.corpus) into a git history,
a merged pull request of `per_commit` memories per commit by `people` authors over a year, with git
fast-import (a commit per `git commit` would take minutes at 20,000 files), and clones it bare: the
remote a person's root joins. `push_new` then merges held-back memories the way a pull later
brings them.
"""

from __future__ import annotations

import datetime as dt
import io
import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from memstore_devtools.corpus import ANCHOR_NAMES, MALFORMED_NAMES, CorpusSpec, generate_corpus

# the team's history starts a year back
EPOCH = int(dt.datetime(2025, 8, 1, tzinfo=dt.UTC).timestamp())


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')[-400:]}")
    return done.stdout.decode(errors="replace")


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())




def team_lenses(count: int) -> dict[str, bytes]:
    """`count` team lenses: most listen to edits of one service's files, a vendor's API, delegation;
    every tenth to every Bash call (a team's deploy and release rules), so those fire on a Bash
    call."""
    kinds = (
        ("Edit|Write|MultiEdit", r"(^|/)services/svc{i}/", "Changing service {i}",
         "Run service {i}'s contract tests before pushing. Its owners review every schema change."),
        ("WebFetch", r"vendor{i}\.example", "Calling vendor {i}",
         "Vendor {i} paginates with a cursor and rate-limits at 10 requests a second; "
         "cache the token."),
        ("Agent|Task", None, "Delegating in area {i}",
         "Hand the helper area {i}'s runbook link and the exact files it may touch."),
        ("Read", r"(^|/)fixtures/big{i}/", "Reading fixture set {i}",
         "Fixture set {i} is generated: read the generator, not the files."),
        ("Edit|Write", r"(^|/)migrations/m{i}_.*\.sql$", "Migration family {i}",
         "A migration that ran anywhere is history; add a new one. Family {i} needs a rollback."),
    )
    out = {}
    for i in range(count):
        tool, pattern, title, body = kinds[i % len(kinds)]
        if i % 10 == 0:
            tool, pattern, title, body = ("Bash", None, "Release rule {i}",
                                          "Releases go out from the release branch only; "
                                          "rule {i}: tag first.")
        lines = ["---", f"name: team-lens-{i:03d}", "type: lens", "trigger:",
                 f"  tool_match: '{tool}'"]
        if pattern:
            lines.append(f"  path_pattern: '{pattern.format(i=i)}'")
        lines += ["body_token_cap: 200", "---", "", f"# {title.format(i=i)}", "", body.format(i=i),
                  ""]
        out[f"lenses/team-lens-{i:03d}.md"] = "\n".join(lines).encode()
    return out


def team_memories(work: Path, count: int) -> list[tuple[str, bytes]]:
    """`count` T2 files of a seed-8 corpus (not seed 7's: the team's names and texts are its own),
    without the hand-written anchors (those would be copies of the person's own), in a shuffled
    fixed order."""
    gen = work / "team-corpus"
    generate_corpus(gen, CorpusSpec(t2=count + len(ANCHOR_NAMES), seed=8, lenses=0, short_term=0,
                                    dream=0, bugs=0, meditations=0))
    # the fixed names (anchors, the first malformed file of each kind) are the person's own too
    fixed = set(ANCHOR_NAMES) | set(MALFORMED_NAMES.values())
    files = sorted(p for p in (gen / "memory").glob("*_*.md") if p.stem not in fixed)
    out = [(f"memory/{p.name}", p.read_bytes()) for p in files[:count]]
    shutil.rmtree(gen)
    # a fixed shuffle, so the history (and the held-back memories of the pull) are not in name order
    random.Random(8).shuffle(out)
    return out


def fast_import(repo: Path, commits: list[tuple[int, int, str, list[tuple[str, bytes]]]],
                first: bool) -> None:
    """Write commits (author index, seconds after EPOCH, message, files) onto refs/heads/main."""
    buf = io.BytesIO()
    for n, (who, at, message, files) in enumerate(commits):
        stamp = f"{EPOCH + at} +0000"
        person = f"Person {who:02d} <person{who:02d}@team.example>"
        msg = message.encode()
        buf.write(f"commit refs/heads/main\nauthor {person} {stamp}\n"
                  f"committer {person} {stamp}\n".encode())
        buf.write(b"data %d\n%s\n" % (len(msg), msg))
        if n == 0 and not first:
            buf.write(b"from refs/heads/main^0\n")
        for path, data in files:
            buf.write(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        buf.write(b"\n")
    git(repo, "fast-import", "--quiet", "--force", stdin=buf.getvalue())


def build_team(work: Path, memories_n: int, held_n: int, lenses: int, people: int, per_commit: int
               ) -> dict[str, Any]:
    """The team's source repository (history by --people authors) and its bare clone, the remote."""
    timing: dict[str, Any] = {}
    seconds, memories = timed(lambda: team_memories(work, memories_n + held_n))
    timing["generate"] = seconds
    held, memories = memories[:held_n], memories[held_n:]
    src = work / "team-src"
    src.mkdir()
    git(src, "init", "--quiet", "--bare", "-b", "main")  # the team's own copy: no work tree needed
    readme = b"# acme's memory\n\nmemory/, lenses/: reviewed like code.\n"
    first = [(0, 0, "Lay out the team repository",
              [("README.md", readme), *team_lenses(lenses).items()])]
    per = max(1, per_commit)
    batches = [memories[i:i + per] for i in range(0, len(memories), per)]
    span = 360 * 86400
    history = [(1 + i % people, 60 + i * span // max(1, len(batches)),
                f"Merge: {len(batch)} memories ({batch[0][0][7:-3]} ...)", batch)
               for i, batch in enumerate(batches)]
    seconds, _ = timed(lambda: fast_import(src, first + history, first=True))
    timing["history"] = seconds
    bare = work / "acme.git"
    seconds, _ = timed(lambda: git(work, "clone", "--quiet", "--bare", str(src), str(bare)))
    timing["clone_bare"] = seconds
    timing["commits"] = len(first) + len(history)
    timing["bare_bytes"] = du(bare)
    timing["memories"] = len(memories)
    timing["held"] = held
    timing["src"] = src
    timing["bare"] = bare
    return timing


def push_new(src: Path, bare: Path, held: list[tuple[str, bytes]], people: int) -> float:
    """The held-back memories, merged as five pull requests, pushed to the remote:
    what a pull then brings."""
    per = max(1, len(held) // 5)
    commits = [(1 + i % people, 365 * 86400 + i * 3600, f"Merge: {len(held[j:j + per])} memories",
                held[j:j + per]) for i, j in enumerate(range(0, len(held), per))]
    start = time.perf_counter()
    fast_import(src, commits, first=False)
    git(src, "push", "--quiet", str(bare), "main")
    return time.perf_counter() - start

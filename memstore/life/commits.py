"""Committing what a nightly command wrote: stage and commit exactly the files named, and nothing
else in the tree (tick, wake and debrief share it). git runs through core.processes.run_git, so
nothing the repository's configuration names (hooks, filters, a pager) runs.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path

from memstore.core import processes
from memstore.core.errors import MemstoreError


class CommitFailed(MemstoreError):
    """git refused (a hook, no identity, a lock): the message is git's own."""


def _git(root: Path, *args: str, input: str | None = None) -> processes.CompletedProcess[str]:
    env = {"GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C"}  # a path is a path, never a glob
    return processes.run_git(root, *args, input=input, env=env, timeout=120,
                             identity=args[:1] == ("commit",))


def _listed(root: Path, args: list[str], paths: list[str]) -> set[str]:
    done = _git(root, *args, "-z", "--", *paths)
    return {p for p in done.stdout.split("\0") if p}


def commit_paths(root: str | os.PathLike[str], paths: Iterable[str], message: str,
                 *, tracked_only: Iterable[str] = ()) -> str:
    """Stage and commit exactly `paths` (relative to root), leaving the rest of the work tree alone.

    A path is committed when git tracks it (a change or a removal) or when it exists and
    is not ignored (a new file); paths in `tracked_only` (derived files, runtime state)
    only when git already tracks them. The commit is pathspec-limited (`git commit -- P`),
    so whatever else is staged or modified in the tree stays as it was. Returns one line
    saying what happened: a commit, or why there was none. Raises CommitFailed when git
    itself refuses.
    """
    base = Path(root)
    only_tracked = set(tracked_only)
    wanted = sorted(set(paths) | only_tracked)
    if not wanted:
        return "nothing to commit: tick wrote no files"
    try:
        inside = _git(base, "rev-parse", "--is-inside-work-tree")
    except FileNotFoundError:
        return "not committed: git is not installed"
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return "not committed: the agent root is not inside a git work tree"
    # ls-files prints paths relative to cwd (the root), the form `paths` come in.
    tracked = _listed(base, ["ls-files", "--cached"], wanted)
    candidates = [p for p in wanted
                  if p in tracked or (p not in only_tracked and (base / p).exists())]
    if candidates:
        untracked = [p for p in candidates if p not in tracked]
        ignored = _listed(base, ["check-ignore", "--no-index"], untracked)
        candidates = [p for p in candidates if p not in ignored]
    if not candidates:
        return "nothing to commit: no file tick wrote is tracked or trackable"
    added = _git(base, "add", "--all", "--", *candidates)
    if added.returncode != 0:
        raise CommitFailed(f"git add failed: {' '.join((added.stderr or added.stdout).split())}")
    # against HEAD (or the empty tree before the first commit); --relative: paths relative to root;
    # --no-renames: a rolled file's old path (a removal) and new path (an addition) are both named
    changed = _listed(base, ["diff", "--cached", "--name-only", "--relative", "--no-renames"],
                      candidates)
    if not changed:
        return "nothing to commit: the files tick wrote match the last commit"
    done = _git(base, "commit", "--quiet", "-m", message, "--", *sorted(changed))
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        staged = " ".join(shlex.quote(p) for p in sorted(changed))
        raise CommitFailed(f"git commit failed: {said[-1] if said else f'exit {done.returncode}'}; "
                           f"the files it wrote stay on disk and staged: {staged}",
                           hint=f"fix git (e.g. user.name/user.email), then: "
                                f"git -C {shlex.quote(str(base))} "
                                f"commit -m {shlex.quote(message)} -- {staged}")
    head = _git(base, "rev-parse", "--short", "HEAD").stdout.strip()
    return f"committed {len(changed)} file(s) as {head}"

"""What a project once had: whether a path a memory cites, and git no longer tracks, was ever in the
project's history, so that only code that is gone is called gone (memstore.mirror.stale_refs). A
path the project never had (a branch pattern in prose, `release/x.y.z`; a file planned but never
written) is no stale reference, nor is a placeholder.

git runs here only through memstore.core.processes.run_git (no hook, filter, fsmonitor, pager or
signing program of the repository's runs), only after a change to the project or its memories, and
only for the cited paths git does not track; the answers are kept per HEAD in the freshness cache
(runtime/state/stale-cache.json).
"""

from __future__ import annotations

from typing import Any

from memstore.core import processes


def placeholder(path: str) -> bool:
    """Whether a cited path stands for versions or names rather than naming a file: a part of three
    or more pieces between dots, each one letter or a number, one a letter (release/x.y.z, vX.Y.Z,
    docs/N.N.N.md, hotfix/1.2.x)."""
    for part in path.split("/"):
        pieces = part.removeprefix("v").removeprefix("V").split(".")
        if len(pieces) > 3 and len(pieces[-1]) > 1:
            pieces = pieces[:-1]  # N.N.N.md: its extension
        if (len(pieces) >= 3 and all((len(x) == 1 and x.isalpha()) or x.isdigit() for x in pieces)
                and any(x.isalpha() for x in pieces)):
            return True
    return False


class HistoryUnread(Exception):
    """The project's git history could not be read (no git, a timeout, git refused the repo)."""


MAX_SPECS = 200  # cited paths asked of git in one `git log`


def last_commits(tree: str, paths: list[str], memo: dict[str, Any]) -> dict[str, str]:
    """The last commit (short id and day) reachable from the work tree's HEAD that had each of
    `paths`, as that path or as the tail of one (a memory may cite `pkg/mod.py` for
    `src/pkg/mod.py`); a path the project never had is left out. git runs through
    memstore.core.processes.run_git, so nothing the repository's config names runs. `memo` (read and
    updated: {"head", "had"}) keeps the answers for one HEAD: asked again at that HEAD, git is
    started once (for HEAD), and `git log` only for paths not asked before. Raises HistoryUnread."""
    try:
        head = processes.run_git(tree, "rev-parse", "--verify", "--quiet", "HEAD^{commit}",
                                 timeout=30)
        if head.returncode != 0:
            return {}  # no commit yet: the project never had anything
        if memo.get("head") != head.stdout.strip() or not isinstance(memo.get("had"), dict):
            memo.clear()
            memo.update({"head": head.stdout.strip(), "had": {}})
        had: dict[str, str] = memo["had"]
        ask = [p for p in dict.fromkeys(paths) if p not in had]
        for at in range(0, len(ask), MAX_SPECS):
            chunk = ask[at:at + MAX_SPECS]
            log = processes.run_git(tree, "log", memo["head"], "--format=%x01%h %as", "--name-only",
                                    "--no-renames", "-z", "--", *(f":(glob)**/{p}" for p in chunk),
                                    timeout=60)
            if log.returncode != 0:
                said = log.stderr.strip()
                raise HistoryUnread(said.splitlines()[-1] if said else "git log failed")
            newest: dict[str, str] = {}
            for commit in log.stdout.split("\x01")[1:]:  # newest first
                header, _, names = commit.partition("\0")
                for name in names.lstrip("\n").split("\0"):
                    newest.setdefault(name, header.strip())
            for p in chunk:
                hits = [when for name, when in newest.items()
                        if name == p or name.endswith("/" + p)]
                had[p] = max(hits, key=lambda w: w.split(" ")[-1]) if hits else ""
    except (OSError, processes.SubprocessError) as exc:
        raise HistoryUnread(str(exc) or type(exc).__name__) from None
    return {p: had[p] for p in paths if had.get(p)}

"""Proposing a change to a team: a commit on a new branch of the team clone, pushed, then a pull
request.

The commit is built with git's plumbing on a temporary index (read-tree, hash-object, update-index,
write-tree, commit-tree), from the team branch as the remote has it: the clone's work tree, its
index and its checked-out branch are never touched, so sharing cannot disturb what the person's
agent reads. Whoever merges the pull request makes the change the team's; `memstore team pull`
brings it back.

What goes to a team is the memory's authored text only: the person's policy state (access counts,
stability, the flush base) stays theirs, and a memory that looks as if it holds a secret is
refused before anything is written (memstore.team.secrets).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
from dataclasses import dataclass

from memstore.core import processes
from memstore.core.errors import BadUsage, MemstoreError, NotFound
from memstore.core.teams import TEAMS_DIR, Team
from memstore.hook.review import ACCEPTED, answers
from memstore.mirror.parsing import strict_problem
from memstore.team.gitconf import GitError, git, last_line

# The frontmatter keys that are one person's state, never a team's.
PERSONAL_KEYS = ("access_count", "stability", "last_accessed", "last_reinforced", "policy_base")


@dataclass
class Proposal:
    """What `share` (or a team memory's forget or supersede) did: the branch pushed and what to do
    next."""

    team: str
    action: str  # share | forget | supersede
    path: str  # inside the clone: memory/<file>
    branch: str
    base: str
    commit: str
    pushed: bool
    url: str | None  # where the pull request is opened, when the host is known
    next_step: str

    def to_json(self) -> dict[str, object]:
        return {"team": self.team, "action": self.action, "path": self.path, "branch": self.branch,
                "base": self.base, "commit": self.commit, "pushed": self.pushed, "url": self.url,
                "next": self.next_step}


def authored(raw: bytes) -> bytes:
    """The file without the person's policy state (PERSONAL_KEYS' lines in its frontmatter), every
    other byte kept. A line filter rather than a YAML round trip, which would rewrite the author's
    formatting; the keys are ones flush writes, always on one line."""
    text = raw.decode("utf-8", "replace")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return raw
    personal = re.compile(r"^(?:{})\s*:".format("|".join(PERSONAL_KEYS)))
    out = [lines[0]]
    for at, line in enumerate(lines[1:], start=1):
        if line.rstrip() == "---":
            out += lines[at:]
            return "".join(out).encode("utf-8")
        if not personal.match(line):
            out.append(line)
    return raw  # never closed: not frontmatter after all


def refuse_unreadable(raw: bytes, rel: str) -> None:
    """Raise BadUsage, in one line saying what to fix, when `rel`'s frontmatter is not read by YAML
    as written: memstore reads the usual slips as meant, a teammate's tools may not, so what a team
    gets parses as is."""
    problem = strict_problem(raw)
    if problem is not None:
        raise BadUsage(f"not sharing {rel}: {problem}", hint=f"mend {rel}, then share it again")


def lesson_file(root: str, ident: str, now: dt.datetime) -> tuple[str, bytes]:
    """A lesson the person accepted in review (its id), as a team topic memory: (file name, its
    text)."""
    import json

    answer = answers(root).get(ident)
    if (answer is None or answer.get("kind") != "lesson" or answer.get("decision") != ACCEPTED
            or not answer.get("text")):
        raise NotFound(f"{ident} is no lesson you accepted in review",
                       hint="memstore review lists what waits; "
                            "share takes an accepted lesson's id or a memory's name")
    text = " ".join(str(answer["text"]).split())
    name = lesson_name(text)
    head = ["---", f"name: {name[:-3]}", "type: feedback", f"summary: {json.dumps(text[:150])}",
            f"created: {now:%Y-%m-%d}", "source: a lesson accepted in review"]
    if answer.get("project"):
        head.append(f"project: {json.dumps(str(answer['project']))}")
    return name, ("\n".join([*head, "---", "", text, ""])).encode("utf-8")


def lesson_name(text: str) -> str:
    """The file name an accepted lesson's text is shared under: feedback_<its first six
    words>.md."""
    return f"feedback_{_slug(' '.join(text.split()[:6]))}.md"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:50] or "memory"


def _branch_name(folder: str, action: str, stem: str, now: dt.datetime) -> str:
    base = f"memstore/{action}-{_slug(stem)}-{now:%Y%m%d}"
    name, n = base, 1
    while (git(folder, "rev-parse", "--verify", "-q", f"refs/heads/{name}",
               check=False).returncode == 0
           or git(folder, "rev-parse", "--verify", "-q", f"refs/remotes/origin/{name}",
                  check=False).returncode == 0):
        n += 1
        name = f"{base}-{n}"
    return name


def pr_url(remote: str, branch: str, base: str) -> str | None:
    """Where a pull request for `branch` is opened, for the hosts whose form is known (GitHub,
    GitLab, Bitbucket)."""
    found = re.match(r"^(?:https?://(?:[^@/]+@)?|ssh://(?:[^@/]+@)?|[^@/:]+@)"
                     r"([^/:]+)[:/](?:\d+/)?(.+?)(?:\.git)?/?$", remote.strip())
    if not found:
        return None
    host, repo = found.group(1).lower(), found.group(2)
    if host == "github.com":
        return f"https://github.com/{repo}/compare/{base}...{branch}?expand=1"
    if host == "gitlab.com" or host.startswith("gitlab."):
        return (f"https://{host}/{repo}/-/merge_requests/new"
                f"?merge_request%5Bsource_branch%5D={branch}")
    if host == "bitbucket.org":
        return f"https://bitbucket.org/{repo}/pull-requests/new?source={branch}"
    return None


def propose(root: str, team: Team, action: str, inner: str, data: bytes | None, message: str,
            now: dt.datetime) -> Proposal:
    """Commit `data` at `inner` (None: take it out) on a new branch from the team's remote branch,
    push it.

    A push that fails leaves the branch in the clone (nothing lost) and says so."""
    folder = team.folder(root)
    if not os.path.isdir(os.path.join(folder, ".git")):
        raise MemstoreError(f"{TEAMS_DIR}/{team.name}/ is not a clone",
                            hint=f"memstore team add {team.url}")
    # the newest base there is; offline: the last
    git(folder, "fetch", "--quiet", "origin", network=True, check=False)
    base_branch = team.branch or "main"
    base = git(folder, "rev-parse", "--verify", "-q", f"refs/remotes/origin/{base_branch}",
               check=False).stdout.strip()
    if not base:
        base = git(folder, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()
    stem = inner.rsplit("/", 1)[-1][:-3]
    with tempfile.TemporaryDirectory(prefix="memstore-share-") as scratch:
        index = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
        _plumb(folder, index, "read-tree", *([base] if base else ["--empty"]))
        if data is None:
            _plumb(folder, index, "update-index", "--force-remove", "--", inner)
        else:
            blob = _plumb(folder, index, "hash-object", "-w", "--stdin",
                          input=data.decode("utf-8", "replace"))
            _plumb(folder, index, "update-index", "--add", "--cacheinfo", f"100644,{blob},{inner}")
        tree = _plumb(folder, index, "write-tree")
    if base and tree == git(folder, "rev-parse", f"{base}^{{tree}}").stdout.strip():
        raise MemstoreError(f"team {team.name} has this already: {inner} is the same on "
                            f"{base_branch}", hint="nothing to propose")
    done = git(folder, "commit-tree", tree, *(["-p", base] if base else []), "-m", message,
               identity=True, check=False)
    if done.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40,64}", done.stdout.strip()):
        why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
        raise GitError(f"git commit-tree: {why}",
                       hint="git needs your name and email: "
                            'git config --global user.name "..." and user.email')
    commit = done.stdout.strip()
    branch = _branch_name(folder, action, stem, now)
    git(folder, "update-ref", f"refs/heads/{branch}", commit)
    pushed = git(folder, "push", "--quiet", "origin", f"refs/heads/{branch}:refs/heads/{branch}",
                 network=True, check=False)
    if pushed.returncode == 0:  # the remote holds it now: no local branch to pile up in the clone
        git(folder, "update-ref", "-d", f"refs/heads/{branch}", commit, check=False)
    url = pr_url(team.url, branch, base_branch)
    if pushed.returncode != 0:
        why = last_line(pushed)
        step = (f"the push failed ({why}); the branch waits in the clone: "
                f"git -C {folder} push origin {branch}")
    elif url:
        step = f"open the pull request: {url}"
    else:
        step = f"open a pull request from {branch} into {base_branch} on the team's git host"
    return Proposal(team.name, action, inner, branch, base_branch, commit, pushed.returncode == 0,
                    url, step)


def _plumb(folder: str, env: dict[str, str], *args: str, input: str | None = None) -> str:
    done = processes.run_git(folder, *args, input=input, env=env, timeout=60)
    if done.returncode != 0:
        raise GitError(f"git {args[0]}: {(done.stderr or '').strip()[:300] or 'failed'}")
    return done.stdout.strip()

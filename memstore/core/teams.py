"""Where a team's memory lives in an agent root, and which teams a root has joined.

Standard library only.

A team is a git repository cloned at <root>/teams/<name>/ and recorded in memstore.toml:

    [teams.acme]
    url = "git@github.com:acme/agent-memory.git"
    branch = "main"

The clone has the layout of an agent root without identity: memory/ topic files, lenses/ and
optionally meditations/. Only those are read: a team's MEMORY.md, short-term facts or bugs are the
team's business, not this person's index. Only the teams memstore.toml names are read at all: a
folder under teams/ that nobody joined (or a team whose memstore.toml change waits for `memstore
trust`) is not walked, so its lenses never fire.

The files of a clone are the team's authored text. memstore never writes them: reads reinforce a
team memory in the person's own journal and mirror, flush skips them, and memstore.core.locks
refuses a write that lands inside a clone (`inside_clone`). Changing a team memory is a pull
request on the team's repository.
"""

from __future__ import annotations

import os
import re

from memstore.core.errors import MemstoreError

TEAMS_DIR = "teams"
# A team's folder name: short, lower-case, no dots (nothing hidden, nothing that climbs), no spaces.
NAME = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,38}[a-z0-9])?$")
# What of a clone is read, as kinds.classify names the inner path.
READ_KINDS = ("t2", "lens", "meditation")


class TeamFileError(MemstoreError):
    """A write that would land inside a team clone: the team's files change only by pull request."""


class TeamMemory(MemstoreError):
    """A change asked of a team's memory (forget, supersede): a pull request, never a local edit."""

    def __init__(self, path: str, action: str) -> None:
        self.path = path
        self.team = team_of(path) or ""
        super().__init__(f"{path} is team {self.team}'s memory: it changes by pull request on "
                         "the team's repository, never here",
                         hint=f"at your terminal, memstore {action} proposes it to the team "
                              "(a branch and a pull request)")


class Team:
    """One joined team: its folder name, the remote it was cloned from, and the branch followed."""

    __slots__ = ("branch", "name", "url")

    def __init__(self, name: str, url: str, branch: str = "") -> None:
        self.name = name
        self.url = url
        self.branch = branch

    def __repr__(self) -> str:
        return f"Team({self.name!r}, {self.url!r}, {self.branch!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Team) and (
            (self.name, self.url, self.branch) == (other.name, other.url, other.branch))

    def __hash__(self) -> int:
        return hash((self.name, self.url, self.branch))

    def folder(self, root: str | os.PathLike[str]) -> str:
        return os.path.join(os.fspath(root), TEAMS_DIR, self.name)

    def to_json(self) -> dict[str, str]:
        # the url as it may be shown (team list is the agent's to run too): no password or token
        shown = re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@\s]*@", r"\1", self.url)
        return {"name": self.name, "url": shown, "branch": self.branch,
                "folder": f"{TEAMS_DIR}/{self.name}"}


def split(rel: str) -> tuple[str, str] | None:
    """(team, path inside the clone) for a root-relative posix path under teams/<name>/, else
    None."""
    if not rel.startswith("teams/"):
        return None
    parts = rel.split("/", 2)
    if len(parts) < 3 or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def team_of(rel: str) -> str | None:
    """The team a root-relative path belongs to, or None for the person's own."""
    found = split(rel)
    return found[0] if found else None


def parse(table: object, where: str) -> tuple[tuple[Team, ...], str | None]:
    """The teams of memstore.toml's [teams] table, and a problem (None when it reads cleanly).

    A malformed entry is left out and said, never guessed at: a team joins only as `team add` wrote
    it.
    """
    if not isinstance(table, dict):
        return (), f"{where}: [teams] must be a table of teams ([teams.NAME] with url = ...)"
    teams: list[Team] = []
    problem = None
    for name, entry in sorted(table.items()):
        url = entry.get("url") if isinstance(entry, dict) else None
        branch = entry.get("branch", "") if isinstance(entry, dict) else ""
        if not isinstance(name, str) or not NAME.match(name) or not isinstance(url, str) \
                or not url.strip() or not isinstance(branch, str):
            problem = f"{where}: team {name!r} is not name = {{ url = \"...\", branch = \"...\" }}"
            continue
        teams.append(Team(name, url.strip(), branch.strip()))
    return tuple(teams), problem


def inside_clone(path: str | os.PathLike[str]) -> bool:
    """Is this absolute path inside a team clone (<root>/teams/<name>/... beside the root's
    memstore.toml or runtime/, holding a .git)? The one test memstore.core.locks makes before
    writing any file."""
    parts = os.path.normpath(os.path.abspath(os.fspath(path))).split(os.sep)
    for at in range(len(parts) - 2, 0, -1):
        if parts[at - 1] != TEAMS_DIR:
            continue
        root = os.sep.join(parts[: at - 1]) or os.sep
        if not os.path.isdir(os.sep.join(parts[: at + 1]) + os.sep + ".git"):
            continue
        if os.path.exists(os.path.join(root, "memstore.toml")) or os.path.isdir(
                os.path.join(root, "runtime")):
            return True
    return False


def refuse_inside_clone(path: str | os.PathLike[str]) -> None:
    if inside_clone(path):
        raise TeamFileError(f"{os.fspath(path)}: inside a team clone, which memstore never writes",
                             hint="a team memory changes by pull request on the team repository "
                                  "(memstore share)")


# -------------------------------------------------- what each clone holds, as committed

# runtime/state/team-files.json: {team: {"format": "sha1"|"sha256", "files": {inner path: blob
# id}}} for the lenses and meditations at each clone's HEAD, written by `team add`, `team pull` and
# the nightly pull. A team lens or meditation is injected only while its bytes are exactly that
# blob: one changed in the clone by hand, or planted there, is not the team's reviewed text
# (`memstore team list` names it).
COMMITTED_FILE = "team-files.json"


def blob_id(data: bytes, object_format: str = "sha1") -> str:
    """git's id of a blob with these bytes (what `git hash-object` prints), without running git."""
    import hashlib

    digest = hashlib.sha256 if object_format == "sha256" else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def committed(root: str, rel: str) -> bool:
    """Are the bytes of this team file (root-relative) the ones its clone's HEAD holds?"""
    import json

    from memstore.core.agent_root import state_dir

    found = split(rel)
    if found is None:
        return False
    try:
        with open(os.path.join(state_dir(root), COMMITTED_FILE), encoding="utf-8") as handle:
            state = json.load(handle)
        entry = state[found[0]]
        expected = entry["files"][found[1]]
        with open(os.path.join(root, rel), "rb") as handle:
            data = handle.read(2_000_000)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return isinstance(expected, str) and blob_id(data, str(entry.get("format", "sha1"))) == expected

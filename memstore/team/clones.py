"""Joining, pulling and leaving a team: its clone under <root>/teams/<name>/ and its row in
memstore.toml.

A pull only ever fast-forwards. A clone that cannot (commits of its own, a history the team
rewrote, files changed by hand in the way, another branch checked out) is left exactly as it is
and said, with what to do: memstore never merges, rebases or forces in a team clone, because the
clone holds the team's reviewed text and nothing else.

memstore.toml is the person's file (memstore.core.tamper): `add` and `remove` edit it with
tomlkit (the person's comments and layout kept) only when it is as the person last accepted it,
and accept the new version themselves, since they run only for the person at their terminal.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memstore.core.agent_root import state_dir
from memstore.core.config import CONFIG_FILE, ConfigError
from memstore.core.errors import BadUsage, MemstoreError, NotFound
from memstore.core.locks import atomic_write, file_lock
from memstore.core.tamper import is_held, trust
from memstore.core.teams import COMMITTED_FILE, NAME, TEAMS_DIR, Team
from memstore.hook.gate import gate_file
from memstore.team.gitconf import GitError, git, last_line, named_files
from memstore.team.handover import reconcile

Say = Callable[[str], None]

LAYOUT_README = """\
# A team's memory

A memstore team repository: what a team's coding agents learned, reviewed like code.
Each person joins it with `memstore team add URL`; their agent then reads these files beside
its own memory, and ranks them by that person's own use.

- memory/  topic memories (feedback_x.md, project_y.md, ...), one lesson per file
- lenses/  rules injected when a tool call matches them
- meditations/  optional

Propose a memory with `memstore share NAME --team TEAM` (a branch and a pull request);
whoever merges it makes it the team's. Never put secrets here.
"""


@dataclass
class Pulled:
    """What one team's pull did: state is updated, current, diverged, dirty, elsewhere,
    unreachable, refused (the clone's origin or local config is not as memstore made it), or
    missing."""

    team: str
    state: str
    before: str = ""
    after: str = ""
    message: str = ""
    # what the person's own memories did (team.handover)
    handed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"team": self.team, "state": self.state, "before": self.before, "after": self.after,
                "message": self.message, "handed": self.handed}

    @property
    def changed(self) -> bool:
        return self.state == "updated"


def redact(url: str) -> str:
    """A URL as it may be shown: without a password or token in it
    (https://user:token@host/...)."""
    return re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@\s]*@", r"\1", url.strip())


def name_from_url(url: str) -> str:
    """The folder name a team gets when none is given: the repository's name, lower-cased and
    tamed."""
    tail = re.split(r"[/:\\]", url.rstrip("/"))[-1]
    tail = tail[:-4] if tail.endswith(".git") else tail
    name = re.sub(r"[^a-z0-9_-]+", "-", tail.lower()).strip("-_")[:40].strip("-_")
    return name or "team"


def check_url(url: str) -> str:
    url = url.strip()
    if not url or url.startswith("-") or "\n" in url or "\x00" in url:
        raise BadUsage(f"{url!r} is not a git URL",
                       hint="give the team repository's clone URL (https://, ssh, a path)")
    # ext::cmd, fd::: transports that run a command (refused by git here too)
    if "::" in url.split("/", 1)[0]:
        raise BadUsage(f"{url!r}: a transport memstore does not use",
                       hint="use an https://, ssh or file URL")
    return url


def _head(folder: str) -> str:
    done = git(folder, "rev-parse", "--verify", "-q", "HEAD", check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def current_branch(folder: str) -> str:
    done = git(folder, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def local_changes(folder: str) -> list[str]:
    """Files of the clone changed by hand (git status), which a pull never overwrites."""
    done = git(folder, "status", "--porcelain", "--untracked-files=normal", check=False)
    return [line[3:] for line in done.stdout.splitlines() if line.strip()]


def add(root: Path, joined: tuple[Team, ...], url: str, name: str | None, branch: str | None,
        say: Say = lambda _: None, accept: bool = False) -> Team:
    """Clone the team repository into teams/<name>/ and record it in memstore.toml. `accept`: the
    caller is the person at their terminal (the command line checked), so memstore.toml's new text
    is accepted as theirs; from anywhere else it is an edit like any other, held when made during
    an agent session."""
    url = check_url(url)
    name = (name or name_from_url(url)).strip()
    if not NAME.match(name):
        raise BadUsage(f"{name!r} is not a team name "
                       "(lower-case letters, digits, - and _, up to 40)",
                       hint="choose one with --name")
    if any(team.name == name for team in joined):
        raise BadUsage(f"team {name!r} is joined already",
                       hint="memstore team list shows the teams")
    folder = root / TEAMS_DIR / name
    if folder.exists() or folder.is_symlink():
        raise BadUsage(f"{folder} is there already",
                       hint="choose another --name, or move that folder away")
    if os.path.isabs(url) or url.startswith("."):
        # a local remote: a path that means the same from inside the clone
        url = os.path.abspath(url)
    _editable(root)
    folder.parent.mkdir(exist_ok=True)
    _ignored_by_the_root(folder.parent)
    say(f"cloning {url} into {TEAMS_DIR}/{name}/ ...")
    args = ["clone", "--quiet", "--no-recurse-submodules",
            *(["--branch", branch] if branch else []), "--", url, str(folder)]
    try:
        git("/", *args, network=True)
    except GitError:
        shutil.rmtree(folder, ignore_errors=True)  # a half-made clone holds nothing of anyone's
        raise
    _graph(str(folder))
    if not _head(str(folder)):
        others = git(str(folder), "for-each-ref", "--format=%(refname:lstrip=3)",
                     "refs/remotes/origin", check=False).stdout.split()
        others = [b for b in others if b != "HEAD"]
        if (len(others) == 1 and not branch
                and re.fullmatch(r"[A-Za-z0-9._][A-Za-z0-9._/-]*", others[0])):
            # `git init --bare` points HEAD at a branch nobody pushed: follow the one there is
            git(str(folder), "checkout", "-q", "-B", others[0], f"origin/{others[0]}")
            say("note: the remote's default branch is empty; following its only branch, "
                f"{others[0]}")
        elif others:
            say(f"note: the remote's default branch is empty; it has {', '.join(others[:5])}: "
                f"memstore team remove {name}, then add it again with --branch {others[0]}")
    followed = branch or current_branch(str(folder)) or "main"
    team = Team(name, url, followed)
    record_committed(root, team)
    if not any((folder / sub).is_dir() for sub in ("memory", "lenses")):
        say(f"note: {TEAMS_DIR}/{name}/ has no memory/ or lenses/ yet "
            "(memstore team init lays a team repository out)")
    _write_teams(root, (*joined, team), accept)
    lenses_moved(root)
    # a memory shared before joining (or from another machine) is the team's
    for line in handover(root, team):
        say(line)
    return team


def remove(root: Path, joined: tuple[Team, ...], name: str, force: bool = False,
           accept: bool = False) -> Team:
    """Take the clone away and the team out of memstore.toml; the person's own memory is not
    touched.

    Refused while the clone holds work of the person's found nowhere else (changed files, commits
    or branches not on the remote), unless `force`."""
    team = find(joined, name)
    folder = team.folder(root)
    if os.path.lexists(folder) and not os.path.isdir(folder) and not os.path.islink(folder):
        raise MemstoreError(f"{TEAMS_DIR}/{name} is a file, not a clone: "
                            "memstore leaves it as it is",
                            hint=f"look at it and move it away, then memstore team remove {name}")
    if os.path.isdir(folder) and not os.path.islink(folder) and not force:
        # changed, untracked and ignored files; branches, a stash, and commits made on a detached
        # HEAD (the reflogs hold them) that no remote has
        status = git(folder, "status", "--porcelain", "--ignored", check=False).stdout
        kept = [line[3:] for line in status.splitlines() if line.strip()]
        branches = git(folder, "for-each-ref", "--format=%(refname:short)", "refs/heads",
                       check=False).stdout.split()
        unpushed = [b for b in branches
                    if git(folder, "rev-list", "-n1", b, "--not", "--remotes",
                           check=False).stdout.strip()]
        loose = git(folder, "rev-list", "-n1", "--reflog", "--not", "--remotes",
                    check=False).stdout.strip()
        if kept or unpushed or loose:
            what = (f"changed or ignored files ({', '.join(kept[:3])})" if kept else
                    f"commits on no remote (branch {', '.join(unpushed[:3])})" if unpushed else
                    f"commits on no remote (a stash or a detached commit: {loose[:10]})")
            look = (f"git -C {folder} status --ignored" if kept else
                    f"git -C {folder} log --oneline {unpushed[0] if unpushed else loose[:10]} "
                    "--not --remotes")
            raise MemstoreError(f"{TEAMS_DIR}/{name}/ holds {what}: removing it would lose them",
                                hint=f"push or discard them ({look}), or remove with --force")
    _editable(root)
    _write_teams(root, tuple(t for t in joined if t.name != name), accept)
    if os.path.islink(folder):
        os.unlink(folder)
    elif os.path.isdir(folder):
        shutil.rmtree(folder)
    record_committed(root, team)  # the clone gone: its entry goes
    lenses_moved(root)
    return team


def _ignored_by_the_root(teams: Path) -> None:
    """teams/.gitignore: a root kept in git (its journal travels that way) never takes a clone in
    as an embedded repository; each clone has its own remote."""
    ignore = teams / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, b"# team clones: each is a git repository of its own "
                             b"(memstore team add)\n*\n")


def find(joined: tuple[Team, ...], name: str) -> Team:
    for team in joined:
        if team.name == name:
            return team
    known = ", ".join(t.name for t in joined) or "none joined"
    raise NotFound(f"no team named {name!r} ({known})", hint="memstore team list shows the teams")


def pull(root: Path, team: Team) -> Pulled:
    """Fast-forward one team's clone to its remote branch, or leave it as it is and say why."""
    folder = team.folder(root)
    if not os.path.isdir(os.path.join(folder, ".git")):
        return Pulled(team.name, "missing",
                      message=f"{TEAMS_DIR}/{team.name}/ is not a clone any more: "
                      f"memstore team remove {team.name}, then add it again")
    before = _head(folder)
    origin = git(folder, "remote", "get-url", "origin", check=False).stdout.strip()
    if origin != team.url:
        return Pulled(team.name, "refused", before, before,
                      f"the clone's origin is {redact(origin) or 'gone'}, not {redact(team.url)} "
                      "as you joined it: left as it is (if you moved the team yourself: "
                      f"git -C {folder} remote set-url origin URL, and the url in memstore.toml)")
    try:
        fetched = git(folder, "fetch", "--quiet", "--prune", "--no-recurse-submodules", "origin",
                      network=True, check=False)
    except GitError as exc:  # its local config names a program: that clone waits, the others go on
        return Pulled(team.name, "refused", before, before,
                      f"{exc} ({exc.hint})" if exc.hint else str(exc))
    if fetched.returncode != 0:
        return Pulled(team.name, "unreachable", before, before,
                      f"could not fetch: {last_line(fetched)}")
    branch = team.branch or current_branch(folder) or "main"
    on = current_branch(folder)
    if on != branch:
        return Pulled(team.name, "elsewhere", before, before,
                      f"the clone is on {on or 'a detached HEAD'}, not {branch}: left as it is "
                      f"(git -C {folder} switch {branch})")
    remote = git(folder, "rev-parse", "--verify", "-q", f"refs/remotes/origin/{branch}",
                 check=False).stdout.strip()
    if not remote:
        return Pulled(team.name, "current", before, before, f"the remote has no {branch} yet")
    if remote == before:
        record_committed(root, team)  # cheap, and mends a state folder that was cleared
        handed = handover(root, team)
        return Pulled(team.name, "current", before, before,
                      "; ".join(["up to date", *handed]), handed)
    if before and git(folder, "merge-base", "--is-ancestor", before, remote,
                      check=False).returncode != 0:
        return Pulled(team.name, "diverged", before, before,
                      f"cannot fast-forward to origin/{branch} (commits here the remote does not "
                      f"have, or a rewritten history): left as it is. Look: git -C {folder} log "
                      f"--oneline --graph -5 HEAD origin/{branch}; to keep your commits and take "
                      f"the team's: git -C {folder} branch mine-{before[:8]} && git -C {folder} "
                      f"reset --hard origin/{branch}")
    moved = git(folder, "merge", "--ff-only", "--quiet", f"refs/remotes/origin/{branch}",
                check=False)
    if moved.returncode != 0:
        files = named_files(moved)
        what = (f"files changed by hand here are in the way ({', '.join(files[:5])})" if files
                else last_line(moved))
        return Pulled(team.name, "dirty", before, before,
                      f"cannot fast-forward: {what}; left as it is. Look: git -C {folder} status; "
                      f"to drop the hand edits: git -C {folder} stash (kept there), "
                      "then memstore team pull")
    lenses_moved(root)
    _graph(folder)
    record_committed(root, team)
    kept = local_changes(folder)
    note = (f"; {len(kept)} files here differ from the team's ({', '.join(kept[:3])}): a changed "
            f"or new lens among them does not fire (git -C {folder} status)") if kept else ""
    handed = handover(root, team, before)
    return Pulled(team.name, "updated", before, _head(folder),
                  "; ".join(["fast-forwarded" + note, *handed]), handed)


def handover(root: Path, team: Team, before: str = "") -> list[str]:
    """The person's own copies of what the team now holds step aside (memstore.team.handover):
    its lines."""
    try:
        return reconcile(root, team, before).lines(team.name)
    except (MemstoreError, OSError) as exc:  # the pull itself went through: say it, never undo it
        return [f"your own copies of team {team.name}'s memories were not compared with it: {exc}"]


def record_committed(root: Path, team: Team) -> None:
    """What the clone's HEAD holds of lenses/ and meditations/ (their blob ids), for the hook's
    check that a team lens is the team's committed text (memstore.core.teams.committed). Under the
    state folder's lock."""
    import json

    folder = team.folder(root)
    files: dict[str, str] = {}
    form = "sha1"
    if os.path.isdir(os.path.join(folder, ".git")):
        form = (git(folder, "rev-parse", "--show-object-format", check=False).stdout.strip()
                or "sha1")
        listed = git(folder, "ls-tree", "-r", "-z", "HEAD", "--", "lenses", "meditations",
                     check=False).stdout
        for item in listed.split("\0"):
            meta, _, path = item.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob" and path.endswith(".md"):
                files[path] = parts[2]
    target = Path(state_dir(os.fspath(root))) / COMMITTED_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.with_name(COMMITTED_FILE + ".lock"), timeout=10):
        try:
            state = json.loads(target.read_text(encoding="utf-8"))
            state = state if isinstance(state, dict) else {}
        except (OSError, ValueError):
            state = {}
        if files or os.path.isdir(folder):
            state[team.name] = {"format": form, "files": files}
        else:
            state.pop(team.name, None)
        atomic_write(target, (json.dumps(state, indent=1, sort_keys=True) + "\n").encode("utf-8"))


def _graph(folder: str) -> None:
    """git's commit-graph with changed-path filters: `show`'s history of one file reads it instead
    of every commit (a third of the time at a thousand commits). git's own data in .git/, best
    effort."""
    git(folder, "commit-graph", "write", "--reachable", "--changed-paths", "--split", check=False)


def lenses_moved(root: Path) -> None:
    """A team's lenses may have come or gone: the hook's gate file (its list of lens-free tools) is
    stale. Without it the next hook call reads the lenses afresh and writes a new one."""
    try:
        os.unlink(gate_file(os.fspath(root)))
    except OSError:
        pass


def init(target: Path, say: Say = lambda _: None) -> list[str]:
    """Lay a team repository out in `target` (memory/, lenses/, meditations/, README.md; git init).
    Nothing there is overwritten; what was made is returned."""
    made: list[str] = []
    target.mkdir(parents=True, exist_ok=True)
    for sub in ("memory", "lenses", "meditations"):
        if not (target / sub).exists():
            (target / sub).mkdir()
            (target / sub / ".gitkeep").write_bytes(b"")
            made.append(f"{sub}/")
    if not (target / "README.md").exists():
        (target / "README.md").write_text(LAYOUT_README, encoding="utf-8")
        made.append("README.md")
    if not (target / ".git").exists():
        git(str(target), "init", "--quiet", "-b", "main")
        made.append(".git/")
    say(f"laid out {target}: {', '.join(made) or 'nothing new'}")
    return made


# ---------------------------------------------------------------- memstore.toml


def _editable(root: Path) -> None:
    """memstore.toml may be edited only when it is not held (changed during an agent session)."""
    if is_held(os.fspath(root), CONFIG_FILE):
        raise MemstoreError(f"{CONFIG_FILE} changed during an agent session "
                            "and waits for your look",
                            hint=f"look at it, then memstore trust {CONFIG_FILE}, then try again")


def _write_teams(root: Path, teams: tuple[Team, ...], accept: bool) -> None:
    """Rewrite memstore.toml's [teams] (the rest of the file as it was); with `accept`, accept it as
    the person's (tamper evidence), which only the person at their terminal may ask."""
    import tomlkit

    path = root / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        doc = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}",
                          hint="fix memstore.toml, then try again") from exc
    nested = isinstance(doc.get("memstore"), dict) and "teams" in doc["memstore"]
    holder = doc["memstore"] if nested else doc
    if "teams" in holder:
        del holder["teams"]
    if teams:
        table = tomlkit.table(is_super_table=True)
        for team in teams:
            entry = tomlkit.table()
            entry["url"] = team.url
            entry["branch"] = team.branch
            table[team.name] = entry
        holder["teams"] = table
    atomic_write(path, tomlkit.dumps(doc).encode("utf-8"))
    if accept:
        trust(os.fspath(root), [CONFIG_FILE])

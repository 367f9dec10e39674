"""git in a team clone: its local config checked before any fetch or push, every call without its
programs.

A fetch or push needs the person's own credentials (their global config's credential helper, their
ssh command), so those calls cannot turn every program-starting setting off the way
memstore.core.processes.run_git does for a project's repository. What makes that safe is the
clone's own config: memstore wrote it (`git clone`), and it may hold only what a clone writes
(CLONE_KEYS). Anything else (a credential helper, an ssh command, an alias, a hook path) was put
there by someone else, and the call is refused with the key named. Hooks in .git/hooks are files,
not config: every call still runs with core.hooksPath=/dev/null.
"""

from __future__ import annotations

import re

from memstore.core import processes
from memstore.core.errors import MemstoreError

# The local keys `git clone` (and `git init`, `git remote`, `git branch --set-upstream`) write.
CLONE_KEYS = re.compile(
    r"^(?:core\.(?:repositoryformatversion|filemode|bare|logallrefupdates|ignorecase"
    r"|precomposeunicode|symlinks)"
    r"|remote\.origin\.(?:url|fetch)|branch\.[^\n]+\.(?:remote|merge)|extensions\.objectformat"
    r"|init\.defaultbranch)$"
)
TIMEOUT_LOCAL = 60.0
TIMEOUT_NETWORK = 300.0


class GitError(MemstoreError):
    """A git step in a team clone failed: its own message, one line."""


def git(folder: str, *args: str, input: str | None = None, network: bool = False,
        identity: bool = False, check: bool = True) -> processes.CompletedProcess[str]:
    """`git ARGS` in a team clone. `network`: a fetch or push (the local config is checked first),
    or a clone (`folder` "/": nothing local there). With `check`, a failure raises GitError with
    git's last line."""
    if network and folder != "/":
        foreign(folder)
    try:
        done = processes.run_git(folder, *args, input=input, network=network, identity=identity,
                                 timeout=TIMEOUT_NETWORK if network else TIMEOUT_LOCAL)
    except processes.TimeoutExpired:
        raise GitError(f"git {args[0]} in {folder} took too long",
                       hint="check the network and try again") from None
    except OSError as exc:
        raise GitError(f"git {args[0]} in {folder} could not run: {exc}",
                       hint="is git installed?") from None
    if check and done.returncode != 0:
        raise GitError(f"git {args[0]}: {last_line(done)}")
    return done


def last_line(done: processes.CompletedProcess[str]) -> str:
    """git's own reason, in one line: its first fatal/error line (the lines after it are advice),
    else its last."""
    lines = [line.strip() for line in (done.stderr or done.stdout or "").splitlines()
             if line.strip()]
    said = next((line for line in lines if line.startswith(("fatal:", "error:"))),
                lines[-1] if lines else "")
    return said[:300] or f"exit status {done.returncode}"


def named_files(done: processes.CompletedProcess[str]) -> list[str]:
    """The files git lists (tab-indented) in a refusal such as "would be overwritten by merge"."""
    return [line.strip() for line in (done.stderr or "").splitlines() if line.startswith("\t")]


def foreign(folder: str) -> None:
    """Refuse a clone whose local config holds a key no clone writes (GitError names it)."""
    try:
        done = processes.run_git(folder, "config", "--local", "--name-only", "--list",
                                 timeout=TIMEOUT_LOCAL)
    except (processes.TimeoutExpired, OSError) as exc:
        raise GitError(f"cannot read {folder}/.git/config: {exc}") from None
    if done.returncode != 0:
        return  # no repository yet (a clone about to be made): nothing local to run
    odd = [key for key in done.stdout.split("\n") if key and not CLONE_KEYS.match(key.lower())]
    if odd:
        raise GitError(f"{folder}/.git/config holds {odd[0]!r}, which memstore did not write: "
                       "a fetch or push there would run it",
                       hint=f"look at it (git -C {folder} config --local --list) and take it out")

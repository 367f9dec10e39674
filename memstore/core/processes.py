"""Every external process memstore starts, started here. Standard library only.

git, the model command of the wake, `crontab`, `ps`, the detached debrief, the command a
settings file registers (verify's probe): each is started by one of the functions below,
with an environment built here rather than passed through. This module is the only one that
imports `subprocess` (an import-linter `protected` contract in setup.cfg holds that), so a
new feature that needs a process comes here and gets the same care.

What a neutral environment means:
- no variable that makes a child load code it was not asked to run: LD_PRELOAD and its
  kin, BASH_ENV and ENV (a non-interactive shell sources them), PYTHONSTARTUP, PYTHONINSPECT,
  NODE_OPTIONS, PERL5OPT, RUBYOPT, GCONV_PATH (PYTHONPATH stays: memstore's own children may
  need it);
- for git, none of the caller's GIT_* (GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH, ...) but the
  identity ones, no system or global configuration, no pager, editor or prompt; and every
  setting of the repository that starts a program turned off on the command line (run_git);
- what the caller adds on purpose (MEMSTORE_HOOKS=off for the model command, say), last.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import IO, Any

CompletedProcess = subprocess.CompletedProcess
TimeoutExpired = subprocess.TimeoutExpired
SubprocessError = subprocess.SubprocessError
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL

# variables through which a child would load code of someone else's choosing (NODE_OPTIONS: the
# wake's model command is Claude Code, a node program)
_INJECTING = ("LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES",
              "DYLD_LIBRARY_PATH", "BASH_ENV", "ENV", "PYTHONSTARTUP", "PYTHONINSPECT",
              "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "GCONV_PATH")


def neutral_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without the variables that inject code into a child, plus
    `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in _INJECTING}
    env.update(extra or {})
    return env


def run(argv: Sequence[str], *, input: str | None = None, timeout: float,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`argv` to completion, its output captured as text. Raises what subprocess.run raises
    (OSError, TimeoutExpired); a non-zero exit is the caller's to read."""
    return subprocess.run(list(argv), input=input, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=neutral_env(env), check=False)


def spawn(argv: Sequence[str], *, stdin: int | IO[Any] | None = None,
          stdout: int | IO[Any] | None = None, stderr: int | IO[Any] | None = None,
          cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
          own_session: bool = True) -> subprocess.Popen[bytes]:
    """`argv` started and handed back (bytes pipes). `own_session`: its own session and process
    group, so a timeout can end all of it and a client that kills its hook's group does not end
    it."""
    return subprocess.Popen(list(argv), stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd,
                            env=neutral_env(env), start_new_session=own_session)


def spawn_logged(argv: Sequence[str], log: str | os.PathLike[str],
                 cwd: str | os.PathLike[str]) -> subprocess.Popen[bytes]:
    """A detached process (its own session) whose output is added to memstore's own log file
    `log` (core.fsguard.open_own: never through a link or into a FIFO; nowhere when it cannot
    be)."""
    from memstore.core.fsguard import open_own

    try:
        fd = open_own(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    except OSError:
        fd = DEVNULL
    try:
        return spawn(argv, stdin=DEVNULL, stdout=fd, stderr=fd, cwd=cwd, own_session=True)
    finally:
        if fd != DEVNULL:
            os.close(fd)


# -------------------------------------------------- git, with nothing of the repository's run

_IDENTITY = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
             "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE")
# every setting that makes git start a program, for the commands memstore runs (add, commit,
# ls-files, check-ignore, rev-parse, var, config); filters are turned off by name, per repository
# (run_git)
_OFF = ("core.fsmonitor=", "core.hooksPath=/dev/null", "core.pager=cat", "core.editor=:",
        "core.sshCommand=", "core.askPass=", "credential.helper=", "commit.gpgSign=false",
        "tag.gpgSign=false", "gc.auto=0", "maintenance.auto=false", "submodule.recurse=false",
        "diff.external=", "core.alternateRefsCommand=",
        # verifying a signature starts gpg (or what gpg.program names): a team clone's log, merge
        # and show never do
        "log.showSignature=false", "merge.verifySignatures=false", "gpg.program=false",
        "gpg.ssh.program=false", "gpg.x509.program=false",
        # log.follow with a pathspec of magic aborts git (a BUG in tree-diff): a project config
        # could stop the check
        "log.follow=false")


def git_env(*, person: bool = False) -> dict[str, str]:
    """The environment for a git process: no GIT_* of the caller's (GIT_DIR, GIT_CONFIG_*, ...) but
    the identity ones, no system or global config (unless `person`, for the person's own identity),
    no pager, editor or prompt."""
    env = {k: v for k, v in neutral_env().items() if not k.startswith("GIT_") or k in _IDENTITY}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat",
               GIT_EDITOR=":", GIT_SEQUENCE_EDITOR=":", GIT_ASKPASS="", SSH_ASKPASS="")
    if not person:
        env["GIT_CONFIG_GLOBAL"] = os.devnull
    return env


# what a fetch or push to a team's remote needs of the person's own (global) config: their
# credentials and ssh
_NETWORK = ("core.sshCommand=", "core.askPass=", "credential.helper=")
# the transports a team's remote may use: never ext:: or fd::, which run a command named in the URL
NETWORK_PROTOCOLS = "file:git:http:https:ssh"


def run_git(cwd: str | os.PathLike[str], *args: str, input: str | None = None,
            timeout: float = 60,
            env: Mapping[str, str] | None = None, identity: bool = False,
            network: bool = False) -> subprocess.CompletedProcess[str]:
    """`git ARGS` in `cwd` with nothing of the repository's configuration run: no fsmonitor, hooks,
    filters (each filter the repository's config names is emptied), pager, editor, signing program
    or system/global config. With `identity`, the person's author and committer (env, then config,
    as git itself finds them) are passed on, so a commit is theirs. With `network` (a team clone's
    fetch, push or clone, whose local config memstore.team.gitconf has checked): the person's global
    config is read, for their credential helper and ssh command, and only NETWORK_PROTOCOLS are
    allowed. Raises what subprocess.run raises."""
    base = {**git_env(person=network), **(env or {})}
    # without `network`, no transport: a partial clone's lazy fetch could run what its config names
    base["GIT_ALLOW_PROTOCOL"] = NETWORK_PROTOCOLS if network else ""
    base["GIT_NO_LAZY_FETCH"] = "0" if network else "1"
    off = [x for pair in (("-c", o) for o in _OFF if not (network and o in _NETWORK)) for x in pair]
    found = subprocess.run(["git", "--no-pager", *off, "config", "-z", "--name-only",
                            "--get-regexp", r"^filter\."], cwd=cwd, capture_output=True,
                           text=True, timeout=timeout, env=base, check=False)
    for key in {k.rpartition(".")[0] for k in found.stdout.split("\0") if k}:
        if "=" in key or "\n" in key:
            raise OSError(f"git config names a filter memstore cannot turn off: {key!r}")
        off += [x for part in ("clean=", "smudge=", "process=", "required=false")
                for x in ("-c", f"{key}.{part}")]
    if identity:
        person = {**git_env(person=True), **(env or {})}
        for who in ("AUTHOR", "COMMITTER"):
            ident = subprocess.run(["git", "--no-pager", *off, "var", f"GIT_{who}_IDENT"],
                                   cwd=cwd, capture_output=True, text=True, timeout=timeout,
                                   env=person, check=False)
            named = re.match(r"^(.*?) <([^<>]*)> \d+ [+-]\d{4}$", ident.stdout.strip())
            if ident.returncode == 0 and named:
                base.setdefault(f"GIT_{who}_NAME", named.group(1))
                base.setdefault(f"GIT_{who}_EMAIL", named.group(2))
    return subprocess.run(["git", "--no-pager", *off, *args], cwd=cwd, capture_output=True,
                          text=True, input=input, timeout=timeout, env=base, check=False)

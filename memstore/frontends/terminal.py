"""Is a person at this terminal? What answering review needs that an agent's tools do not have.

A coding client's shell tool (Claude Code's Bash, Codex's exec, Gemini CLI's
run_shell_command) runs a command with pipes, not a terminal. So an answer that is the
person's (`memstore review accept|reject`) is given only with a terminal on stdin that is
this process's controlling terminal, with the process in its foreground, and only after a
typed `y`. A client could still hand a command a terminal (`script`, a pty of its own), so a
coding client among the command's parent processes refuses it too, whatever the terminal.

This is a bar, not a boundary: an agent that sets out to evade it in a mode that runs any
command unasked (a `script` detached from its own process tree and fed through a fifo, or
a few lines of Python that write the answer file) still can; README says so. Each answer
records where it came from (`via`: the terminal, the user, the parent processes), so the
person can see afterwards what answered.

Standard library only.
"""

from __future__ import annotations

import os
import re
import sys

from memstore.core.errors import MemstoreError
from memstore.life.provenance import Proc, parents, provenance
from memstore.life.provenance import stdin_fd as _stdin_fd

CLIENTS = ("claude", "codex", "gemini")
# A client's own name, or one it is packaged under: claude, claude-code, codex-linux-sandbox,
# gemini-cli.
_CLIENT = re.compile(r"^(claude|codex|gemini)(?:$|[-_.@])", re.I)
# Programs that run a client's script (npm installs: `node .../@google/gemini-cli/dist/index.js`).
_INTERPRETER = re.compile(r"^(?:node(?:js)?|bun|deno|python[0-9.]*|ruby|perl)$")


class NotThePerson(MemstoreError):
    """This call cannot be the person at their terminal: nothing changes, one line, exit 1."""


def client_of(proc: Proc) -> str | None:
    """Which coding client `proc` is (claude, codex, gemini), by its name, executable or command
    line."""
    names = [proc.comm, os.path.basename(proc.exe),
             os.path.basename(proc.argv[0]) if proc.argv else ""]
    for name in names:
        match = _CLIENT.match(name)
        if match:
            return match.group(1).lower()
    if any(_INTERPRETER.match(name) for name in names if name):
        args = iter(proc.argv[1:])
        for word in args:
            if word == "-m":  # python -m something
                word = next(args, "")
            elif word.startswith("-"):
                continue
            for part in re.split(r"[/\\]", word):
                match = _CLIENT.match(part)
                if match:
                    return match.group(1).lower()
            break  # only the script (or module) the interpreter runs names the program
    return None


def client_among(procs: list[Proc]) -> tuple[str, Proc] | None:
    for proc in procs:
        client = client_of(proc)
        if client is not None:
            return client, proc
    return None


def stdin_is_terminal() -> bool:
    fd = _stdin_fd()
    return fd is not None and os.isatty(fd)


def person_at_terminal(what: str) -> dict[str, object]:
    """The provenance of a call made by a person at their terminal, or NotThePerson saying why not.

    `what` names the action for the one line (`review accept`).
    """
    from memstore.life.reviewing import AGENT_MARKS

    fd = _stdin_fd()
    if fd is None or not os.isatty(fd):
        raise NotThePerson(f"{what} needs you at a terminal (stdin is not one): nothing changed; "
                           "run it in your own terminal")
    try:
        foreground = os.tcgetpgrp(fd)
    except OSError:
        raise NotThePerson(f"{what} needs your own terminal (stdin is a terminal, but not this "
                           "process's controlling one): nothing changed") from None
    if foreground != os.getpgrp():
        raise NotThePerson(f"{what} must run in the foreground of your terminal: nothing changed")
    marked = next((name for name in AGENT_MARKS if os.environ.get(name)), None)
    if marked is not None:
        raise NotThePerson(f"{what} is the person's, and this runs inside an agent's session "
                           f"(${marked} is set): nothing changed; run it in your own terminal")
    procs = parents()
    among = client_among(procs)
    if among is not None:
        client, proc = among
        raise NotThePerson(f"{what} is the person's, and a coding client ({client}, "
                           f"pid {proc.pid}) is among this command's parent processes: "
                           "nothing changed; run it in your own terminal")
    return provenance(procs)


def ask(question: str) -> str | None:
    """Print `question` on the terminal and read one typed line, stripped and lower-cased (None at
    the end of input). Typeahead from before the question is dropped."""
    fd = _stdin_fd()
    assert fd is not None
    try:
        import termios

        termios.tcflush(fd, termios.TCIFLUSH)  # only what is typed after the question answers it
    except ImportError:
        pass
    # termios.error is not an OSError: a descriptor that is no terminal now
    except (OSError, termios.error):
        pass
    try:
        out = open("/dev/tty", "w", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed below
    except OSError:
        out = None
    try:
        (out or sys.stderr).write(question)
        (out or sys.stderr).flush()
        line = sys.stdin.readline()
    finally:
        if out is not None:
            out.close()
    return line.strip().lower() if line else None


def confirmed(question: str) -> bool:
    """`question [y/N] `, true only for a typed y or yes."""
    return ask(f"{question} [y/N] ") in ("y", "yes")

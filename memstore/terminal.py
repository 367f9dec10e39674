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
import subprocess
import sys
from dataclasses import dataclass, field

from memstore.errors import MemstoreError

CLIENTS = ("claude", "codex", "gemini")
# A client's own name, or one it is packaged under: claude, claude-code, codex-linux-sandbox, gemini-cli.
_CLIENT = re.compile(r"^(claude|codex|gemini)(?:$|[-_.@])", re.I)
# Programs that run a client's script (npm installs: `node .../@google/gemini-cli/dist/index.js`).
_INTERPRETER = re.compile(r"^(?:node(?:js)?|bun|deno|python[0-9.]*|ruby|perl)$")
_MAX_HOPS = 64


class NotThePerson(MemstoreError):
    """This call cannot be the person at their terminal: nothing changes, one line, exit 1."""


@dataclass
class Proc:
    pid: int
    ppid: int
    comm: str
    exe: str = ""
    argv: list[str] = field(default_factory=list)


def _read_proc(pid: int) -> Proc | None:
    base = f"/proc/{pid}"
    try:
        with open(f"{base}/stat", encoding="utf-8", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return None
    comm = stat[stat.find("(") + 1:stat.rfind(")")]
    rest = stat[stat.rfind(")") + 1:].split()
    try:
        ppid = int(rest[1])
    except (IndexError, ValueError):
        return None
    try:
        exe = os.readlink(f"{base}/exe")
    except OSError:
        exe = ""
    try:
        with open(f"{base}/cmdline", "rb") as handle:
            argv = [w.decode("utf-8", "replace") for w in handle.read().split(b"\0") if w]
    except OSError:
        argv = []
    return Proc(pid, ppid, comm, exe, argv)


def _ps_table() -> dict[int, Proc]:
    """Every process from `ps` (macOS and other systems without /proc): pid -> Proc."""
    table: dict[int, Proc] = {}
    try:
        comms = subprocess.run(["ps", "-axo", "pid=,ppid=,comm="], capture_output=True, text=True, timeout=5).stdout
        args = subprocess.run(["ps", "-axo", "pid=,args="], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return table
    for line in comms.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            comm = parts[2].strip() if len(parts) == 3 else ""
            table[int(parts[0])] = Proc(int(parts[0]), int(parts[1]), os.path.basename(comm), comm)
    for line in args.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0].isdigit() and int(parts[0]) in table:
            table[int(parts[0])].argv = parts[1].split()
    return table


def parents(pid: int | None = None) -> list[Proc]:
    """The processes above `pid` (default: this one), nearest first, up to and including pid 1."""
    found: list[Proc] = []
    current = os.getpid() if pid is None else pid
    table: dict[int, Proc] | None = None
    if not os.path.isdir(f"/proc/{current}"):
        table = _ps_table()
    me = _read_proc(current) if table is None else table.get(current)
    seen = {current}
    ppid = me.ppid if me is not None else (os.getppid() if pid is None else 0)
    while ppid > 0 and ppid not in seen and len(found) < _MAX_HOPS:
        seen.add(ppid)
        proc = _read_proc(ppid) if table is None else table.get(ppid)
        if proc is None:
            break
        found.append(proc)
        ppid = proc.ppid
    return found


def client_of(proc: Proc) -> str | None:
    """Which coding client `proc` is (claude, codex, gemini), by its name, executable or command line."""
    names = [proc.comm, os.path.basename(proc.exe), os.path.basename(proc.argv[0]) if proc.argv else ""]
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


def _stdin_fd() -> int | None:
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by something with no descriptor
        return None


def stdin_is_terminal() -> bool:
    fd = _stdin_fd()
    return fd is not None and os.isatty(fd)


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, OSError):
        return os.environ.get("USER") or os.environ.get("USERNAME") or "?"


def provenance(procs: list[Proc] | None = None) -> dict[str, object]:
    """Where a call came from: its terminal (None without one), the user, the parent processes' names."""
    fd = _stdin_fd()
    tty = None
    if fd is not None and os.isatty(fd):
        try:
            tty = os.ttyname(fd)
        except OSError:
            tty = "?"
    procs = parents() if procs is None else procs
    return {"tty": tty, "user": _user(), "parents": [proc.comm for proc in procs]}


def person_at_terminal(what: str) -> dict[str, object]:
    """The provenance of a call made by a person at their terminal, or NotThePerson saying why not.

    `what` names the action for the one line (`review accept`).
    """
    from memstore.reviewing import AGENT_MARKS

    fd = _stdin_fd()
    if fd is None or not os.isatty(fd):
        raise NotThePerson(f"{what} needs you at a terminal (stdin is not one): nothing changed; "
                           "run it in your own terminal")
    try:
        foreground = os.tcgetpgrp(fd)
    except OSError:
        raise NotThePerson(f"{what} needs your own terminal (stdin is a terminal, but not this process's "
                           "controlling one): nothing changed") from None
    if foreground != os.getpgrp():
        raise NotThePerson(f"{what} must run in the foreground of your terminal: nothing changed")
    marked = next((name for name in AGENT_MARKS if os.environ.get(name)), None)
    if marked is not None:
        raise NotThePerson(f"{what} is the person's, and this runs inside an agent's session (${marked} is set): "
                           "nothing changed; run it in your own terminal")
    procs = parents()
    among = client_among(procs)
    if among is not None:
        client, proc = among
        raise NotThePerson(f"{what} is the person's, and a coding client ({client}, pid {proc.pid}) is among this "
                           "command's parent processes: nothing changed; run it in your own terminal")
    return provenance(procs)


def ask(question: str) -> str | None:
    """Print `question` on the terminal and read one typed line, stripped and lower-cased (None at the
    end of input). Typeahead from before the question is dropped."""
    fd = _stdin_fd()
    assert fd is not None
    try:
        import termios

        termios.tcflush(fd, termios.TCIFLUSH)  # only what is typed after the question answers it
    except (ImportError, OSError):
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

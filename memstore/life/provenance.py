"""Where a call came from: its terminal, the user and the parent processes (`provenance`), recorded
with each review answer so the person can see afterwards what answered. Standard library only;
processes are read from /proc, or from `ps` (through memstore.core.processes) where there is none.

Here, in the memory's life, because a review answer given through the library records it too
(reviewing.answer); the command line's terminal check (memstore.frontends.terminal) builds on it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from memstore.core import processes

_MAX_HOPS = 64


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
        comms = processes.run(["ps", "-axo", "pid=,ppid=,comm="], timeout=5).stdout
        args = processes.run(["ps", "-axo", "pid=,args="], timeout=5).stdout
    except (OSError, processes.SubprocessError):
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


def stdin_fd() -> int | None:
    """This process's stdin descriptor; None when stdin has none."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by something with no descriptor
        return None


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, OSError):
        return os.environ.get("USER") or os.environ.get("USERNAME") or "?"


def provenance(procs: list[Proc] | None = None) -> dict[str, object]:
    """Where a call came from: its terminal (None without one), the user, its parent processes."""
    fd = stdin_fd()
    tty = None
    if fd is not None and os.isatty(fd):
        try:
            tty = os.ttyname(fd)
        except OSError:
            tty = "?"
    procs = parents() if procs is None else procs
    return {"tty": tty, "user": _user(), "parents": [proc.comm for proc in procs]}

"""Run the real memstore CLI in a pseudo-terminal and type answers, as a person at a terminal would.

`memstore review accept|reject` (and the walk of `memstore review`) act only for a person at
their terminal (memstore.frontends.terminal): a CliRunner call or a pipe is refused by design. These
helpers fork a child on a fresh pty (its controlling terminal, the child in its foreground),
exec the venv's console script there, wait for each question and type the next answer.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import NOW

# What memstore prints when it waits for a typed answer.
PROMPT = re.compile(rb"(\[y/N\] |\[q\]uit\? )")
MEMSTORE = str(Path(sys.executable).parent / "memstore")


@dataclass
class PtyResult:
    exit_code: int
    # everything the terminal showed (stdout, stderr, the echo of what was typed), \r\n as \n
    output: str
    asked: int  # how many questions were answered


def run_in_pty(
        argv: Sequence[str], answers: Sequence[str] = (), *, env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None, timeout: float = 60) -> PtyResult:
    """argv in a new session on a new pty; each answer (a line, newline added) is typed at the next
    question."""
    env = dict(os.environ if env is None else env)
    pid, fd = pty.fork()
    # the child: pty.fork made the pty its controlling terminal and stdin/stdout/stderr
    if pid == 0:
        try:
            if cwd is not None:
                os.chdir(cwd)
            os.execvpe(argv[0], list(argv), env)
        finally:
            os._exit(127)
    out = bytearray()
    waiting_from = 0
    pending = list(answers)
    deadline = time.monotonic() + timeout
    asked = 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                raise AssertionError(
                    f"{' '.join(argv)}: no end in {timeout}s; the terminal showed:\n{out.decode()}")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the child closed its side (it exited)
                    chunk = b""
                if not chunk:
                    break
                out += chunk
            if pending and PROMPT.search(out, waiting_from):
                os.write(fd, (pending.pop(0) + "\n").encode())
                asked += 1
                waiting_from = len(out)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    code = os.waitstatus_to_exitcode(status)
    return PtyResult(code, out.decode("utf-8", "replace").replace("\r\n", "\n"), asked)


def memstore_in_pty(root: Path, *args: str, answers: Sequence[str] = (), parent: str | None = None,
                    env: dict[str, str] | None = None,
                    cwd: str | os.PathLike[str] | None = None) -> PtyResult:
    """`memstore --root ROOT ARGS...` in a pty with the tests' pinned clock, typing `answers`.

    `parent`: a program to run it under (a shell by another name, e.g. a copy of /bin/sh called
    `claude`), so that program is among memstore's parent processes.
    """
    environ = {**(os.environ if env is None else env), "MEMSTORE_NOW": NOW}
    argv = [MEMSTORE, "--root", str(root), *args]
    if parent is not None:
        # not the last command: the shell stays the parent
        argv = [parent, "-c", '"$@"; exit $?', "sh", *argv]
    return run_in_pty(argv, answers, env=environ, cwd=cwd)


def as_person(root: Path, *args: str, answers: Sequence[str] = ("y",)) -> PtyResult:
    """The person answering at their terminal: the call must succeed (typing `y` by default).

    Skipped when this test run itself runs under a coding client (claude, codex, gemini among
    its parents): every command it starts is then refused by design, whatever the terminal.
    """
    from memstore.frontends.terminal import client_among
    from memstore.life.provenance import parents

    among = client_among(parents())
    if among is not None:
        pytest.skip(f"this test run is inside a coding client ({among[0]}): memstore refuses "
                    "review answers there")
    result = memstore_in_pty(root, *args, answers=answers)
    assert result.exit_code == 0, (
        f"memstore {' '.join(args)}: exit {result.exit_code}\n{result.output}")
    return result

"""Meaning that arrives by itself: one detached, low-priority embedding pass per root, after a sync
that leaves many files without a vector.

Until every file has its vector, hybrid search is words alone for the rest: right after a first sync
of 3,000 files only a few seconds' worth are embedded (the sync's budget). So when a sync, a rebuild
or an install leaves more than `search_embed_max` files pending, `start` launches `memstore embed
--background` for the root: detached from the caller's session, under `nice`, its output to
runtime/state/embed-background.log. It holds the embedding lock while it works and embeds in short
rounds, so it is:

- one per root: a second start sees the first alive (its pid file, checked against the process's own
  command line, so a reused pid is not taken for it), and a second pass that somehow starts finds
  the lock taken and leaves;
- resumable: each round commits what it embedded; a pass that is stopped or killed leaves the rest
  pending, and the next sync starts another;
- stopped cleanly by anything that needs the lock: `memstore embed` (which embeds everything itself)
  sends it SIGTERM, and the pass ends after its current round and lets the lock go.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memstore.core.agent_root import meaning_file, state_dir
from memstore.core.locks import LockTimeout, atomic_write, file_lock

if TYPE_CHECKING:
    from memstore.meaning.embedding import Embedder
    from memstore.meaning.vectors import EmbedReport

PID_FILE = "embed-background.json"
LOG_FILE = "embed-background.log"
ROUND_S = 2.0  # seconds of embedding per round: the longest a stop waits for the lock to go


def note_coverage(root: Path, conn: sqlite3.Connection, model: str, pending: int) -> None:
    """Keep how much of the root has meaning now (core.agent_root.meaning_file), after each pass or
    round: the SessionStart bundle says so while much is pending, without opening the mirror."""
    from memstore.meaning.vectors import embedded_count, searchable_count  # here: FTS skips it

    target = Path(meaning_file(root))
    embedded = embedded_count(conn, model)  # a file whose tail parts still wait has meaning already
    total = searchable_count(conn)
    data = {"model": model, "embedded": embedded, "total": total, "pending": pending,
            "at": time.time()}
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, json.dumps(data).encode("utf-8"))
    except OSError:
        pass  # a root this process cannot write: the bundle says nothing rather than stale news


def _pid_path(root: Path) -> Path:
    return Path(state_dir(root)) / PID_FILE


def running(root: Path) -> int | None:
    """The pid of this root's background pass, when one is alive."""
    try:
        data = json.loads(_pid_path(root).read_text(encoding="utf-8"))
        pid = data["pid"]
        # one process, never a group (0, -N) or everyone (-1): the file is only ever memstore's own
        # words, but a file in runtime/ can be forged, and what it names gets a SIGTERM
        if type(pid) is not int or not 1 < pid < 1 << 22 or pid == os.getpid():
            return None
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError, TypeError, OverflowError):
        return None
    try:  # a pid the system gave to another program since is not our pass
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")
        if b"--background" not in argv or os.fsencode(str(root)) not in argv:
            return None
    except OSError:
        if os.path.isdir("/proc"):
            return None  # a system with /proc that cannot show it: not a pass of ours to signal
        # no /proc (macOS): the pid file and a live process are what there is
    return pid


def start(root: Path, pending: int, threshold: int) -> bool:
    """Start the background pass if over `threshold` files wait and none runs; whether it did."""
    if pending <= threshold or running(root) is not None:
        return False
    import shutil

    from memstore.core import processes  # here: a search never loads subprocess; a start does

    # -P: no folder of the caller's stands in for a module of memstore's
    argv = [sys.executable, "-P", "-m", "memstore", "--root", str(root), "embed", "--background"]
    if (nice := shutil.which("nice")) is not None:
        argv = [nice, "-n", "19", *argv]
    folder = _pid_path(root).parent
    folder.mkdir(parents=True, exist_ok=True)
    # its one line (or a failure) lands here, not in the caller's terminal
    processes.spawn_logged(argv, folder / LOG_FILE, cwd=str(root))
    return True


def stop(root: Path, wait_s: float = 15.0) -> bool:
    """Ask this root's background pass to end after its round (SIGTERM); gone within wait_s?"""
    pid = running(root)
    if pid is None:
        return True
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return True
    ends = time.monotonic() + wait_s
    while time.monotonic() < ends:
        if running(root) is None:
            return True
        time.sleep(0.1)
    return False


class Held:
    """A background pass at work: what it embedded so far, and whether SIGTERM asked it to end."""

    def __init__(self, model: str) -> None:
        from memstore.meaning.vectors import EmbedReport  # here: see note_coverage

        self.total = EmbedReport(model)
        self.asked: list[int] = []

    def add(self, done: EmbedReport) -> None:
        self.total.embedded += done.embedded
        self.total.parts += done.parts
        self.total.reused += done.reused
        self.total.seconds += done.seconds
        self.total.pending = done.pending


@contextlib.contextmanager
def held(root: Path, lock: str | os.PathLike[str], model: str) -> Iterator[Held | None]:
    """The background pass's hold on the root (`memstore embed --background`): the embedding lock,
    its pid file and SIGTERM taken as "end after this round"; None when another pass holds the lock.
    Its rounds (`one_round`, ROUND_S each) are run by memstore.api.flows."""
    state = Held(model)
    signal.signal(signal.SIGTERM, lambda signum, frame: state.asked.append(signum))
    pid_path = _pid_path(root)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(file_lock(Path(lock), timeout=0))
        except LockTimeout:
            yield None
            return
        pid_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(pid_path, json.dumps({"pid": os.getpid(), "started": time.time()}).encode())
        try:
            yield state
        finally:
            try:
                if json.loads(pid_path.read_text()).get("pid") == os.getpid():
                    pid_path.unlink()
            except (OSError, ValueError, AttributeError):
                pass


def one_round(conn: sqlite3.Connection, root: Path, embedder: Embedder) -> EmbedReport:
    """One round of the background pass: ROUND_S of embedding, and the coverage it leaves."""
    from memstore.meaning.vectors import embed_pending  # here: see note_coverage

    done = embed_pending(conn, embedder, budget_s=ROUND_S)
    note_coverage(root, conn, embedder.key, done.pending)
    return done

"""`memstore watch`: keep the mirror and the derived files in step with the files, live.

A front end of `Store`, like the command line: it calls `Store.render`, nothing
lower. A watchdog observer on the root reports creates, modifications, deletes and
moves of markdown files; they are collected and, after `debounce` seconds of quiet
(or `max_delay` seconds of a steady stream), folded into one cycle: `Store.render`,
which is a full incremental sync (the mtime/size/inode walk, which also sees files
rewritten in place, unlike the quick folder check) and then a render that rewrites a
derived file only when its bytes change. A full rescan runs every `rescan` seconds
even without events, so events the kernel never delivered (a queue overflow, a
sleeping laptop, a network mount) are caught up with, and time-driven bands (New
expiring, scores decaying) stay current.

What never triggers a cycle (`relevant`): anything under runtime/ or the other
skipped folders, hidden files and folders (.git/, the `.NAME.PID.tmp` temp files of
`locks.atomic_write`, editors' swap files), files that are not markdown, and the
derived files MEMORY.md, MEMORY-archive.md and current-state.md, which the watcher's
own render writes: counting them would make it trigger itself. Opens, reads and
closes without a write are not asked for, so the sync reading files is silent too.

One watcher per root: `WatchLock` holds a non-blocking flock on
runtime/state/watch.lock, with the holder's pid written in it. An error in a cycle
is one line through `warn`, the cycle is retried with a backoff, and the watcher
keeps running. Intervals use a clock that counts suspended time too (`clock`, injectable); the Store
keeps its own clock for scores.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from memstore.core.errors import MemstoreError
from memstore.core.kinds import SKIP_DIRS, classify

if TYPE_CHECKING:
    from memstore.api.store import Store

Say = Callable[[str], None]


def _clock() -> float:
    """Seconds that keep counting while the machine sleeps (Linux), so a rescan is due on waking."""
    try:
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    except (AttributeError, OSError):
        return time.monotonic()

# The event types that mean a file's bytes or its presence changed. Not opened,
# closed_no_write or attrib: the sync's own reads must never look like a change.
FILE_EVENTS = frozenset({"created", "modified", "deleted", "moved", "closed"})
# a folder's "modified" is every change inside it
DIR_EVENTS = frozenset({"created", "deleted", "moved"})


class WatcherRunning(MemstoreError):
    """Another `memstore watch` already holds this root's watch lock."""


def relevant(rel: str, is_directory: bool = False) -> bool:
    """Does a change at this root-relative path (posix form) call for a sync?"""
    if not rel or rel == ".":
        return False
    parts = rel.split("/")
    # .git/, hidden files, atomic_write's .NAME.PID.tmp
    if any(part.startswith(".") for part in parts):
        return False
    folders = parts if is_directory else parts[:-1]
    # runtime/ (the mirror, locks, journal), venvs, ...
    if any(part in SKIP_DIRS for part in folders):
        return False
    if is_directory:
        return True  # a folder created, deleted or moved: its files came or went with it
    return parts[-1].endswith(".md") and classify(rel) != "derived"  # our own render writes those


class WatchLock:
    """One watcher per root: a non-blocking flock on `path`, with the holder's pid in the file.

    The lock dies with the process (kill -9 included); the file itself is never
    removed, since unlinking a lock file lets two processes each lock a different file.
    """

    def __init__(self, path: str | os.PathLike[str], root: str | os.PathLike[str] = "") -> None:
        self.path = os.fspath(path)
        self.root = os.fspath(root)
        self._fd: int | None = None

    def acquire(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            who = f"pid {holder}" if holder else "pid unknown"
            where = f" {self.root}" if self.root else ""
            raise WatcherRunning(f"another memstore watch ({who}) is already watching"
                                 f"{where}") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)  # no stale pid left behind
        os.close(self._fd)  # closing the descriptor releases the lock
        self._fd = None

    def __enter__(self) -> WatchLock:
        self.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


def _holder(fd: int, patience: float = 1.0) -> int | None:
    """The pid the holder wrote (it may be between its flock and its write: wait a moment)."""
    deadline = time.monotonic() + patience
    while True:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
        if text.isdigit():
            return int(text)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.02)


class _Handler:
    """The watchdog event handler: hands every event to the watcher (duck-typed `dispatch`)."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def dispatch(self, event: Any) -> None:
        self.watcher.dispatch(event)


def _observer() -> Any:
    """The real watchdog observer (inotify on Linux), imported only when a watcher runs."""
    from watchdog.observers import Observer

    return Observer()


def _event_filter() -> list[type]:
    from watchdog.events import (
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    return [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent,
            DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


class Watcher:
    """Debounce file events into sync-and-render cycles through a Store; rescan on a timer.

    `run(stop)` blocks until the `stop` Event is set. Events come in through
    `dispatch(event)` (a watchdog event) or `notice(rel)`, from any thread.
    """

    def __init__(
        self,
        store: Store,
        *,
        debounce: float = 1.0,
        rescan: float = 300.0,
        max_delay: float | None = None,
        retry: float = 5.0,
        log: Say | None = None,
        warn: Say | None = None,
        clock: Callable[[], float] = _clock,
        poll: float = 0.1,
    ) -> None:
        if debounce < 0 or rescan <= 0:
            raise ValueError("debounce must be >= 0 and rescan > 0")
        self.store = store
        self.root = os.fspath(store.root)
        self.debounce = debounce
        self.rescan = rescan
        # A steady stream of events (a bulk copy) still gets a cycle this often.
        self.max_delay = max_delay if max_delay is not None else max(10 * debounce, 5.0)
        self.retry = retry
        self.log: Say = log or (lambda _line: None)
        self.warn: Say = warn or (lambda _line: None)
        self.clock = clock
        self.poll = poll
        self.cycles = 0  # cycles that completed
        self.failures = 0  # failed cycles in a row
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._first: float | None = None  # when the oldest unsynced event came
        self._last: float | None = None  # when the newest came
        self._next_rescan = 0.0
        self._retry_at: float | None = None

    # ------------------------------------------------------------ events in

    def dispatch(self, event: Any) -> None:
        """A watchdog event: note each relevant path it names."""
        kinds = DIR_EVENTS if event.is_directory else FILE_EVENTS
        if event.event_type not in kinds:
            return
        for path in (event.src_path, getattr(event, "dest_path", "")):
            rel = self._rel(os.fsdecode(path)) if path else None
            if rel is not None and relevant(rel, event.is_directory):
                self.notice(rel)

    def notice(self, rel: str) -> None:
        """Record a change at a root-relative path; a cycle follows after `debounce` of quiet."""
        now = self.clock()
        with self._lock:
            self._pending.add(rel)
            if self._first is None:
                self._first = now
            self._last = now

    def _rel(self, path: str) -> str | None:
        if not path.startswith(self.root + os.sep):
            return None
        return path[len(self.root) + 1 :].replace(os.sep, "/")

    # ------------------------------------------------------------ the loop

    def run(self, stop: threading.Event, observer_factory: Callable[[], Any] | None = None) -> None:
        """Watch until `stop` is set. The observer is started first, so nothing slips past the first
        cycle."""
        observer = (observer_factory or _observer)()
        observer.schedule(_Handler(self), self.root, recursive=True, event_filter=_event_filter())
        try:
            observer.start()
        except OSError as exc:  # e.g. the inotify watch limit: rescans keep the mirror current
            self.warn(f"file events unavailable ({exc}); relying on the full rescan every "
                      f"{self.rescan:g} s")
        try:
            self.cycle("start")  # whatever changed while nobody watched
            while not stop.is_set():
                due = self._due(self.clock())
                if due is not None:
                    self.cycle(due)
                    continue
                stop.wait(self.poll)
        finally:
            observer.stop()
            with contextlib.suppress(RuntimeError):  # never started (a test's stand-in)
                observer.join(timeout=10)

    def _due(self, now: float) -> str | None:
        """Which cycle is due now, if any: 'events', 'retry' or 'rescan'."""
        with self._lock:
            first, last = self._first, self._last
        if self._retry_at is not None:
            return "retry" if now >= self._retry_at else None  # events wait for the backoff too
        if (last is not None and first is not None
                and (now - last >= self.debounce or now - first >= self.max_delay)):
            return "events"
        if now >= self._next_rescan:
            return "rescan"
        return None

    def cycle(self, reason: str = "events") -> bool:
        """One full incremental sync and render through the Store. False (and one warn line) on an
        error.

        `Store.render` catches the mirror up with a full walk (mtime, size, inode: it sees
        files rewritten in place, which the quick folder check does not) before it renders,
        so one call is the whole cycle, and the derived files are written only if their
        bytes change.
        """
        with self._lock:
            paths, self._pending = self._pending, set()
            self._first = self._last = None
        try:
            rendered = self.store.render()
        except Exception as exc:  # the watcher outlives any one cycle
            self._failed(reason, paths, exc)
            return False
        self.failures = 0
        self._retry_at = None
        self.cycles += 1
        self._next_rescan = self.clock() + self.rescan
        if rendered.written or reason in ("start", "retry"):
            what = {"start": "caught up", "events": f"{len(paths)} path(s) changed",
                    "retry": "recovered", "rescan": "rescan"}[reason]
            self.log(f"{what}: {rendered.summary()}")
        return True

    def _failed(self, reason: str, paths: set[str], exc: Exception) -> None:
        with self._lock:  # keep what was owed, for the retry
            self._pending |= paths
        self.failures += 1
        backoff = min(self.rescan, self.retry * 2 ** min(self.failures - 1, 16))
        self._retry_at = self.clock() + backoff
        if isinstance(exc, MemstoreError):
            text = str(exc) + (f" ({exc.hint})" if exc.hint else "")
        else:
            text = f"{type(exc).__name__}: {exc}"
        text = " ".join(text.split())  # one line, whatever the message held
        self.warn(f"{reason} cycle failed: {text}; retrying in {backoff:g} s")


def serve(
    store: Store,
    stop: threading.Event,
    *,
    debounce: float = 1.0,
    rescan: float = 300.0,
    log: Say | None = None,
    warn: Say | None = None,
    observer_factory: Callable[[], Any] | None = None,
) -> Watcher:
    """Take the root's watch lock, watch until `stop` is set, release it. WatcherRunning if held."""
    watcher = Watcher(store, debounce=debounce, rescan=rescan, log=log, warn=warn)
    with WatchLock(store.paths.watch_lock, store.root):
        watcher.log(f"watching {store.root} (pid {os.getpid()}): debounce {debounce:g} s, "
                    f"full rescan every {rescan:g} s; Ctrl-C stops")
        watcher.run(stop, observer_factory)
    return watcher


@contextlib.contextmanager
def stop_on_signals(stop: threading.Event,
                    signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM set `stop` (a second one while stopping interrupts for
    good)."""

    def handler(_signum: int, _frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)

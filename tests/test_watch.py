"""`memstore watch`: the live watcher (memstore/frontends/watch.py).

The end-to-end tests run the real `memstore watch` as a subprocess on a synthetic root
and look at memory/MEMORY.md, which only a render writes: a search or list from the
test would catch the mirror up by itself (its quick check) and prove nothing about
the watcher. The rescan, debounce and error paths run the loop in a thread with a
stand-in observer that delivers no events, so only the path under test can explain
what the test sees. Every wait is a poll with a deadline, never a fixed sleep, except
the quiet periods that prove something does NOT happen.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from watchdog.events import FileCreatedEvent, FileModifiedEvent, FileMovedEvent

from memstore.api.store import Store
from memstore.core.errors import Busy
from memstore.frontends.watch import Watcher, WatchLock, relevant, serve
from tests.helpers import memory, write

DEADLINE = 10.0


def wait_for(check: Callable[[], bool], what: str, proc: subprocess.Popen[str] | None = None,
             timeout: float = DEADLINE) -> float:
    """Poll until check() holds; returns the seconds it took. Fails naming `what` (and a dead
    watcher's stderr)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(
                f"the watcher exited ({proc.returncode}) while waiting for {what}:\n{out}\n{err}")
        time.sleep(0.03)
    pytest.fail(f"not within {timeout:g} s: {what}")


def index(root: Path) -> str:
    try:
        return (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


@pytest.fixture
def watched_root(tmp_path: Path) -> Path:
    base = tmp_path / "agent"
    write(base, "memory/feedback_seed.md", memory("feedback_seed", "seed memory as first written"))
    return base


# ---------------------------------------------------------------- the real command, as a subprocess


@pytest.fixture
def start_watcher() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start `memstore --root R watch --debounce 0.2 ...`; whatever is still running at the end is
    stopped."""
    started: list[subprocess.Popen[str]] = []
    env = {k: v for k, v in os.environ.items() if k not in ("MEMSTORE_ROOT", "MEMSTORE_NOW")}

    def start(root: Path, *extra: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memstore", "--root", str(root), "watch", "--debounce", "0.2",
             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


def lock_file(root: Path) -> Path:
    return root / "runtime" / "state" / "watch.lock"


def wait_ready(root: Path, proc: subprocess.Popen[str]) -> None:
    """The watcher holds the lock (its pid written in it) and has rendered once: its observer is
    running."""
    def ready() -> bool:
        try:
            held = lock_file(root).read_text().strip() == str(proc.pid)
        except FileNotFoundError:
            return False
        return held and "seed memory" in index(root)

    wait_for(ready, "the watcher to take the lock and render", proc)


def test_watch_picks_up_create_edit_in_place_rename_into_place_and_delete(
        watched_root: Path, start_watcher: Callable[..., subprocess.Popen[str]]) -> None:
    """Failure caught: a kind of change the observer reports is dropped or never synced: a create,
    an in-place rewrite (which the quick folder check cannot see), an editor's temp-file-and-rename
    save (create of a hidden temp name, then a move onto the real name) or a delete does not reach
    MEMORY.md. The rescan is set far beyond the deadline, so only events can explain each pickup."""
    proc = start_watcher(watched_root, "--rescan", "600")
    wait_ready(watched_root, proc)
    target = watched_root / "memory" / "feedback_alpha.md"

    write(watched_root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha as created"))
    wait_for(lambda: "alpha as created" in index(watched_root), "a created memory in MEMORY.md",
             proc)

    inode = target.stat().st_ino
    target.write_text(memory("feedback_alpha", "alpha edited in place", body="zebracorn"),
                      encoding="utf-8")
    assert target.stat().st_ino == inode  # really in place: the same inode
    wait_for(lambda: "alpha edited in place" in index(watched_root),
             "an in-place edit in MEMORY.md", proc)
    assert "alpha as created" not in index(watched_root)
    # the mirror itself, as the watcher left it
    hits = Store(watched_root).search("zebracorn", catch_up="none")
    assert [hit.path for hit in hits] == ["memory/feedback_alpha.md"]

    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")  # memstore's own temp naming
    temp.write_text(memory("feedback_alpha", "alpha renamed into place"), encoding="utf-8")
    os.replace(temp, target)
    wait_for(lambda: "alpha renamed into place" in index(watched_root),
             "a rename-into-place save in MEMORY.md", proc)

    target.unlink()
    wait_for(lambda: "feedback_alpha" not in index(watched_root),
             "a deleted memory gone from MEMORY.md", proc)
    assert "seed memory" in index(watched_root)
    assert proc.poll() is None


def test_second_watcher_on_the_same_root_exits_1_naming_the_first_pid(
        watched_root: Path, start_watcher: Callable[..., subprocess.Popen[str]]) -> None:
    """Failure caught: two watchers on one root (double syncs, racing renders), or a second one that
    fails without saying which process holds the root."""
    first = start_watcher(watched_root, "--rescan", "600")
    wait_ready(watched_root, first)
    env = {k: v for k, v in os.environ.items() if k != "MEMSTORE_NOW"}
    second = subprocess.run(
        [sys.executable, "-m", "memstore", "--root", str(watched_root), "watch"],
        capture_output=True, text=True, timeout=20, env=env)
    assert second.returncode == 1, second.stdout + second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1, second.stderr
    assert f"pid {first.pid}" in lines[0] and "already watching" in lines[0]
    assert second.stdout == ""
    assert first.poll() is None  # the first one is unharmed
    assert lock_file(watched_root).read_text().strip() == str(first.pid)


def test_sigint_and_sigterm_stop_cleanly_and_release_the_lock(
        watched_root: Path, start_watcher: Callable[..., subprocess.Popen[str]]) -> None:
    """Failure caught: Ctrl-C ends in a traceback or exit 130, SIGTERM kills the watcher mid-cycle
    without stopping the observer, or the lock (or its pid) outlives the watcher so the next one
    cannot start. Also that --rescan reaches the watcher."""
    proc = start_watcher(watched_root, "--rescan", "2")
    wait_ready(watched_root, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    lines = out.strip().splitlines()
    assert lines[-1] == "stopped"
    assert f"(pid {proc.pid})" in lines[0] and "full rescan every 2 s" in lines[0]
    assert "Traceback" not in err
    with open(lock_file(watched_root), "rb+") as handle:  # free: a non-blocking lock succeeds
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert handle.read() == b""  # no stale pid left behind

    again = start_watcher(watched_root, "--rescan", "2")
    wait_ready(watched_root, again)
    again.send_signal(signal.SIGTERM)
    out, err = again.communicate(timeout=10)
    assert again.returncode == 0, err
    assert out.strip().splitlines()[-1] == "stopped"


# ---------------------------------------------------------------- the loop, in a thread


class NoEvents:
    """An observer that never delivers an event: a lost inotify queue, a machine that slept."""

    def schedule(self, handler: object, path: str, **_options: object) -> None:
        self.handler = handler

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def join(self, timeout: float | None = None) -> None:
        pass


class NoInotify(NoEvents):
    """An observer that cannot start: the inotify watch limit of a big home folder."""

    def start(self) -> None:
        raise OSError(28, "inotify watch limit reached")


@pytest.fixture
def in_thread() -> Iterator[Callable[[Callable[[threading.Event], object]], threading.Thread]]:
    """Run fn(stop) in a thread; stopped and joined at the end (and it must stop within 5 s)."""
    running: list[tuple[threading.Thread, threading.Event]] = []

    def start(fn: Callable[[threading.Event], object]) -> threading.Thread:
        stop = threading.Event()
        thread = threading.Thread(target=fn, args=(stop,), daemon=True)
        thread.start()
        running.append((thread, stop))
        return thread

    yield start
    for thread, stop in running:
        stop.set()
        thread.join(5)
        assert not thread.is_alive(), "the watcher did not stop within 5 s of its stop event"


@pytest.mark.parametrize("observer", [NoEvents, NoInotify])
def test_rescan_catches_a_change_no_event_reported(
        watched_root: Path, in_thread: Callable[..., threading.Thread],
        observer: type[NoEvents]) -> None:
    """Failure caught: with events lost (queue overflow, sleep, an observer that died or could not
    start), the watcher goes stale for good or stops; the periodic full rescan must catch an
    in-place edit within its interval. Also: serve() releases the watch lock when stopped, so the
    next watcher in this process can start."""
    store = Store(watched_root)
    holder: list[threading.Event] = []
    warnings: list[str] = []

    def run(stop: threading.Event) -> None:
        holder.append(stop)
        serve(store, stop, debounce=0.05, rescan=0.5, observer_factory=observer,
              warn=warnings.append)

    thread = in_thread(run)
    wait_for(lambda: "seed memory as first written" in index(watched_root), "the first render")
    write(watched_root, "memory/feedback_seed.md",
          memory("feedback_seed", "seed changed with nobody told"))
    took = wait_for(lambda: "seed changed with nobody told" in index(watched_root),
                    "the rescan to pick up the edit", timeout=5.0)
    assert took < 3.0
    assert len(warnings) == (observer is NoInotify), warnings
    holder[0].set()
    thread.join(5)
    assert not thread.is_alive()
    lock = WatchLock(store.paths.watch_lock)
    lock.acquire()  # would raise WatcherRunning if serve() had kept it
    lock.release()


def test_a_burst_of_events_is_one_cycle_and_a_temp_rename_save_counts(
        watched_root: Path, in_thread: Callable[..., threading.Thread]) -> None:
    """Failure caught: a sync per event instead of one per burst (debounce), or a
    temp-file-and-rename save missed because only the temp name (ignored) was looked at, not the
    move's destination."""
    watcher = Watcher(Store(watched_root), debounce=0.3, rescan=600)
    in_thread(lambda stop: watcher.run(stop, NoEvents))
    wait_for(lambda: watcher.cycles == 1, "the first cycle")

    real = watched_root / "memory" / "feedback_burst.md"
    temp = real.with_name(f".{real.name}.{os.getpid()}.tmp")
    temp.write_text(memory("feedback_burst", "written through a temp file"), encoding="utf-8")
    watcher.dispatch(FileCreatedEvent(str(temp)))
    watcher.dispatch(FileModifiedEvent(str(temp)))
    assert watcher.cycles == 1 and not watcher._pending  # the temp name alone is ignored
    os.replace(temp, real)
    start = time.monotonic()
    # a burst twice as long as the debounce, never quiet for it
    while time.monotonic() - start < 0.6:
        watcher.dispatch(FileMovedEvent(str(temp), str(real)))
        time.sleep(0.02)
    wait_for(lambda: "written through a temp file" in index(watched_root), "the burst's one cycle")
    time.sleep(0.6)  # quiet for twice the debounce: no further cycle may come
    assert watcher.cycles == 2


def test_a_steady_stream_of_events_still_gets_cycles(
        watched_root: Path, in_thread: Callable[..., threading.Thread]) -> None:
    """Failure caught: events that never pause for the debounce (a bulk copy, a tool appending to a
    memory without end) starve the sync for as long as they last; max_delay bounds the wait."""
    watcher = Watcher(Store(watched_root), debounce=5.0, rescan=600, max_delay=0.3)
    in_thread(lambda stop: watcher.run(stop, NoEvents))
    wait_for(lambda: watcher.cycles == 1, "the first cycle")
    start = time.monotonic()
    while time.monotonic() - start < 1.2:  # never quiet for the 5 s debounce
        watcher.notice("memory/feedback_seed.md")
        time.sleep(0.05)
    assert watcher.cycles >= 3


class Recording(Watcher):
    """A watcher that remembers every path its events named."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.noticed: list[str] = []

    def notice(self, rel: str) -> None:
        self.noticed.append(rel)
        super().notice(rel)


def test_own_render_and_reads_do_not_trigger_the_watcher(
        watched_root: Path, in_thread: Callable[..., threading.Thread]) -> None:
    """Failure caught: the watcher's own render (MEMORY.md and the other derived files, written by
    temp file and rename), its mirror writes under runtime/ or its reads of the files count as
    changes, so every cycle schedules another. Uses the real watchdog observer."""
    watcher = Recording(Store(watched_root), debounce=0.1, rescan=600)
    # as serve()'s lock would have made it before the observer
    (watched_root / "runtime" / "state").mkdir(parents=True)
    in_thread(watcher.run)
    wait_for(lambda: watcher.cycles == 1, "the first cycle")
    write(watched_root, "memory/feedback_gamma.md", memory("feedback_gamma", "gamma arrives"))
    wait_for(lambda: "gamma arrives" in index(watched_root) and watcher.cycles >= 2,
             "the created memory in MEMORY.md")
    settled = watcher.cycles
    time.sleep(1.0)  # ten debounces of quiet: a self-triggered cycle would have run by now
    assert set(watcher.noticed) == {"memory/feedback_gamma.md"}
    assert watcher.cycles == settled and not watcher._pending


def test_a_failed_cycle_is_one_line_and_the_watcher_keeps_going(
        watched_root: Path, in_thread: Callable[..., threading.Thread]) -> None:
    """Failure caught: an error in one cycle (the mirror busy, a bad file) kills the watcher thread,
    prints a traceback, or drops the changes it was carrying instead of retrying them."""
    store = Store(watched_root)
    failing = {"left": 0}
    real_render = store.render

    def flaky_render():  # type: ignore[no-untyped-def]
        if failing["left"]:
            failing["left"] -= 1
            raise Busy("the mirror is busy (database is locked)", hint="try again in a moment")
        return real_render()

    store.render = flaky_render  # type: ignore[method-assign]
    warnings: list[str] = []
    logs: list[str] = []
    watcher = Watcher(store, debounce=0.05, rescan=600, retry=0.2, warn=warnings.append,
                      log=logs.append)
    in_thread(lambda stop: watcher.run(stop, NoEvents))
    wait_for(lambda: watcher.cycles == 1, "the first cycle")

    failing["left"] = 1
    write(watched_root, "memory/feedback_seed.md",
          memory("feedback_seed", "seed after a busy moment"))
    watcher.notice("memory/feedback_seed.md")
    wait_for(lambda: "seed after a busy moment" in index(watched_root) and watcher.failures == 0
             and watcher.cycles == 2,
             "the retried cycle")
    assert len(warnings) == 1 and "\n" not in warnings[0], warnings
    assert "failed" in warnings[0] and "database is locked" in warnings[0]
    assert watcher.failures == 0 and logs[-1].startswith("recovered")


def test_ignore_rules() -> None:
    """Failure caught: the watcher's own output (derived files, runtime/, atomic_write's temp files)
    or noise (.git/, editor swap files, non-markdown files) triggers cycles, or a real memory change
    does not."""
    for rel in ("memory/feedback_x.md", "memory/short-term/260730-x.md", "memory/bugs/b1-x.md",
                "lenses/x.md", "meditations/x.md", "identity.md", "memory/notes/MEMORY.md"):
        assert relevant(rel), rel
    for rel in ("memory/MEMORY.md", "memory/MEMORY-archive.md", "memory/current-state.md",
                "runtime/memstore.db", "runtime/journal/host-260730.md", "runtime/state/watch.lock",
                "memory/.feedback_x.md.1234.tmp", ".git/HEAD", ".git/x.md",
                "memory/.feedback_x.md.swp", "memory/feedback_x.md~", "memory/4913", "memory/x.txt",
                "node_modules/x/README.md", "", "memory/.draft.md", ".obsidian/notes.md"):
        assert not relevant(rel), rel
    # a folder moved in or out: its files came or went
    assert relevant("memory/bugs", is_directory=True)
    assert not relevant("runtime/journal", is_directory=True)
    assert not relevant(".git/objects", is_directory=True)
    assert not relevant(".obsidian", is_directory=True)

"""What the prompt's meaning may never do to the person: write through a file planted in its state
folder, wait on a FIFO, hand a prompt to another user's process, or be held by a slow peer. Each
test names the failure it catches; the files, sockets and processes are real."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstore import Store
from memstore.core import agent_root, fsguard, meaning_client, pointers, processes
from memstore.mirror import meaning_server
from tests.helpers import memory, write

PRECIOUS = "the person's thesis, chapter one\n"


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    write(root, "memory/current-state.md", "---\nkind: current-state\n---\n- the chore rota\n")
    write(root, "memory/reference_vet.md",
          memory("reference_vet", "pet care", body="Biscuit gets her rabies vaccine in March.",
                 created="2026-11-01"))
    Store(root).sync()
    (root / "memory" / agent_root.INDEX).write_text("# Memory\n", encoding="utf-8")
    Path(agent_root.meaning_file(root)).write_text(json.dumps({"embedded": 1}))  # "wanted"
    return root


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "thesis.txt"
    victim.write_text(PRECIOUS)
    os.utime(victim, (time.time() - 86400,) * 2)  # old: a stamp linked to it looks due
    return victim


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Path]:
    """A root whose last embedding pass left vectors (so starts are wanted); its process ended
    afterwards."""
    made = _root(tmp_path)
    yield made
    meaning_server.stop(str(made))


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_planted_start_stamp_never_writes_the_file_it_names(started: Path, tmp_path: Path,
                                                              kind: str) -> None:
    """Catches: the start stamp opened with open("w"): through a link (or a hard link) planted at
    runtime/state/meaning-server.start, each session start emptied the person's file."""
    root = started
    victim = _victim(tmp_path)
    stamp = Path(agent_root.state_dir(root), meaning_client.STARTED)
    (os.symlink if kind == "symlink" else os.link)(victim, stamp)
    os.utime(stamp, (time.time() - 86400,) * 2, follow_symlinks=False)  # due for a start
    assert meaning_client.start(str(root))
    assert victim.read_text() == PRECIOUS
    assert not stamp.is_symlink() and stamp.stat().st_nlink == 1  # a stamp of its own now


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_planted_log_never_receives_a_process_output(tmp_path: Path, kind: str) -> None:
    """Catches: a detached process's log opened with open("ab"): its output went through a link
    planted at the log's place into the person's file."""
    victim = _victim(tmp_path)
    log = tmp_path / "meaning-server.log"
    (os.symlink if kind == "symlink" else os.link)(victim, log)
    child = processes.spawn_logged([sys.executable, "-c", "print('a line of news')"], log,
                                   cwd=str(tmp_path))
    assert child.wait(30) == 0
    assert victim.read_text() == PRECIOUS
    assert "a line of news" in log.read_text()


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_planted_lock_or_push_record_never_writes_the_file_it_names(started: Path, tmp_path: Path,
                                                                      kind: str) -> None:
    """Catches: the process's lock (which it truncates to write its pid) and a session's push
    record written through a link planted in runtime/state."""
    root = started
    victim = _victim(tmp_path)
    lock = Path(agent_root.state_dir(root), meaning_server.LOCK)
    (os.symlink if kind == "symlink" else os.link)(victim, lock)
    with meaning_server._held(str(root)) as mine:
        assert mine
    record = Path(pointers._session_file(str(root), "s1"))
    record.parent.mkdir(parents=True, exist_ok=True)
    (os.symlink if kind == "symlink" else os.link)(victim, record)
    pointers.record(str(root), "s1", "2026-12-05T10:00:00Z", ["memory/reference_vet.md"], 2.0, 1.0)
    assert victim.read_text() == PRECIOUS
    assert pointers.pushed(str(root), "s1") == {"memory/reference_vet.md"}


def test_a_fifo_in_the_state_folder_never_holds_a_session(started: Path) -> None:
    """Catches: SessionStart and the prompt hook opening meaning.json, the start stamp, the log,
    the pointer floor or a push record with a plain open: a FIFO there blocked the hook, and
    Claude Code, which waits for it, lost the whole bundle."""
    root = started
    state = Path(agent_root.state_dir(root))
    (state / pointers.PUSHES).mkdir(parents=True, exist_ok=True)
    fifos = [state / meaning_client.STARTED, state / meaning_client.LOG,
             state / pointers.FLOOR_FILE, Path(pointers._session_file(str(root), "s1"))]
    for fifo in fifos:
        os.mkfifo(fifo)
    env = {**os.environ, "MEMSTORE_SEMANTIC": "auto"}
    said = []
    for payload in ({"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(root),
                     "source": "startup"},
                    {"hook_event_name": "UserPromptSubmit", "session_id": "s1", "cwd": str(root),
                     "prompt": "the rabies vaccine for biscuit"}):
        done = subprocess.run([sys.executable, "-m", "memstore", "hook", "--root", str(root)],
                              input=json.dumps(payload).encode(), capture_output=True, env=env,
                              timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        said.append(done.stdout)
    assert b"additionalContext" in said[0]  # the bundle arrived
    meaning_server.stop(str(root))
    os.unlink(agent_root.meaning_file(root))
    os.mkfifo(agent_root.meaning_file(root))
    started = time.monotonic()
    assert not meaning_client.wanted(str(root))  # read without waiting for a writer
    assert time.monotonic() - started < 5


class _Listener:
    """A socket that records what it is sent and answers as the test says."""

    def __init__(self, path: str, trickle: bool = False) -> None:
        self.received: list[bytes] = []
        self.trickle = trickle
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(4)
        self.server.settimeout(0.2)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                client, _ = self.server.accept()
            except TimeoutError:
                continue
            with client:
                client.settimeout(1.0)
                try:
                    data = b""
                    while chunk := client.recv(65536):
                        data += chunk
                    self.received.append(data)
                    client.sendall(b'{"hits": [["memory/reference_vet.md", 5.0]], "pad": "')
                    while self.trickle and not self.done.is_set():
                        client.sendall(b"x")  # a byte each 0.2 ms: each read is quick
                        time.sleep(0.0002)
                    client.sendall(b'"}')
                except OSError:
                    pass

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.server.close()


def test_a_prompt_goes_only_to_a_process_of_the_persons_own(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """Catches: the prompt sent to whatever listens at the socket's path: a link planted there to
    another user's socket handed that user every prompt. The kernel's word on the peer (here the
    test's own process, seen by a person whose uid differs) decides. The root's path is short, so
    its socket is in runtime/state whoever the user is (a long one's is in /tmp/memstore-<uid>)."""
    short = Path(tempfile.mkdtemp(prefix="mg", dir="/tmp"))
    monkeypatch.chdir(short)
    root = _root(short)
    elsewhere = short / "other.sock"
    listener = _Listener(str(elsewhere))
    assert agent_root.meaning_socket(root).startswith(str(root))
    os.symlink(elsewhere, agent_root.meaning_socket(root))
    try:
        assert meaning_client.ask(str(root), "warm up", 1, timeout=1.0) is not None  # ours: asked
        assert listener.received
        listener.received.clear()
        monkeypatch.setattr(os, "getuid", lambda: 4242)  # the listener is now another user's
        # None: no process of the person's listens, so the hook starts one (which takes the
        # path over) instead of going without meaning for good
        assert meaning_client.ask(str(root), "my bank PIN is 4711", 1, timeout=1.0) is None
        assert not meaning_client.listening(str(root))
        time.sleep(0.3)
        assert not any(listener.received)  # it connected to ask who listens; sent nothing
    finally:
        listener.close()
        shutil.rmtree(short, ignore_errors=True)


def test_a_peer_that_trickles_its_answer_is_late_all_the_same(started: Path) -> None:
    """Catches: the deadline re-armed on every read: a peer sending one byte a millisecond held
    the prompt hook for as long as it liked."""
    root = started
    listener = _Listener(agent_root.meaning_socket(root), trickle=True)
    try:
        started = time.monotonic()
        assert meaning_client.ask(str(root), "hello", 2, timeout=0.3) == []
        assert time.monotonic() - started < 0.3 + 0.3
    finally:
        listener.close()


class _Meaning:
    """Stands in for the model's side (meaning.prompt_meaning): only whether it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def ask(self, prompt: str, limit: int) -> list[tuple[str, float]]:
        self.asked.append(prompt)
        return [("memory/reference_vet.md", 2.0)]


def test_the_process_skips_stale_and_trickled_questions() -> None:
    """Catches: the one-at-a-time process answering a question whose hook had gone on without it,
    and a caller trickling its question holding every other prompt up."""
    meaning: Any = _Meaning()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(json.dumps({"prompt": "late", "limit": 3, "by": time.time() - 1}).encode()
                       + b"\n")
        meaning_server._answer(ours, meaning)
        assert meaning.asked == []
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b'{"prompt": "slow')  # and never the rest
        started = time.monotonic()
        meaning_server._answer(ours, meaning)
        assert time.monotonic() - started < meaning_server.READ_S + 0.5
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(json.dumps({"prompt": "on time", "limit": 3,
                                   "by": time.time() + 5}).encode() + b"\n")
        meaning_server._answer(ours, meaning)
        assert json.loads(theirs.recv(65536))["hits"] == [["memory/reference_vet.md", 2.0]]


def test_the_mirror_is_opened_at_its_own_path_whatever_its_characters(tmp_path: Path) -> None:
    """Catches: the read-only mirror opened as an unescaped file: URI: a root whose path holds `?`
    or `#` had its path cut there, and a different (or no) database was read."""
    folder = tmp_path / "a?b#c"
    folder.mkdir()
    db = folder / "memstore.db"
    with sqlite3.connect(db) as made:
        made.execute("create table t (x)")
        made.execute("insert into t values (42)")
    made.close()
    conn = meaning_server._open(str(db))
    try:
        assert conn.execute("select x from t").fetchone() == (42,)
        with pytest.raises(sqlite3.OperationalError):
            conn.execute("insert into t values (1)")  # read-only, as before
    finally:
        conn.close()


def test_one_root_by_two_spellings_has_one_socket(started: Path, tmp_path: Path) -> None:
    """Catches: a root reached through a long symlinked path getting a /tmp socket while its short
    path had runtime/state's: two sockets for one lock, and every start by the long spelling
    failed."""
    root = started
    longer = tmp_path / ("s" * 95)
    longer.mkdir()
    alias = longer / "alias"
    alias.symlink_to(root)
    assert agent_root.meaning_socket(alias) == agent_root.meaning_socket(root)


def test_a_stamp_dated_ahead_does_not_stop_starts(started: Path) -> None:
    """Catches: a start stamp with a future time (a clock set back, or planted) keeping the process
    from ever starting again."""
    root = started
    stamp = Path(agent_root.state_dir(root), meaning_client.STARTED)
    stamp.write_text("0\n")
    os.utime(stamp, (time.time() + 86400 * 365,) * 2)
    assert meaning_client.start(str(root))
    assert not meaning_client.start(str(root))  # and a fresh stamp still paces them


def test_the_plugin_starts_the_process_with_its_own_python(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches: the plugin's hooks run on the system's python3, which has neither memstore's
    dependencies nor the model: the process it spawned with sys.executable died at once."""
    venv = tmp_path / "data" / "venv" / "bin"
    venv.mkdir(parents=True)
    python = venv / "python"
    python.symlink_to(sys.executable)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    assert meaning_client._python() == str(python)
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA")
    assert meaning_client._python() == sys.executable


def test_open_own_leaves_another_users_file_and_a_fifo_alone(tmp_path: Path) -> None:
    """Catches: the state-file opener writing into a file some other user owns (a folder made
    group-writable) or waiting on a FIFO."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    fsguard.write_own(fifo, b"x")  # removed and made again: never waited on
    assert fifo.read_bytes() == b"x"
    if os.getuid() == 0:  # only root can give a file away
        theirs = tmp_path / "theirs"
        theirs.write_text("theirs\n")
        os.chown(theirs, 4242, 4242)
        fsguard.write_own(theirs, b"mine\n")
        assert theirs.stat().st_uid == 0 and theirs.read_text() == "mine\n"


def _in_child(code: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_the_hook_error_log_is_never_a_wait_or_a_way_out(started: Path, tmp_path: Path,
                                                         kind: str) -> None:
    """Catches (the attack round on 7e42618): the hook's error log opened with open("a"): a FIFO
    planted at runtime/state/hook-errors.log held every prompt that logged an error until the
    client's timeout, and a link carried the error's text into the person's file."""
    log = Path(agent_root.hook_log(started))
    victim = _victim(tmp_path)
    if kind == "fifo":
        os.mkfifo(log)
    else:
        os.symlink(victim, log)
    done = _in_child("import sys\nfrom memstore.core.logs import hook_error\n"
                     f"hook_error({str(started)!r}, 'a line')\n", timeout=20)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == PRECIOUS
    assert log.is_file() and not log.is_symlink() and "a line" in log.read_text()


def test_a_huge_planted_state_file_is_read_only_in_part(started: Path) -> None:
    """Catches: the floor, meaning.json and MEMORY.md read whole on every prompt: a 3 GB sparse
    file planted at one cost seconds a prompt and gigabytes of memory (here a child limited to
    1.5 GB of address space, which a whole read would exceed)."""
    state = Path(agent_root.state_dir(started))
    for path in (state / pointers.FLOOR_FILE, Path(agent_root.meaning_file(started)),
                 started / "memory" / agent_root.INDEX):
        with open(path, "wb") as handle:
            handle.truncate(3 * 1024 ** 3)
    done = _in_child(
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 ** 2,) * 2)\n"
        "from memstore.core import meaning_client, pointers\n"
        f"root = {str(started)!r}\n"
        "print(pointers.measured(root), meaning_client.wanted(root), len(pointers.index_shown("
        "root)))\n")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["{}", "False", "0"]


def test_a_probe_that_only_connects_does_not_keep_the_process_alive(
        started: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches: every connection reset the idle clock, so `memstore status` asked every few
    minutes (it connects to see whether the process is up) kept the model in memory for good."""
    monkeypatch.setenv("MEMSTORE_SEMANTIC", "auto")
    Store(started).embed()
    left = threading.Event()

    def serve() -> None:
        meaning_server.serve(str(started), idle_s=2.0)
        left.set()

    threading.Thread(target=serve, daemon=True).start()
    ends = time.monotonic() + 60
    while not meaning_client.listening(str(started)) and time.monotonic() < ends:
        time.sleep(0.05)
    probing = time.monotonic() + 8
    while time.monotonic() < probing and not left.is_set():
        meaning_client.listening(str(started))  # status's look: connects, asks nothing
        time.sleep(0.2)
    assert left.is_set(), "the probes kept an idle process alive"


def test_an_empty_folder_planted_at_the_start_stamp_does_not_stop_every_start(started: Path
                                                                              ) -> None:
    """Catches (the attack round): os.open of a folder planted at meaning-server.start failed
    with EISDIR, so no process was ever started again, and nothing said why."""
    stamp = Path(agent_root.state_dir(started), meaning_client.STARTED)
    stamp.mkdir()
    os.utime(stamp, (time.time() - 86400,) * 2)
    assert meaning_client.start(str(started))
    assert stamp.is_file()
    full = Path(agent_root.state_dir(started), "pushes", "kept")
    full.mkdir(parents=True)
    (full / "a.txt").write_text(PRECIOUS)
    with pytest.raises(OSError):
        fsguard.write_own(full.parent, b"x")  # a folder with files in it is left as it is
    assert (full / "a.txt").read_text() == PRECIOUS


def test_another_users_floor_file_is_not_obeyed(started: Path) -> None:
    """Catches (the attack round): pointer-floor.json obeyed whoever owned it: another user's
    {"floor": 0.0001} in a shared folder made every prompt with a rare word push pointers. The
    person's own file is theirs to tune."""
    floor_file = Path(agent_root.state_dir(started), pointers.FLOOR_FILE)
    floor_file.write_text(json.dumps({"floor": 0.0001}))
    assert pointers.floor(str(started)) == 0.0001
    if os.getuid() != 0:
        pytest.skip("only root can give a file to another user")
    os.chown(floor_file, 65534, 65534)
    assert pointers.floor(str(started)) == pointers.FLOOR_UNMEASURED

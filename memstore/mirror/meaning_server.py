"""The warm process behind the prompt's meaning: one per root, on a Unix socket, gone when idle.

    python -P -m memstore.mirror.meaning_server ROOT

core.meaning_client starts it and asks it; meaning.prompt_meaning does the work. It loads the model
and the root's memory vectors once and then answers each prompt with one query embedding: about
30 ms where a fresh process would need 300. It is:

- one per root: it holds runtime/state/meaning-server.lock while it lives; a second start finds it
  taken and leaves;
- private: the socket is made with mode 0600, in runtime/state or in the user's own 0700 folder
  under /tmp (core.agent_root.meaning_socket), and it answers only with paths and numbers;
- current: before each answer it looks at the mirror's vectors (a count and the newest row) and
  reads them again when they changed, so a memory embedded a moment ago is found;
- gone by itself: after IDLE_S without a question, when its socket file is removed or replaced,
  or when the root's mirror is gone. Its one line of news or failure goes to
  runtime/state/meaning-server.log.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from memstore.core.agent_root import db_file, meaning_socket, private_tmp, state_dir
from memstore.core.config import load_config
from memstore.core.fsguard import open_own, read_regular
from memstore.core.meaning_client import MODULE, STARTED
from memstore.meaning import vector_store
from memstore.meaning.embedding import SemanticUnavailable, load
from memstore.meaning.prompt_meaning import PromptMeaning

IDLE_S = 1800.0  # half an hour without a prompt: the memory it holds goes back
CHECK_S = 5.0  # how often an idle process looks at its socket and its root
REQUEST_MAX = 64 * 1024
LIMIT_MAX = 64
READ_S = 0.5  # the longest a question may take to arrive
LOCK = "meaning-server.lock"


def _say(message: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} meaning: {message}", flush=True)


@contextlib.contextmanager
def _held(root: str) -> Iterator[bool]:
    """The root's one-process lock, without waiting: whether this process got it."""
    import fcntl

    os.makedirs(state_dir(root), exist_ok=True)
    fd = open_own(os.path.join(state_dir(root), LOCK), os.O_RDWR | os.O_CREAT)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield True
    finally:
        os.close(fd)


def _private_folder(path: str) -> bool:
    """The folder under /tmp is made the user's alone, or refused when someone else holds it."""
    import stat

    folder = os.path.dirname(path)
    if folder != private_tmp():
        return True
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return False  # a link, or another user's folder: their socket could stand in for ours
    if st.st_mode & 0o077:
        os.chmod(folder, 0o700)  # the user's own, made looser by some other program: tightened
    return not os.lstat(folder).st_mode & 0o077


def _signature(conn: sqlite3.Connection, db: str) -> tuple[int, int, int, int]:
    st = os.stat(db)
    return (st.st_dev, st.st_ino, *vector_store.vectors_mark(conn))


def _open(db: str) -> sqlite3.Connection:
    # as a URI, escaped: a root whose path holds `?` or `#` is still this file
    return sqlite3.connect(f"{Path(db).absolute().as_uri()}?mode=ro", uri=True, timeout=1.0)


def _answer(client: socket.socket, meaning: PromptMeaning) -> bool:
    """Answer one question; whether a person's prompt came (a probe that only connects, or a
    caller that trickles, is none: neither keeps the process alive)."""
    ends = time.monotonic() + READ_S
    data = b""
    while len(data) <= REQUEST_MAX and not data.endswith(b"\n"):
        left = ends - time.monotonic()
        if left <= 0:
            return False  # a caller that trickles its question holds no one else up for long
        client.settimeout(left)
        try:
            chunk = client.recv(65536)
        except TimeoutError:
            return False
        if not chunk:
            break
        data += chunk
    if not data.strip() or len(data) > REQUEST_MAX:
        return False
    asked = json.loads(data)
    prompt = asked.get("prompt") if isinstance(asked, dict) else None
    limit = asked.get("limit") if isinstance(asked, dict) else None
    by = asked.get("by") if isinstance(asked, dict) else None
    if not isinstance(prompt, str) or type(limit) is not int:
        return False
    if isinstance(by, (int, float)) and time.time() > by:
        return True  # its hook has gone on without it: the next question is served sooner
    hits = meaning.ask(prompt, max(1, min(limit, LIMIT_MAX)))
    client.settimeout(1.0)
    client.sendall(json.dumps({"hits": hits}).encode("utf-8"))
    return True


def serve(root: str, idle_s: float = IDLE_S) -> int:
    """Answer the root's prompts until idle; the exit status (0 when there was nothing to do)."""
    root = os.path.abspath(root)
    if load_config(root).semantic == "off":
        return 0
    db = db_file(root)
    if not os.path.exists(db):
        _say(f"no mirror at {db}: nothing to serve")
        return 0
    with _held(root) as mine:
        if not mine:
            return 0  # another process serves this root
        try:
            meaning = PromptMeaning(load(), bulk=False)
        except SemanticUnavailable as exc:
            _say(str(exc))
            return 0
        conn = _open(db)
        try:
            meaning.load(conn)
            seen = _signature(conn, db)
            return _listen(root, db, conn, meaning, seen, idle_s)
        finally:
            conn.close()


def _listen(root: str, db: str, conn: sqlite3.Connection, meaning: PromptMeaning,
            seen: tuple[int, int, int, int], idle_s: float) -> int:
    path = meaning_socket(root)
    if not _private_folder(path):
        _say(f"{os.path.dirname(path)} is not this user's alone: not listening")
        return 1
    with contextlib.suppress(FileNotFoundError):
        try:
            os.unlink(path)  # ours, left by a process that died: the lock says none lives
        except IsADirectoryError:
            os.rmdir(path)  # an empty folder planted there; one with files in it stops us
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)  # the socket is born 0600: no moment when another user may connect
    try:
        server.bind(path)
    finally:
        os.umask(mask)
    mine = os.stat(path).st_ino
    server.listen(16)
    server.settimeout(CHECK_S)
    _say(f"listening for {root}: {meaning.size} memories, shared floor {meaning.floor:.3f}")
    last = time.monotonic()
    try:
        while time.monotonic() - last < idle_s:
            try:
                client, _ = server.accept()
            except TimeoutError:
                client = None
            if not os.path.exists(db):
                _say(f"{db} is gone (the root moved or was removed): leaving")
                return _left(root)
            if _gone(path, mine):
                _say(f"{path} is no longer this process's socket: leaving")
                return _left(root)
            if client is None:
                continue
            with client:
                conn, seen = _fresh(db, conn, meaning, seen)  # a memory made since counts now
                try:
                    if _answer(client, meaning):
                        last = time.monotonic()  # a probe (status's) does not keep it alive
                except (OSError, ValueError, RecursionError):
                    pass  # a caller that left or sent garbage: the next one is served
        _say("idle: leaving")
        return _left(root)
    finally:
        server.close()
        if not _gone(path, mine):
            with contextlib.suppress(OSError):
                os.unlink(path)


def _left(root: str) -> int:
    """An orderly exit lets the next prompt start a process at once: only a start that failed or
    a process that was killed holds the next start back (core.meaning_client.RETRY_S)."""
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(state_dir(root), STARTED))
    return 0


def _gone(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino != inode
    except OSError:
        return True


def _fresh(db: str, conn: sqlite3.Connection, meaning: PromptMeaning,
           seen: tuple[int, int, int, int]) -> tuple[sqlite3.Connection, tuple[int, int, int, int]]:
    """The vectors read again when the mirror's changed (a rebuild makes a new file)."""
    try:
        now = _signature(conn, db)
        if now[:2] != seen[:2]:
            fresh = _open(db)  # opened before the old one is let go: a failure keeps the old
            try:
                now = _signature(fresh, db)
            except (OSError, sqlite3.Error):
                fresh.close()
                raise
            conn.close()
            conn = fresh
        if now != seen:
            before = meaning.size
            meaning.load(conn)
            if meaning.size != before:
                _say(f"read again: {meaning.size} memories, shared floor {meaning.floor:.3f}")
        return conn, now
    except (OSError, sqlite3.Error):
        return conn, seen  # mid-rebuild: the old vectors serve until the next look


def running(root: str) -> int | None:
    """The pid of the root's meaning process, when one lives."""
    try:
        pid = int(read_regular(os.path.join(state_dir(root), LOCK), 64).strip() or 0)
        if not 1 < pid < 1 << 22:
            return None
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:  # a reused pid is someone else's
            if MODULE.encode() not in handle.read():
                return None
    except OSError:
        if os.path.isdir("/proc"):
            return None
    return pid


def stop(root: str, wait_s: float = 10.0) -> bool:
    """End the root's meaning process (SIGTERM); gone within wait_s?"""
    import signal

    pid = running(root)
    if pid is None:
        return True
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    ends = time.monotonic() + wait_s
    while time.monotonic() < ends:
        if running(root) is None:
            return True
        time.sleep(0.05)
    return False


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m memstore.mirror.meaning_server ROOT", file=sys.stderr)
        return 2
    import signal

    # stop()'s SIGTERM ends it through its `finally`s: the socket file goes with it
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(0))
    try:
        return serve(args[0])
    except (OSError, sqlite3.Error) as exc:
        _say(f"stopped: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())

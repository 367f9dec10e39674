"""The hook's side of the prompt's meaning: ask the root's warm process, and start it when absent.

Standard library only, on the hook's path. The model takes a fifth of a second to load and the
hook runs once per prompt, so the prompt's meaning is computed by one long-lived process per root
(mirror/meaning_server.py) that the hook asks over a Unix socket, with a deadline: late, absent or
broken, the pointers go on by words alone. What comes back is only a list of (path, strength);
the hook looks each path up in the mirror (core.statements.pointable_rows), so an answer can
never put text of its own before the agent.

The process is started by the SessionStart hook and by a prompt that finds none, when meaning is
on (`semantic` is not "off") and the last embedding pass left vectors (core.agent_root.
meaning_file); it leaves by itself when idle. A start is not tried again within RETRY_S.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

from memstore.core.agent_root import meaning_file, meaning_socket, private_tmp, state_dir

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    from collections.abc import Iterator

ASK_S = 0.35  # the longest a prompt waits for its meaning
MAX_REPLY = 256 * 1024
MAX_PROMPT = 4000  # characters sent; the process embeds fewer
RETRY_S = 300  # a start is not tried again sooner (one that fails costs a process each time)
STARTED = "meaning-server.start"
LOG = "meaning-server.log"
MODULE = "memstore.mirror.meaning_server"


def _usable(path: str) -> bool:
    """A socket path in the user's own /tmp folder only when that folder is theirs alone: a
    socket planted by someone else would be handed the person's prompts."""
    folder = os.path.dirname(path)
    if folder != private_tmp():
        return True  # under the root's runtime/state, the person's own
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    import stat

    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and not st.st_mode & 0o077)


def _ours(sock: socket.socket, path: str) -> bool:
    """Is the process that answers on `path` this user's? A socket file may be a link to, or a
    hard link of, someone else's socket; the prompt goes only to the person's own process."""
    cred = getattr(socket, "SO_PEERCRED", None)
    try:
        if cred is not None:  # Linux: the kernel says who listens
            import struct

            size = struct.calcsize("3i")
            _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, cred, size))
            return bool(uid == os.getuid())
        import stat

        st = os.lstat(path)  # elsewhere: a socket file made by this user, not a link to one
        return stat.S_ISSOCK(st.st_mode) and st.st_uid == os.getuid() and st.st_nlink == 1
    except OSError:
        return False


def ask(root: str, prompt: str, limit: int, timeout: float = ASK_S
        ) -> list[tuple[str, float]] | None:
    """(path, strength) from the root's meaning process, best first; [] when it answered nothing
    or too late, None when no process listens (the caller may start one)."""
    sent = send(root, prompt, limit, timeout)
    return sent if sent is None or isinstance(sent, list) else list(receive(*sent, limit))


def send(root: str, prompt: str, limit: int, timeout: float = ASK_S
         ) -> tuple[socket.socket, float] | list[tuple[str, float]] | None:
    """The question sent: (the socket, when its answer is due) for `receive`; [] when it cannot
    be asked, None when no process of the person's listens. The answer is computed while the
    caller works."""
    path = meaning_socket(root)
    if not hasattr(socket, "AF_UNIX") or not _usable(path):
        return []
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    ends = time.monotonic() + timeout
    try:
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            return None
        if not _ours(sock, path):
            sock.close()
            return None  # no process of the person's listens: one started takes the path over
        # "by": the wall clock's moment after which the process need not answer (it was late)
        request = json.dumps({"prompt": prompt[:MAX_PROMPT], "limit": limit,
                              "by": time.time() + timeout}) + "\n"
        sock.sendall(request.encode("utf-8", "replace"))
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        sock.close()
        return []
    return sock, ends


def receive(sock: socket.socket, ends: float, limit: int) -> Iterator[tuple[str, float]]:
    """The answer to `send`'s question, read when first iterated; nothing when late or garbled."""
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_REPLY:
            left = ends - time.monotonic()
            if left <= 0:
                return  # a peer that trickles its answer is late all the same
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        reply = json.loads(b"".join(chunks)) if size <= MAX_REPLY else None
    except (OSError, ValueError, RecursionError):  # late, reset, or not our process's words
        return
    finally:
        sock.close()
    yield from _hits(reply, limit)


def _hits(reply: object, limit: int) -> list[tuple[str, float]]:
    """The (path, strength) pairs of a reply, anything else dropped."""
    hits = reply.get("hits") if isinstance(reply, dict) else None
    found: list[tuple[str, float]] = []
    for item in hits if isinstance(hits, list) else ():
        if (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], (int, float)) and not isinstance(item[1], bool)
                and 0 < item[1] < 1e6):
            found.append((item[0], float(item[1])))
    return found[:limit]


def wanted(root: str) -> bool:
    """Has the root anything for meaning to work on: a pass that left vectors?"""
    from memstore.core.fsguard import STATE_MAX, read_regular

    try:
        # never a FIFO's wait, a huge read, or another user's word
        done = json.loads(read_regular(meaning_file(root), STATE_MAX, own=True))
    except (OSError, ValueError, RecursionError):
        return False
    embedded = done.get("embedded") if isinstance(done, dict) else None
    return isinstance(embedded, int) and embedded > 0


def start(root: str) -> bool:
    """Start the root's meaning process unless one listens, or a start was tried within RETRY_S;
    whether one was started. Never raises."""
    now = time.time()  # the wall clock: this paces processes, not memories (not MEMSTORE_NOW)
    try:
        if not wanted(root) or (os.path.exists(meaning_socket(root)) and listening(root)):
            return False
        stamp = os.path.join(state_dir(root), STARTED)
        try:
            if 0 <= now - os.lstat(stamp).st_mtime < RETRY_S:  # one dated ahead does not count
                return False
        except OSError:
            pass
        from memstore.core import processes
        from memstore.core.fsguard import write_own

        write_own(stamp, f"{now}\n".encode())
        # -P and the root as its folder: nothing in the session's project stands in for a module
        argv = [_python(), "-P", "-m", MODULE, os.path.abspath(root)]
        processes.spawn_logged(argv, os.path.join(state_dir(root), LOG), cwd=os.path.abspath(root))
        return True
    except OSError:
        return False


def _python() -> str:
    """The Python that has memstore and the model: the plugin's own environment when a plugin's
    hook runs on the system's python3, else this one."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if data:
        venv = os.path.join(data, "venv", "bin", "python")
        if os.access(venv, os.X_OK):
            return venv
    return sys.executable


def listening(root: str) -> bool:
    """Does a process answer on the root's meaning socket?"""
    if not hasattr(socket, "AF_UNIX") or not _usable(meaning_socket(root)):
        return False
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(0.05)
    try:
        sock.connect(meaning_socket(root))
        return _ours(sock, meaning_socket(root))
    except OSError:
        return False
    finally:
        sock.close()

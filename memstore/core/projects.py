"""Which project a session works in, so that what is captured there stays there. Standard library
only.

A project is named by its git remote when it has one (`origin`, else the first remote),
normalised to host/path without scheme, user, port or `.git`: `github.com/me/proja`. That
name is the same on every machine that cloned the repository, wherever the clone lives,
which an absolute path is not. A work tree without a remote is named by its folder name
(`proja`); a folder outside any git work tree is no project (what is captured there is
person-wide). The agent root's own folder is no project either.

Read from the files git keeps (.git/config, a worktree's .git file and commondir), never by
running git: the SessionStart hook pays for this on every session start.
"""

from __future__ import annotations

import contextlib
import os
import re

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds

if TYPE_CHECKING:
    import sqlite3

GLOBAL = "global"  # `project: global` in frontmatter: person-wide, whatever folder it came from
_REMOTE = re.compile(r'^\s*\[remote\s+"([^"]+)"\]\s*$')
_URL = re.compile(r"^\s*url\s*=\s*(.+?)\s*$")


def _read_fd(fd: int, limit: int) -> bytes:
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_regular(path: str, limit: int) -> bytes:
    """At most `limit` bytes of a regular file. A FIFO, a device or a folder in its place (a project
    may put one where git keeps a file) raises OSError rather than blocking or reading without
    end."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return _read_fd(fd, limit)
    finally:
        os.close(fd)


def work_tree(start: str) -> str | None:
    """The top of the git work tree holding `start`, or None."""
    folder = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _own_git_dir(top: str) -> str | None:
    """A work tree's own git directory (where its index and HEAD are): .git, or where a .git file
    (a linked worktree, a submodule) points."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        line = read_regular(dot, 4096).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(top, line[len("gitdir:"):].strip()))


def _git_dir(top: str) -> str | None:
    """The git directory of a work tree: .git, or where a worktree's .git file points (its
    commondir)."""
    gitdir = _own_git_dir(top)
    if gitdir is None or gitdir == os.path.join(top, ".git"):
        return gitdir
    try:
        common = read_regular(os.path.join(gitdir, "commondir"), 4096).decode(
            "utf-8", "replace").strip()
        return os.path.normpath(os.path.join(gitdir, common))
    except OSError:
        return gitdir


def remote_url(top: str) -> str | None:
    """The URL of the `origin` remote (else the first remote) in the repository's config, or
    None."""
    gitdir = _git_dir(top)
    if gitdir is None:
        return None
    try:
        lines = read_regular(os.path.join(gitdir, "config"), 1_000_000).decode(
            "utf-8", "replace").splitlines()
    except OSError:
        return None
    urls: dict[str, str] = {}
    current = None
    for line in lines:
        section = _REMOTE.match(line)
        if section:
            current = section.group(1)
            continue
        if line.lstrip().startswith("["):
            current = None
            continue
        url = _URL.match(line)
        if current is not None and url and current not in urls:
            urls[current] = url.group(1).strip('"')
    return urls.get("origin") or next(iter(urls.values()), None)


def normalise_url(url: str) -> str:
    """`git@github.com:Me/ProjA.git`, `https://user@github.com/me/proja` -> `github.com/me/proja`"""
    text = url.strip()
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text, flags=re.I)  # scheme
    text = re.sub(r"^[^@/]+@", "", text)  # user
    if ":" in text.split("/", 1)[0]:
        host, _, rest = text.partition(":")
        text = (f"{host}/{rest}" if not rest.split("/", 1)[0].isdigit()
                else f"{host}/{rest.split('/', 1)[-1]}")
    text = re.sub(r"\.git/?$", "", text.rstrip("/"))
    return text.lower()


def locate(cwd: str | None, root: str | None = None) -> tuple[str | None, str | None]:
    """(the project a folder belongs to, the top of its work tree), or (None, None)."""
    if not cwd:
        return None, None
    top = work_tree(cwd)
    if top is None:
        return None, None
    if root is not None and os.path.realpath(root) == top:
        return None, None  # the agent root kept in git is no project
    url = remote_url(top)
    return (normalise_url(url) if url else os.path.basename(top).lower()), top


def project_of(cwd: str | None, root: str | None = None) -> str | None:
    """The project a folder belongs to (see the module docstring), or None."""
    return locate(cwd, root)[0]


def belongs(item_project: str | None, current: str | None) -> bool:
    """Does an item recorded for `item_project` reach a session in `current`? Person-wide ones
    always do."""
    if not item_project or item_project.strip().lower() == GLOBAL:
        return True
    return current is not None and item_project.strip().lower() == current


def by_project(conn: sqlite3.Connection, hits: list[dict[str, object]], current: str | None, *,
               only: bool = False
               ) -> list[dict[str, object]]:
    """Search hits with the current project's own first (each group keeps its rank order); with
    `only`, the current project's alone. Without a current project, hits are left as they are."""
    if current is None:
        return [] if only else hits
    paths = [str(hit["path"]) for hit in hits]
    if not paths:
        return hits
    from memstore.core.statements import projects_of

    owner = projects_of(conn, paths)
    mine = [hit for hit in hits
            if str(owner.get(str(hit["path"])) or "").strip().lower() == current]
    if only:
        return mine
    return mine + [hit for hit in hits if hit not in mine]


# under runtime/state/: project -> the folder its sessions ran in, on this machine
WORKTREES = "worktrees.json"


def remember_worktree(state_dir: str, project: str | None, top: str | None) -> None:
    """Note where this machine keeps a project (`locate`'s answer), so the nightly tick can check
    the code its memories cite (memstore.mirror.stale_refs). One small file, written only when
    something changed."""
    if top is None or project is None:
        return
    path = os.path.join(state_dir, WORKTREES)
    known = worktrees(state_dir)
    if known.get(project) == top:
        return
    known[project] = top
    os.makedirs(state_dir, exist_ok=True)
    import json
    from pathlib import Path

    from memstore.core.locks import atomic_write

    with contextlib.suppress(OSError):  # a record for the tick: never worth failing a session start
        atomic_write(Path(path), json.dumps(known, indent=1, sort_keys=True).encode("utf-8"))


def worktrees(state_dir: str) -> dict[str, str]:
    import json

    try:
        with open(os.path.join(state_dir, WORKTREES), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


# -------------------------------------------------- a work tree's files, read without running git
#
# Running git in a project runs what that project's .git/config chose (core.fsmonitor for ls-files
# or status, hooks, filters): the nightly tick must never do that. So the stale-reference check
# reads git's index file itself (formats 2, 3 and 4; SHA-1 or SHA-256 ids), and the few git
# processes memstore does start, all in the agent root, go through processes.run_git with every
# executing setting turned off.


class UnreadableIndex(Exception):
    """A work tree's index cannot be read here: the message says why, in a few words."""


def _object_format(common: str) -> str:
    """`sha256` when the repository's config says extensions.objectformat = sha256, else
    `sha1`."""
    try:
        text = read_regular(os.path.join(common, "config"), 1_000_000).decode("utf-8", "replace")
    except OSError:
        return "sha1"
    section = ""
    for line in text.splitlines():
        line = line.split("#", 1)[0].split(";", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[] \t").lower()
        elif section == "extensions" and "=" in line:
            key, _, value = line.partition("=")
            if key.strip().lower() == "objectformat":
                return value.strip().strip('"').lower()
    return "sha1"


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """git's offset varint (index v4's strip length): (value, position after it)."""
    byte = data[at]
    value = byte & 0x7F
    at += 1
    while byte & 0x80:
        byte = data[at]
        value = ((value + 1) << 7) | (byte & 0x7F)
        at += 1
    return value, at


def read_index(top: str, max_bytes: int = 1 << 30) -> list[tuple[int, bytes, int, bytes]]:
    """(mode, object id, stage, path) of every entry in a work tree's git index, in index order:
    what `git ls-files -s` lists, read from the file with no process started. Raises
    UnreadableIndex."""
    import hashlib
    import struct

    own = _own_git_dir(top)
    if own is None:
        raise UnreadableIndex("no git directory")
    common = _git_dir(top) or own
    fmt = _object_format(common)
    if fmt not in ("sha1", "sha256"):
        raise UnreadableIndex(f"object format {fmt!r} not known")
    size = 20 if fmt == "sha1" else 32
    try:
        data = read_regular(os.path.join(own, "index"), max_bytes + 1)
    except FileNotFoundError:
        return []  # a repository with nothing added yet
    except OSError as exc:
        raise UnreadableIndex(f"index not readable ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise UnreadableIndex("index larger than 1 GB")
    if len(data) < 12 + size or data[:4] != b"DIRC":
        raise UnreadableIndex("index is not a git index")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4):
        raise UnreadableIndex(f"index version {version} not known")
    body, checksum = data[:-size], data[-size:]
    # an all-zero checksum: index.skipHash
    if checksum != bytes(size) and hashlib.new(fmt, body).digest() != checksum:
        raise UnreadableIndex("index checksum does not match (torn or damaged)")
    entries: list[tuple[int, bytes, int, bytes]] = []
    at, previous, end = 12, b"", len(body)
    fixed = 40 + size + 2  # ctime mtime dev ino (24 bytes), mode, uid gid size (12), the id, flags
    head = struct.Struct(f">24xI12x{size}sH").unpack_from
    append = entries.append
    try:
        for _ in range(count):
            if at + fixed > end:
                raise UnreadableIndex("index ends inside an entry")
            mode, oid, flags = head(data, at)
            name_at = at + fixed
            if flags & 0x4000:
                if version < 3:
                    raise UnreadableIndex("extended flags in a version 2 index")
                name_at += 2
            if version == 4:
                strip, name_at = _varint(data, name_at)
                stop = data.index(b"\0", name_at, end)
                if strip > len(previous):
                    raise UnreadableIndex("index path prefix longer than the path before it")
                name = previous[:len(previous) - strip] + data[name_at:stop]
                at = stop + 1
            else:
                length = flags & 0xFFF
                stop = name_at + length if length < 0xFFF else data.index(b"\0", name_at, end)
                if stop >= end or data[stop] != 0:
                    raise UnreadableIndex("index path is not where its length says")
                name = data[name_at:stop]
                at += (name_at - at + len(name) + 8) & ~7  # NUL-padded to a multiple of 8
            if not name:  # a split index's entries replacing one of the shared index's have none
                import glob

                split = glob.glob(os.path.join(glob.escape(own), "sharedindex.*"))
                raise UnreadableIndex("split index not read here" if split
                                      else "index entry with an empty path")
            append((mode, oid, (flags >> 12) & 3, name))
            previous = name
    except (ValueError, IndexError):
        raise UnreadableIndex("index entry is cut short") from None
    # extensions: optional ones (A-Z) skipped; a required one changes what entries mean
    while at + 8 <= end:
        signature, length = data[at:at + 4], int.from_bytes(data[at + 4:at + 8], "big")
        if not b"A"[0] <= signature[0] <= b"Z"[0]:
            ext = signature.decode("ascii", "replace")
            raise UnreadableIndex({"link": "split index", "sdir": "sparse index"}.get(
                ext, f"index extension {ext!r}") + " not read here")
        at += 8 + length
    return entries


def listing(entries: list[tuple[int, bytes, int, bytes]]) -> bytes:
    """The entries as `git ls-files -s -z` prints them (the stale check's digest is of these
    bytes)."""
    return b"".join(b"%06o %s %d\t%s\0" % (mode, oid.hex().encode(), stage, name)
                    for mode, oid, stage, name in entries)


def read_inside(top: str, rel: str, limit: int = 16 << 20) -> bytes | None:
    """The bytes of a regular file at `rel` under the work tree `top`, following no symlink on the
    way (so nothing outside the tree is read), at most `limit` of them; None when it is not such a
    file."""
    import stat

    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return None
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    # no safe walk here: the resolved path must stay inside
    if not nofollow or os.open not in os.supports_dir_fd:
        real = os.path.realpath(os.path.join(top, *parts))
        if os.path.commonpath([real, os.path.realpath(top)]) != os.path.realpath(top) or (
                not os.path.isfile(real)):
            return None
        try:
            return read_regular(real, limit)
        except OSError:
            return None
    flags = os.O_RDONLY | nofollow | getattr(os, "O_CLOEXEC", 0)
    fds: list[int] = []
    try:
        fds.append(os.open(top, flags | os.O_DIRECTORY))
        for part in parts[:-1]:
            fds.append(os.open(part, flags | os.O_DIRECTORY, dir_fd=fds[-1]))
        # a FIFO must not block
        fd = os.open(parts[-1], flags | getattr(os, "O_NONBLOCK", 0), dir_fd=fds[-1])
        fds.append(fd)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return _read_fd(fd, limit)
    except OSError:
        return None
    finally:
        for fd in fds:
            os.close(fd)



"""Which files under an agent root are read at all. Standard library only (the hook imports it).

Only regular files are read, and never through a symbolic link. git carries links, so a
pull can plant `memory/feedback_x.md -> /etc/passwd`; read, its target would reach the
mirror, search snippets, MEMORY.md and the SessionStart bundle. A link that stays inside
memory/ is skipped too: its target is read under its own name, and the same text under
two names would be two search hits, two MEMORY.md rows and two policy states, and a
policy write-back (temp file + os.replace) would turn the link into a copy. A FIFO or a
device is skipped without being opened (opening a FIFO blocks). `memstore lint` names
every link it skipped (sync.walk lists them, `describe_link` says where each points).

Listings use os.scandir's DirEntry.is_file(follow_symlinks=False), which costs no
system call where the file system reports entry types; a read opens with O_NOFOLLOW
and O_NONBLOCK and checks the opened file, so a file swapped for a link or a FIFO after
the listing is refused too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def read_regular(path: str | os.PathLike[str], limit: int | None = None, own: bool = False
                 ) -> bytes:
    """The bytes of `path` (its first `limit`, when given) when it is a regular file and not a
    link (with `own`, this user's: memstore's state files); OSError otherwise. Never blocks; with
    a limit, a planted huge file costs no more."""
    if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):  # Windows: no O_NOFOLLOW
        raise OSError(errno.ELOOP, "a symbolic link: not read", os.fspath(path))
    fd = os.open(path, _FLAGS)
    with open(fd, "rb", closefd=True) as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file: not read", os.fspath(path))
        if own and hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise OSError(errno.EPERM, "another user's file: not trusted", os.fspath(path))
        return handle.read(limit) if limit is not None else handle.read()


STATE_MAX = 64 * 1024  # of a small state file read on the hook's path: a huge one costs no more

_ODD = (errno.ELOOP, errno.ENXIO, errno.EMLINK)  # a link, or a FIFO no one reads, in its place


def open_own(path: str | os.PathLike[str], flags: int, mode: int = 0o600) -> int:
    """A descriptor of memstore's own state file `path` (flags as os.open's, O_CREAT to make it):
    only ever a regular file of this user's with no other name. Anything else in its place (a
    link, a hard link, a FIFO, another user's file, an empty folder) is removed first, never
    written or waited on: the place is memstore's, and what it pointed at is left as it was."""
    flags |= (getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
              | getattr(os, "O_CLOEXEC", 0))
    flags &= ~os.O_TRUNC  # a hard link would be emptied before it could be checked
    for attempt in (1, 2):
        try:
            fd = os.open(path, flags, mode)
        except OSError as exc:
            if attempt == 2 or exc.errno not in (*_ODD, errno.EISDIR):
                raise
            # an empty folder planted in its place goes too; one with files in it is not ours
            # to empty, and the state file is then not written
            (os.rmdir if exc.errno == errno.EISDIR else os.unlink)(path)
            continue
        st = os.fstat(fd)
        if (stat.S_ISREG(st.st_mode) and st.st_nlink == 1
                and (not hasattr(os, "getuid") or st.st_uid == os.getuid())):
            return fd
        os.close(fd)
        if attempt == 2:
            break
        os.unlink(path)
    raise OSError(errno.EPERM, "not memstore's own file: left alone", os.fspath(path))


def write_own(path: str | os.PathLike[str], data: bytes, append: bool = False) -> None:
    """`data` written to (or, with append, added to) memstore's own state file `path` (open_own)."""
    fd = open_own(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0))
    try:
        if not append:
            os.ftruncate(fd, 0)
        os.write(fd, data)  # one write: under O_APPEND, lines of two writers never interleave
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str]) -> str:
    """read_regular as text (UTF-8, bad bytes replaced, CRLF as LF, no BOM); "" when it cannot be
    read."""
    try:
        raw = read_regular(path)
    except OSError:
        return ""
    return raw.decode("utf-8", errors="replace").replace("\r\n", "\n").lstrip("\ufeff")


def inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Does the real path of `path` (links and `..` resolved) lie inside the real path of
    `folder`?"""
    try:
        real, base = os.path.realpath(path), os.path.realpath(folder)
    except (OSError, ValueError):
        return False
    return real.startswith(base.rstrip(os.sep) + os.sep)


def read_text_within(path: Path, folder: Path) -> str:
    """Text of a file a person may keep as a link (identity.md): followed only while it stays in
    `folder`."""
    if os.path.islink(path):
        if not inside(path, folder):
            return ""
        path = Path(os.path.realpath(path))
    return read_text(path)


def md_files(folder: str | os.PathLike[str], recursive: bool = False) -> list[Path]:
    """The regular markdown files in `folder` (dot-files left out), sorted; links are neither read
    nor walked.

    [] when the folder does not exist; OSError when it cannot be listed or is itself a link
    (an unreadable ledger must not look empty). With recursive, sub-folders (not linked ones) too,
    and a sub-folder that cannot be listed is left out.
    """
    if os.path.islink(folder):  # the walk does not enter a linked folder either
        raise OSError(errno.ELOOP, "a symbolic link: not followed", os.fspath(folder))
    found: list[Path] = []
    stack = [os.fspath(folder)]
    first = True
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as listing:
                entries = list(listing)
        except FileNotFoundError:
            if first:
                return []
            continue
        except OSError:
            if first:
                raise
            continue
        first = False
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if recursive and entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif name.endswith(".md") and entry.is_file(follow_symlinks=False):
                    found.append(Path(entry.path))
            except OSError:
                continue
    return sorted(found)


def describe_link(root: Path, rel: str) -> tuple[str, str]:
    """(level, message) for a link sync skipped: an error when it leads out of its folder.

    Its folder is the top folder it sits in (memory/, lenses/, meditations/, ...), or the
    root for a file at the top.
    """
    path = root / rel
    top = rel.split("/", 1)[0] if "/" in rel else ""
    folder = root / top if top else root
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    real = os.path.realpath(path)
    where = f"{target}" if target == real else f"{target} (really {real})"
    kind = "folder" if os.path.isdir(path) else "file"
    area = f"{top}/" if top else "the agent root"
    if not inside(path, folder):
        return "error", (f"symlink leaving {area} -> {where}: never read, indexed or shown; "
                         "if a pull planted it, delete it")
    relative = os.path.relpath(real, os.path.realpath(root)).replace(os.sep, "/")
    done = "walked" if kind == "folder" else "indexed"
    return "warning", (f"symlink to {relative}: not {done} (links are never followed; the {kind} "
                       "is read under its own name, so nothing shows twice)")

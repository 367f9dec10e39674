"""The access journal: one appended JSON line per touch, per clone and per day.

runtime/journal/<host>-<clone>-<YYYYMMDD>.jsonl. The hook appends its line before it
opens SQLite, so a touch survives a locked or broken mirror. Files are per clone so two
machines sharing the corpus through git never write the same file: the host name is
there for people to read, and the clone id (random, made once, kept machine-local in
runtime/state/clone-id) is what keeps two machines with one host name apart
(containers, cloud images and default host names all collide). Ingestion reads
each file from the offset it reached last time, takes only whole lines (a line being
appended right now waits for the next sync) and inserts each event once by id, so
replaying twice changes nothing.

A line that is not a valid event (torn by a failed write on a full disk, edited by hand,
git conflict markers) is skipped and counted per file in journal_offsets.bad_lines, which
`memstore status` and `memstore lint` report. An append never glues onto such a torn
tail: it starts a new line first. A file rewritten with lines inserted before the offset
(a git merge of another clone's copy) is noticed by a digest of the bytes just before
the offset, and read again from the start.

`append` and `new_event` are standard library only: they run on the hook's path.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import re

from memstore.core import statements
from memstore.core.agent_root import clone_id_file, journal_dir, journal_lost_file
from memstore.core.timeutil import fmt

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    import sqlite3

# The host part of `memstore verify`'s probe events: its journal file and rows are removed
# after the probe, and machine lists leave it out.
PROBE_HOST = "memstore-verify-probe"
_HOST_SAFE = re.compile(r"[^A-Za-z0-9.-]+")
_CLONE_ID = re.compile(r"^[0-9a-f]{8}$")


def host_name() -> str:
    """The host part of the journal identity, for people: $MEMSTORE_HOST, else the node name."""
    # os.uname, not socket.gethostname: the same name, without importing socket on the hook's path
    name = os.environ.get("MEMSTORE_HOST") or os.uname().nodename or "host"
    return _HOST_SAFE.sub("-", name)[:48] or "host"


def clone_id(root: str | os.PathLike[str]) -> str:
    """This clone's id: 8 random hex digits made on first use and kept in runtime/state/clone-id.

    It never changes for the life of the clone (flush_host may name it), so it does not
    follow the host name, which laptops change with the network. $MEMSTORE_CLONE_ID pins
    it (tests). A runtime/ folder copied to another machine by hand carries its id along:
    delete runtime/state/clone-id there (README, "A second machine").
    """
    pinned = os.environ.get("MEMSTORE_CLONE_ID")
    if pinned:
        return _HOST_SAFE.sub("-", pinned)[:32]
    path = clone_id_file(root)
    for _ in range(2):
        try:
            with open(path, encoding="utf-8") as handle:
                made = handle.read().strip()
            if _CLONE_ID.match(made):
                return made
            os.unlink(path)  # damaged: make a new one
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError, ValueError):
            break
        fresh = os.urandom(4).hex()
        temp = f"{path}.{os.getpid()}.{fresh}"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(temp, "w", encoding="utf-8") as handle:
                handle.write(fresh + "\n")
            try:
                os.link(temp, path)  # atomic: of two processes making it at once, one wins
            except FileExistsError:
                pass
        except OSError:
            break
        finally:
            try:
                os.unlink(temp)
            except OSError:
                pass
    # A root we cannot write to: an id derived from the machine and the folder, stable here.
    import hashlib

    node = os.uname().nodename
    return hashlib.blake2b(f"{node}\0{os.path.realpath(root)}".encode(), digest_size=4).hexdigest()


def identity(root: str | os.PathLike[str]) -> str:
    """This clone's name in the journal: <host>-<clone id>, e.g. laptop-3f9a0c1e."""
    return f"{host_name()}-{clone_id(root)}"


def split_identity(name: str) -> tuple[str, str | None]:
    """(host, clone id) of a journal identity; a name from before clone ids is all host."""
    host, _, clone = name.rpartition("-")
    return (host, clone) if host and _CLONE_ID.match(clone) else (name, None)


def names_clone(wanted: str, ident: str) -> bool:
    """Whether a flush_host value names this identity: in full, by clone id or by host (any
    case)."""
    host, clone = split_identity(ident)
    return wanted.lower() in {ident.lower(), host.lower(), (clone or ident).lower()}


def flush_host_warnings(wanted: str, me: str, machines: list[str]) -> list[str]:
    """One line per problem with who flushes, among the identities seen (this one included)."""
    seen = sorted(set(machines) | {me})
    if not wanted:
        if len(seen) > 1:
            return [f"journals from {len(seen)} machines and no flush_host in memstore.toml: two "
                    "of them flushing the same file give git two versions of the same lines to "
                    "merge; name the one that flushes (its identity, from memstore status)"]
        return []
    matching = [ident for ident in seen if names_clone(wanted, ident)]
    if not matching:
        import difflib

        close = difflib.get_close_matches(wanted, seen, n=1)
        near = f"; did you mean {close[0]!r}?" if close else ""
        return [f"flush_host {wanted!r} names none of the machines whose journals this clone has "
                f"read ({', '.join(seen)}){near}. If that machine has not pushed its journal yet, "
                "this clears after its next push and pull; otherwise no machine flushes"]
    if len(matching) > 1:
        return [f"flush_host {wanted!r} names {len(matching)} machines ({', '.join(matching)}): "
                "each of them flushes; name one by its full identity"]
    return []


def new_event(
    path: str, tool: str, when: dt.datetime, session: str | None = None, *,
    source: str | None = None
) -> dict[str, str | None]:
    """One journal line. `source` is the writer's identity (journal.identity of its root)."""
    host = source or host_name()
    stamp = fmt(when)
    ident = f"{host}-{stamp.replace(':', '').replace('-', '')}-{os.getpid()}-{os.urandom(4).hex()}"
    return {"id": ident, "ts": stamp, "path": path, "tool": tool, "session": session, "host": host}


def journal_file(root: str | os.PathLike[str], event: dict[str, str | None]) -> str:
    day = str(event["ts"])[:10].replace("-", "")
    return os.path.join(journal_dir(root), f"{event['host']}-{day}.jsonl")


def append(root: str | os.PathLike[str], event: dict[str, str | None]) -> str:
    """Append one event as one whole line: one write(2) on an O_APPEND descriptor.

    A file that does not end in a newline has a torn tail (left by a writer from before this
    rule, or edited by hand): the line then starts with one, so the fragment stays a line of
    its own (counted as unreadable by ingest) and this event stays whole. Checking costs an
    fstat and a one-byte pread, only when the file is not empty. A write that fails or comes
    up short (a full disk, a file size limit) is taken back: the file is cut to its length
    before the write, so no torn line remains; the loss is counted in runtime/state/
    journal-lost.json, which `memstore status` reports, and the OSError is raised (the hook
    logs it and exits 0).
    """
    target = journal_file(root, event)
    try:
        before = append_line(target, (json.dumps(event, ensure_ascii=False, sort_keys=True)
                                      + "\n").encode("utf-8"))
    except OSError as exc:
        count_loss(root, str(event.get("ts") or ""), target, exc)
        raise
    if not before:  # the day's first line: the loss record gets its place before a disk fills
        _reserve(journal_lost_file(root))
    return target


def append_line(target: str, line: bytes) -> int:
    """Append one whole line to target (made with its folder when missing), as `append` describes.

    Appenders hold an flock on the file for the few calls an append takes, so cutting back a
    short write never cuts another process's line; a lock not had within LOCK_WAIT is gone
    without, and the cut is then made only while this write's bytes are still the file's end.
    Returns the file's length before the line.
    """
    os.makedirs(os.path.dirname(target), exist_ok=True)
    fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _lock(fd)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        try:
            done = os.write(fd, line)
        except OSError:
            _cut(fd, size, 0)
            raise
        if done != len(line):
            _cut(fd, size, done)
            raise OSError(errno.ENOSPC, f"write(2) took {done} of the line's {len(line)} bytes "
                          "(a full disk?); the part written was taken back", target)
        return size
    finally:
        os.close(fd)  # releases the lock


LOCK_WAIT = 0.2  # seconds an append waits for another append's lock (held for microseconds)


def _lock(fd: int) -> bool:
    import fcntl
    import time

    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        except OSError:  # a file system without flock
            return False


def _cut(fd: int, size: int, done: int) -> None:
    """Take back the `done` bytes a failed write left after `size`, when they are the file's end."""
    try:
        if os.fstat(fd).st_size == size + done and done:
            os.ftruncate(fd, size)
    except OSError:
        pass


# the loss record is rewritten in place at one length: it needs no new block on a full disk
LOST_WIDTH = 511


def count_loss(root: str | os.PathLike[str], when: str, target: str, exc: OSError) -> None:
    """Add one to runtime/state/journal-lost.json (count, the newest loss's time, file and error).
    Never raises."""
    path = journal_lost_file(root)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return
    try:
        _lock(fd)
        before = lost_record(os.pread(fd, 4096, 0))
        lost = before.get("lost") if before else None  # an int: lost_record checked it
        record = {"lost": lost + 1 if isinstance(lost, int) else 1, "last": when[:40],
                  "file": os.path.basename(target)[:120], "error": (exc.strerror or str(exc))[:200]}
        text = json.dumps(record).encode("ascii")
        if len(text) > LOST_WIDTH:
            text = json.dumps({**record, "error": "", "file": ""}).encode("ascii")
        os.pwrite(fd, text.ljust(LOST_WIDTH) + b"\n", 0)
    except OSError:
        pass
    finally:
        os.close(fd)


def _reserve(path: str) -> None:
    """Make the loss record's file at its full length, saying nothing is lost, unless it exists."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:  # there already (the usual case), or not makeable: count_loss tries again
        return
    try:
        _lock(fd)
        if not os.fstat(fd).st_size:  # a count_loss in between wrote first: its count stands
            os.pwrite(fd, json.dumps({"lost": 0}).encode("ascii").ljust(LOST_WIDTH) + b"\n", 0)
    except OSError:
        pass
    finally:
        os.close(fd)


def lost_record(raw: bytes) -> dict[str, object] | None:
    """The loss record in a journal-lost.json's bytes; None when there is none or it is
    unreadable."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("lost"), int) or (
            record["lost"] < 1):
        return None
    return record


def lost_touches(root: str | os.PathLike[str]) -> dict[str, object] | None:
    """What count_loss recorded (lost, last, file, error), or None when no append has failed."""
    try:
        with open(journal_lost_file(root), "rb") as handle:
            return lost_record(handle.read(4096))
    except OSError:
        return None


def lost_advice(record: dict[str, object]) -> str:
    """status's line for a loss record: what was lost, and what to do next."""
    error = f" ({record['error']})" if record.get("error") else ""
    return (f"{record['lost']} touch(es) could not be written to the journal, the newest at "
            f"{record.get('last') or '?'}{error}: those reads are lost (each was taken back whole, "
            "no torn line). Free space on the disk that holds runtime/, then delete "
            "runtime/state/journal-lost.json to clear this line")


def insert_event(conn: sqlite3.Connection, event: dict[str, str | None]) -> bool:
    values = (event["id"], event["ts"], event["path"], event["tool"], event.get("session"),
              event.get("host"))
    project = event.get("project")
    # born: a Write that created the memory (memstore.mirror.adoption), with its project
    return statements.insert_event(conn, values, born=event.get("born") == "1",
                                   project=project if isinstance(project, str) else None)


class Ingested:
    __slots__ = ("bad_lines", "new_events", "paths")

    def __init__(self) -> None:
        self.new_events = 0
        self.bad_lines = 0  # unreadable lines met in this pass (per-file totals: journal_offsets)
        self.paths: set[str] = set()


def _valid(event: object) -> bool:
    return isinstance(event, dict) and all(
        isinstance(event.get(k), str) and event.get(k) for k in ("id", "ts", "path", "tool")
    )


# How much of a journal file, just before the offset ingest reached, its digest covers
# (journal_offsets.tail). Lines inserted anywhere before the offset (a git merge putting
# another copy's lines first) shift these bytes, and each line holds a unique id, so the
# digest no longer matches and the file is read again from 0. Only this window is hashed,
# not the whole prefix: a sync reads what is new plus 4 KiB, however long the file.
# An edit that keeps the length of everything before the window is not seen; it adds no
# event either. A file whose size did not move is not opened at all.
TAIL_WINDOW = 4096


def _tail_digest(data: bytes) -> str:
    import hashlib  # here, not at the top: the hook imports this module and never ingests

    return hashlib.blake2b(data, digest_size=16).hexdigest()


def ingest(conn: sqlite3.Connection, root: str | os.PathLike[str]) -> Ingested:
    """Read what is new in every journal file into the events table (caller holds a transaction).

    Each file is read from the offset reached last time, unless the bytes before that offset
    changed (its size fell below it, or journal_offsets.tail no longer matches): then from 0.
    Events go in once by id (statements.insert_event), so reading a line twice changes nothing.
    journal_offsets.bad_lines keeps the count of unreadable lines before the offset: a line
    is read once, so the count is what reports them later; a read from 0 counts afresh.
    """
    result = Ingested()
    folder = journal_dir(root)
    if not os.path.isdir(folder):
        return result
    stored = statements.journal_offsets(conn)
    names = sorted(n for n in os.listdir(folder) if n.endswith(".jsonl"))
    gone = set(stored).difference(names)
    # a removed journal file: what it said is no longer reported (read from 0 again if it returns)
    if gone:
        statements.drop_offsets(conn, sorted(gone))
    for name in names:
        path = os.path.join(folder, name)
        start, tail, bad = stored.get(name, (0, None, 0))
        try:
            size = os.stat(path).st_size
            if size < start:  # rewritten or truncated by hand: read it all again
                start = 0
            if size == start and (tail is not None or not start):
                continue
            with open(path, "rb") as handle:
                base = max(0, start - TAIL_WINDOW)
                handle.seek(base)
                data = handle.read()  # to the end: only whole lines are taken below
                if start and (tail is None or _tail_digest(data[: start - base]) != tail):
                    start = base = 0  # the bytes before the offset changed: read it all again
                    handle.seek(0)
                    data = handle.read()
        except OSError:
            continue
        if not start:
            bad = 0  # read from 0: counted afresh
        end = data.rfind(b"\n")
        if end < start - base:
            continue  # no new whole line yet
        for raw in data[start - base : end + 1].splitlines():
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                bad += 1
                result.bad_lines += 1
                continue
            if not _valid(event):
                bad += 1
                result.bad_lines += 1
                continue
            if insert_event(conn, event):
                result.new_events += 1
                result.paths.add(event["path"])
        reached = base + end + 1
        digest = _tail_digest(data[max(0, reached - TAIL_WINDOW - base) : end + 1])
        statements.save_offset(conn, name, reached, digest, bad)
    return result


def bad_line_counts(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """(journal file name, unreadable lines in it) for every file that has some, by name."""
    return statements.bad_line_counts(conn)


def bad_lines_advice(name: str, count: int) -> str:
    """What `status` and `lint` say about one journal file's unreadable lines."""
    lines = "line" if count == 1 else "lines"
    return (f"{count} unreadable {lines} in runtime/journal/{name} (a write cut short, e.g. by a "
            "full disk; a hand edit; git conflict markers): the reads recorded there are lost, "
            f"nothing else is. The {lines} stay in the file and are skipped, so this is safe to "
            f"leave; to clear the report, delete the {lines} that are not JSON from the file and "
            "run `memstore sync`")

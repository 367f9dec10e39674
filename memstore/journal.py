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

`append` and `new_event` are standard library only: they run on the hook's path.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sqlite3

from memstore.agent_root import clone_id_file, journal_dir
from memstore.timeutil import fmt

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
                os.link(temp, path)  # atomic: of two processes making it at once, one wins, both read it
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
    """Whether a flush_host value names this identity: in full, by clone id or by host (any case)."""
    host, clone = split_identity(ident)
    return wanted.lower() in {ident.lower(), host.lower(), (clone or ident).lower()}


def flush_host_warnings(wanted: str, me: str, machines: list[str]) -> list[str]:
    """One line per problem with who flushes, among the identities seen (this one included)."""
    seen = sorted(set(machines) | {me})
    if not wanted:
        if len(seen) > 1:
            return [f"journals from {len(seen)} machines and no flush_host in memstore.toml: two of them "
                    "flushing the same file give git two versions of the same lines to merge; name the one "
                    "that flushes (its identity, from memstore status)"]
        return []
    matching = [ident for ident in seen if names_clone(wanted, ident)]
    if not matching:
        import difflib

        close = difflib.get_close_matches(wanted, seen, n=1)
        near = f"; did you mean {close[0]!r}?" if close else ""
        return [f"flush_host {wanted!r} names none of the machines seen ({', '.join(seen)}), so no machine "
                f"flushes{near}"]
    if len(matching) > 1:
        return [f"flush_host {wanted!r} names {len(matching)} machines ({', '.join(matching)}): each of them "
                "flushes; name one by its full identity"]
    return []


def new_event(
    path: str, tool: str, when: dt.datetime, session: str | None = None, *, source: str | None = None
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
    """Append one event as one line with one write(2) on an O_APPEND descriptor."""
    target = journal_file(root, event)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    line = (json.dumps(event, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return target


def insert_event(conn: sqlite3.Connection, event: dict[str, str | None]) -> bool:
    cur = conn.execute(
        "INSERT OR IGNORE INTO events (id, ts, path, tool, session, host) VALUES (?, ?, ?, ?, ?, ?)",
        (event["id"], event["ts"], event["path"], event["tool"], event.get("session"), event.get("host")),
    )
    return cur.rowcount == 1


class Ingested:
    __slots__ = ("bad_lines", "new_events", "paths")

    def __init__(self) -> None:
        self.new_events = 0
        self.bad_lines = 0
        self.paths: set[str] = set()


def _valid(event: object) -> bool:
    return isinstance(event, dict) and all(
        isinstance(event.get(k), str) and event.get(k) for k in ("id", "ts", "path", "tool")
    )


def ingest(conn: sqlite3.Connection, root: str | os.PathLike[str]) -> Ingested:
    """Read what is new in every journal file into the events table (caller holds a transaction)."""
    result = Ingested()
    folder = journal_dir(root)
    if not os.path.isdir(folder):
        return result
    offsets = {r[0]: r[1] for r in conn.execute("SELECT file, offset FROM journal_offsets")}
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".jsonl")):
        path = os.path.join(folder, name)
        start = offsets.get(name, 0)
        try:
            size = os.stat(path).st_size
            if size < start:  # rewritten or truncated by hand: read it all again
                start = 0
            if size == start:
                continue
            with open(path, "rb") as handle:
                handle.seek(start)
                chunk = handle.read(size - start)
        except OSError:
            continue
        end = chunk.rfind(b"\n")
        if end < 0:
            continue
        for raw in chunk[: end + 1].splitlines():
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                result.bad_lines += 1
                continue
            if not _valid(event):
                result.bad_lines += 1
                continue
            if insert_event(conn, event):
                result.new_events += 1
                result.paths.add(event["path"])
        conn.execute(
            "INSERT INTO journal_offsets (file, offset) VALUES (?, ?) "
            "ON CONFLICT(file) DO UPDATE SET offset = excluded.offset",
            (name, start + end + 1),
        )
    return result

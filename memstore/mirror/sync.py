"""Bring the mirror in line with the files: full and quick sync, rebuild, self-repair.

A full sync compares each file's (mtime, size, inode) with the mirror and reads only what
moved; a content digest decides whether it changed. A file that cannot be read keeps its
row and an unlistable folder its rows: a permissions hiccup never deletes. Rebuild swaps in a
fresh mirror built beside the live one.

A quick sync (search and the read-only commands run it first) stats only the folders: adding,
removing or renaming a file changes its folder's mtime, and a listing gives each file's inode
without a stat, so a file replaced by rename shows too. Files the hook saw written are in the
`dirty` table. A quick sync misses a file rewritten in place other than by the agent's tools;
the next full sync (`memstore sync`, the nightly tick, render) picks that up.

Only regular files are read: a link (to a file or a folder, inside memory/ or out of
it) and a FIFO or device are skipped, and a file that becomes one leaves the mirror at
the next sync (memstore.core.fsguard says why; `memstore lint` names them).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import sqlite3
import stat as statmod
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memstore.core import journal
from memstore.core.agent_root import RootPaths
from memstore.core.config import Config, load_config
from memstore.core.fsguard import read_regular
from memstore.core.locks import file_lock, sweep_stale
from memstore.core.policy import recompute_policy
from memstore.core.timeutil import UTC, fmt
from memstore.core.transactions import transaction
from memstore.meaning.chunking import digest
from memstore.mirror import db as mirror
from memstore.mirror.indexing import build_row, delete_rows, optimize_text_tables, write_rows
from memstore.mirror.walking import Stat, Walk, joined, skip_dir, team_ignored, team_skipped, walk

Progress = Callable[[int, int], None]
Notify = Callable[[str], None]

BATCH = 500
# A first sync of this many files or more is parsed by a pool of processes (forked: tens of ms)
PARALLEL_MIN = 2000
MAX_WORKERS = 4
CHUNK = 100  # files a parsing process takes at a time
# A stamp this close to the moment we record it may be followed by another change in the
# same clock tick (the "racily clean" problem); such stamps are recorded as unknown (-1),
# so the next sync looks again instead of trusting them.
RACY_NS = 2_000_000_000


def _trusted(stamp_ns: int, now_ns: int) -> bool:
    return now_ns - stamp_ns >= RACY_NS


@dataclass
class SyncReport:
    scanned: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0
    touched_only: int = 0  # stat moved, bytes did not
    unreadable: list[str] = field(default_factory=list)
    events: int = 0
    bad_journal_lines: int = 0  # unreadable journal lines this sync met (status lists them)
    vectors: dict[str, object] | None = None  # the embedding pass after (Store.sync, Store.rebuild)
    # memory files gone without `forget`, now copies in memory/archive/ (mirror.deletions)
    kept_deleted: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def summary(self) -> str:
        text = (f"{self.scanned} files: {self.added} added, {self.changed} changed, "
                f"{self.removed} removed, {self.unchanged + self.touched_only} unchanged")
        if self.events:
            text += f"; {self.events} journal events"
        if self.unreadable:
            text += f"; {len(self.unreadable)} unreadable (rows kept)"
        if self.bad_journal_lines:
            text += (f"; {self.bad_journal_lines} unreadable journal line(s) skipped "
                     "(see memstore status)")
        if self.kept_deleted:
            text += (f"; {len(self.kept_deleted)} deleted outside memstore, "
                     "kept in memory/archive/ (memstore restore NAME puts one back)")
        if self.vectors and (self.vectors["embedded"] or self.vectors["pending"]):
            text += f"; {self.vectors['embedded']} embedded"
            if self.vectors["pending"]:
                text += (f", {self.vectors['pending']} files with parts still to embed "
                         "(run: memstore embed)")
        return text


def _apply(conn: sqlite3.Connection, root: Path, config: Config, found: dict[str, Stat],
           known: dict[str, tuple[int, int, str, int | None]], removed: list[str],
           report: SyncReport, progress: Progress | None = None, now: dt.datetime | None = None,
           ) -> list[str]:
    """Write what changed among `found` (compared with `known`) and drop `removed`.

    Reads and parses happen outside write transactions; writes go in short transactions
    of BATCH files, so a hook recording a touch meanwhile waits milliseconds. Returns the
    paths whose rows now match the disk. A memory file among `removed` that was deleted
    (not moved) is first written back into memory/archive/ from the mirror
    (memstore.mirror.deletions, stamped with `now`), and that copy is taken in at once.
    """
    # here: a search with --no-sync never loads them (nor memstore.hook.deleted_copies)
    from memstore.mirror import deletions
    from memstore.mirror.adoption import adopt, keep_last_good

    todo = sorted(rel for rel, st in found.items()
                  if known.get(rel, (None, None, None, None))[:2] != st[:2]
                  or known[rel][3] != st[2])
    report.unchanged += len(found) - len(todo)
    inserts: list[dict[str, object]] = []
    updates: list[dict[str, object]] = []
    stat_only: list[tuple[int, int, int, str]] = []
    raws: list[tuple[str, bytes]] = []  # memory files' bytes, kept for deletions.watched
    kept: list[str] = []
    policy_paths: list[str] = []
    pending = set(todo)
    done = [rel for rel in found if rel not in pending]

    def write(final: bool = False) -> None:
        with transaction(conn):
            write_rows(conn, inserts, updates)
            adopt(conn, [str(row["path"]) for row in (*inserts, *updates) if row["kind"] == "t2"],
                  fresh=True)
            conn.executemany("UPDATE files SET mtime_ns = ?, size = ?, inode = ? WHERE path = ?",
                             stat_only)
            conn.executemany("INSERT OR REPLACE INTO raw_texts (path, raw) VALUES (?, ?)", raws)
            if final:
                if removed:
                    copies, failed = deletions.keep(conn, root, removed,
                                                    fmt(now or dt.datetime.now(UTC)))
                    kept.extend(copies)
                    # a copy that failed: tried again next sync
                    removed[:] = [rel for rel in removed if rel not in failed]
                    delete_rows(conn, removed)
                    policy_paths.extend(removed)
                touched = journal.ingest(conn, root)
                report.events += touched.new_events
                report.bad_journal_lines += touched.bad_lines
                policy_paths.extend(touched.paths)
                adopt(conn, sorted(touched.paths), fresh=False)  # births among the new events
            if policy_paths:
                recompute_policy(conn, sorted(set(policy_paths)), config)
        inserts.clear()
        updates.clear()
        stat_only.clear()
        raws.clear()
        policy_paths.clear()

    total = len(todo)
    now_ns = time.time_ns()
    jobs = []
    for rel in todo:
        mtime_ns, _size, inode = found[rel]
        old = known.get(rel)
        recorded = inode if _trusted(mtime_ns, now_ns) else -1  # -1: the next sync looks again
        jobs.append((rel, mtime_ns, recorded, old[2] if old else None))
    outcomes = zip(jobs, _read_all(root, config, jobs), strict=True)
    for index, ((rel, mtime_ns, inode, _), outcome) in enumerate(outcomes, 1):
        if outcome is None:
            report.unreadable.append(rel)
            continue
        size, packed, row = outcome
        if packed is not None:
            raws.append((rel, packed))
        old = known.get(rel)
        if row is None:  # the same bytes: only its stat moved
            stat_only.append((mtime_ns, size, inode, rel))
            report.touched_only += 1
        else:
            if row["broken"]:
                keep_last_good(conn, row)
            if old is None:
                inserts.append(row)
                report.added += 1
            else:
                updates.append(row)
                report.changed += 1
            if row["kind"] == "t2" or old is not None:
                policy_paths.append(rel)
        done.append(rel)
        if len(inserts) + len(updates) + len(stat_only) >= BATCH:
            write()
        if progress and (index % 1000 == 0 or index == total):
            progress(index, total)
    write(final=True)
    report.removed += len(removed)
    if kept:  # the copies just written: in the mirror now, not at the next sync
        report.kept_deleted.extend(kept)
        copies = {}
        for rel in kept:
            with contextlib.suppress(OSError):
                info = os.lstat(root / rel)
                copies[rel] = (info.st_mtime_ns, info.st_size, info.st_ino)
        aside = SyncReport()  # not counted as added: the summary says them as kept
        done += _apply(conn, root, config, copies, _known(conn, sorted(copies)), [], aside,
                       now=now)
        report.unreadable.extend(aside.unreadable)
    return done


Job = tuple[str, int, int, str | None]  # path, mtime_ns, inode to record, the mirror's digest
# size, packed copy, row; None: unreadable
Outcome = tuple[int, bytes | None, dict[str, object] | None] | None


def _read_one(root: Path, config: Config, job: Job) -> Outcome:
    """Read one file and build its row: (size, its packed copy when deletions keep one, the row,
    None when the bytes are the mirror's already), or None when it cannot be read."""
    from memstore.mirror import deletions  # here: see _apply

    rel, mtime_ns, inode, old_digest = job
    try:
        raw = read_regular(root / rel)  # never through a link nor a FIFO (swapped since the walk)
    except OSError:
        return None
    packed = deletions.pack(raw) if deletions.watched(rel) else None
    if old_digest is not None and old_digest == digest(raw):
        return len(raw), packed, None
    return len(raw), packed, build_row(rel, raw, mtime_ns, len(raw), config, inode)


def read_chunk(root: Path, config: Config, jobs: list[Job]) -> list[Outcome]:
    """_read_one over a chunk of files: what a parsing process does."""
    return [_read_one(root, config, job) for job in jobs]


def _die_with(parent: int) -> None:
    """A parsing process ends when the sync that forked it is killed: it holds the sync's lock."""
    import ctypes

    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL: the kernel ends us with it
    if os.getppid() != parent:  # the sync died before the line above took effect
        os._exit(1)


def _read_all(root: Path, config: Config, jobs: list[Job]) -> Iterator[Outcome]:
    """Each job's outcome, in order: past PARALLEL_MIN files, forked processes parse chunks while
    this one writes; what they could not parse (none started, one killed) is parsed here."""
    import threading

    chunks = [jobs[at:at + CHUNK] for at in range(0, len(jobs), CHUNK)]
    # Forked, not spawned: a spawned process runs the caller's script again (an unguarded one does
    # it all twice). A fork is safe only with no other thread (one may hold a lock), on Linux.
    alone = sys.platform == "linux" and threading.active_count() == 1
    workers = min(len(os.sched_getaffinity(0)), MAX_WORKERS) if alone else 1
    done = 0  # chunks given out
    if len(jobs) >= PARALLEL_MIN and workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        fork = multiprocessing.get_context("fork")
        try:
            with ProcessPoolExecutor(workers, mp_context=fork, initializer=_die_with,
                                     initargs=(os.getpid(),)) as pool:
                ahead = [pool.submit(read_chunk, root, config, c) for c in chunks[:2 * workers]]
                while ahead:
                    outcomes = ahead.pop(0).result()
                    following = done + len(ahead) + 1  # a bounded window of chunks in memory
                    if following < len(chunks):
                        ahead.append(pool.submit(read_chunk, root, config, chunks[following]))
                    done += 1
                    yield from outcomes
        except Exception:  # parsed below, where an error of the files themselves is raised again
            pass
    for chunk in chunks[done:]:
        yield from read_chunk(root, config, chunk)


def _known(conn: sqlite3.Connection, paths: list[str] | None = None
           ) -> dict[str, tuple[int, int, str, int | None]]:
    sql = "SELECT path, mtime_ns, size, digest, inode FROM files"
    if paths is None:
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in conn.execute(sql)}
    out: dict[str, tuple[int, int, str, int | None]] = {}
    for start in range(0, len(paths), BATCH):
        chunk = paths[start : start + BATCH]
        rows = conn.execute(f"{sql} WHERE path IN ({','.join('?' * len(chunk))})", chunk)
        out.update({r[0]: (r[1], r[2], r[3], r[4]) for r in rows})
    return out


def _record_dirs(conn: sqlite3.Connection, dirs: dict[str, int], gone: list[str], clean: list[str],
                 replace_all: bool) -> None:
    with transaction(conn):
        if replace_all:
            conn.execute("DELETE FROM dirs")
        conn.executemany("DELETE FROM dirs WHERE path = ? OR path LIKE ? || '/%'",
                         [(d, d) for d in gone])
        now_ns = time.time_ns()
        conn.executemany("INSERT OR REPLACE INTO dirs (path, mtime_ns) VALUES (?, ?)",
                         [(d, m if _trusted(m, now_ns) else -1) for d, m in dirs.items()])
        dirty = {row[0] for row in conn.execute("SELECT path FROM dirty")}
        conn.executemany("DELETE FROM dirty WHERE path = ?",
                         [(p,) for p in dirty.intersection(clean)])


def sync_into(conn: sqlite3.Connection, root: Path, config: Config,
              progress: Progress | None = None, now: dt.datetime | None = None,
              tree: Walk | None = None) -> SyncReport:
    """Full incremental sync of `conn` against every file under `root` (`now`: a deletion's stamp).
    `tree`: the command's listing of the root (mirror.changes), so this walks none of its own."""
    report = SyncReport()
    tree = tree if tree is not None else walk(root, teams=joined(config))
    report.scanned = len(tree.files)
    known = _known(conn)
    removed = [rel for rel in known if rel not in tree.files and not tree.shielded(rel)]
    report.unreadable.extend(rel for rel in known if rel not in tree.files and tree.shielded(rel))
    clean = _apply(conn, root, config, tree.files, known, removed, report, progress, now)
    _record_dirs(conn, tree.dirs, [], [*clean, *removed], replace_all=True)
    return report


def quick_sync(conn: sqlite3.Connection, root: Path, config: Config,
               now: dt.datetime | None = None) -> SyncReport:
    """Catch up with files added, removed or replaced since the last sync, statting folders only."""
    stored = dict(conn.execute("SELECT path, mtime_ns FROM dirs").fetchall())
    if not stored:
        return sync_into(conn, root, config, now=now)  # no folder record: a full walk makes one
    report = SyncReport()
    tree = Walk()
    candidates: dict[str, Stat | None] = {}  # None: gone
    gone_dirs: list[str] = []
    for rel_dir, mtime in stored.items():
        abs_dir = os.path.join(root, rel_dir)
        try:
            now_mtime = os.stat(abs_dir).st_mtime_ns
        except FileNotFoundError:
            gone_dirs.append(rel_dir)
            continue
        except OSError:
            continue  # unreadable now: leave its rows as they are
        if now_mtime == mtime:
            continue
        try:
            entries = list(os.scandir(abs_dir))
        except OSError:
            continue
        tree.dirs[rel_dir] = now_mtime
        listed: dict[str, int] = {}
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if (not skip_dir(entry.name) and rel not in stored
                            and not team_skipped(rel_dir, entry.name, joined(config))):
                        # a new folder: everything in it is new
                        walk(root, rel, tree, teams=joined(config))
                # a link or a FIFO is not listed: see walk
                elif (entry.name.endswith(".md") and not entry.name.startswith(".")
                        and not team_ignored(rel) and entry.is_file(follow_symlinks=False)):
                    listed[rel] = entry.inode()
            except OSError:
                continue
        mirrored = dict(conn.execute("SELECT path, inode FROM files WHERE dir = ?",
                                     (rel_dir,)).fetchall())
        for rel, inode in listed.items():
            if mirrored.get(rel, -1) != inode:
                candidates[rel] = None  # new, or replaced by rename: stat it below
        for rel in mirrored:
            if rel not in listed:
                candidates[rel] = None
    for rel_dir in gone_dirs:
        for (rel,) in conn.execute("SELECT path FROM files WHERE dir = ? OR dir LIKE ? || '/%'",
                                   (rel_dir, rel_dir)):
            candidates[rel] = None
    for (rel,) in conn.execute("SELECT path FROM dirty"):
        candidates.setdefault(rel, None)
    found: dict[str, Stat] = dict(tree.files)
    removed: list[str] = []
    for rel in candidates:
        if rel in found:
            continue
        try:
            info = os.lstat(os.path.join(root, rel))
        except FileNotFoundError:
            removed.append(rel)
            continue
        except OSError:
            continue
        if statmod.S_ISREG(info.st_mode):
            found[rel] = (info.st_mtime_ns, info.st_size, info.st_ino)
        else:
            removed.append(rel)  # now a link, a FIFO or a folder: never read (see walk)
    if not found and not removed and not tree.dirs and not gone_dirs:
        return report
    known = _known(conn, sorted(set(found) | set(removed)))
    removed = [rel for rel in removed if rel in known]
    report.scanned = len(found)
    clean = _apply(conn, root, config, found, known, removed, report, now=now)
    _record_dirs(conn, tree.dirs, gone_dirs, [*clean, *removed, *candidates], replace_all=False)
    return report


def _lock_path(root: Path) -> Path:
    return Path(RootPaths(root).mirror_lock)


def rebuild(root: Path, config: Config | None = None, progress: Progress | None = None, *,
            only_if_unhealthy: bool = False, notify: Notify | None = None,
            now: dt.datetime | None = None) -> SyncReport | None:
    """Build a fresh mirror from the files and journal beside the live one, then swap it in.

    With only_if_unhealthy, a mirror that another process repaired while we waited for
    the lock is left alone (returns None). `notify` hears one line, before the work
    starts, saying that the mirror is being rebuilt and why.
    """
    config = config or load_config(root)
    live = Path(RootPaths(root).db)
    with file_lock(_lock_path(root), timeout=config.lock_timeout_s):
        reason: str | None = None  # why the live mirror is unhealthy; None while it is healthy
        try:
            mirror.open_checked(live).close()
        except mirror.MirrorUnhealthy as exc:
            reason = exc.reason
        live_healthy = reason is None
        if live_healthy and only_if_unhealthy:
            return None
        if notify:
            notify(f"{reason or 'mirror rebuild asked for'}; rebuilding it from the files")
        if live_healthy:  # a memory deleted since the last sync is kept from the live mirror first
            with contextlib.suppress(sqlite3.Error, mirror.MirrorUnhealthy):
                conn = mirror.open_checked(live)
                try:
                    sync_into(conn, root, config, now=now)
                finally:
                    conn.close()
        sweep_stale(live.parent)  # half-built mirrors of a rebuild that was killed
        _keep_runtime_out_of_git(root)
        fresh_path = live.with_name(f"memstore.db.rebuild-{os.getpid()}")
        fresh = None
        try:
            fresh = mirror.create_fresh(fresh_path)
            report = sync_into(fresh, root, config, progress)
            optimize_text_tables(fresh)
            if live_healthy:
                from memstore.meaning.vectors import carry_over  # here: an FTS-only root skips it

                carry_over(fresh, live)
            mirror.swap_in(fresh, fresh_path, live, live_healthy)
        except BaseException:
            # A half-built mirror is removed even when closing it fails too (a full disk).
            with contextlib.suppress(sqlite3.Error):
                if fresh is not None:
                    fresh.close()
            mirror.discard(fresh_path)
            raise
    return report


def _keep_runtime_out_of_git(root: Path) -> None:
    """Put back runtime/.gitignore in a root kept in git, if someone deleted runtime/ whole.

    Without it the next `git add -A` would commit the mirror, the locks and this clone's
    id, and every other machine would take them in.
    """
    ignore = root / "runtime" / ".gitignore"
    if ignore.exists() or not any((folder / ".git").exists() for folder in (root, *root.parents)):
        return
    from memstore.core.starter_templates import RUNTIME_GITIGNORE  # here: rare, off search's path

    try:
        ignore.parent.mkdir(parents=True, exist_ok=True)
        ignore.write_text(RUNTIME_GITIGNORE, encoding="utf-8")
    except OSError:
        pass  # a read-only root: nothing to commit from here either


def open_mirror(root: Path, config: Config | None = None, notify: Notify | None = None,
                progress: Progress | None = None) -> sqlite3.Connection:
    """The live mirror, rebuilt first if it is missing, corrupt or foreign.

    A rebuild is said in one line before it starts (the reason), then reported through
    `progress` as it goes: on a large root it takes seconds.
    """
    config = config or load_config(root)
    live = Path(RootPaths(root).db)
    try:
        return mirror.open_checked(live)
    except mirror.MirrorUnhealthy:
        rebuild(root, config, progress, only_if_unhealthy=True, notify=notify)
    return mirror.open_checked(live)


def sync(root: Path, config: Config | None = None, progress: Progress | None = None,
         notify: Notify | None = None) -> SyncReport:
    """Open (repairing if needed) and sync incrementally, under the mirror lock."""
    config = config or load_config(root)
    conn = open_mirror(root, config, notify, progress)
    try:
        return sync_under_lock(conn, root, config, progress)
    finally:
        conn.close()


def sync_under_lock(conn: sqlite3.Connection, root: Path, config: Config,
                    progress: Progress | None = None, *, quick: bool = False,
                    now: dt.datetime | None = None) -> SyncReport:
    """A full (or quick) sync under the mirror lock: two never interleave (`now`: the clock)."""
    with file_lock(_lock_path(root), timeout=config.lock_timeout_s):
        return (quick_sync(conn, root, config, now) if quick
                else sync_into(conn, root, config, progress, now))

"""Nothing is ever deleted, whoever deletes: a memory file that disappears without `memstore forget`
is written back into memory/archive/ by the next sync, from the mirror. Standard library only at
module level (the SessionStart bundle reads `notice`).

- Which files: everything under memory/ the mirror indexes (T2 topic files, short-term facts,
  dream-journal entries, bug files, other notes), less the derived files (MEMORY.md,
  MEMORY-archive.md, current-state.md) and anything inside an `archive/` folder: removing a file
  from an archive is how a person really deletes it (git history aside).
- What counts as gone: no regular file is at the path any more (a link or a FIFO put in its place
  loses the text just as well: sync never reads those), and its text (summary, description
  and body: files.text_digest), or its exact bytes, lives in no other row of the mirror. So
  memstore's own moves (forget, the nightly roll, a rejected lesson's move) and any rename or
  `git mv` whose new file the same sync sees are moves, not deletions; so is a file whose text
  another file already holds (nothing is lost).
- The copy: the file's bytes as sync last read them (raw_texts, migration m011), with three
  frontmatter fields added the way `forget` adds its own (memstore.mirror.fmedit, every other byte
  kept): `status: deleted` (only when the file had no `status`), `deleted_at` (the store's clock)
  and `deleted_from` (its root-relative path). A file without frontmatter (or one fmedit will not
  edit) gets a block of its own in front, marked `deleted_block: added`, so `restore` takes the
  block off again exactly. Named memory/archive/<its name>.md, or <stem>-2.md, ... (never over a
  file). Without bytes in the mirror (a mirror from before m011 that had not read the file
  since), the copy is rebuilt from the mirror's fields and says so (`deleted_copy`).
- Seen by the person: `status` and the SessionStart bundle say how many copies wait, until each
  is restored (`memstore restore NAME`) or the person says they saw them (`memstore restore
  --ack`, which records the time in runtime/state/deletions-seen.json).
- `memstore restore NAME` puts the copy back where it was with the marks taken off, byte for
  byte; a forgotten memory too (its status and forgotten_* fields taken off; a status it had
  before forget is not known any more).
"""

from __future__ import annotations

import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.agent_root import state_dir
from memstore.core.errors import BadUsage, MemstoreError, NotFound
from memstore.core.fsguard import read_regular
from memstore.core.kinds import DERIVED
from memstore.core.locks import atomic_write
from memstore.hook.deleted_copies import (  # noqa: F401 (part of this module's API)
    _KEY,
    ADDED,
    ARCHIVE,
    FORGET_KEYS,
    HEAD_BYTES,
    MARK_KEYS,
    REBUILT,
    SEEN_FILE,
    Kept,
    _block,
    _head_values,
    _unquote,
    archived,
    notice,
    seen_at,
    summary,
    unseen,
)
from memstore.mirror.fmedit import CannotEdit, set_fields
from memstore.mirror.indexing import body_of

if TYPE_CHECKING:
    import sqlite3




def watched(rel: str) -> bool:
    """Is this root-relative path a memory file whose disappearance is kept (see the module doc)?"""
    parts = rel.split("/")
    if len(parts) < 2 or parts[0] != "memory" or not parts[-1].endswith(".md"):
        return False
    if len(parts) == 2 and parts[1] in DERIVED:
        return False
    return "archive" not in parts[1:-1]


def pack(raw: bytes) -> bytes:
    return zlib.compress(raw, 6)


# ---------------------------------------------------------------- sync: keep what vanished


def keep(conn: sqlite3.Connection, root: Path, removed: list[str], now: str
         ) -> tuple[list[str], list[str]]:
    """Write an archive copy of each removed path that was really deleted (see the module doc).

    Called by sync inside its final transaction, after the new rows are written and before the
    removed ones go. Returns (the copies' root-relative paths, the removed paths whose copy could
    not be written: their rows stay, so the next sync tries again).
    """
    gone = [rel for rel in removed if watched(rel) and not _regular(root / rel)]
    if not gone:
        return [], []
    leaving = set(removed)
    living: set[str] = set()
    for path, digest, text_digest in conn.execute("SELECT path, digest, text_digest FROM files"):
        if path not in leaving:
            living.add(digest)
            if text_digest:
                living.add(text_digest)
    copies: list[str] = []
    failed: list[str] = []
    for rel in gone:
        row = conn.execute("SELECT id, digest, text_digest, meta FROM files WHERE path = ?",
                           (rel,)).fetchone()
        if row is None or row[1] in living or (row[2] and row[2] in living):
            continue  # moved (forget, a roll, a rename) or its text is still held elsewhere
        packed = conn.execute("SELECT raw FROM raw_texts WHERE path = ?", (rel,)).fetchone()
        marks: dict[str, Any] = {"deleted_at": now, "deleted_from": rel}
        if packed is not None:
            raw = zlib.decompress(packed[0])
        else:
            raw = _rebuilt(conn, row[0], row[3])
            marks[REBUILT] = "rebuilt from the mirror's fields (its bytes were not kept)"
        try:
            copies.append(_write_new(root, Path(rel).name, mark(raw, marks)))
        except OSError:
            failed.append(rel)
    return copies, failed


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _rebuilt(conn: sqlite3.Connection, ident: int, meta: str | None) -> bytes:
    import yaml

    front = json.loads(meta or "{}")
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True) if front else ""
    return f"---\n{head}---\n{body_of(conn, ident)}".encode()


def _write_new(root: Path, name: str, data: bytes) -> str:
    """data into memory/archive/<name> (or <stem>-2.md, ...), never over a file; its path."""
    folder = root / ARCHIVE
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.{os.getpid()}.tmp"  # hidden: no walk reads it
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    try:
        stem, suffix = os.path.splitext(name)
        n = 1
        while True:
            target = folder / (name if n == 1 else f"{stem}-{n}{suffix}")
            try:
                os.link(tmp, target)  # fails when the name is taken: never over a file
                return target.relative_to(root).as_posix()
            except FileExistsError:
                n += 1
    finally:
        tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------- the marks, on and off


def mark(raw: bytes, marks: dict[str, Any]) -> bytes:
    """The file's bytes with the deletion marks added to its frontmatter, every other byte kept."""
    text = raw.decode("utf-8", "surrogateescape")
    if text.lstrip("\ufeff").split("\n", 1)[0].rstrip() == "---":
        fields = dict(marks)
        if _status_line(text) is None:
            fields = {"status": "deleted", **fields}
        try:
            return set_fields(raw, fields)
        except (CannotEdit, UnicodeError):
            pass
    lines = ["---", "status: deleted", *(f"{k}: {json.dumps(str(v))}" for k, v in marks.items()),
             f"{ADDED}: added", "---", ""]
    return "\n".join(lines).encode() + raw


def _status_line(text: str) -> str | None:
    """The `status:` line of the first frontmatter block, or None."""
    for line in _block(text.lstrip("\ufeff").replace("\r\n", "\n")):
        if line.startswith("status:") or re.match(r"^status[ \t]*:", line):
            return line
    return None


def unmark(raw: bytes, keys: tuple[str, ...] = MARK_KEYS, status: str = "deleted") -> bytes:
    """The bytes before `mark` (or forget): its fields' lines taken out of the first block again."""
    text = raw.decode("utf-8", "surrogateescape")
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end != -1 and f"\n{ADDED}: added" in text[3:end + 1]:
            return text[end + 5:].encode("utf-8", "surrogateescape")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom):].split("\n")
    if not lines or lines[0].rstrip() != "---":
        return raw
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if close is None:
        return raw
    head = lines[1:close]

    def key_of(line: str) -> str | None:
        match = _KEY.match(line.rstrip("\r"))
        return match.group(1) if match else None

    kept: list[str] = []
    for index, line in enumerate(head):
        match = _KEY.match(line.rstrip("\r"))
        key = match.group(1) if match else None  # key_of, keeping the match for the value
        if key in keys:
            continue
        if match and key == "status" and _unquote(match.group(2)).lower() == status:
            following = head[index + 1] if index + 1 < len(head) else ""
            if key_of(following) in keys:  # mark (or forget) appended it just before its own fields
                continue
        kept.append(line)
    return (bom + "\n".join([lines[0], *kept, *lines[close:]])).encode("utf-8", "surrogateescape")


# ---------------------------------------------------------------- what waits in the archive


def acknowledge(root: Path, now: str) -> int:
    """The person saw the deletions so far: status and the bundle stop saying so; how many."""
    count = len(unseen(root))
    folder = Path(state_dir(root))
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / SEEN_FILE, (json.dumps({"seen_at": now}) + "\n").encode())
    return count


# ---------------------------------------------------------------- restore


def _choose(root: Path, key: str) -> Kept:
    candidates = archived(root, forgotten=True)
    wanted = key.removesuffix(".md")
    if "/" in wanted:
        found = [k for k in candidates if wanted + ".md" in (k.path, k.was)]
    else:
        found = [k for k in candidates if wanted in (Path(k.was).stem, Path(k.path).stem)]
    deleted = [k for k in found if k.how == "deleted"]
    found = deleted or found
    if not found:
        raise NotFound(f"no deleted or forgotten memory named {key!r} in {ARCHIVE}/",
                       hint="memstore status lists the deleted ones; "
                            "give the name it had, e.g. project_x")
    if len(found) > 1:
        raise BadUsage(f"{key!r} names {len(found)} copies in {ARCHIVE}/: "
                       f"{', '.join(k.path for k in found)}",
                       hint=f"name one by its path: memstore restore {found[-1].path}")
    return found[0]


def _safe_target(root: Path, was: str) -> Path:
    """Where a copy goes back to, refusing anything but a memory file's place inside root/memory/
    (deleted_from is text in a file anyone with write access to memory/ can edit)."""
    parts = was.split("/")
    if (not watched(was) or any(p in ("", ".", "..") or "\\" in p for p in parts)
            or was.startswith("/")):
        raise MemstoreError(f"the copy says it came from {was!r}, which is no memory file's place: "
                            "not restored",
                            hint="move it back by hand if that is right")
    target = root / was
    memory = os.path.realpath(root / "memory")
    parent = target.parent
    while not parent.exists() and parent != root:
        parent = parent.parent
    real = os.path.realpath(parent)
    if real != memory and not real.startswith(memory + os.sep):
        raise MemstoreError(f"{was} leads out of memory/ (a link on the way): not restored")
    return target


def restore(root: Path, key: str) -> Kept:
    """Put a deleted (or forgotten) memory's copy back where it was, its marks taken off."""
    chosen = _choose(root, key)
    target = _safe_target(root, chosen.was)
    if os.path.lexists(target):
        raise MemstoreError(f"{chosen.was} exists now: {chosen.path} was not put back over it",
                            hint=f"move {chosen.was} aside (or merge the two by hand), "
                                 "then run it again")
    source = root / chosen.path
    raw = read_regular(source)
    data = unmark(raw) if chosen.how == "deleted" else unmark(raw, FORGET_KEYS, "forgotten")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    try:
        os.link(tmp, target)  # never over a file that appeared meanwhile
    except FileExistsError:
        raise MemstoreError(f"{chosen.was} appeared meanwhile: not restored over it") from None
    finally:
        tmp.unlink(missing_ok=True)
    source.unlink()
    return chosen

"""One markdown file into one mirror row: the columns, their values, the SQL that writes and
reads them.

A file is one row of `files` (everything but the body), one row of the full-text table
files_fts (name, summary, description, body; rowid = files.id) and, when its text has
letters of a script written without spaces, one row of the trigram table files_cjk
(same columns). Render scans `files` on every run, so the body is kept out of it
(migration m004): body_of reads it back. No trigger ties the three together, so every
writer goes through write_rows and delete_rows, inside its own transaction.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3

from memstore.core.config import Config
from memstore.core.kinds import classify
from memstore.core.timeutil import fmt
from memstore.meaning.chunking import context_digest, digest, plan, text_digest
from memstore.mirror.cjk import has_unspaced
from memstore.mirror.index_rows import index_row

TEAM_BODY_MAX = 32_000  # characters of a team memory's body that are indexed
# what a team file's problems about its (ignored) policy fields start with
_POLICY_WORDS = ("policy", "access_count", "stability", "last_accessed", "last_reinforced")


def _iso(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


def build_row(rel: str, raw: bytes, mtime_ns: int, size: int, config: Config, inode: int = 0
              ) -> dict[str, object]:
    # Imported here: YAML and python-frontmatter are only needed when a file is really read,
    # and a search whose quick sync finds nothing new should not pay for loading them.
    from memstore.mirror.parsing import WARNING, Problem, parse_bytes

    kind = classify(rel)
    stem = rel.rsplit("/", 1)[-1][:-3]
    parsed = parse_bytes(raw, stem, config, is_t2=(kind == "t2"))
    if size > config.lint_max_bytes and kind == "t2":
        parsed.problems.append(
            Problem(WARNING, f"{size} bytes; a memory over {config.lint_max_bytes} is hard to use "
                             "whole: split it by topic (its words are searched throughout, its "
                             "meaning up to about 60 KB)")
        )
    if rel.startswith("teams/"):
        # Ranking is personal: a team file's own policy fields (whoever wrote them) count for
        # nobody, and flush never writes them back (memstore.core.teams).
        parsed.access_count = parsed.stability = None
        parsed.last_accessed = parsed.last_reinforced = None
        parsed.policy_base = None
        parsed.problems = [p for p in parsed.problems if not p.message.startswith(_POLICY_WORDS)]
        if len(parsed.body) > TEAM_BODY_MAX:
            # a team file is someone else's size: search's snippets grow with a body's matches
            # (one 2 MB file made every search take minutes), so only its head is indexed
            parsed.body = parsed.body[:TEAM_BODY_MAX]
            parsed.problems.append(Problem(WARNING, f"only its first {TEAM_BODY_MAX:,} characters "
                                                    "are indexed (a team's memory past that is cut "
                                                    "for search)"))
    indexed = (parsed.name, parsed.summary, parsed.description, parsed.body)
    parts, tail_digest = plan(parsed.summary, parsed.description, parsed.body)
    return {
        "path": rel,
        "kind": kind,
        "type": parsed.type,
        "name": parsed.name,
        "summary": parsed.summary,
        "description": parsed.description,
        "body": parsed.body,
        "row_text": parsed.row_text,
        # A T2 file's row in MEMORY.md and the archive, built here once rather than by every render.
        "index_row": index_row(rel, parsed.row_text or "") if kind == "t2" else None,
        "created": _iso(parsed.created),
        "last_updated": _iso(parsed.last_updated),
        "status": parsed.status,
        "in_flight": int(parsed.in_flight),
        "state": parsed.state,
        "pin": int(parsed.pin),
        "importance": parsed.importance,
        "fm_access_count": parsed.access_count,
        "fm_stability": parsed.stability,
        "fm_last_accessed": fmt(parsed.last_accessed) if parsed.last_accessed else None,
        "fm_last_reinforced": fmt(parsed.last_reinforced) if parsed.last_reinforced else None,
        "fm_base": parsed.policy_base,
        "meta": meta_json(parsed.meta),
        "problems": json.dumps([p.as_dict() for p in parsed.problems]),
        "mtime_ns": mtime_ns,
        "size": size,
        "digest": digest(raw),
        "text_digest": text_digest(parsed.summary, parsed.description, parsed.body),
        "parts": parts,
        "tail_digest": tail_digest,
        "context": parsed.context,
        # a file with no readable text has no parts, so no context part either
        "context_digest": context_digest(parsed.context, parsed.summary, parsed.description,
                                         parsed.body) if parts else None,
        "inode": inode,
        "dir": rel.rpartition("/")[0],
        # Text in CJK, Thai, ... : the row is also indexed by trigrams (files_cjk, migration m003).
        "unspaced": int(any(text and has_unspaced(text) for text in indexed)),
        # not a column: sync keeps the last good values (memstore.mirror.adoption)
        "broken": parsed.broken,
    }


COLUMNS = (
    "path",
    "kind",
    "type",
    "name",
    "summary",
    "description",
    "row_text",
    "index_row",
    "created",
    "last_updated",
    "status",
    "in_flight",
    "state",
    "pin",
    "importance",
    "fm_access_count",
    "fm_stability",
    "fm_last_accessed",
    "fm_last_reinforced",
    "fm_base",
    "meta",
    "problems",
    "mtime_ns",
    "size",
    "digest",
    "text_digest",
    "parts",
    "tail_digest",
    "context",
    "context_digest",
    "inode",
    "dir",
    "unspaced",
)
# What makes a file step aside (migration m015), written with every row from its status and meta as
# they finally are (a broken file's are the kept ones, adoption.keep_last_good): aside_values.
ASIDE_COLUMNS = ("aside", "valid_from", "valid_until")
_WRITTEN = (*COLUMNS, *ASIDE_COLUMNS)
INSERT_SQL = f"INSERT INTO files ({', '.join(_WRITTEN)}) VALUES ({', '.join('?' * len(_WRITTEN))})"
UPDATE_SQL = f"UPDATE files SET {', '.join(f'{c} = ?' for c in _WRITTEN[1:])} WHERE path = ?"
# What files_fts and files_cjk hold of each file, in their column order.
TEXT_COLUMNS = ("name", "summary", "description", "body")
_ID = "(SELECT id FROM files WHERE path = ?)"
_TEXT_INSERT = (f"(rowid, {', '.join(TEXT_COLUMNS)}) "
                f"VALUES ({_ID}, {', '.join('?' * len(TEXT_COLUMNS))})")


def write_rows(conn: sqlite3.Connection, inserts: list[dict[str, object]],
               updates: list[dict[str, object]]) -> None:
    """Insert new files and update known ones (by path, so each keeps its id), text tables included.

    The caller holds the transaction. An updated file's full-text and trigram rows are
    deleted and written again: its text, or whether it has unspaced letters, may have changed.
    """
    def values(row: dict[str, object]) -> tuple[object, ...]:
        return (*(row[c] for c in COLUMNS), *aside_values(row["status"], row["meta"]))

    conn.executemany(INSERT_SQL, [values(row) for row in inserts])
    conn.executemany(UPDATE_SQL, [(*values(row)[1:], row["path"]) for row in updates])
    if updates:
        gone = [(row["path"],) for row in updates]
        conn.executemany(f"DELETE FROM files_fts WHERE rowid = {_ID}", gone)
        conn.executemany(f"DELETE FROM files_cjk WHERE rowid = {_ID}", gone)
    rows = [*inserts, *updates]
    texts = [(row["path"], *(row[c] for c in TEXT_COLUMNS)) for row in rows]
    conn.executemany(f"INSERT INTO files_fts {_TEXT_INSERT}", texts)
    conn.executemany(
        f"INSERT INTO files_cjk {_TEXT_INSERT}",
        [t for t, row in zip(texts, rows, strict=True) if row["unspaced"]]
    )


def delete_rows(conn: sqlite3.Connection, paths: list[str]) -> None:
    """Remove these files from the mirror, text tables included (the caller holds the
    transaction)."""
    gone = [(path,) for path in paths]
    conn.executemany(f"DELETE FROM files_fts WHERE rowid = {_ID}", gone)
    conn.executemany(f"DELETE FROM files_cjk WHERE rowid = {_ID}", gone)
    conn.executemany("DELETE FROM files WHERE path = ?", gone)
    # memstore.mirror.deletions kept what it needed
    conn.executemany("DELETE FROM raw_texts WHERE path = ?", gone)
    # Vectors stay: a file that comes back (a branch switch, a move out and in) or turns up
    # under another name finds them by digest (vectors.embed_pending); a rebuild drops them.


# A frontmatter date counts by its first ten characters, ASCII digits only (GLOB's [0-9] in m015).
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ASIDE_STATUSES = (b"superseded", b"forgotten")  # stepping_aside.ASIDE_STATUSES
_ASIDE_KEYS = ('"deleted_from"', '"valid_from"', '"valid_until"')  # as meta_json writes a key


_TRIMMED = " \t\n\r\v\f"  # what SQLite's trim(x, TRIM) below takes off too


def aside_values(status: object, meta: object) -> tuple[int, str | None, str | None]:
    """files.aside, files.valid_from and files.valid_until of a row with this status and meta
    (its JSON).

    The rule of migration m015, in Python: SQLite's lower() and LIKE
    fold ASCII letters only, so the status is folded as bytes; json_extract gives a date only from
    a string (a number, a boolean, a list or a mapping never reads as YYYY-MM-DD).
    """
    # whitespace around the word is no part of it, as render reads it
    folded = (status.strip(_TRIMMED).encode("utf-8", "surrogatepass").lower()
              if isinstance(status, str) else b"")
    found: dict[str, object] = {}
    # most frontmatter has none of the three keys: no need to parse its JSON again
    if isinstance(meta, str) and any(key in meta for key in _ASIDE_KEYS):
        decoded = json.loads(meta)
        found = decoded if isinstance(decoded, dict) else {}

    def day(key: str) -> str | None:
        value = found.get(key)
        return value[:10] if isinstance(value, str) and _DAY.fullmatch(value[:10]) else None

    aside = folded.startswith(_ASIDE_STATUSES) or found.get("deleted_from") is not None
    return int(aside), day("valid_from"), day("valid_until")


def optimize_text_tables(conn: sqlite3.Connection) -> None:
    """Merge each full-text index into one segment, after a bulk build (rebuild).

    A build of many batches leaves the index in many segments, and a query looks each of
    its terms up in every one: at 100,000 files, merging (under a second) makes search's
    per-word coverage lookups three times faster. Later syncs leave merging to FTS5.
    """
    conn.execute("INSERT INTO files_fts(files_fts) VALUES('optimize')")
    cjk = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'files_cjk'").fetchone()
    if cjk is not None and "fts5" in (cjk[0] or "").lower():  # not the plain table of SQLite < 3.34
        conn.execute("INSERT INTO files_cjk(files_cjk) VALUES('optimize')")


def meta_json(meta: object) -> str:
    """Frontmatter as strict JSON: SQLite's json_extract refuses Python's NaN and Infinity (a file
    saying `access_count: .inf` would make every query over the column fail), so those become
    strings."""
    def strict(value: object) -> object:
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return str(value)
        if isinstance(value, dict):
            return {str(k): strict(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [strict(v) for v in value]
        return value

    return json.dumps(strict(meta), default=str, ensure_ascii=False, sort_keys=True)


def body_of(conn: sqlite3.Connection, file: int | str) -> str:
    """The body of a file, by files.id or by path ("" when it has none, or is not in the mirror)."""
    where = "rowid = ?" if isinstance(file, int) else f"rowid = {_ID}"
    row = conn.execute(f"SELECT body FROM files_fts WHERE {where}", (file,)).fetchone()
    return (row[0] if row is not None else None) or ""



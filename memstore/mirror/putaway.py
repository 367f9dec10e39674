"""What search keeps out of the way: lessons the person rejected, the journal behind the memories.

- Rejected. `memstore review reject` moves a lesson's file into memory/short-term/archive/
  (memstore.life.reviewing) and records the answer in review/; the file keeps no marker of its
  own. So a search asks the review answers, as the bundle and the dream do
  (memstore.hook.review.withheld): a lesson the person rejected, or one that removes a
  safeguard, is no hit unless `search --all` asks for it, and then it says so.
- The journal. Dream entries and meditation sits (memory/dream-journal/) and the wake's
  proposal notes (`kind: wake-proposals` in short-term/) are about memories, not memories:
  they name the files and repeat their words. They pass the same floor as memories, and
  rank after every memory that did. A sit, written in everyday words about everything, must
  clear the bar of the meditations it sits with (memstore/mirror/hybrid.py, GENERAL_KINDS).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from typing import Any

from memstore.hook.review import answers, withheld
from memstore.mirror.indexing import body_of

CHUNK = 500  # paths per `IN (...)`, well under SQLite's limit on bound variables
PROPOSALS = "wake-proposals"


def journal(conn: sqlite3.Connection, paths: Iterable[str]) -> set[str]:
    """Which of `paths` are dream entries, sits or proposal notes."""
    wanted = list(dict.fromkeys(paths))
    found: set[str] = set()
    for at in range(0, len(wanted), CHUNK):
        chunk = wanted[at : at + CHUNK]
        found.update(row[0] for row in conn.execute(
            "SELECT path FROM files WHERE path IN ({}) AND (kind = 'dream' OR (kind = 'short-term' "
            "AND lower(trim(coalesce(json_extract(meta, '$.kind'), ''))) = ?))"
            .format(",".join("?" * len(chunk))),
            [*chunk, PROPOSALS]))
    return found


def sits(conn: sqlite3.Connection) -> set[str]:
    """Paths of the meditation sits: about everything, like the meditations they sit with."""
    return {row[0] for row in conn.execute(
        "SELECT path FROM files WHERE kind = 'dream' "
        "AND lower(trim(coalesce(json_extract(meta, '$.kind'), ''))) = 'meditation'")}


def memories_first(conn: sqlite3.Connection, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hits with the journal's after every memory, each group in its own order."""
    behind = journal(conn, (hit["path"] for hit in hits))
    if not behind:
        return hits
    return ([hit for hit in hits if hit["path"] not in behind]
            + [hit for hit in hits if hit["path"] in behind])


def rejected(conn: sqlite3.Connection, root: str | os.PathLike[str]) -> set[str]:
    """Paths of the short-term lessons (archive/ included) that never come back unasked."""
    rows = conn.execute(
        "SELECT id, path, json_extract(meta, '$.kind') FROM files WHERE kind = 'short-term' "
        "AND lower(coalesce(json_extract(meta, '$.kind'), '')) LIKE '%lesson%'").fetchall()
    if not rows:
        return set()
    answered = answers(root)
    return {path for file_id, path, kind in rows
            if withheld(str(kind), body_of(conn, file_id), answered)}

"""Values the mirror holds for a memory that its file does not say (yet).

Two cases, both kept in `files` so every reader (render's New, search by project, the web
inspector) sees them without knowing where they came from:

- A birth. When the agent creates a memory with Write, the hook journals the event with
  `born` and the session's project (policy.record_touch). Until the nightly flush folds them
  into the file as `created:` and `project:` (flush.py), the mirror takes them from the
  newest birth event: files.created, and `project` in files.meta. files.adopted lists what
  was taken that way, so flush knows what the file lacks, and a later pass can take it back
  out of meta exactly. The frontmatter always wins: a key the file has (even one whose value
  is unreadable) is never adopted, and so never written over. The events come from the
  journal, so a rebuild adopts the same values.
- A broken frontmatter (not YAML, never closed, not a mapping). Parsing gives every field
  its default, which would make the memory person-wide with importance 0 until someone
  noticed. Sync keeps the row's last good values instead (what the frontmatter decides but
  its text: the summary and the row follow the file as still readable), indexes the new body,
  and records an error saying the file needs mending; lint and the nightly tick say it until
  the file reads again. The file is never touched.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memstore.meaning.chunking import context_digest, plan, text_digest
from memstore.mirror.cjk import has_unspaced
from memstore.mirror.indexing import meta_json

BATCH = 500
MENDING = "needs mending"  # the start of a broken file's error, as lint and the tick find it

# What a row's frontmatter decides; a broken file keeps these last good values. Its text (summary,
# description, context, the index row) follows the file as still readable (parsing.read_front).
FROM_FRONTMATTER = (
    "type", "name", "created", "last_updated", "status", "in_flight", "state", "pin", "importance",
    "fm_access_count", "fm_stability", "fm_last_accessed", "fm_last_reinforced", "fm_base", "meta",
)


def _said(meta: dict[str, Any], key: str) -> bool:
    """Does the frontmatter give `key` (an empty value counts as not given)?"""
    value = meta.get(key)
    return value is not None and value != ""


def keep_last_good(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    """A row of a file with unreadable frontmatter: the mirror's earlier values kept, said so."""
    problems = json.loads(str(row["problems"]))
    old = conn.execute(
        f"SELECT {', '.join(FROM_FRONTMATTER)} FROM files WHERE path = ?", (row["path"],)
    ).fetchone()
    if old is None:
        problems.append({"level": "error", "message": (
            f"{MENDING}: its frontmatter cannot be read and the mirror holds no earlier values, "
            "so until it is mended it counts as person-wide, with importance 0 and no summary")})
        row["problems"] = json.dumps(problems)
        return
    kept = dict(zip(FROM_FRONTMATTER, tuple(old), strict=True))
    meta = json.loads(kept["meta"] or "{}")
    row.update(kept)
    # the body is the file's as it is now; what is embedded and trigram-indexed follows it
    row["text_digest"] = text_digest(row["summary"], row["description"], row["body"])
    row["parts"], row["tail_digest"] = plan(row["summary"], row["description"], row["body"])
    row["context_digest"] = context_digest(row["context"], row["summary"], row["description"],
                                           row["body"]) if row["parts"] else None
    row["unspaced"] = int(any(text and has_unspaced(str(text))
                              for text in (row["name"], row["summary"], row["description"],
                                           row["body"])))
    values = [f"{key} {meta[key]}" for key in ("project", "importance", "type", "created")
              if _said(meta, key)]
    problems.append({"level": "error", "message": (
        f"{MENDING}: its frontmatter cannot be read, so the mirror keeps its last good values"
        + (f" ({', '.join(values)})"[:300] if values else "")
        + " until it is mended; nothing in the file was changed")})
    row["problems"] = json.dumps(problems)


def adopt(conn: sqlite3.Connection, paths: list[str], *, fresh: bool) -> None:
    """Bring files.created, meta's project and files.adopted of these T2 paths in line with births.

    `fresh`: the rows were just built from their files, so meta holds the frontmatter alone;
    otherwise meta may hold an earlier adoption, which is taken out first. The caller holds a
    transaction.
    """
    for start in range(0, len(paths), BATCH):
        chunk = paths[start : start + BATCH]
        marks = ",".join("?" * len(chunk))
        births: dict[str, tuple[str, str | None]] = {}
        for path, ts, project in conn.execute(
            f"SELECT path, ts, project FROM events WHERE born = 1 AND path IN ({marks}) "
            "ORDER BY path, ts, id", chunk
        ):
            births[path] = (ts, project)  # the newest birth wins: a memory deleted, written again
        rows = conn.execute(
            f"SELECT path, meta, adopted FROM files WHERE kind = 't2' AND path IN ({marks})",
            chunk).fetchall()
        for path, meta_text, adopted_text in rows:
            if adopted_text is None and path not in births:
                continue
            meta = json.loads(meta_text or "{}")
            if not fresh and adopted_text:
                earlier = json.loads(adopted_text)
                if "project" in earlier and meta.get("project") == earlier["project"]:
                    del meta["project"]
            taken: dict[str, str] = {}
            if path in births:
                ts, project = births[path]
                if not _said(meta, "created"):
                    taken["created"] = ts[:10]
                if project and not _said(meta, "project"):
                    taken["project"] = project
            if "project" in taken:
                meta["project"] = taken["project"]

            conn.execute(
                "UPDATE files SET adopted = ?, meta = ?, created = COALESCE(?, created) "
                "WHERE path = ?",
                (json.dumps(taken, sort_keys=True) if taken else None, meta_json(meta),
                 taken.get("created"), path),
            )

"""One markdown file into one mirror row: the columns, their values, the SQL that writes them."""

from __future__ import annotations

import hashlib
import json

from memstore.cjk import has_unspaced
from memstore.config import Config
from memstore.kinds import classify
from memstore.timeutil import fmt


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _iso(value: object) -> str | None:
    return value.isoformat() if value is not None else None  # type: ignore[attr-defined]


def build_row(rel: str, raw: bytes, mtime_ns: int, size: int, config: Config, inode: int = 0) -> dict[str, object]:
    # Imported here: YAML and python-frontmatter are only needed when a file is really read,
    # and a search whose quick sync finds nothing new should not pay for loading them.
    from memstore.parsing import WARNING, Problem, parse_bytes

    kind = classify(rel)
    stem = rel.rsplit("/", 1)[-1][:-3]
    parsed = parse_bytes(raw, stem, config, is_t2=(kind == "t2"))
    if size > config.lint_max_bytes and kind == "t2":
        parsed.problems.append(
            Problem(WARNING, f"{size} bytes; a memory over {config.lint_max_bytes} stops being retrievable")
        )
    indexed = (parsed.name, parsed.summary, parsed.description, parsed.body)
    return {
        "path": rel,
        "kind": kind,
        "type": parsed.type,
        "name": parsed.name,
        "summary": parsed.summary,
        "description": parsed.description,
        "body": parsed.body,
        "row_text": parsed.row_text,
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
        "meta": json.dumps(parsed.meta, default=str, ensure_ascii=False, sort_keys=True),
        "problems": json.dumps([p.as_dict() for p in parsed.problems]),
        "mtime_ns": mtime_ns,
        "size": size,
        "digest": digest(raw),
        "inode": inode,
        "dir": rel.rpartition("/")[0],
        # Text in CJK, Thai, ... : the row is also indexed by trigrams (files_cjk, migration m003).
        "unspaced": int(any(text and has_unspaced(text) for text in indexed)),
    }


COLUMNS = (
    "path",
    "kind",
    "type",
    "name",
    "summary",
    "description",
    "body",
    "row_text",
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
    "meta",
    "problems",
    "mtime_ns",
    "size",
    "digest",
    "inode",
    "dir",
    "unspaced",
)
INSERT_SQL = f"INSERT INTO files ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
UPDATE_SQL = f"UPDATE files SET {', '.join(f'{c} = ?' for c in COLUMNS[1:])} WHERE path = ?"



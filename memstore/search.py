"""Ranked full-text search over the mirror: the grep fallback, made fast.

An agent asks in plain English. FTS5's default is to AND every word, so one word
absent from the answer ("When did Maria adopt the dog?" against a turn that never
says "when") returns nothing. A plain question is therefore turned into an OR of its
content words, and bm25 ranks the documents that match more and rarer words first.
A query written in FTS5 syntax is tried as such, and if FTS5 rejects it, it is
searched as plain words: a syntax error never reaches the user.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from memstore.config import Config, load_config
from memstore.errors import BadUsage
from memstore.paths import KINDS, MEMORY_TYPES

# Function words that carry no topic; removing them keeps bm25 from rewarding
# documents for sharing "the" and "did" with the question.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    else ever few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just let me more most much must my
    myself no nor not now of off on once only or other ought our ours ourselves out over
    own same shall she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up upon us very was we
    were what when where which while who whom whose why will with would you your yours
    yourself yourselves s t d ll m re ve
    """.split()
)

_TOKEN = re.compile(r"\w+", re.UNICODE)
_ADVANCED = re.compile(r'"|\b(?:AND|OR|NOT|NEAR)\b|\*|\^|[()]|\b\w+\s*:\s*\S|\+')

SNIPPET_TOKENS = 14
MAX_LIMIT = 100_000


def terms(text: str) -> list[str]:
    """Content words of a query, lowercased, first occurrence order, no duplicates."""
    seen: dict[str, None] = {}
    words = [w.lower() for w in _TOKEN.findall(text)]
    content = [w for w in words if w not in STOP_WORDS]
    for word in content or words:
        seen.setdefault(word, None)
    return list(seen)


def looks_advanced(text: str) -> bool:
    return bool(_ADVANCED.search(text))


def _validate_type(type_: str | None) -> None:
    if type_ is None:
        return
    allowed = set(MEMORY_TYPES) | set(KINDS) | {"lens", "meditation"}
    if type_ not in allowed:
        raise BadUsage(f"unknown type {type_!r}", hint=f"use one of: {', '.join(sorted(allowed))}")


def _candidates(
    conn: sqlite3.Connection, expression: str, limit: int, type_: str | None, config: Config
) -> list[sqlite3.Row]:
    weights = ", ".join(f"{w:g}" for w in config.search_weights)
    where = ["files_fts MATCH ?"]
    params: list[Any] = [expression]
    if type_ is None:
        where.append("f.kind != 'derived'")
    else:
        where.append("(f.type = ? OR f.kind = ?)")
        params += [type_, type_]
    params.append(limit)
    sql = f"""
        SELECT f.id, f.path, f.name, f.type, f.kind, f.row_text AS summary,
               bm25(files_fts, {weights}) AS rank,
               snippet(files_fts, -1, '[', ']', '…', {SNIPPET_TOKENS}) AS snippet
        FROM files_fts JOIN files f ON f.id = files_fts.rowid
        WHERE {" AND ".join(where)}
        ORDER BY rank, f.path
        LIMIT ?
    """
    return conn.execute(sql, params).fetchall()


def _coverage(conn: sqlite3.Connection, words: list[str], ids: list[int]) -> dict[int, int]:
    """How many distinct query words each candidate contains (after stemming, as FTS5 sees them)."""
    found: dict[int, int] = dict.fromkeys(ids, 0)
    marks = ",".join("?" * len(ids))
    for word in words:
        for (rowid,) in conn.execute(
            f"SELECT rowid FROM files_fts WHERE files_fts MATCH ? AND rowid IN ({marks})", [f'"{word}"', *ids]
        ):
            found[rowid] += 1
    return found


def _hit(row: sqlite3.Row, score: float) -> dict[str, Any]:
    return {
        "path": row["path"],
        "name": row["name"],
        "type": row["type"] or row["kind"],
        "kind": row["kind"],
        "summary": row["summary"] or "",
        "score": round(score, 6),
        "snippet": " ".join((row["snippet"] or "").split()),
    }


def _is_query_error(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return not any(word in text for word in ("locked", "busy", "no such table", "disk", "malformed"))


def search(
    conn: sqlite3.Connection,
    query: str,
    limit: int = 10,
    type_: str | None = None,
    config: Config | None = None,
) -> list[dict[str, Any]]:
    """Ranked hits for `query`; each a dict with path, name, type, summary, score, snippet."""
    config = config or Config()
    _validate_type(type_)
    if limit < 1:
        raise BadUsage("--limit must be at least 1")
    limit = min(limit, MAX_LIMIT)
    # Text that cannot be UTF-8 (lone surrogates from undecodable argv bytes) cannot reach SQLite.
    query = query.encode("utf-8", "replace").decode("utf-8")
    if looks_advanced(query):
        try:
            rows = _candidates(conn, query, limit, type_, config)
            return [_hit(row, -row["rank"]) for row in rows]
        except sqlite3.OperationalError as exc:
            if not _is_query_error(exc):
                raise
    words = terms(query)
    if not words:
        return []
    expression = " OR ".join(f'"{w}"' for w in words)
    # bm25 over an OR query lets one rare word outrank a document holding every word;
    # re-rank a wider pool by the share of query words each document covers.
    pool = max(limit * 5, 50) if len(words) > 1 else limit
    rows = _candidates(conn, expression, pool, type_, config)
    if len(words) > 1 and rows:
        cover = _coverage(conn, words, [row["id"] for row in rows])
        scored = [(-row["rank"] * (cover[row["id"]] / len(words)) ** config.search_coverage, row) for row in rows]
    else:
        scored = [(-row["rank"], row) for row in rows]
    scored.sort(key=lambda pair: (-pair[0], pair[1]["path"]))
    return [_hit(row, value) for value, row in scored[:limit]]


def search_root(
    root: Path, query: str, limit: int = 10, type: str | None = None, *, sync_first: bool = True, full: bool = False
) -> list[dict[str, Any]]:
    """Library entry point: catch the mirror up (quick, or a full walk) unless told not to, and search it."""
    from memstore.sync import open_mirror, sync_locked

    config = load_config(root)
    conn = open_mirror(root, config)
    try:
        if sync_first:
            sync_locked(conn, root, config, quick=not full)
        return search(conn, query, limit, type, config)
    finally:
        conn.close()

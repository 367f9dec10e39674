"""Ranked full-text search over the mirror: the grep fallback, made fast.

An agent asks in plain English. FTS5's default is to AND every word, so one word
absent from the answer ("When did Maria adopt the dog?" against a turn that never
says "when") returns nothing. A plain question is therefore turned into an OR of its
content words, and bm25 ranks the documents that match more and rarer words first.
A query written in FTS5 syntax is tried as such, and if FTS5 rejects it, it is
searched as plain words: a syntax error never reaches the user.

Text in scripts written without spaces (CJK, Thai, ...; see memstore/mirror/cjk.py) is also
looked up as substrings: each run of such letters in the query is a term of its own,
found through the trigram table files_cjk. A query with no letters or digits at all is
a usage error, not a search that finds nothing.
"""

from __future__ import annotations

import math
import re
import sqlite3
from typing import Any

from memstore.core.config import Config
from memstore.core.errors import BadUsage
from memstore.core.kinds import KINDS, MEMORY_TYPES
from memstore.core.words import STOP_WORDS, idf, terms
from memstore.core.words import TOKEN as _TOKEN
from memstore.mirror import cjk
from memstore.mirror.putaway import journal, memories_first

_ADVANCED = re.compile(r'"|\b(?:AND|OR|NOT|NEAR)\b|\*|\^|[()]|\b\w+\s*:\s*\S|\+')

SNIPPET_TOKENS = 14
MAX_LIMIT = 100_000


def looks_advanced(text: str) -> bool:
    return bool(_ADVANCED.search(text))


def check_type(type_: str | None) -> None:
    """Raise BadUsage for a --type that names no memory type or kind."""
    if type_ is None:
        return
    allowed = set(MEMORY_TYPES) | set(KINDS) | {"lens", "meditation"}
    if type_ not in allowed:
        raise BadUsage(f"unknown type {type_!r}",
                       hint=f"use one of: {', '.join(sorted(allowed))}")


MAX_QUERY_CHARS = 2000


def check_query(query: str) -> None:
    """BadUsage for a query with nothing to search for (blank, only punctuation) or far too long."""
    if len(query) > MAX_QUERY_CHARS:
        # A pasted page is not a question: 100,000 characters took minutes to embed and match.
        raise BadUsage(f"the query is {len(query)} characters; at most {MAX_QUERY_CHARS}",
                       hint="search for its key words or a sentence of it")
    if not any(ch.isalnum() for ch in query):
        shown = query if len(query) <= 40 else query[:40] + "…"
        what = "empty query" if not query.strip() else f"nothing to search for in {shown!r}"
        raise BadUsage(f"{what}: a query needs at least one letter or digit",
                       hint='give words to search for, e.g. memstore search "database migration"')


def _type_filter(type_: str | None) -> tuple[str, list[Any]]:
    if type_ is None:
        return "f.kind != 'derived'", []
    return "(f.type = ? OR f.kind = ?)", [type_, type_]


def _candidates(conn: sqlite3.Connection, expression: str, limit: int, type_: str | None,
                config: Config) -> list[sqlite3.Row]:
    """The `limit` best matches by bm25, ties by path. FTS5 ranks them and only the best are
    joined with `files` (joining every match took half a search on 20,000 files). Those ranked
    above the last fetched are exactly the best; if too few are left, derived files out, more are
    fetched."""
    weights = ", ".join(f"{w:g}" for w in config.search_weights)
    if type_ is not None:  # a type may leave out most matches: filtered in the join, as it goes
        return _joined(conn, expression, weights, _type_filter(type_), "LIMIT ?", [limit])
    want = limit + 8  # room for the derived files (MEMORY.md and kin), which search leaves out
    while True:
        ranked = conn.execute(
            "SELECT rowid, rank FROM files_fts WHERE files_fts MATCH ? "
            f"AND rank MATCH 'bm25({weights})' ORDER BY rank LIMIT ?", [expression, want],
        ).fetchall()
        every = len(ranked) < want
        ids = [rowid for rowid, rank in ranked if every or rank < ranked[-1][1]]
        # FTS5 reads the matches between two rowids, the others are dropped before the join; a
        # plain `rowid IN` would run the whole query once per id, and `f.id IN` join every match
        marks = ",".join("?" * len(ids))
        keep = f"AND files_fts.rowid BETWEEN ? AND ? AND +files_fts.rowid IN ({marks})"
        bounds = [min(ids), max(ids), *ids] if ids else []
        rows = _joined(conn, expression, weights, _type_filter(None), keep, bounds) if ids else []
        if every or len(rows) >= limit:
            return rows[:limit]
        want *= 4


def _joined(conn: sqlite3.Connection, expression: str, weights: str, where: tuple[str, list[Any]],
            tail: str, params: list[Any]) -> list[sqlite3.Row]:
    """Matches joined with their rows, best first; `tail` narrows them (a LIMIT, or ids kept)."""
    order = "ORDER BY rank, f.path " if tail.startswith("LIMIT") else ""
    sql = f"""
        SELECT f.id, f.path, f.name, f.type, f.kind, f.row_text AS summary,
               bm25(files_fts, {weights}) AS rank,
               snippet(files_fts, -1, '[', ']', '…', {SNIPPET_TOKENS}) AS snippet
        FROM files_fts JOIN files f ON f.id = files_fts.rowid
        WHERE files_fts MATCH ? AND {where[0]} {order}{tail}
    """
    rows = conn.execute(sql, [expression, *where[1], *params]).fetchall()
    return rows if order else sorted(rows, key=lambda row: (row["rank"], row["path"]))


def _held(conn: sqlite3.Connection, words: list[str], ids: list[int]) -> dict[int, set[str]]:
    """Which distinct query words each candidate contains (after stemming, as FTS5 sees them)."""
    found: dict[int, set[str]] = {i: set() for i in ids}
    if not ids:
        return found
    # FTS5 reads a word's matches between two rowids only; `rowid IN (...)` read all of them
    low, high = min(ids), max(ids)
    for word in words:
        for (rowid,) in conn.execute(
            "SELECT rowid FROM files_fts WHERE files_fts MATCH ? AND rowid BETWEEN ? AND ?",
            [f'"{word}"', low, high],
        ):
            if rowid in found:
                found[rowid].add(word)
    return found


def _coverage(conn: sqlite3.Connection, words: list[str], ids: list[int]) -> dict[int, int]:
    """How many distinct query words each candidate contains."""
    return {i: len(held) for i, held in _held(conn, words, ids).items()}


# The floor of a plain question of three or more words: a hit holds two of them, or one the
# question leans on: a word under RARE of the root's files (evidence in proportion to the root: no
# word of a root of 20 files is rare), or, in a question about what the root holds (half its words
# or more found in it), one that carries WORD_FLOOR of the idf weight of those words. "office" for
# "wifi password in the Lisbon office" and "back" for "how do I bring the staging database back up"
# are no match (docs/search.md).
WORD_FLOOR = 0.25
RARE = 0.01


def _clears(held: set[str], counts: dict[str, int], total: int) -> bool:
    if len(held) >= 2 or len(counts) < 3:
        return True
    if any(0 < counts[word] < RARE * total for word in held):
        return True
    known = {word: idf(total, df) for word, df in counts.items() if df}
    if 2 * len(known) < len(counts):
        return False
    return sum(known.get(word, 0.0) for word in held) >= WORD_FLOOR * sum(known.values())


def document_counts(conn: sqlite3.Connection, words: list[str]) -> tuple[int, dict[str, int]]:
    """How many files the root holds, and how many hold each word."""
    total = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    counts = {word: conn.execute("SELECT count(*) FROM files_fts WHERE files_fts MATCH ?",
                                 [f'"{word}"']).fetchone()[0] for word in words}
    return total, counts


def _hit(row: sqlite3.Row, score: float, snippet: str | None = None) -> dict[str, Any]:
    return {
        "path": row["path"],
        "name": row["name"],
        "type": row["type"] or row["kind"],
        "kind": row["kind"],
        "summary": row["summary"] or "",
        "score": round(score, 6),
        "snippet": " ".join(((row["snippet"] if snippet is None else snippet) or "").split()),
    }


# How far above the best hit ranked below it a lifted stretch's lowest score is put (rank_scores):
# a share of that score, since bm25's scale runs from millionths (a small root) to tens
RANK_GAP = 0.01


def rank_scores(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The hits with the score their order comes from: never rising down the list.

    Some orders rank a group ahead of better-scoring hits (this project's memories first,
    a file holding every unspaced run first). Each such group is a stretch of the list
    whose scores do not rise; where one starts above a higher score, it and the stretches
    above it are lifted by one constant each, just above what is ranked below. Order and
    membership stay as they were, and so do the differences within a stretch.
    """
    if len(hits) < 2:
        return hits
    starts = [0] + [i for i in range(1, len(hits)) if hits[i]["score"] > hits[i - 1]["score"]]
    if len(starts) == 1:
        return hits
    out = [dict(hit) for hit in hits]
    floor = None
    for at, start in reversed(list(enumerate(starts))):
        end = starts[at + 1] if at + 1 < len(starts) else len(out)
        lowest = out[end - 1]["score"]
        if floor is not None and lowest <= floor:
            lift = floor - lowest + max(abs(floor) * RANK_GAP, 1e-6)
            for hit in out[start:end]:
                hit["score"] = round(hit["score"] + lift, 6)
        floor = out[start]["score"]
    return out


def _is_query_error(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return not any(word in text
                   for word in ("locked", "busy", "no such table", "disk", "malformed"))


# ---------------------------------------------------------------- scripts written without spaces

# bm25's constants, as FTS5 uses them, for the runs scored here.
BM25_K1 = 1.2
BM25_B = 0.75
# A run's snippet: this many characters before the first match, this many in all.
SNIPPET_BEFORE = 16
SNIPPET_CHARS = 64
CHUNK = 500  # ids per `IN (...)`, well under SQLite's limit on bound variables
MAX_TRIGRAMS = 12  # a longer run is narrowed by 12 of its trigrams, then counted exactly
_COLUMNS = ("name", "summary", "description", "body")
# Which column a run's snippet comes from when several hold it equally often.
_SNIPPET_PREFERENCE = ("body", "summary", "description", "name")


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[i : i + CHUNK] for i in range(0, len(ids), CHUNK)]


def _has_trigram(conn: sqlite3.Connection) -> bool:
    """Is files_cjk a trigram index? (Migration m003 makes it a plain table on SQLite < 3.34.)"""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'files_cjk'").fetchone()
    return row is not None and "trigram" in (row[0] or "").lower()


def _trigrams(run: str) -> str:
    """An FTS5 query for files holding every trigram of `run` (at most MAX_TRIGRAMS, spread out)."""
    grams = [run[i : i + 3] for i in range(len(run) - 2)]
    if len(grams) > MAX_TRIGRAMS:
        step = (len(grams) - 1) / (MAX_TRIGRAMS - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS)]
    return " AND ".join(f'"{gram}"' for gram in dict.fromkeys(grams))


def _run_rows(conn: sqlite3.Connection, run: str, trigram: bool, type_: str | None,
              config: Config) -> list[sqlite3.Row]:
    """Every file holding `run` as a substring: id, path, weighted count of the run, length.

    A run of three or more characters is looked up in the trigram index (which knows
    which files hold a trigram, not where: the count below weeds out files holding the
    run's trigrams but not the run). A shorter one has no trigram, so it is found by instr()
    over files_cjk, which holds only the files with such text. (Not LIKE: SQLite 3.40's
    trigram tables answer `LIKE '%数据%'`, a pattern of two multi-byte characters, with no
    rows at all.) Without the trigram tokenizer every run takes the instr() scan.
    """
    cols = [f"coalesce(c.{col}, '')" for col in _COLUMNS]
    count = " + ".join(
        f"{w:g} * ((length({col}) - length(replace({col}, :run, ''))) / :len)"
        for w, col in zip(config.search_weights, cols, strict=True)
    )
    if trigram and len(run) >= 3:
        match = "files_cjk MATCH :trigrams"
    else:
        match = "(" + " OR ".join(f"instr({col}, :run) > 0" for col in cols) + ")"
    type_sql = "f.kind != 'derived'" if type_ is None else "(f.type = :type OR f.kind = :type)"
    length = " + ".join(f"length({col})" for col in cols)
    sql = f"""
        SELECT c.rowid AS id, f.path AS path, {count} AS tf, {length} AS dl
        FROM files_cjk c JOIN files f ON f.id = c.rowid
        WHERE {match} AND {type_sql}
    """
    params = {"run": run, "len": len(run), "trigrams": _trigrams(run), "type": type_}
    return [row for row in conn.execute(sql, params) if row["tf"] > 0]  # tf 0: the trigrams, apart


def _word_scores(conn: sqlite3.Connection, expression: str, ids: list[int], config: Config
                 ) -> dict[int, float]:
    """bm25 (positive, higher is better) of the word part of a query, for these files only."""
    weights = ", ".join(f"{w:g}" for w in config.search_weights)
    out: dict[int, float] = {}
    for chunk in _chunks(ids):
        rows = conn.execute(
            f"SELECT rowid, bm25(files_fts, {weights}) FROM files_fts "
            f"WHERE files_fts MATCH ? AND rowid IN ({','.join('?' * len(chunk))})",
            [expression, *chunk],
        )
        out.update((rowid, -rank) for rowid, rank in rows)
    return out


def _spaced_letter(ch: str) -> bool:
    return ch.isalnum() and not cjk.has_unspaced(ch)


def _run_snippet(texts: dict[str, str], runs: list[str], words: list[str]) -> str:
    """A window of text around the first run found, its runs (and whole query words) marked [so]."""
    run_pattern = re.compile("|".join(re.escape(r) for r in sorted(runs, key=len, reverse=True)))
    best = max(_SNIPPET_PREFERENCE, key=lambda col: (len(run_pattern.findall(texts[col])),
                                                      -_SNIPPET_PREFERENCE.index(col)))
    text = texts[best]
    first = run_pattern.search(text)
    if first is None:
        return ""
    start = max(0, first.start() - SNIPPET_BEFORE)
    end = min(len(text), max(first.end(), start + SNIPPET_CHARS))
    # Do not cut a space-separated word in two at either edge.
    while (0 < start < first.start() and _spaced_letter(text[start - 1])
           and _spaced_letter(text[start])):
        start += 1
    while end < len(text) and _spaced_letter(text[end - 1]) and _spaced_letter(text[end]):
        end += 1
    alternatives = [re.escape(r) for r in sorted(runs, key=len, reverse=True)]
    alternatives += [rf"\b{re.escape(w)}\b" for w in words]
    parts = ["…" if start > 0 else ""]
    at = start
    for m in re.finditer("|".join(alternatives), text[start:end], re.IGNORECASE):
        parts += [text[at : start + m.start()], "[", m.group(), "]"]
        at = start + m.end()
    parts += [text[at:end], "…" if end < len(text) else ""]
    return "".join(parts)


def _content_words(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _TOKEN.findall(text):
        if word.lower() not in STOP_WORDS:
            seen.setdefault(word.lower(), None)
    return list(seen)


def _search_unspaced(conn: sqlite3.Connection, query: str, runs: list[str], limit: int,
                     type_: str | None, config: Config) -> list[dict[str, Any]]:
    """A query with runs of CJK (or other unspaced) letters: runs as substrings, the rest as words.

    Every run and every content word is one term. A file's score is the bm25 of its
    words (from files_fts) plus a bm25 of each run it holds (computed here with the run
    as one term and characters as the unit of length), times the share of terms it
    holds, as for a plain query; a file holding every run ranks above any that does not.
    FTS5 syntax is not honoured in such a query: quotes and operators are separators.
    """
    words = _content_words(cjk.strip_runs(query))
    terms_total = len(words) + len(runs)
    trigram = _has_trigram(conn)

    run_score: dict[int, float] = {}
    run_count: dict[int, int] = {}
    paths: dict[int, str] = {}
    found = [_run_rows(conn, run, trigram, type_, config) for run in runs]
    lengths = {row["id"]: row["dl"] for rows in found for row in rows}
    if lengths:
        total = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        # The mean length of the files found stands in for the mean over all files: it
        # costs no scan of files_cjk, which a trigram lookup exists to avoid.
        avgdl = max(sum(lengths.values()) / len(lengths), 1.0)
    for rows in found:
        idf = (max(math.log((total - len(rows) + 0.5) / (len(rows) + 0.5)), 1e-6) if rows
               else 0.0)
        for row in rows:
            tf, norm = row["tf"], BM25_K1 * (1 - BM25_B + BM25_B * row["dl"] / avgdl)
            run_score[row["id"]] = (run_score.get(row["id"], 0.0)
                                    + idf * tf * (BM25_K1 + 1) / (tf + norm))
            run_count[row["id"]] = run_count.get(row["id"], 0) + 1
            paths[row["id"]] = row["path"]

    word_score: dict[int, float] = {}
    word_cover: dict[int, int] = {}
    fts_snippet: dict[int, str] = {}
    if words:
        expression = " OR ".join(f'"{w}"' for w in words)
        for row in _candidates(conn, expression, max(limit * 5, 50), type_, config):
            word_score[row["id"]] = -row["rank"]
            fts_snippet[row["id"]] = row["snippet"] or ""
            paths[row["id"]] = row["path"]
        word_score.update(_word_scores(conn, expression,
                                       [i for i in run_count if i not in word_score], config))
        for chunk in _chunks(list(word_score)):
            word_cover.update(_coverage(conn, words, chunk) if len(words) > 1
                              else dict.fromkeys(chunk, 1))

    ranked = []
    for file_id in set(word_score) | set(run_count):
        held = word_cover.get(file_id, 0) + run_count.get(file_id, 0)
        score = ((word_score.get(file_id, 0.0) + run_score.get(file_id, 0.0))
                 * (held / terms_total) ** config.search_coverage)
        ranked.append((run_count.get(file_id, 0) == len(runs), score, paths[file_id], file_id))
    ranked.sort(key=lambda item: (not item[0], -item[1], item[2]))
    top = ranked[:limit]
    if not top:
        return []
    marks = ",".join("?" * len(top))
    ids = [item[3] for item in top]
    by_id = {row["id"]: row for row in conn.execute(
        f"SELECT id, path, name, type, kind, row_text AS summary FROM files WHERE id IN ({marks})",
        ids)}
    # A file found by a run has a row in files_cjk, with its whole text: the snippet comes from it.
    texts = {row[0]: dict(zip(_COLUMNS, (text or "" for text in row[1:]), strict=True))
             for row in conn.execute(
                 f"SELECT rowid, {', '.join(_COLUMNS)} FROM files_cjk WHERE rowid IN ({marks})",
                 ids)}
    hits = []
    for _, score, _, file_id in top:
        row = by_id[file_id]
        snippet = (_run_snippet(texts[file_id], runs, words) if file_id in run_count
                   else fts_snippet.get(file_id, ""))
        hits.append(_hit(row, score, snippet))
    return rank_scores(hits)  # a file holding every run ranks first, whatever its score


def search(conn: sqlite3.Connection, query: str, limit: int = 10, type_: str | None = None,
           config: Config | None = None) -> list[dict[str, Any]]:
    """Ranked hits for `query`; each a dict with path, name, type, summary, score, snippet.

    Memories first, then the journal's entries, sits and proposal notes
    (memstore/mirror/putaway.py); the scores are lifted to keep that order.
    """
    hits = [hit for hit, _share in search_with_shares(conn, query, limit, type_, config)]
    return rank_scores(memories_first(conn, hits))


def search_with_shares(conn: sqlite3.Connection, query: str, limit: int = 10,
                       type_: str | None = None, config: Config | None = None
                       ) -> list[tuple[dict[str, Any], float]]:
    """search's hits, each with the share of the query's words it holds (hybrid.py weighs by it).

    The share is 1.0 where words are not counted: a one-word query, FTS5 syntax, and text
    in scripts written without spaces. A plain query's hits are those that hold WORD_FLOOR of
    its words' weight, memories before the journal's (memstore/mirror/putaway.py).
    """
    config = config or Config()
    check_type(type_)
    if limit < 1:
        raise BadUsage("--limit must be at least 1")
    limit = min(limit, MAX_LIMIT)
    # Text that cannot be UTF-8 (lone surrogates from undecodable argv bytes) never reaches SQLite.
    query = query.encode("utf-8", "replace").decode("utf-8")
    check_query(query)
    runs = cjk.runs(query)
    if runs:
        return [(hit, 1.0) for hit in _search_unspaced(conn, query, runs, limit, type_, config)]
    if looks_advanced(query):
        try:
            rows = _candidates(conn, query, limit, type_, config)
            return [(_hit(row, -row["rank"]), 1.0) for row in rows]
        except sqlite3.OperationalError as exc:
            if not _is_query_error(exc):
                raise
    dated: list[str] = []
    if any(ch.isdigit() for ch in query):  # a date in words has a number
        from memstore.mirror.date_phrases import iso_in_query  # here: only a query with a digit
        dated = iso_in_query(query)  # "November 30, 2026" meets "(2026-11-30)"
    words = terms(query + " " + " ".join(dated))
    if not words:
        return []
    expression = " OR ".join(f'"{w}"' for w in words)
    # bm25 over an OR query lets one rare word outrank a document holding every word;
    # re-rank a wider pool by the share of query words each document covers.
    pool = max(limit * 5, 50) if len(words) > 1 else limit
    rows = _candidates(conn, expression, pool, type_, config)
    if len(words) > 1 and rows:
        held = _held(conn, words, [row["id"] for row in rows])
        # FTS5 syntax, even broken, asks for its words as such: no floor, as for valid syntax above
        thin = (not looks_advanced(query) and len(words) >= 3
                and any(len(found) < 2 for found in held.values()))
        # only where a hit holds one word
        total, counts = document_counts(conn, words) if thin else (0, {})
        rows = [row for row in rows if not thin or _clears(held[row["id"]], counts, total)]
        share = {row["id"]: len(held[row["id"]]) / len(words) for row in rows}
        scored = [(-row["rank"] * share[row["id"]] ** config.search_coverage, row)
                  for row in rows]
    else:
        share = {row["id"]: 1.0 for row in rows}
        scored = [(-row["rank"], row) for row in rows]
    behind = journal(conn, [row["path"] for row in rows])
    scored.sort(key=lambda pair: (pair[1]["path"] in behind, -pair[0], pair[1]["path"]))
    return [(_hit(row, value), share[row["id"]]) for value, row in scored[:limit]]

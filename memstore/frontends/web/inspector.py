"""What the web inspector shows, read from the mirror alone and never written.

Every request opens the mirror read-only (`mode=ro`, `query_only`): a page can not change
a file or the mirror, whatever it is asked. Nothing here walks the memory files; the
short-term notes that wait for review come from the mirror too. The one derived value
worth keeping between requests, the bands, is cached per minute and mirror version.

The Store hands this module what it needs (the root, its config, a clock and a way to get
the embedding model); this module never imports the Store.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.agent_root import RootPaths
from memstore.core.config import Config
from memstore.core.errors import MemstoreError, NotFound
from memstore.core.kinds import MEMORY_TYPES
from memstore.mirror.db import connect_read_only
from memstore.mirror.lookup import memory_names
from memstore.mirror.queries import reads_by_day, reads_by_machine, short_term_notes

if TYPE_CHECKING:
    from memstore.meaning.embedding import Embedder
    from memstore.mirror.render import Bands

PAGE_ROWS = 200  # rows of one band per page
TIMELINE_MAX_DAYS = 366
TIMELINE_ROWS = 2000  # (day, memory) rows the timeline shows at most
SEARCH_LIMIT = 20
PROBLEMS_SHOWN = 100
# A memory's name where a body mentions one: feedback_x, project_y.md ...
NAME_IN_TEXT = re.compile((r"\b(?:{})_[A-Za-z0-9][A-Za-z0-9_.-]*?"
                           r"(?=\.md\b|[^A-Za-z0-9_.-]|\.(?:\s|$)|$)(?:\.md)?")
                          .format("|".join(MEMORY_TYPES)))


class MirrorMissing(MemstoreError):
    """There is no mirror to read (the inspector never builds one)."""


class Inspector:
    def __init__(self, root: Path, config: Config, clock: Callable[[], dt.datetime],
                 embedder: Callable[[bool], Embedder | None]) -> None:
        self.root = root
        self.config = config
        self.clock = clock
        self._embedder = embedder
        self.db = Path(RootPaths(root).db)
        self._bands: tuple[tuple[object, ...], Bands] | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """The mirror, read-only. SQLite itself refuses any write on this connection."""
        if not self.db.is_file():
            raise MirrorMissing(f"no mirror at {self.db}", hint="run: memstore sync")
        conn = connect_read_only(self.db)
        try:
            yield conn
        finally:
            conn.close()

    def _version(self) -> tuple[object, ...]:
        """Changes whenever the mirror does (the database or its WAL). An empty WAL counts as none:
        the first reader may create one, and that is no change."""
        stamps: list[object] = []
        for suffix in ("", "-wal"):
            try:
                st = Path(f"{self.db}{suffix}").stat()
            except OSError:
                stamps += [None, None]
                continue
            stamps += [st.st_mtime_ns, st.st_size] if st.st_size else [None, None]
        return tuple(stamps)

    def bands(self, conn: sqlite3.Connection, now: dt.datetime) -> Bands:
        """The bands as render draws them at `now`'s minute, kept while the mirror is unchanged."""
        from memstore.mirror.render import compute_bands, render_minute

        key = (render_minute(now), *self._version())
        with self._lock:
            if self._bands is not None and self._bands[0] == key:
                return self._bands[1]
        bands = compute_bands(conn, now, self.config)
        with self._lock:
            self._bands = (key, bands)
        return bands

    # ------------------------------------------------------------------ pages

    def overview(self) -> dict[str, Any]:
        from memstore.hook import review
        from memstore.life.reviewing import read_cue
        from memstore.mirror.views import lint_view, status_view

        now = self.clock()
        with self.connection() as conn:
            bands = self.bands(conn, now)
            status = status_view(conn, self.root, now, self.config, bands=bands)
            t1 = self._short_term(conn)
            # from the mirror alone: links and special files need a walk (`lint`)
            problems = lint_view(conn)
        waiting = review.pending(self.root, read_cue(self.root), t1)
        return {
            "now": now,
            "status": status,
            "mirror_updated": dt.datetime.fromtimestamp(self.db.stat().st_mtime, dt.UTC),
            "index_rendered": _mtime(Path(RootPaths(self.root).index)),
            "hot": [_entry(e) for e in bands.hot],
            "new": [_entry(e) for e in bands.new],
            "cold": [_entry(e) for e in bands.cold],
            "archive": [_entry(e) for e in bands.archive[:20]],
            "archive_count": len(bands.archive),
            "superseded_count": len(bands.superseded),
            "rolled": sum(1 for e in bands.entries if e.rolled),
            "review": [item.to_json() for item in waiting],
            "problems": problems[:PROBLEMS_SHOWN],
            "problems_total": len(problems),
        }

    def band(self, name: str, page: int) -> dict[str, Any]:
        from memstore.mirror.render import BANDS

        if name not in BANDS:
            raise NotFound(f"no band named {name!r}")
        now = self.clock()
        with self.connection() as conn:
            rows = getattr(self.bands(conn, now), name)
        pages = max((len(rows) + PAGE_ROWS - 1) // PAGE_ROWS, 1)
        page = min(max(page, 1), pages)
        start = (page - 1) * PAGE_ROWS
        return {"band": name, "rows": [_entry(e) for e in rows[start:start + PAGE_ROWS]],
                "total": len(rows), "page": page, "pages": pages, "first": start + 1}

    def search(self, query: str, mode: str, type_: str | None) -> dict[str, Any]:
        """Hits with their reasons. Nothing is embedded here: files without a current vector
        are found by their words alone until `memstore embed` (or a CLI search) catches up."""
        from memstore.core.errors import BadUsage
        from memstore.mirror.hybrid import hybrid, lexical
        from memstore.mirror.search import check_query

        if mode not in ("auto", "fts", "hybrid"):
            raise BadUsage(f"unknown search mode {mode!r}", hint="use auto, fts or hybrid")
        check_query(query)
        embedder = None if mode == "fts" else self._embedder(mode == "hybrid")
        with self.connection() as conn:
            if embedder is None:
                hits = lexical(conn, query, SEARCH_LIMIT, type_ or None, self.config)
            else:
                hits = hybrid(conn, query, SEARCH_LIMIT, type_ or None, self.config, embedder)
            from memstore.mirror.putaway import rejected

            # what the person rejected in review never comes back unasked
            refused = rejected(conn, self.root)
            hits = [hit for hit in hits if hit["path"] not in refused]
            pending = 0
            if embedder is not None:
                from memstore.meaning.vectors import pending_count

                pending = pending_count(conn, embedder.key)
        return {"query": query, "mode": mode, "type": type_ or "", "hits": hits,
                "used": "words and meaning" if embedder is not None else "words (FTS5)",
                "pending": pending}

    def memory(self, key: str) -> dict[str, Any]:
        from memstore.frontends.web.history import chart, replay
        from memstore.mirror.lookup import find_file
        from memstore.mirror.views import file_view

        now = self.clock()
        with self.connection() as conn:
            row = find_file(conn, key)
            view = file_view(conn, row, now, self.config)
            meta = _meta(row["meta"])
            band = None
            if row["kind"] == "t2":
                entry = next((e for e in self.bands(conn, now).entries if e.path == row["path"]),
                             None)
                band = entry.band if entry is not None else None
            history = replay(conn, row["path"], float(row["importance"] or 0.0), now, self.config)
            known = memory_names(conn)
            superseded_by = [(n, known.get(n)) for n in view.get("superseded_by", [])]
            supersedes = [(n, known.get(n)) for n in view.get("supersedes", [])]
        from memstore.team.history import history as team_history

        return {
            "view": view,
            "meta": meta,
            "band": band,
            # a team's memory: who added it and when, its recent history (the team clone's git log)
            "team": view.get("team"),
            "team_history": team_history(str(self.root), row["path"]) if view.get("team") else [],
            "project": meta.get("project") or None,
            "superseded_by": superseded_by,
            "supersedes": supersedes,
            "history": history,
            "score_chart": chart(history, "score", "Score", "score"),
            "stability_chart": chart(history, "stability", "Stability (days)", "stability"),
            "body_html": link_names(view["body"], known),
            "reads": list(reversed(history.reads[-50:])),
        }

    def timeline(self, days: int) -> dict[str, Any]:
        """Reads of memories in the last `days` days: per day, which memories, by which machine."""
        days = min(max(days, 1), TIMELINE_MAX_DAYS)
        now = self.clock()
        since = (now - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
        with self.connection() as conn:
            rows = reads_by_day(conn, since, TIMELINE_ROWS)
            machines = reads_by_machine(conn, since)
        by_day: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_day.setdefault(r["day"], []).append(
                {"path": r["path"], "name": r["name"] or Path(r["path"]).stem, "reads": r["reads"],
                 "hosts": sorted(set((r["hosts"] or "").split(","))), "newest": r["newest"],
                 "present": r["name"] is not None})
        return {"days": days, "since": since, "by_day": by_day, "machines": machines,
                "total": sum(m["reads"] for m in machines)}

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _short_term(conn: sqlite3.Connection) -> list[tuple[str, str, dict[str, str], str]]:
        """The short-term notes (archive included) as review.pending reads them, from the mirror."""
        out = []
        for note in short_term_notes(conn, bodies=True):
            values = {k: "" if v is None else str(v) for k, v in _meta(note.meta).items()}
            out.append((note.path, note.path.rsplit("/", 1)[-1], values, note.body))
        return out


def _mtime(path: Path) -> dt.datetime | None:
    try:
        return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC)
    except OSError:
        return None


def _meta(raw: str | None) -> dict[str, Any]:
    try:
        meta = json.loads(raw or "{}")
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _entry(entry: Any) -> dict[str, Any]:
    return {"path": entry.path, "name": entry.name, "summary": entry.summary, "score": entry.score,
            "chars": len(entry.row) + 1, "access_count": entry.access_count, "pin": entry.pin,
            "last_accessed": entry.last_accessed, "band": entry.band, "rolled": entry.rolled}


def link_names(text: str, known: dict[str, str]) -> str:
    """The text, HTML-escaped, with every name of a memory in the mirror made a link to its page."""
    from html import escape
    from urllib.parse import quote

    out: list[str] = []
    last = 0
    for match in NAME_IN_TEXT.finditer(text):
        name = match.group(0).removesuffix(".md")
        path = known.get(name)
        if path is None:
            continue
        out.append(escape(text[last:match.start()]))
        out.append(f'<a href="/memory/{quote(path)}">{escape(match.group(0))}</a>')
        last = match.end()
    out.append(escape(text[last:]))
    return "".join(out)

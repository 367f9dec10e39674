"""The Store's reads that take more than one call: a search's ranking (lexical or fused, the stepped-aside
memories left out, this project's hits first), lint's findings, and status gathered into its record.
Each runs on a connection the Store opened and caught up, or on what was read from it."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.teams import team_of

if TYPE_CHECKING:
    from memstore.core.config import Config
    from memstore.core.results import Status
    from memstore.meaning.embedding import Embedder
    from memstore.mirror.semantic import Host


def ranked(conn: sqlite3.Connection, host: Host, now: dt.datetime, query: str, limit: int, type: str | None, *,
           embedder: Embedder | None, catch_up: str, project: str | None, this_project: bool, include_all: bool
           ) -> list[dict[str, Any]]:
    """Store.search's hits as dicts, best first, `limit` at most."""
    from memstore.core.projects import by_project
    from memstore.mirror.freshness import stepped_aside
    from memstore.mirror.hybrid import hybrid, lexical
    from memstore.mirror.putaway import memories_first, rejected
    from memstore.mirror.search import rank_scores
    from memstore.mirror.semantic import catch_up_vectors

    pool = limit if project is None else max(limit * 3, 30)  # room to bring this project's hits forward
    # superseded, forgotten and out-of-date memories, and lessons rejected in review, only with include_all
    refused = rejected(conn, host.root)
    aside = set() if include_all else stepped_aside(conn, now) | refused
    wanted = pool + min(len(aside), 200)
    if embedder is None:
        hits = lexical(conn, query, wanted, type, host.config)
    else:
        if catch_up != "none":  # "none": the mirror as it is, vectors included
            catch_up_vectors(host, conn, embedder)
        hits = hybrid(conn, query, wanted, type, host.config, embedder)
    hits = [{**hit, "rejected": hit["path"] in refused} for hit in hits if hit["path"] not in aside]
    # the score shown is the one the order comes from: this project's hits come first, the journal's last
    return rank_scores(memories_first(conn, by_project(conn, hits, project, only=this_project))[:limit])


def lint_rows(conn: sqlite3.Connection, root: Path, *, fresh_max: int | None = None,
              skipped: list[str] | None = None) -> list[dict[str, str]]:
    """Store.lint's findings: the mirror's own, any note posing as the wake's proposals, then what looks like
    a secret in the person's own files (memstore.team.secrets)."""
    from memstore.hook.proposal_notes import forged
    from memstore.life.dating import lint_dates as dated
    from memstore.mirror.views import lint_view
    from memstore.team.secrets import lint_findings

    rows = [(r[0], r[1]) for r in conn.execute("SELECT path, meta FROM files WHERE kind = 'short-term'")]
    found = lint_view(conn, root) + [{"path": rel, "level": "warning", "message": why}
                                     for rel, why in forged(root, rows)]
    found += lint_findings(conn, root, fresh_max=fresh_max, skipped=skipped)
    found += dated(conn, root, fresh_max=fresh_max, skipped=skipped)
    for item in found:  # a team's file is mended in the team's repository, never here
        if (team := team_of(item["path"])) is not None:
            item["message"] += f" (team {team}'s file: mend it by a pull request on the team's repository)"
    return found


STATUS_FRESH = 50  # files status checks for dates and secrets beyond what lint's caches hold


def status(conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config) -> Status:
    """Store.status: the mirror's view (views.status_view), the deletions kept and the nightly runs."""
    from memstore.core.results import BandUse, Status
    from memstore.life.lastrun import view as nightly
    from memstore.mirror.deletions import summary
    from memstore.mirror.views import status_view

    view = status_view(conn, root, now, config)
    # the same findings lint prints, so the two never disagree on a count; the checks lint caches by digest
    # (dates, secrets) parse at most STATUS_FRESH new files here: a first status must not take minutes
    skipped: list[str] = []
    found = lint_rows(conn, root, fresh_max=STATUS_FRESH, skipped=skipped)
    view["errors"] = sum(1 for item in found if item["level"] == "error")
    view["warnings"] = len(found) - view["errors"]
    view["unchecked"] = len(set(skipped))

    counts = dict(conn.execute("SELECT substr(path, 7, instr(substr(path, 7), '/') - 1) || ' ' || kind, count(*) "
                               "FROM files WHERE path LIKE 'teams/%' GROUP BY 1").fetchall())
    teams = [{"name": team.name, "memories": counts.get(f"{team.name} t2", 0),
              "lenses": counts.get(f"{team.name} lens", 0)} for team in config.teams]
    return Status(**{**view, "bands": [BandUse(**b) for b in view["bands"]], "deleted": summary(root),
                     "nightly": nightly(root, now), "teams": teams})

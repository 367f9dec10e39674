"""The Store's reads that take more than one call: a search's ranking (lexical or fused, the
stepped-aside memories left out, this project's hits first), one memory shown, lint's findings,
and status gathered into its record. Each runs on a connection the Store opened and caught up,
or on what was read from it; the statements are the mirror's (memstore.mirror)."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.errors import BadUsage
from memstore.core.teams import team_of

if TYPE_CHECKING:
    from memstore.api.mirroring import Mirror
    from memstore.core.config import Config
    from memstore.core.results import Hit, Memory, Status
    from memstore.meaning.embedding import Embedder
    from memstore.mirror.walking import Walk


def search(m: Mirror, query: str, limit: int, type: str | None, *, catch_up: str, mode: str,
           project: str | None, this_project: bool, include_all: bool) -> list[Hit]:
    """Store.search: the query checked before the mirror is opened (and perhaps rebuilt) for
    nothing, the model loaded unless mode is "fts", then the hits from a caught-up mirror."""
    from memstore.core.results import Hit
    from memstore.mirror.search import check_query
    from memstore.mirror.semantic import embedder_for

    if mode not in ("auto", "fts", "hybrid"):
        raise BadUsage(f"unknown search mode {mode!r}", hint="use auto, fts or hybrid")
    check_query(query)
    embedder = None if mode == "fts" else embedder_for(m.config, m.notify, mode == "hybrid")
    hits = m.read(lambda conn: ranked(conn, m, query, limit, type, embedder=embedder,
                                      catch_up=catch_up, project=project,
                                      this_project=this_project, include_all=include_all),
                  catch_up=catch_up)
    return [Hit(**hit, team=team_of(hit["path"])) for hit in hits]


def ranked(conn: sqlite3.Connection, m: Mirror, query: str, limit: int, type: str | None, *,
           embedder: Embedder | None, catch_up: str, project: str | None, this_project: bool,
           include_all: bool) -> list[dict[str, Any]]:
    """Store.search's hits as dicts, best first, `limit` at most."""
    from memstore.core.projects import by_project
    from memstore.mirror.hybrid import hybrid, lexical
    from memstore.mirror.putaway import memories_first, rejected
    from memstore.mirror.search import rank_scores
    from memstore.mirror.semantic import catch_up_vectors
    from memstore.mirror.stepping_aside import stepped_aside

    # room to bring this project's hits forward
    pool = limit if project is None else max(limit * 3, 30)
    # superseded, forgotten and out-of-date memories, and lessons rejected in review, only with
    # include_all (stepped_aside: three index lookups, however many files a joined team brings)
    refused = rejected(conn, m.root)
    aside = set() if include_all else stepped_aside(conn, m.now) | refused
    wanted = pool + min(len(aside), 200)
    if embedder is None:
        hits = lexical(conn, query, wanted, type, m.config)
    else:
        if catch_up != "none":  # "none": the mirror as it is, vectors included
            catch_up_vectors(conn, m.root, m.paths.embed_lock, m.config, m.notify, embedder)
        hits = hybrid(conn, query, wanted, type, m.config, embedder)
    hits = [{**hit, "rejected": hit["path"] in refused} for hit in hits if hit["path"] not in aside]
    # the score shown is the one the order comes from: this project's hits come first, the
    # journal's last
    ordered = memories_first(conn, by_project(conn, hits, project, only=this_project))
    return rank_scores(ordered[:limit])


def lint_rows(conn: sqlite3.Connection, root: Path, *, fresh_max: int | None = None,
              skipped: list[str] | None = None, tree: Walk | None = None) -> list[dict[str, str]]:
    """Store.lint's findings: the mirror's own, any note posing as the wake's proposals, then what
    looks like a secret in the person's own files (memstore.team.secrets). `tree`: the command's
    listing of the root."""
    from memstore.hook.proposal_notes import forged
    from memstore.life.date_stamping import lint_dates as dated
    from memstore.mirror.queries import short_term_notes
    from memstore.mirror.views import lint_view
    from memstore.team.secrets import lint_findings

    rows = [(note.path, note.meta) for note in short_term_notes(conn)]
    found = lint_view(conn, root, tree) + [{"path": rel, "level": "warning", "message": why}
                                           for rel, why in forged(root, rows)]
    found += lint_findings(conn, root, fresh_max=fresh_max, skipped=skipped)
    found += dated(conn, root, fresh_max=fresh_max, skipped=skipped)
    for item in found:  # a team's file is mended in the team's repository, never here
        if (team := team_of(item["path"])) is not None:
            item["message"] += (f" (team {team}'s file: mend it by a pull request on the team's "
                                "repository)")
    return found


STATUS_FRESH = 50  # files status checks for dates and secrets beyond what lint's caches hold


def status(conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config) -> Status:
    """Store.status: the mirror's view (views.status_view), the deletions kept and the nightly
    runs."""
    from memstore.core.results import BandUse, Status
    from memstore.life.lastrun import view as nightly
    from memstore.mirror.deletions import summary
    from memstore.mirror.teamrows import team_counts
    from memstore.mirror.views import status_view

    view = status_view(conn, root, now, config)
    # the same findings lint prints, so the two never disagree on a count; the checks lint caches
    # by digest (dates, secrets) parse at most STATUS_FRESH new files here: a first status must not
    # take minutes
    skipped: list[str] = []
    found = lint_rows(conn, root, fresh_max=STATUS_FRESH, skipped=skipped)
    view["errors"] = sum(1 for item in found if item["level"] == "error")
    view["warnings"] = len(found) - view["errors"]
    view["unchecked"] = len(set(skipped))

    counts = team_counts(conn)
    teams = [{"name": team.name, "memories": counts.get(team.name, {}).get("t2", 0),
              "lenses": counts.get(team.name, {}).get("lens", 0)} for team in config.teams]
    return Status(**{**view, "bands": [BandUse(**b) for b in view["bands"]],
                     "deleted": summary(root), "nightly": nightly(root, now), "teams": teams})


def show(m: Mirror, memory: str | os.PathLike[str]) -> Memory:
    """One file, named as naming.key reads it, from a caught-up mirror; a team memory with who
    added it and when, and its recent history (the team's git log)."""
    from memstore.api.naming import key
    from memstore.core.results import Memory
    from memstore.mirror.lookup import find_file
    from memstore.mirror.views import file_view

    name = key(m.root, memory)
    found = Memory(**m.read(lambda conn: file_view(conn, find_file(conn, name), m.now, m.config)))
    return with_history(m.root, found) if found.team else found


def with_history(root: Path, memory: Memory) -> Memory:
    """`show`'s view of a team memory: who added it and when, its recent history (git log)."""
    import dataclasses

    from memstore.team.history import history

    # found by name: it may start at the person's own copy, handed to this one
    onward = memory.superseded_by
    if onward and onward[0] == memory.path:
        onward = onward[1:]
    return dataclasses.replace(memory, history=history(str(root), memory.path),
                               superseded_by=onward)

"""The nightly cue: what a linter cannot decide and a model should look at, found by the tick and
written to runtime/state/cue.json for the reflective `memstore wake` to read.

- `cue_items`: every finding (near-duplicates, important memories gone cold, stale in-flight work,
  new facts), at most PER_KIND of each kind, less what the person already answered;
- `cue` / `write_cue`: the cue's JSON object and its file;
- `fact_id` / `dreamt_ids`: how a fact is known, and which items some wake already dreamt about.

`now` comes from the caller; nothing here reads the clock.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstore.core.agent_root import RootPaths
from memstore.core.config import Config
from memstore.core.frontreader import front_values, split_front, unquote
from memstore.core.fsguard import read_text
from memstore.core.locks import atomic_write
from memstore.core.timeutil import UTC, fmt, parse_when
from memstore.hook import review
from memstore.hook.bundle import _dated
from memstore.life.duplicates import (
    COMPARE_BUDGET,
    Duplicates,
    clusters,
    near_duplicates,
    project_scopes,
)
from memstore.mirror.queries import in_flight_memories

# An in-flight memory nobody has read for this long is probably no longer in flight.
STALE_IN_FLIGHT_DAYS = 14
KINDS = ("near-duplicate", "important-gone-cold", "stale-in-flight", "new-fact")
IMPORTANT = 5.0  # importance at or above which going cold is worth a look
DETAIL_CHARS = 160
PER_KIND = 25  # cue items of one kind: a model weighs 25 near-duplicates in a sitting, not 3,000


def _one_line(text: str, limit: int = DETAIL_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _first_line(path: Path) -> str:
    try:
        text = (path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
                .lstrip("\ufeff"))
    except OSError:
        return ""
    for line in split_front(text)[1].splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return ""


@dataclass
class Findings:
    items: list[dict[str, Any]]  # what goes into the cue: at most PER_KIND of each kind
    found: dict[str, int]  # kind -> how many were found (more than the cue holds when capped)
    duplicates: Duplicates


def _item(kind: str, paths: list[str], detail: str) -> dict[str, Any]:
    return {"kind": kind, "paths": paths, "detail": _one_line(detail)}


def cue_items(
    conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config,
    rows: list[dict[str, Any]], *, budget: int = COMPARE_BUDGET, per_kind: int | None = None,
) -> Findings:
    """Every finding, and the cue's items: by kind (KINDS order), most pressing first within a
    kind (most alike, most important, longest stale, newest), ties by path; at most
    `per_kind` (PER_KIND) of each, so a corpus of look-alike summaries cannot flood the cue.

    `rows` are the Store.list rows (views.list_view) at `now`.
    """
    cap = PER_KIND if per_kind is None else per_kind
    ranked: dict[str, list[tuple[Any, dict[str, Any]]]] = {kind: [] for kind in KINDS}

    # what stepped aside (superseded, forgotten, expired, not yet valid) is meant to look alike
    live_rows = [r for r in rows
                 if r["band"] not in ("superseded", "forgotten", "expired", "early")]
    summary_of = {r["path"]: r["summary"] or "" for r in live_rows}
    dups = near_duplicates(summary_of, budget)
    for members, best in clusters(dups.pairs, project_scopes(conn)):
        shown = " / ".join(repr(_one_line(summary_of[p], 40)) for p in members[:3])
        more = f" and {len(members) - 3} more" if len(members) > 3 else ""
        detail = (f"{len(members)} memories with summaries alike "
                  f"(token-set Jaccard up to {best:.2f}): {shown}{more}")
        ranked["near-duplicate"].append(((-best, *members),
                                         _item("near-duplicate", members, detail)))

    for r in rows:
        if r["importance"] >= IMPORTANT and r["band"] in ("cold", "archive"):
            detail = (f"importance {r['importance']:g} but in the {r['band']} band "
                      f"(score {r['score']:.2f}, last read {r['last_accessed'] or 'never'})")
            ranked["important-gone-cold"].append(
                ((-r["importance"], r["score"], r["path"]),
                 _item("important-gone-cold", [r["path"]], detail)))

    stale_before = now - dt.timedelta(days=STALE_IN_FLIGHT_DAYS)
    for flying, state, last_accessed in in_flight_memories(conn):
        seen = parse_when(last_accessed)
        how = "last read"
        if seen is None:
            try:
                seen = dt.datetime.fromtimestamp((root / flying).stat().st_mtime, UTC)
            except OSError:
                continue
            how = "never read; last changed"
        if seen < stale_before:
            detail = (f"in flight, {how} {fmt(seen)[:10]} ({(now - seen).days} days ago): "
                      f"{state or '(no state)'}")
            ranked["stale-in-flight"].append(
                ((seen, flying), _item("stale-in-flight", [flying], detail)))

    # New facts: T1 files in the window that no wake has dreamt about yet, known by their
    # path and content (never by mtime against the clock, which --now may pin). Wake's own
    # proposals and the engine's bookkeeping are not facts.
    dreamt = dreamt_ids(root)
    answered = review.answers(root)
    today = now.date()
    for day, path in _dated(Path(RootPaths(root).short_term)):
        if not 0 <= (today - day).days <= config.short_term_days:
            continue
        text = read_text(path)
        kind = _kind_of(text)
        if kind in NOT_FACTS or review.withheld(kind, split_front(text)[1], answered):
            continue  # wake's own output, bookkeeping, or a lesson that never reaches the agent
        rel = path.relative_to(root).as_posix()
        ident = fact_id(rel, text)
        if ident in dreamt:
            continue
        item = _item("new-fact", [rel], _first_line(path) or path.stem)
        item["id"] = ident
        ranked["new-fact"].append(((-day.toordinal(), rel), item))

    # Every other item is named by its kind and files; one the person rejected never returns. A
    # near-duplicate cluster the person answered either way never returns either, nor does any part
    # of it: only a cluster that gained a member is a new question.
    settled = [set(a["paths"]) for a in answered.values()
               if a.get("kind") == "cue" and isinstance(a.get("paths"), list) and a["paths"]
               and str(a.get("text", "")).startswith("near-duplicate:")]
    for kind in KINDS:
        if kind == "new-fact":
            continue
        kept = []
        for key, item in ranked[kind]:
            item["id"] = review.cue_id(kind, item["paths"])
            said = review.decision(answered, item["id"])
            if kind == "near-duplicate" and (
                    said or any(set(item["paths"]) <= done for done in settled)):
                continue
            if said != review.REJECTED:
                kept.append((key, item))
        ranked[kind] = kept

    items: list[dict[str, Any]] = []
    for kind in KINDS:
        items += [item for _key, item in sorted(ranked[kind], key=lambda pair: pair[0])[:cap]]
    found = {kind: len(ranked[kind]) for kind in KINDS if ranked[kind]}
    return Findings(items, found, dups)


def cue(ran_at: str, live_session: bool, did: dict[str, Any], items: list[dict[str, Any]],
        dreamt: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The cue's JSON object (the shape `memstore wake` reads).

    `anything` is true only when some item has not been dreamt about yet: a night with
    nothing new calls no model, however many standing items the cue lists.
    """
    fresh = any(item.get("id") not in dreamt for item in items)
    return {"ran_at": ran_at, "live_session": live_session, "did": did, "anything": fresh,
            "items": items}


# T1 kinds that are not facts for the cue: wake's own proposals, the engine's bookkeeping.
NOT_FACTS = frozenset({"wake-proposals", "bookkeeping", "tick", "tick-status", "cue", "journal",
                       "status"})
DREAMT_KEEP = 5_000  # ids of items already dreamt about, kept in wake-status.json (newest last)


def fact_id(rel: str, text: str) -> str:
    return review.item_id("fact", rel + "\0" + hashlib.blake2b(text.encode("utf-8", "replace"),
                                                               digest_size=8).hexdigest())


def _kind_of(text: str) -> str:
    return unquote(front_values(split_front(text)[0]).get("kind", "")).strip().lower()


def dreamt_ids(root: Path) -> frozenset[str]:
    """The items some wake already dreamt about (runtime/state/wake-status.json "dreamt")."""
    try:
        data = json.loads(Path(RootPaths(root).wake_status).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    found = data.get("dreamt") if isinstance(data, dict) else None
    return (frozenset(i for i in found if isinstance(i, str)) if isinstance(found, list)
            else frozenset())


def write_cue(root: Path, data: dict[str, Any]) -> Path:
    target = Path(RootPaths(root).cue)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return target

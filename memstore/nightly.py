"""The cheap, deterministic half of the nightly cycle: what `memstore tick` does beyond sync,
flush and render, and the git helper both nightly commands share.

- `live_change`: is a person (or an agent) probably mid-session? Any memory file changed
  in the last `flush_quiet_minutes`. Then tick only scans (sync, lint) and writes the cue.
- `roll_windows`: T1 facts past their window and dream-journal entries past the newest
  few move into an `archive/` folder beside them. Nothing is deleted: the SessionStart
  bundle reads only the top folder, while the mirror (and so search) still holds them.
- `cue_items` / `write_cue`: what a linter cannot decide and a model should look at,
  written to runtime/state/cue.json for the reflective `memstore wake` to read.
- `commit_paths`: stage and commit exactly the files named, and nothing else in the tree.

Every function takes `now` from its caller (the Store's clock); none reads the clock.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shlex
import sqlite3
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore import review
from memstore.agent_root import RootPaths
from memstore.config import Config
from memstore.context import _dated, front_values, split_front, unquote
from memstore.duplicates import COMPARE_BUDGET, Duplicates, clusters, near_duplicates, project_scopes
from memstore.duplicates import summary_tokens as summary_tokens  # re-exported: tests and callers know it here
from memstore.errors import MemstoreError
from memstore.fsguard import read_text
from memstore.kinds import DERIVED
from memstore.locks import atomic_write
from memstore.timeutil import UTC, fmt, parse_when

if TYPE_CHECKING:
    from memstore.flush import FlushReport
    from memstore.render import RenderResult
    from memstore.results import TickStatus
    from memstore.store import Store
    from memstore.sync import SyncReport

ARCHIVE_DIR = "archive"
# An in-flight memory nobody has read for this long is probably no longer in flight.
STALE_IN_FLIGHT_DAYS = 14
KINDS = ("near-duplicate", "important-gone-cold", "stale-in-flight", "new-fact")
IMPORTANT = 5.0  # importance at or above which going cold is worth a look
DETAIL_CHARS = 160
PER_KIND = 25  # cue items of one kind; a model can weigh 25 near-duplicates in one sitting, not 3,000


# ---------------------------------------------------------------- live-session awareness


def memory_files(root: Path) -> Iterable[tuple[str, int]]:
    """(root-relative path, mtime_ns) of every file a person or the agent writes.

    Markdown under memory/ (every depth, archives included), lenses/ and meditations/,
    and identity.md; not the derived files (tick writes those itself) nor runtime/.
    """
    from memstore.sync import walk

    for start in ("memory", "lenses", "meditations"):
        if not (root / start).is_dir():
            continue
        for rel, (mtime_ns, _size, _inode) in walk(root, start).files.items():
            if rel.startswith("memory/") and rel.count("/") == 1 and rel[len("memory/"):] in DERIVED:
                continue
            yield rel, mtime_ns
    try:
        yield "identity.md", (root / "identity.md").stat().st_mtime_ns
    except OSError:
        pass


def live_change(root: Path, now: dt.datetime, config: Config) -> tuple[str, float] | None:
    """The most recently changed memory file inside the quiet window, with its age in minutes; else None.

    The window is `flush_quiet_minutes` either side of now: a file stamped a little
    after now was written while the tick started (or on a host whose clock runs a
    little ahead), which says someone is at work just as well. A stamp far in the
    future says only that the clock is pinned or skewed, so it does not count.
    """
    window_ns = config.flush_quiet_minutes * 60 * 1_000_000_000
    now_ns = int(now.timestamp()) * 1_000_000_000
    best: tuple[int, str] | None = None
    for rel, mtime_ns in memory_files(root):
        if abs(now_ns - mtime_ns) < window_ns and (best is None or (mtime_ns, rel) > best):
            best = (mtime_ns, rel)
    if best is None:
        return None
    return best[1], (now_ns - best[0]) / 60e9


def describe_live(found: tuple[str, float] | None) -> str | None:
    """One phrase for a live_change result: which file, and when."""
    if found is None:
        return None
    rel, minutes = found
    if minutes < 0:
        return f"{rel} is stamped {-minutes:.0f} min after now"
    return f"{rel} changed {minutes:.0f} min ago"


# ---------------------------------------------------------------- window rolling


@dataclass
class Rolled:
    moves: list[tuple[str, str]] = field(default_factory=list)  # (old, new), root-relative
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why) of files left in place

    @property
    def paths(self) -> list[str]:
        """Where the rolled files are now."""
        return [new for _old, new in self.moves]


def _free_name(folder: Path, name: str) -> Path:
    """`folder/name`, or `folder/<stem>-2.md`, -3, ... : the first that does not exist."""
    target = folder / name
    stem, suffix = os.path.splitext(name)
    n = 2
    while os.path.lexists(target):
        target = folder / f"{stem}-{n}{suffix}"
        n += 1
    return target


def _move(root: Path, path: Path, rolled: Rolled) -> None:
    folder = path.parent / ARCHIVE_DIR
    try:
        folder.mkdir(exist_ok=True)
        target = _free_name(folder, path.name)
        os.replace(path, target)  # same folder tree, same file system: a rename, bytes and mtime kept
    except OSError as exc:  # one file that cannot move (permissions, archive/ not a folder) stops nothing
        rolled.failed.append((path.relative_to(root).as_posix(), str(exc)))
        return
    rolled.moves.append((path.relative_to(root).as_posix(), target.relative_to(root).as_posix()))


def roll_windows(root: Path, now: dt.datetime, config: Config) -> Rolled:
    """Move T1 facts past `short_term_days` and dream entries past the newest `dream_entries`
    into archive/ beside them. Never deletes, never overwrites, never touches archive/.

    Which files count follows the SessionStart bundle (context.sections) exactly: a file
    this moves is one the bundle had stopped showing. Undated or future-dated files stay.
    """
    paths = RootPaths(root)
    today = now.date()
    rolled = Rolled()
    for day, path in reversed(_dated(Path(paths.short_term))):  # oldest first: a stable order
        if (today - day).days > config.short_term_days:
            _move(root, path, rolled)
    # The newest few of each scope (person-wide, each project's dreams): a busy project never rolls away
    # the entries another project's sessions are shown.
    by_scope: dict[str | None, list[Path]] = {}
    for day, path in _dated(Path(paths.dream_journal)):
        if day <= today:
            by_scope.setdefault(_scope_of(read_text(path)), []).append(path)
    old = [path for kept in by_scope.values() for path in kept[config.dream_entries:]]
    for path in sorted(old, key=lambda p: p.name):
        _move(root, path, rolled)
    return rolled


# ---------------------------------------------------------------- the cue


def _one_line(text: str, limit: int = DETAIL_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _first_line(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").lstrip("\ufeff")
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
    conn: sqlite3.Connection, root: Path, now: dt.datetime, config: Config, rows: list[dict[str, Any]],
    *, budget: int = COMPARE_BUDGET, per_kind: int | None = None,
) -> Findings:
    """Every finding, and the cue's items: by kind (KINDS order), most pressing first within a
    kind (most alike, most important, longest stale, newest), ties by path; at most
    `per_kind` (PER_KIND) of each, so a corpus of look-alike summaries cannot flood the cue.

    `rows` are the Store.list rows (views.list_view) at `now`.
    """
    cap = PER_KIND if per_kind is None else per_kind
    ranked: dict[str, list[tuple[Any, dict[str, Any]]]] = {kind: [] for kind in KINDS}

    live_rows = [r for r in rows if r["band"] != "superseded"]  # superseded ones are meant to look alike
    summary_of = {r["path"]: r["summary"] or "" for r in live_rows}
    dups = near_duplicates(summary_of, budget)
    for members, best in clusters(dups.pairs, project_scopes(conn)):
        shown = " / ".join(repr(_one_line(summary_of[p], 40)) for p in members[:3])
        more = f" and {len(members) - 3} more" if len(members) > 3 else ""
        detail = (f"{len(members)} memories with summaries alike (token-set Jaccard up to {best:.2f}): "
                  f"{shown}{more}")
        ranked["near-duplicate"].append(((-best, *members), _item("near-duplicate", members, detail)))

    for r in rows:
        if r["importance"] >= IMPORTANT and r["band"] in ("cold", "archive"):
            detail = (f"importance {r['importance']:g} but in the {r['band']} band "
                      f"(score {r['score']:.2f}, last read {r['last_accessed'] or 'never'})")
            ranked["important-gone-cold"].append(
                ((-r["importance"], r["score"], r["path"]), _item("important-gone-cold", [r["path"]], detail)))

    stale_before = now - dt.timedelta(days=STALE_IN_FLIGHT_DAYS)
    for row in conn.execute(
        "SELECT f.path, f.state, p.last_accessed FROM files f LEFT JOIN policy p ON p.path = f.path "
        "WHERE f.kind = 't2' AND f.in_flight"
    ):
        seen = parse_when(row["last_accessed"])
        how = "last read"
        if seen is None:
            try:
                seen = dt.datetime.fromtimestamp((root / row["path"]).stat().st_mtime, UTC)
            except OSError:
                continue
            how = "never read; last changed"
        if seen < stale_before:
            detail = f"in flight, {how} {fmt(seen)[:10]} ({(now - seen).days} days ago): {row['state'] or '(no state)'}"
            ranked["stale-in-flight"].append(((seen, row["path"]), _item("stale-in-flight", [row["path"]], detail)))

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
    # near-duplicate cluster the person answered either way never returns either, nor does any part of
    # it: only a cluster that gained a member is a new question.
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
            if kind == "near-duplicate" and (said or any(set(item["paths"]) <= done for done in settled)):
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
    return {"ran_at": ran_at, "live_session": live_session, "did": did, "anything": fresh, "items": items}


# T1 kinds that are not facts for the cue: wake's own proposals, the engine's bookkeeping.
NOT_FACTS = frozenset({"wake-proposals", "bookkeeping", "tick", "tick-status", "cue", "journal", "status"})
DREAMT_KEEP = 5_000  # ids of items already dreamt about, kept in wake-status.json (newest last)


def fact_id(rel: str, text: str) -> str:
    return review.item_id("fact", rel + "\0" + hashlib.blake2b(text.encode("utf-8", "replace"),
                                                               digest_size=8).hexdigest())


def _scope_of(text: str) -> str | None:
    from memstore.dreaming import scope_of

    return scope_of(front_values(split_front(text)[0]).get("project"))


def _kind_of(text: str) -> str:
    return unquote(front_values(split_front(text)[0]).get("kind", "")).strip().lower()


def dreamt_ids(root: Path) -> frozenset[str]:
    """The items some wake already dreamt about (runtime/state/wake-status.json "dreamt")."""
    try:
        data = json.loads(Path(RootPaths(root).wake_status).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    found = data.get("dreamt") if isinstance(data, dict) else None
    return frozenset(i for i in found if isinstance(i, str)) if isinstance(found, list) else frozenset()


def write_cue(root: Path, data: dict[str, Any]) -> Path:
    target = Path(RootPaths(root).cue)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return target


# ---------------------------------------------------------------- git


class CommitFailed(MemstoreError):
    """git refused (a hook, no identity, a lock): the message is git's own."""


def _git(root: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    from memstore.projects import run_git  # nothing the repository's config names runs (hooks, filters, ...)

    env = {"GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C"}  # a path is a path, never a glob
    return run_git(root, *args, input=input, env=env, timeout=120, identity=args[:1] == ("commit",))


def _listed(root: Path, args: list[str], paths: list[str]) -> set[str]:
    done = _git(root, *args, "-z", "--", *paths)
    return {p for p in done.stdout.split("\0") if p}


def commit_paths(root: str | os.PathLike[str], paths: Iterable[str], message: str,
                 *, tracked_only: Iterable[str] = ()) -> str:
    """Stage and commit exactly `paths` (relative to root), leaving the rest of the work tree alone.

    A path is committed when git tracks it (a change or a removal) or when it exists and
    is not ignored (a new file); paths in `tracked_only` (derived files, runtime state)
    only when git already tracks them. The commit is pathspec-limited (`git commit -- P`),
    so whatever else is staged or modified in the tree stays as it was. Returns one line
    saying what happened: a commit, or why there was none. Raises CommitFailed when git
    itself refuses.
    """
    base = Path(root)
    only_tracked = set(tracked_only)
    wanted = sorted(set(paths) | only_tracked)
    if not wanted:
        return "nothing to commit: tick wrote no files"
    try:
        inside = _git(base, "rev-parse", "--is-inside-work-tree")
    except FileNotFoundError:
        return "not committed: git is not installed"
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return "not committed: the agent root is not inside a git work tree"
    # ls-files prints paths relative to cwd (the root), the form `paths` come in.
    tracked = _listed(base, ["ls-files", "--cached"], wanted)
    candidates = [p for p in wanted if p in tracked or (p not in only_tracked and (base / p).exists())]
    if candidates:
        ignored = _listed(base, ["check-ignore", "--no-index"], [p for p in candidates if p not in tracked])
        candidates = [p for p in candidates if p not in ignored]
    if not candidates:
        return "nothing to commit: no file tick wrote is tracked or trackable"
    added = _git(base, "add", "--all", "--", *candidates)
    if added.returncode != 0:
        raise CommitFailed(f"git add failed: {' '.join((added.stderr or added.stdout).split())}")
    # against HEAD (or the empty tree before the first commit); --relative: paths relative to the root
    # --no-renames: a rolled file's old path (a removal) and new path (an addition) are both named
    changed = _listed(base, ["diff", "--cached", "--name-only", "--relative", "--no-renames"], candidates)
    if not changed:
        return "nothing to commit: the files tick wrote match the last commit"
    done = _git(base, "commit", "--quiet", "-m", message, "--", *sorted(changed))
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        staged = " ".join(shlex.quote(p) for p in sorted(changed))
        raise CommitFailed(f"git commit failed: {said[-1] if said else f'exit {done.returncode}'}; "
                           f"the files it wrote stay on disk and staged: {staged}",
                           hint=f"fix git (e.g. user.name/user.email), then: git -C {shlex.quote(str(base))} "
                                f"commit -m {shlex.quote(message)} -- {staged}")
    head = _git(base, "rev-parse", "--short", "HEAD").stdout.strip()
    return f"committed {len(changed)} file(s) as {head}"


def run_tick(store: Store, commit: bool = False) -> TickStatus:
    """Store.tick: the passes, the cue and the status file (see its docstring)."""
    from memstore.adoption import MENDING
    from memstore.flush import flush
    from memstore.freshness import tick_items, write_stale
    from memstore.locks import file_lock
    from memstore.render import render
    from memstore.results import TickStatus
    from memstore.sync import sync_into
    from memstore.views import lint_view, list_view

    now = store.now  # one instant for every pass, even on the real clock
    ran_at = fmt(now)
    live = live_change(store.root, now, store.config)
    not_here = store.flush_refusal()  # another clone is the one that flushes

    def run(conn: sqlite3.Connection) -> tuple[SyncReport, FlushReport | None, Rolled,
                                               RenderResult | None, list[dict[str, str]],
                                               Findings, list[str]]:
        flushed: FlushReport | None = None
        rolled = Rolled()
        rendered: RenderResult | None = None
        with file_lock(Path(store.paths.mirror_lock), timeout=store.config.lock_timeout_s):
            synced = sync_into(conn, store.root, store.config, store.progress, now)
            if live is None:
                if not_here is None:
                    flushed = flush(conn, store.root, now, store.config)
                rolled = roll_windows(store.root, now, store.config)
                if (flushed and flushed.written) or rolled.moves:
                    sync_into(conn, store.root, store.config, now=now)  # the mirror follows the rewrites and moves
        # freshness: cited code gone, memories out of their dates (before render, which marks them)
        fresh, stale = tick_items(conn, store.root, now, review.answers(store.root), review.cue_id, PER_KIND,
                                  store.notify)
        write_stale(store.root, stale, ran_at)
        if live is None:
            rendered = render(conn, store.root, now, store.config)
        problems = lint_view(conn, store.root)
        rows = list_view(conn, store.root, now, store.config)
        found = cue_items(conn, store.root, now, store.config, rows)
        found.items += fresh
        for item in fresh:
            found.found[item["kind"]] = found.found.get(item["kind"], 0) + 1
        # with many machines: nobody, or more than one, flushes
        return synced, flushed, rolled, rendered, problems, found, store.flush_warnings(conn)

    synced, flushed, rolled, rendered, problems, found, flush_warnings = store._with_mirror(run)
    for line in flush_warnings:
        store.notify(line)
    # The night is when the embedding backlog is worked off in full (the `semantic` extra):
    # a sync in the day embeds for a few seconds at most.
    embedded = store.embed(required=False)
    items = found.items
    for rel, why in rolled.failed:
        store.notify(f"could not roll {rel} into archive/ ({why}); left in place")
    if found.duplicates.exhausted:
        store.notify(f"near-duplicate check stopped after {found.duplicates.compared} comparisons; "
                    "the cue may miss some pairs")
    errors = sum(1 for p in problems if p["level"] == "error")
    warnings = len(problems) - errors
    for problem in problems:  # every night until the file is mended (memstore.adoption)
        if problem["message"].startswith(MENDING):
            store.notify(f"{problem['path']}: {problem['message']}")
    did = {
        "sync": synced.summary(),
        "lint": f"{errors} error(s), {warnings} warning(s)",
        "flush": flushed.summary() if flushed else (f"skipped: {not_here}" if live is None else None),
        "rolled": rolled.paths,
        "render": rendered.summary() if rendered else None,
        "embed": embedded.summary() if embedded else None,
        "warnings": flush_warnings,
    }
    write_cue(store.root, cue(ran_at, live is not None, did, items, dreamt_ids(store.root)))

    committed: str | None = None
    failure: MemstoreError | None = None
    if commit:
        touched = [*(flushed.written if flushed else []), *(p for move in rolled.moves for p in move)]
        derived = [f"memory/{name}" for name in rendered.written] if rendered else []
        state = [Path(store.paths.cue).relative_to(store.root).as_posix()]
        try:
            committed = commit_paths(store.root, touched, f"memstore tick {ran_at}",
                                             tracked_only=[*derived, *state])
        except MemstoreError as exc:
            committed, failure = str(exc), exc
    skipped = "skipped (live session)"
    # the person's files and the wiring against what the person accepted: a hand edit is said once and
    # accepted; a change made during a session stays held; wiring gone is said every night until fixed
    tampered = store.tamper_check()
    evidence = [f"{'HELD' if f.state == 'held' else 'GONE' if f.state == 'gone' else 'accepted'}: {line}"
                for f, line in zip(tampered, store.tamper_lines(tampered), strict=True)]
    status = TickStatus(
        ran_at=ran_at,
        sync=synced.summary(),
        flush=flushed.summary() if flushed else (f"skipped: {not_here}" if live is None else skipped),
        render=rendered.summary() if rendered else skipped,
        lint_errors=errors,
        lint_warnings=warnings,
        live_session=live is not None,
        live_because=describe_live(live),
        rolled=len(rolled.moves),
        cue_items=len(items),
        cue_kinds=found.found,
        committed=committed,
        tamper=evidence,
    )
    target = Path(store.paths.tick_status)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(status.to_json(), indent=2) + "\n").encode())
    if failure is not None:
        raise failure
    return status

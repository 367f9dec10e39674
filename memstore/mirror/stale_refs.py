"""Stale references: a memory that cites code of its project (a path such as `src/exporter.py`,
a `path:line`, a backticked symbol next to a path) is checked by the nightly tick against that
project's git work tree. One read of its git index per project (no git process), then only the files
a symbol names are read, from the work tree, through no symlink. A cited path the index lacks is
gone only if the project's history had it (memstore.mirror.code_history: git through core.processes,
once per HEAD). Nothing here changes a memory.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstore.core.agent_root import state_dir
from memstore.core.locks import atomic_write
from memstore.core.projects import UnreadableIndex, read_index, read_inside, worktrees
from memstore.mirror.code_history import HistoryUnread, last_commits, placeholder
from memstore.mirror.indexing import body_of
from memstore.mirror.stepping_aside import ASIDE_STATUSES, out_of_time

# A cited path: at least one folder and a file extension, optionally :line (`src/exporter.py:42`);
# not part of a template (`$ENV/app.yaml`, `<service>/x.yaml`, `logs/*.log`).
PATH_REF = re.compile(r"(?<![\w/.~$%<{*-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8})"
                      r"(?::(\d+))?(?![\w/*>}])")
# A symbol in backticks: an identifier, maybe dotted or with (): `export_rows`, `Exporter.run()`.
SYMBOL_REF = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(\))?`")
STALE_FILE = "stale.json"  # under runtime/state/: the tick's findings, read by render and show
CACHE_FILE = "stale-cache.json"  # under runtime/state/: what each project's last check read
# ---------------------------------------------------------------- stale references


@dataclass(frozen=True)
class Reference:
    path: str
    line: int | None = None
    symbol: str | None = None

    def label(self) -> str:
        text = self.path + (f":{self.line}" if self.line else "")
        return f"`{self.symbol}` in {text}" if self.symbol else text


def references(text: str) -> list[Reference]:
    """The code a memory's text cites: paths (with :line), and each backticked symbol on a line that
    names exactly one path (the file it is said to be in)."""
    found: dict[tuple[str, int | None, str | None], Reference] = {}
    if "/" not in text:
        return []  # no path, nothing cited (most memories: one look)
    for line in text.splitlines():
        if "/" not in line:
            continue
        if "://" in line:
            line = re.sub(r"\S+://\S+", " ", line)  # URLs are not the project's files
        paths = [(m.group(1), int(m.group(2)) if m.group(2) else None)
                 for m in PATH_REF.finditer(line) if not placeholder(m.group(1))]
        for path, number in paths:
            found.setdefault((path, number, None), Reference(path, number))
        if len({p for p, _ in paths}) == 1:
            path = paths[0][0]
            for symbol in SYMBOL_REF.findall(line):
                # `exporter.py` is the file
                if not path.endswith(symbol) and not PATH_REF.fullmatch(symbol):
                    found.setdefault((path, None, symbol), Reference(path, None, symbol))
    return list(found.values())


def tracked_files(worktree: str) -> tuple[set[str], str]:
    """Every file git tracks in a work tree and a digest of their contents as git has them (each
    path and its blob id), read from git's index file: no process is started, so nothing the
    repository's config names (core.fsmonitor, ...) runs. Raises UnreadableIndex (why) when the
    index cannot be read."""
    import hashlib


    entries = read_index(worktree)
    names = b"\0".join([name for _, _, _, name in entries])  # no path holds a NUL: one decode
    files = set(names.decode("utf-8", "replace").split("\0")) if entries else set()
    return files, hashlib.sha256(
        b"".join([oid + name + b"\0" for _, oid, _, name in entries])).hexdigest()


def worktree_of(project: str, known: dict[str, str]) -> str | None:
    """The local work tree of a `project:` value: the folder the hook saw that project's sessions in
    (runtime/state/worktrees.json), found by the project's name or by that folder's absolute path.
    An absolute path no session was seen in is no work tree to read, whatever a memory says."""
    named = known.get(project.strip()) or known.get(project.strip().lower())
    # a name first: a remote that is a local path (`origin` = ~/remotes/alpha.git) is one too
    if named and os.path.isabs(named) and os.path.isdir(named):
        return named
    if os.path.isabs(project):
        real = os.path.realpath(project)
        seen = {os.path.realpath(path) for path in known.values() if os.path.isabs(path)}
        return real if real in seen and os.path.isdir(real) else None
    return None


@dataclass
class Stale:
    """One memory's references that no longer resolve."""

    path: str
    project: str
    missing: list[str] = field(default_factory=list)
    last_in: dict[str, str] = field(default_factory=dict)  # a gone path -> last commit that had it


def _suffixes(files: set[str]) -> set[str]:
    """Tracked paths' tails after a '/': a memory may cite `pkg/mod.py` for `src/pkg/mod.py`."""
    out: set[str] = set()
    for name in files:
        at = name.find("/")
        while at != -1:
            out.add(name[at + 1:])
            at = name.find("/", at + 1)
    return out


def check_references(rows: list[tuple[str, str, str]], worktrees: dict[str, str], rejected: Any,
                     text_of: Any = None, cache: dict[str, Any] | None = None,
                     unchecked: dict[str, str] | None = None) -> list[Stale]:
    """(path, project, stamp) of each T2 memory with a project -> the stale ones.

    `rejected(path, ref)`: did the person say that reference is not stale? `text_of(path)`: the
    memory's text. `cache` (read and updated): per project, the findings of the last check and what
    they were made from (the digest of the index's entries, as `git ls-files -s` lists them, the
    memories' stamps, the rejections); a project where none of that changed is not checked again, so
    a quiet night costs one read of each project's index. (With text_of None, the stamp is the text
    itself: tests and small callers.)
    `unchecked` (filled): project -> why it was not checked tonight, for a project named by a path
    no session was seen in, or whose index cannot be read.
    """
    import hashlib


    by_project: dict[str, list[tuple[str, str]]] = {}
    for path, project, stamp in rows:
        by_project.setdefault(project, []).append((path, stamp))
    out: list[Stale] = []
    for project, memories in sorted(by_project.items()):
        tree = worktree_of(project, worktrees)
        if tree is None:
            if os.path.isabs(project) and unchecked is not None:
                unchecked[project] = "no session was seen in that folder on this machine"
            continue
        try:
            files, tree_digest = tracked_files(tree)
        except UnreadableIndex as exc:
            if unchecked is not None:
                unchecked[project] = f"its git index cannot be read: {exc}"
            continue
        key = hashlib.sha256("\n".join([tree, tree_digest,
                                        *(f"{p}\0{st}" for p, st in sorted(memories)),
                                        repr(rejected_key(rejected))]).encode()).hexdigest()
        kept: dict[str, Any] = (cache or {}).get(project) or {}
        kept = kept if isinstance(kept, dict) else {}
        if kept.get("key") == key:
            last_in = kept["last_in"] if isinstance(kept.get("last_in"), dict) else {}
            out += [Stale(p, project, list(m), {r: str(last_in[r]) for r in m if r in last_in})
                    for p, m in kept.get("stale", {}).items()]
            continue
        history: dict[str, Any] = kept["history"] if isinstance(kept.get("history"), dict) else {}
        try:
            found = _check_project(project, tree, files, memories, rejected, text_of, history)
        except HistoryUnread as exc:
            if unchecked is not None:
                unchecked[project] = f"its git history cannot be read: {exc}"
            continue  # nothing flagged, nothing cached: the next tick asks again
        if cache is not None:
            cache[project] = {"key": key, "stale": {one.path: one.missing for one in found},
                              "history": history,
                              "last_in": {r: w for one in found for r, w in one.last_in.items()}}
        out += found
    return out


def rejected_key(rejected: Any) -> Any:
    """What a rejection predicate stands for in the cache key (the rejected ids it closes over)."""
    return sorted(getattr(rejected, "ids", ()) or ())


def _check_project(project: str, tree: str, files: set[str], memories: list[tuple[str, str]],
                   rejected: Any, text_of: Any, history: dict[str, Any] | None = None
                   ) -> list[Stale]:
    """The stale memories of one project: a cited path git does not track that the project's history
    had (`history`: last_commits's memo), a symbol no longer in the file it names."""

    tails: set[str] | None = None
    contents: dict[str, str | None] = {}
    out = []
    absent: set[str] = set()  # cited paths git does not track: gone only if the project had them
    for path, stamp in memories:
        text = text_of(path) if text_of is not None else stamp
        stale = Stale(path, project)
        gone: set[str] = set()
        for ref in references(text):
            label = ref.label()
            rel = ref.path.removeprefix("./")
            if rel in gone or rejected(path, label) or rejected(path, ref.path):
                continue  # its file is already named as gone (once is enough), or said not stale
            if rel not in files:
                if tails is None:
                    tails = _suffixes(files)
                if rel not in tails:  # not even as a tracked path's tail (cited from a subfolder)
                    stale.missing.append(ref.path)
                    gone.add(rel)
                    absent.add(ref.path)
                continue
            if ref.symbol:
                if rel not in contents:
                    data = read_inside(tree, rel)  # from the work tree, through no symlink
                    contents[rel] = None if data is None else data.decode("utf-8", "replace")
                body = contents[rel]
                name = ref.symbol.split(".")[-1]
                # a whole identifier: `export_rows` is gone when only `export_rows_legacy` is left
                if body is not None and not re.search(
                        rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", body):
                    stale.missing.append(label)
        if stale.missing:
            out.append(stale)
    if not absent:
        return out
    last_in = last_commits(tree, sorted(ref.removeprefix("./") for ref in absent),
                           {} if history is None else history)
    kept = []
    for one in out:  # a path the project never had is no reference to code that is gone
        one.missing = [ref for ref in one.missing
                       if ref not in absent or ref.removeprefix("./") in last_in]
        one.last_in = {ref: last_in[ref.removeprefix("./")] for ref in one.missing if ref in absent}
        if one.missing:
            kept.append(one)
    return kept


def read_stale(state_dir: str) -> dict[str, list[str]]:
    """path -> missing references, as the last tick found them."""
    try:
        with open(os.path.join(state_dir, STALE_FILE), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    found = data.get("stale") if isinstance(data, dict) else None
    return ({k: [str(x) for x in v] for k, v in found.items() if isinstance(v, list)}
            if isinstance(found, dict) else {})


# ---------------------------------------------------------------- the nightly tick's findings


def tick_items(conn: sqlite3.Connection, root: Path, now: dt.datetime,
               answered: dict[str, dict[str, str]], cue_id: Any, per_kind: int, notify: Any = None
               ) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Cue items of kind `stale-reference` (one per memory and missing reference) and `expired` (a
    memory outside its valid dates), none the person rejected; and every stale memory's missing
    references (for runtime/state/stale.json, which render and show read). `notify(line)` hears of
    each project not checked tonight, and why."""

    rows = []
    ids: dict[str, int] = {}
    expired: list[dict[str, Any]] = []
    for ident, path, status, until, since, project, mtime, size in conn.execute(
        "SELECT id, path, json_extract(meta, '$.status'), json_extract(meta, '$.valid_until'), "
        "json_extract(meta, '$.valid_from'), json_extract(meta, '$.project'), mtime_ns, size "
        "FROM files WHERE kind = 't2' ORDER BY path"
    ):
        if str(status or "").lower().startswith(ASIDE_STATUSES):
            continue
        why = out_of_time({"valid_until": until, "valid_from": since}, now)
        if why:
            # not yet in force (valid_from) is no question: it returns then
            if why.startswith("valid until"):
                item = {"kind": "expired", "paths": [path],
                        "detail": f"{path} was {why}: stepped aside; supersede or forget it"}
                item["id"] = cue_id("expired", [path])
                expired.append(item)
            continue
        if isinstance(project, str) and project.strip() and project.strip().lower() != "global":
            rows.append((path, project.strip(), f"{mtime}:{size}"))
            ids[path] = ident

    def text_of(path: str) -> str:
        summary = conn.execute("SELECT row_text FROM files WHERE id = ?",
                               (ids[path],)).fetchone()[0] or ""
        return f"{summary}\n{body_of(conn, ids[path])}"

    # a reference the person said is not stale is never checked again (its item's id names it)
    said_no = {ident for ident, answer in answered.items() if answer.get("decision") == "rejected"}

    class Rejected:
        def __init__(self) -> None:
            self.ids = said_no

        def __call__(self, path: str, ref: str) -> bool:
            return bool(said_no) and cue_id("stale-reference", [path, ref]) in said_no

    cache_file = Path(state_dir(root)) / CACHE_FILE
    try:
        cache = json.loads(cache_file.read_text(encoding="utf-8"))
        cache = cache if isinstance(cache, dict) else {}
    except (OSError, ValueError):
        cache = {}
    unchecked: dict[str, str] = {}
    stale = check_references(rows, worktrees(state_dir(root)), Rejected(), text_of, cache,
                             unchecked)
    _save_cache(cache_file, cache)
    for project, why in sorted(unchecked.items()):
        if notify is not None:
            notify(f"stale references of {project} not checked tonight: {why}")
    items: list[dict[str, Any]] = []
    found: dict[str, list[str]] = {}
    for one in stale:
        kept = []
        for ref in one.missing:
            ident = cue_id("stale-reference", [one.path, ref])
            if answered.get(ident, {}).get("decision") == "rejected":
                continue
            kept.append(ref)
            sha, _, day = one.last_in.get(ref, "").partition(" ")  # it was there: say until when
            once = f", which had it until commit {sha} of {day}" if day else ""
            items.append({"kind": "stale-reference", "paths": [one.path], "ref": ref, "id": ident,
                          "detail": f"{one.path} cites {ref}, no longer in {one.project}{once}"})
        if kept:
            found[one.path] = kept
    expired = [i for i in expired if answered.get(i["id"], {}).get("decision") != "rejected"]
    return items[:per_kind] + expired[:per_kind], found


def _save_cache(path: Path, cache: dict[str, Any]) -> None:

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(cache, sort_keys=True).encode("utf-8"))


def write_stale(root: Path, found: dict[str, list[str]], ran_at: str) -> None:

    folder = Path(state_dir(root))
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / STALE_FILE,
                 (json.dumps({"ran_at": ran_at, "stale": found}, indent=1, sort_keys=True)
                  + "\n").encode("utf-8"))

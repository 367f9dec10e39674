"""Each flow written once (issue 43, item 2): no import circle among memstore's modules, counting
the imports inside functions and under TYPE_CHECKING; the nightly tick walks the tree once; a
command opens the mirror once; and what the command line does, a library user does through the
Store (`review done`)."""

from __future__ import annotations

import ast
import collections
import datetime as dt
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memstore import Store
from memstore.core.errors import BadUsage, NotFound
from memstore.core.timeutil import parse_when
from tests.helpers import NOW, memory, write
from tests.wakestub import as_the_wake_wrote

PACKAGE = Path(__file__).resolve().parents[1] / "memstore"
CLOCK = parse_when(NOW)
assert CLOCK is not None


# ---------------------------------------------------------------- import circles


def import_graph(package: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere: at module level, in a function, under
    TYPE_CHECKING. `from a import b` counts a.b when b is a module, else a."""
    top = package.name
    modules: dict[str, Path] = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join([*parent, *([base] if base else [])])
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            else:
                continue
            graph[name] |= {t for t in targets
                            if t in modules and t != name and t.split(".")[0] == top}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle (a -> ... -> a) through each group of modules that import each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(start: str) -> None:  # Tarjan's strongly connected components, without recursion
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(group)

    for name in sorted(graph):
        if name not in index:
            visit(name)
    found = []
    # the shortest way back to the group's first module, to name in the failure
    for group in groups:
        first = min(group)
        paths = {first: [first]}
        queue = collections.deque([first])
        while queue:
            node = queue.popleft()
            for nxt in sorted(graph[node] & group):
                if nxt == first:
                    found.append([*paths[node], first])
                    queue.clear()
                    break
                if nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    queue.append(nxt)
    return found


def test_no_module_of_memstore_imports_itself_round_a_circle() -> None:
    """Failure caught: two modules that import each other, one of them inside a function or under
    TYPE_CHECKING, where import-linter does not look (api/store and api/teams; mirror/semantic and
    mirror/embed_background): each half then leans on the other, and neither can be read alone."""
    found = circles(import_graph(PACKAGE))
    assert not found, "import circles: " + "; ".join(" -> ".join(circle) for circle in found)


def test_the_circle_finder_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    """Failure caught: a finder that reads module-level imports alone passes any circle that closes
    inside a function or under TYPE_CHECKING, which is how both of the old ones were written."""
    package = tmp_path / "memstore"
    write(package, "__init__.py", "")
    write(package, "room/__init__.py", "")
    write(package, "room/a.py", "def f():\n    from memstore.room import b\n")
    write(package, "room/b.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                "    from . import c\n")
    write(package, "room/c.py", "import memstore.room.a\n")
    # imports into the circle, not part of it
    write(package, "room/d.py", "from memstore.room import a\n")
    assert circles(import_graph(package)) == [["memstore.room.a", "memstore.room.b",
                                               "memstore.room.c", "memstore.room.a"]]


# ---------------------------------------------------------------- one walk of the tree per tick


def busy_root(root: Path) -> None:
    """A memory with reinforcement to flush, a T1 fact past its window to roll, a lens, an
    identity."""
    write(root, "memory/feedback_testing.md", memory("feedback_testing",
                                                     "Run the e2e test before merging"))
    write(root, "memory/short-term/260701-old-fact.md", "The staging host moved to port 8443.\n")
    write(root, "lenses/careful.md", "---\ntype: lens\ntrigger: {tool_match: Bash}\n---\n"
                                     "Be careful.\n")
    write(root, "identity.md", "I am the agent.\n")
    old = (CLOCK - dt.timedelta(days=2)).timestamp()
    for path in root.rglob("*.md"):
        os.utime(path, (old, old))
    Store(root, CLOCK - dt.timedelta(days=1)).touch("memory/feedback_testing.md")


def listings(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """Every folder listed while `monkeypatch` holds (os.scandir), by path."""
    seen: collections.Counter[str] = collections.Counter()
    real = os.scandir

    def counting(path: Any = ".") -> Any:
        seen[os.path.normpath(os.fspath(path))] += 1
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


def test_the_tick_walks_the_tree_once(root: Path) -> None:
    """Failure caught: a tick that walks the whole root three or four times (the live-session check,
    the sync, the sync after flush and roll, lint), each walk a listing of every folder: on 20,000
    memories each costs as much as the sync's own reading of what changed."""
    busy_root(root)
    Store(root, CLOCK).sync(embed=False)  # the mirror exists: the walks counted are the tick's own
    with pytest.MonkeyPatch.context() as patch:
        seen = listings(patch)
        status = Store(root, CLOCK).tick()
    assert status.flush.startswith("1 file(s) updated") and status.rolled == 1  # both passes ran
    for folder in ("", "memory", "lenses"):
        assert seen[os.path.normpath(root / folder)] == 1, (folder, dict(seen))
    # the listing handed down followed flush and roll: the mirror holds the files as they are now
    with sqlite3.connect(root / "runtime" / "memstore.db") as conn:
        rows = dict(conn.execute("SELECT path, size FROM files WHERE kind != 'derived'").fetchall())
    assert "memory/short-term/archive/260701-old-fact.md" in rows
    assert "memory/short-term/260701-old-fact.md" not in rows
    flushed = root / "memory/feedback_testing.md"
    assert "access_count: 1" in flushed.read_text() and \
        rows["memory/feedback_testing.md"] == flushed.stat().st_size
    # a fresh walk finds nothing new but what render wrote after
    again = Store(root, CLOCK).sync(embed=False)
    with sqlite3.connect(root / "runtime" / "memstore.db") as conn:
        derived = conn.execute("SELECT count(*) FROM files WHERE kind = 'derived'").fetchone()[0]
    assert (again.added, again.changed, again.removed) == (derived, 0, 0), again.summary()


# ---------------------------------------------------------------- one mirror connection per command


class FakeModel:
    """A stand-in for the embedding model: words hashed into 8 numbers, so a pass is instant."""

    def _vector(self, text: str) -> list[float]:
        row = np.zeros(8, dtype=np.float32)
        for word in text.lower().split():
            row[hash(word) % 8] += 1.0
        row[0] += 0.5
        return list(row / np.linalg.norm(row))

    def passage(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def query(self, text: str) -> list[float]:
        return self._vector(text)


@pytest.fixture
def meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Semantic search on, with the stand-in model (the passes run; no model loads)."""
    from memstore.meaning import embedding

    monkeypatch.setenv("MEMSTORE_SEMANTIC", "auto")
    monkeypatch.setattr(embedding, "installed", lambda: True)
    monkeypatch.setattr(embedding, "load",
                        lambda: embedding.Embedder(FakeModel(), "fake-test-model", 8))


def connections(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The database of every sqlite3 connection opened while `monkeypatch` holds."""
    opened: list[str] = []
    real = sqlite3.connect

    def counting(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(str(database))
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", counting)
    return opened


@pytest.mark.parametrize("args", [["sync"], ["search", "staging host", "--json"], ["tick"],
                                  ["debrief"], ["flush", "--force"], ["embed"],
                                  ["new", "project", "x", "--summary", "s"],
                                  ["forget", "feedback_testing", "--why", "old"]],
                         ids=lambda a: a[0])
def test_a_command_opens_the_mirror_once(root: Path, run, meaning: None, args: list[str]) -> None:
    """Failure caught: a sync that opens the mirror for its walk and again for its embedding pass, a
    tick or debrief that opens it for each of its passes: each opening checks the schema and takes
    SQLite's locks again, and a rebuild swapped in between them splits one command over two
    mirrors."""
    busy_root(root)
    assert run(root, "sync").exit_code == 0  # the mirror exists: the count is the command's own
    with pytest.MonkeyPatch.context() as patch:
        opened = connections(patch)
        result = run(root, *args)
    assert result.exit_code == 0, result.output + result.stderr
    assert len(opened) == 1, opened


# ------------------------------------------------------- the command line's actions, in the library


@pytest.fixture
def proposed(root: Path) -> tuple[Store, str]:
    """A root whose wake proposed one change, accepted by the person; (its Store, the proposal's
    id)."""
    write(root, "memory/short-term/260730-wake-proposals.md",
          "---\ndate: 2026-07-30\nkind: wake-proposals\n---\n\n# Proposed\n\n"
          "- merge feedback_a into feedback_b\n")
    as_the_wake_wrote(root, "memory/short-term/260730-wake-proposals.md")
    store = Store(root, CLOCK)
    store.tick()
    ident = next(item.id for item in store.review() if item.kind == "proposal")
    store.review_answer(ident, accept=True)
    return store, ident


def test_a_library_user_marks_an_accepted_proposal_done(proposed: tuple[Store, str]) -> None:
    """Failure caught: `review done` written in the command line alone, so a person's own Python
    (or any front end but the CLI) could accept a proposal and never mark it done: the bundle would
    carry it as their instruction for good."""
    store, ident = proposed
    assert "merge feedback_a into feedback_b" in store.context()
    # not confirmed: nothing changes
    assert store.review_done(ident, confirm=lambda item: False) is None
    assert "merge feedback_a into feedback_b" in store.context()
    done = store.review_done(ident, via={"front": "test"}, confirm=lambda item: item.id == ident)
    assert done is not None and done.id == ident and done.kind == "proposal"
    assert "merge feedback_a into feedback_b" not in store.context()
    with pytest.raises(NotFound):
        store.review_done(ident)  # done already: no accepted proposal waits under it
    with pytest.raises(BadUsage):
        Store.check_review_id("not-an-id")
    answers = [json.loads(line) for path in (store.root / "review").glob("*.jsonl")
               for line in path.read_text().splitlines()]
    assert any(a.get("id") == ident and a.get("via", {}).get("front") == "test"
               for a in answers), answers

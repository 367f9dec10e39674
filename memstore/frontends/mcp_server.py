"""`memstore mcp`: the memory as a stdio MCP server, for any MCP client (Claude Desktop, IDEs, ...).

A front end of `Store`, like the CLI: every tool parses its arguments, calls one Store
method and returns what it gives. Tools: search, read, note, new_memory, bug_add,
bug_list, bug_close (and nothing that deletes). Resources: memstore://context (the
cold-start bundle) and memstore://index (MEMORY.md). Prompt: use-memory.

`read` is the MCP twin of a hook Read: a T2 memory read through it is reinforced by
Store.touch (tool "Read", session "mcp"), spacing gate included. It reads only files
whose real path lies in <root>/memory/ (symlinks and `..` resolved); anything else is
refused. Short-term facts, bugs and the derived files may be read, but only T2
memories are reinforced.

A MemstoreError or a bad argument becomes a tool error of one line (the error and its
hint); the server keeps serving. The protocol itself is memstore.frontends.mcp_protocol,
standard library only: no extra to install, and no SDK to load before the client's first turn.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.errors import BadUsage, MemstoreError, NotFound
from memstore.core.inert import inert_block, inert_line
from memstore.frontends.mcp_protocol import Param, Resource, Server, Tool

if TYPE_CHECKING:
    from memstore.api.store import Store

SESSION = "mcp"

USE_MEMORY = """\
You have a long-term memory, served by the memstore MCP server. Use it like this:

1. Search before assuming. Before you answer from general knowledge or guess how this
   user, project or codebase works, call `search` with a plain-English question.
2. Read what is relevant. `search` gives names and summaries; call `read` on the ones
   that bear on the task. Reading is what keeps a memory alive: memories that are read
   rise in the index, and memories never read fade into the archive. Do not read
   memories you do not need.
3. Note facts as you learn them. A decision, a preference, a fact about the
   environment: one `note` per fact, in one or two plain sentences, as soon as you learn
   it. Notes are short-term; the nightly cycle promotes what lasts. Use `new_memory`
   only for a durable topic that deserves its own file.
4. File bugs. When something is broken and you will not fix it now, `bug_add` it;
   check `bug_list` before starting work, and `bug_close` with a reason when it is fixed.

The resource memstore://context holds the cold-start bundle (who you are, what is hot);
memstore://index is the ranked index of every memory.
"""


def one_line(exc: BaseException) -> str:
    """An error and its hint as one line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    hint = getattr(exc, "hint", None)
    return f"{text} (hint: {' '.join(hint.split())})" if hint else text


def resolve(root: Path, name: str, teams: tuple[str, ...] = ()) -> Path:
    """The real path of the file `name` names, refused unless it lies in <root>/memory/ (or a joined
    team's teams/<team>/memory/).

    name: an absolute path, a root-relative path (memory/..., teams/<team>/memory/...), a path
    relative to memory/ (short-term/x.md, bugs/0001-x.md), or a memory's name (feedback_x,
    feedback_x.md): the person's own, else a joined team's, as search names it. An own copy that
    stepped aside for a team's (a memory the person shared) leads to the team's file.
    """
    if not isinstance(name, str) or not name.strip():
        raise BadUsage("no memory named",
                       hint="give a memory's name (feedback_x) or a path under memory/")
    if "\x00" in name:
        raise BadUsage("a name cannot hold a NUL byte")
    text = name.strip()
    filename = text if text.endswith(".md") else f"{text}.md"
    if os.path.isabs(text):
        candidates = [text]
    elif text.startswith(("memory/", "teams/")):
        candidates = [os.path.join(root, filename)]
    elif "/" in text:
        candidates = [os.path.join(root, "memory", filename)]
    else:  # a bare name: the person's own first, then each joined team's
        candidates = [os.path.join(root, "memory", filename),
                      *(os.path.join(root, "teams", team, "memory", filename) for team in teams)]
    folders = _folders(root, teams)
    for candidate in candidates:
        real = _inside(candidate, folders, name)
        if os.path.isfile(real):
            return _handed(root, Path(real), folders) or Path(real)
    raise NotFound(f"no such memory: {name}",
                   hint="search for it first; read takes a name or path search returned")


def _folders(root: Path, teams: tuple[str, ...]) -> list[str]:
    """memory/ and each joined team's memory/, as real paths; a team's counts only as itself (a
    repository that commits it as a link leads anywhere)."""
    real_root = os.path.realpath(root)
    folders = [os.path.realpath(root / "memory")]
    for team in teams:
        team_memory = os.path.join(real_root, "teams", team, "memory")
        if os.path.realpath(os.path.join(root, "teams", team, "memory")) == team_memory:
            folders.append(team_memory)
    return folders


def _inside(candidate: str, folders: list[str], name: str) -> str:
    try:
        real = os.path.realpath(candidate)
    except (OSError, ValueError) as exc:
        raise BadUsage(f"cannot resolve {name!r}: {exc}") from None
    if not any(real.startswith(folder + os.sep) for folder in folders):
        raise BadUsage(f"refused: {name!r} is outside memory/",
                       hint="read only memories: a name, or a path under memory/ "
                            "(symlinks out are refused)")
    if not real.endswith(".md"):
        raise BadUsage(f"refused: {name!r} is not a markdown file",
                       hint="memories are memory/**/*.md")
    return real


def _handed(root: Path, own: Path, folders: list[str]) -> Path | None:
    """The team's file an own memory stepped aside for (superseded_by: teams/...), if there."""
    from memstore.core.frontreader import front_values, split_front, unquote

    try:
        head = split_front(own.read_text(encoding="utf-8", errors="replace")[:65536])[0]
    except OSError:
        return None
    by = unquote(front_values(head).get("superseded_by", "")).strip()
    if not by.startswith("teams/") or ".." in by.split("/"):
        return None
    try:
        real = _inside(os.path.join(root, by), folders, by)
    except BadUsage:
        return None
    return Path(real) if os.path.isfile(real) else None


def inert_record(record: dict[str, Any]) -> dict[str, Any]:
    """A result's text fields as data: memory text reaches the model through MCP as inert as in
    the bundle."""
    return {key: inert_block(value, markdown=False) if isinstance(value, str) else value
            for key, value in record.items()}


def build(store: Store) -> Server:
    """The server, with every tool, resource and prompt registered on it."""
    from memstore import __version__
    from memstore.core import toolpath
    from memstore.core.loaded import guard

    def search(query: str, limit: int = 10) -> list[dict[str, Any]]:
        if not 1 <= limit <= 100:
            raise BadUsage(f"limit must be an integer from 1 to 100, not {limit!r}")
        hits = store.search(query, limit=limit)
        # every text field as data: a name, a type and a file name come from files anyone may write
        return [{"name": _inert(h.name), "path": _inert(h.path), "type": _inert(h.type),
                 "summary": _inert(h.summary), "snippet": _inert(h.snippet),
                 "score": h.score, "team": h.team} for h in hits]

    def read(name: str) -> str:
        teams = tuple(team.name for team in store.config.teams)
        target = resolve(store.root, name, teams)
        text = target.read_text(encoding="utf-8", errors="replace")
        found = toolpath.resolve(store.root, str(target), None)
        if toolpath.reinforces(found, teams):  # only topic memories are reinforced
            store.touch(str(target), "Read", session=SESSION)
        return inert_block(text, markdown=False)  # the text as data: no tag, no control character

    def new_memory(type: str, topic: str, summary: str, body: str | None = None,
                   importance: float | None = None) -> dict[str, Any]:
        made = store.new(type, topic, summary=summary, body=body, importance=importance)
        return inert_record(made.to_json())

    def index() -> str:
        if not (Path(store.paths.memory) / "MEMORY.md").is_file():
            store.render()
        target = resolve(store.root, "memory/MEMORY.md")  # a link out of memory/ is refused
        return inert_block(target.read_text(encoding="utf-8", errors="replace"), markdown=False)

    tools = [
        Tool("search", "Search the memory with a plain-English question (FTS5 syntax works too). "
             "Returns ranked hits: name, path, type, summary, snippet, score.",
             (Param("query", "string"), Param("limit", "integer", False)), search),
        Tool("read", "Read one memory's text, by the name or path search gave "
             "(feedback_x, memory/..., teams/...). "
             "Reading a topic memory reinforces it, as a Read in Claude Code does.",
             (Param("name", "string"),), read),
        Tool("note", "Note one fact, decision or preference as soon as it is learned "
             "(a short-term memory; the same fact twice a day is written once).",
             (Param("text", "string"),), lambda text: store.note(text).to_json()),
        Tool("new_memory", "Write a new topic memory memory/<type>_<topic>.md. type: one of the "
             "memory types (user, feedback, project, reference, ...); importance 0-10.",
             (Param("type", "string"), Param("topic", "string"),
              Param("summary", "string"),
              Param("body", "string", False),
              Param("importance", "number", False)), new_memory),
        Tool("bug_add", "File a bug in the open-bug ledger (memory/bugs/).",
             (Param("title", "string"), Param("body", "string", False)),
             lambda title, body=None: inert_record(
                 store.bug_add(title, body=body, by="mcp").to_json())),
        Tool("bug_list", "The open bugs (every bug with all=true), by id.",
             (Param("all", "boolean", False),),
             lambda all=False: [inert_record(bug.to_json()) for bug in store.bug_list(all=all)]),
        Tool("bug_close", "Close a bug named by its id (1, 0001) or file name, saying why.",
             (Param("id", "string"), Param("why", "string", False)),
             lambda id, why=None: inert_record(store.bug_close(str(id), why).to_json())),
    ]
    resources = [
        # the bundle, through the writer's last pass as the hook's is
        Resource("memstore://context", "context", "The cold-start bundle: identity, the index and "
                 "what is hot.", "text/markdown", lambda: guard(store.context(), imports=False)),
        Resource("memstore://index", "index", "MEMORY.md: the ranked index of the memories (Hot, "
                 "New, Cold).", "text/markdown", index),
    ]
    prompts = {"use-memory": ("How to use this memory: search, read, note, file bugs.",
                              lambda: USE_MEMORY)}
    return Server("memstore", __version__, USE_MEMORY, tools, resources, prompts, failure=_failure)


def _inert(value: object) -> object:
    return inert_line(value) if isinstance(value, str) else value


def _failure(exc: BaseException) -> str:
    """A tool's exception as the one line the model reads: memstore's own with its hint."""
    if isinstance(exc, MemstoreError | ValueError | TypeError):
        return one_line(exc)
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}{f' {exc.filename}' if exc.filename else ''}"
    return f"internal error: {type(exc).__name__}: {one_line(exc)}"


def serve(store: Store) -> None:
    """Serve over stdio until the client closes stdin."""
    build(store).serve()

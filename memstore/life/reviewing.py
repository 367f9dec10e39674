"""Answering review items (`memstore review accept|reject`): record it, archive a rejected lesson.

Kept apart from review.py, which the hook's SessionStart path imports: this one moves files
through the nightly cycle's helpers, which the hook must never load.
"""

from __future__ import annotations

import json
import os

from memstore.core.agent_root import RootPaths
from memstore.core.errors import BadUsage, NotFound
from memstore.core.journal import identity
from memstore.hook.review import (
    ACCEPTED,
    DONE,
    REJECTED,
    Item,
    _t1,
    _value,
    answers,
    lesson_id,
    looks_like_id,
    pending,
    record,
)
from memstore.life.provenance import provenance
from memstore.life.rolling import Rolled, move_to_archive

# Variables the coding agents set in the shell they give the model: a review answer given there is
# the agent's, not the person's (Claude Code, Codex, Gemini CLI, and the generic marker).
AGENT_MARKS = ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_SANDBOX", "CODEX_THREAD_ID",
               "GEMINI_CLI", "AI_AGENT")


def read_cue(root: str | os.PathLike[str]) -> dict[str, object] | None:
    try:
        with open(RootPaths(root).cue, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check_id(ident: str) -> None:
    if not looks_like_id(ident):
        raise BadUsage(f"{ident!r} is not a review id (a letter and 7 hex digits, e.g. l3f9a0c1)",
                       hint="memstore review lists them")


def find(root: str | os.PathLike[str], ident: str, accept: bool) -> Item:
    """The item an answer to `ident` settles: a pending one, or one answered the other way before.

    Raises BadUsage for a malformed id, NotFound when nothing waits under it or it is so answered.
    """
    check_id(ident)
    items = {item.id: item for item in pending(root, read_cue(root))}
    item = items.get(ident)
    if item is None:
        earlier = answers(root).get(ident)
        if earlier is None:
            raise NotFound(f"nothing waits for review under {ident}",
                           hint="memstore review lists what waits")
        if earlier["decision"] == (ACCEPTED if accept else REJECTED):
            raise NotFound(f"{ident} is already {earlier['decision']}",
                           hint="memstore review lists what waits")
        # the person changes an earlier answer: the newest answer wins
        item = Item(ident, earlier.get("kind", "lesson"), earlier.get("text", ""),
                    earlier.get("source", ""), earlier.get("at"), project=earlier.get("project"))
    return item


def answer(root: str | os.PathLike[str], ident: str, accept: bool, when: str,
           via: dict[str, object] | None = None) -> tuple[Item, list[str]]:
    """Record the person's answer to one pending item; (the item, files moved to the archive).

    A rejected lesson's files leave short-term/ for its archive/, so it never reaches the
    agent again (nothing is deleted). Raises NotFound when no pending item has that id.
    `via`: where the answer came from (memstore.frontends.terminal.person_at_terminal gives it for
    the command line, which alone asks the person at their terminal); a library caller without
    one is recorded as such, with its terminal, user and parent processes.
    """
    from pathlib import Path

    agent = next((name for name in AGENT_MARKS if os.environ.get(name)), None)
    if agent is not None:
        raise BadUsage(f"review answers are the person's, and this runs inside an agent's session "
                       f"(${agent} is set)",
                       hint="run memstore review accept|reject in your own terminal")
    item = find(root, ident, accept)
    if via is None:
        via = {"front": "library", **provenance()}
    answer_line: dict[str, object] = {
        "id": ident, "kind": item.kind, "decision": ACCEPTED if accept else REJECTED,
        "text": item.text, "source": item.source, "at": when, "via": via}
    if item.project:
        answer_line["project"] = item.project  # an accepted lesson or proposal: its project only
    if item.kind == "cue" and item.paths:
        answer_line["paths"] = item.paths  # an answered cluster stays so, and its parts
    record(root, identity(root), answer_line)
    moved: list[str] = []
    if item.kind == "lesson" and not accept:
        rolled = Rolled()
        base = Path(root)
        for rel, _name, values, body in _t1(os.fspath(root)):
            if (_value(values, "kind").lower() == "lesson"
                    and lesson_id(" ".join(body.split())) == ident):
                move_to_archive(base, base / rel, rolled)
        moved = rolled.paths
    return item, moved


def accepted_item(root: str | os.PathLike[str], ident: str) -> Item:
    """The proposal `ident`, accepted and not yet marked done by the person; else NotFound."""
    check_id(ident)
    earlier = answers(root).get(ident)
    if earlier is None or earlier.get("kind") != "proposal" or earlier["decision"] != ACCEPTED:
        said = "nothing was accepted" if earlier is None else f"it is {earlier['decision']}"
        raise NotFound(f"{ident} is no accepted proposal waiting to be done ({said})",
                       hint="memstore review lists what waits; "
                            "the bundle lists accepted proposals with their ids")
    return Item(ident, "proposal", earlier.get("text", ""), earlier.get("source", ""),
                earlier.get("at"), project=earlier.get("project"))


def mark_done(root: str | os.PathLike[str], ident: str, when: str,
              via: dict[str, object] | None = None) -> Item:
    """Record that the person's accepted proposal `ident` was carried out: bundles stop carrying it.

    The person's, like accept and reject: marking done takes an instruction out of every later
    session, so an agent (or text it was shown) could otherwise silence the person by it.
    """
    agent = next((name for name in AGENT_MARKS if os.environ.get(name)), None)
    if agent is not None:
        raise BadUsage(f"marking an accepted proposal done is the person's, "
                       f"and this runs inside an agent's session (${agent} is set)",
                       hint="run memstore review done ID in your own terminal")
    item = accepted_item(root, ident)
    if via is None:
        via = {"front": "library", **provenance()}
    line: dict[str, object] = {"id": ident, "kind": "proposal", "decision": DONE, "text": item.text,
                               "source": item.source, "at": when, "via": via}
    if item.project:
        line["project"] = item.project
    record(root, identity(root), line)
    return item

"""The Store's writes that need no flow: a memory written or made person-wide, a bug filed or
closed, a touch, a review answered or marked done. Each is written by its layer, and a file it
writes is taken into the mirror at once (memstore.api.mirroring.Mirror.take_in). Light to import,
like the Store: a layer loads when its write is asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from memstore.api import naming
from memstore.core.errors import BadUsage, NotFound
from memstore.core.kinds import REINFORCING_TOOLS
from memstore.core.policy import record_touch
from memstore.core.results import NewMemory, NoteResult, Touch
from memstore.core.timeutil import fmt

if TYPE_CHECKING:
    from memstore.api.state import RootState
    from memstore.core.results import Bug
    from memstore.hook.review import Item as ReviewItem


def touch(state: RootState, memory: str | os.PathLike[str], tool: str, session: str | None
          ) -> Touch:
    """Store.touch: one access recorded exactly as the hook records it."""
    if tool not in REINFORCING_TOOLS:
        raise BadUsage(f"{tool} does not reinforce",
                       hint=f"use one of: {', '.join(REINFORCING_TOOLS)}")
    result = record_touch(state.root, str(naming.memory_file(state.root, memory)), tool, state.now,
                          state.config, session=session)
    if not result.recorded:
        raise NotFound(result.message,
                       hint="only T2 memories (memory/<type>_<topic>.md) are reinforced")
    return Touch(result.rel or "", tool, result.applied, result.message)


def note(state: RootState, text: str, kind: str | None, project: str | None) -> NoteResult:
    """Store.note: the fact written, then taken in; if the mirror cannot take it, that is said
    and the note stands."""
    from memstore.life.noting import note as write_note

    done = write_note(state.root, state.config, state.now, text, kind=kind, project=project)
    if done.written:
        state.mirror().take_in(done.path)
    return done


def promote(state: RootState, memory: str | os.PathLike[str]) -> str:
    """Store.promote: the file made person-wide in place, then taken in; its path."""
    from memstore.life.promotion import promote as promote_file

    rel, written = promote_file(state.root, naming.note_file(state.root, memory))
    if written:
        state.mirror().take_in(rel)
    return rel


def new_memory(state: RootState, type: str, topic: str, summary: str, importance: float | None,
               pin: bool, body: str | None, cwd: str | os.PathLike[str] | None,
               everywhere: bool) -> NewMemory:
    """Store.new: the memory written, then taken in with MEMORY.md rendered at once."""
    from memstore.life import ledgers

    target, name, line = ledgers.write_new(state.paths, state.now, state.config, type, topic,
                                           summary, importance, pin, body,
                                           naming.project(state.root, cwd, everywhere))
    rel = target.relative_to(state.root).as_posix()
    state.mirror().take_in(rel, render_index=True)
    return NewMemory(path=rel, name=name, type=type, summary=line)


def review_answer(state: RootState, ident: str, accept: bool, via: dict[str, object] | None,
                  confirm: Callable[[ReviewItem], bool] | None) -> ReviewItem | None:
    """Store.review_answer: the answer recorded; a lesson it moved is synced in."""
    from memstore.life.reviewing import answer, find

    if confirm is not None and not confirm(find(state.root, ident, accept)):
        return None
    item, moved = answer(state.root, ident, accept, fmt(state.now), via)
    if moved:
        from memstore.api import flows

        flows.sync(state.mirror())
    return item


def review_done(state: RootState, ident: str, via: dict[str, object] | None,
                confirm: Callable[[ReviewItem], bool] | None) -> ReviewItem | None:
    """Store.review_done: an accepted proposal marked done, once `confirm` (if any) agrees."""
    from memstore.life.reviewing import accepted_item, mark_done

    item = accepted_item(state.root, ident)
    if confirm is not None and not confirm(item):
        return None
    mark_done(state.root, ident, fmt(state.now), via)
    return item


def file_bug(state: RootState, title: str, body: str | None, by: str | None) -> Bug:
    """Store.bug_add: the bug written under the ledger's lock, then taken in."""
    from memstore.life import ledgers

    target = ledgers.file_bug(state.paths, state.now, state.config, title, body, by)
    state.mirror().take_in(target.relative_to(state.root).as_posix())
    return ledgers.read_bug(target, state.root, state.config)


def close_bug(state: RootState, bug: str, why: str | None) -> Bug:
    """Store.bug_close: the bug's status, closed_at and why changed, then taken in."""
    from memstore.life import ledgers
    from memstore.life.ledger_reads import list_bugs

    found, target = ledgers.close_bug(state.paths, state.now, state.config,
                                      lambda: list_bugs(state.paths, state.config, True), bug, why)
    state.mirror().take_in(found.path)
    return ledgers.read_bug(target, state.root, state.config)

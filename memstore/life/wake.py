"""`memstore wake`: the nightly dream and meditation sit, run by a model command.

The nightly tick leaves a cue (`runtime/state/cue.json`) saying whether there is
anything to dream about. Wake reads it; without a cue, or with `anything: false`, it
does nothing and calls no model. Otherwise it makes two model calls:

- the dream: the cue's items, the text of the files they name and the recent short-term
  facts, with the question of what to consolidate (durable patterns, near-duplicates to
  merge, what is wrong or merely old);
- the sit: one meditation object, the one the rotation (memstore.life.meditation) picks, held
  in the first person: what shifted, what stayed open, what the next session carries.

Each output becomes a dream-journal entry. The dream's proposed memory changes (the part
under its "## Proposals" heading) are also copied into a short-term note, which the next
session sees in its cold-start bundle. Nothing is applied: wake never edits a topic
memory, a lens, a meditation object or identity.md.

All or nothing. Both calls run before anything is written. If either fails (a non-zero
exit, empty output, a timeout, a missing binary), no entry is written, the cue is kept,
and the error names the call; the next wake (or a retry) starts over from the same cue.
A dream kept without its sit would be dreamt again on the retry, because the cue is the
one record of what is left to do, and the journal would hold the same dream twice. The
price is the cost of one model call on a failure night. On success the entries, the
proposals note and `runtime/state/wake-status.json` are written, the cue is marked
consumed (rewritten with `anything: false` and `consumed_at`, unless a newer tick
replaced it meanwhile; tick writes a fresh one each night), and the mirror is synced.

The model command is split like a shell would (shlex), run without a shell, given the
prompt on stdin, and its stdout is the answer. Only the standard library is imported
here at module level.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import signal
from dataclasses import dataclass
from pathlib import Path

from memstore.core import processes
from memstore.core.agent_root import RootPaths
from memstore.core.config import Config
from memstore.core.errors import BadUsage, MemstoreError
from memstore.core.locks import LockTimeout, atomic_write, file_lock
from memstore.core.model_command import DEFAULT_MODEL_CMD, model_argv
from memstore.core.results import WakeResult
from memstore.core.timeutil import fmt
from memstore.hook import review
from memstore.hook.bundle import split_proposals
from memstore.hook.proposal_notes import remember
from memstore.life.commits import commit_paths
from memstore.life.cue import DREAMT_KEEP, dreamt_ids
from memstore.life.dreaming import (  # re-exported: callers know wake.recent_facts and friends
    Mixed,
    cue_items,
    dream_prompt,
    item_scope,
    named_files,
    recent_facts,
    scope_slug,
    sit_prompt,
)
from memstore.life.meditation import next_choice

DEFAULT_TIMEOUT_S = 600.0
HOOKS_OFF = "MEMSTORE_HOOKS"  # set to "off" for the model calls: memstore's hooks then do nothing

_NOTHING = {"none", "none.", "(none)", "- none", "- none.", "nothing", "n/a", "-"}


class WakeFailed(MemstoreError):
    """A model call failed (exit code, timeout, empty output); nothing was written."""


class ModelMissing(WakeFailed):
    """The model command's program is not installed."""


# ---------------------------------------------------------------- the cue


def read_cue(path: Path) -> tuple[dict[str, object] | None, bytes]:
    """(the cue, its bytes); (None, b"") when there is none."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, b""
    try:
        cue = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WakeFailed(f"{path} is not valid JSON ({exc})",
                         hint="the nightly tick writes a fresh cue; or delete the file") from None
    if not isinstance(cue, dict):
        raise WakeFailed(f"{path} holds a {type(cue).__name__}, not a JSON object",
                         hint="the nightly tick writes a fresh cue; or delete the file")
    return cue, raw


def idle_reason(cue: dict[str, object]) -> str:
    """Why a cue with `anything: false` calls no model, in words that match what its tick said."""
    count = len(cue_items(cue))
    when = cue.get("ran_at", "an unknown time")
    if cue.get("consumed_at"):
        return (f"nothing to wake for: the cue of the tick at {when} was dreamt on by the wake at "
                f"{cue['consumed_at']}; the next tick writes a new one")
    if count:
        return (f"nothing to wake for: the tick at {when} listed {count} cue item(s), "
                "all dreamt on by earlier wakes; the person answers them with memstore review")
    return f"nothing to wake for: the tick at {when} found nothing to dream about"


# ---------------------------------------------------------------- calling the model


def _first_line(data: bytes) -> str:
    for line in data.decode("utf-8", errors="replace").splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


RETRY = ("nothing was written and the cue is kept: run the model command by hand with a short "
         "prompt on stdin to see why (a login, a quota), then run memstore wake again")


def call_model(argv: list[str], prompt: str, timeout: float, label: str) -> str:
    """The model's stdout for `prompt` on stdin; WakeFailed naming `label` on any failure."""
    try:
        # MEMSTORE_HOOKS=off: the model command may be Claude Code with memstore's hooks installed;
        # the dream must get no bundle, nor be debriefed into lessons (it would wake itself).
        proc = processes.spawn(argv, stdin=processes.PIPE, stdout=processes.PIPE,
                               stderr=processes.PIPE, env={HOOKS_OFF: "off"},
                               own_session=True)  # its own process group: a timeout ends all of it
    except FileNotFoundError:
        raise ModelMissing(
            f"{label} call: model command not found: {argv[0]}",
            hint="install Claude Code and put `claude` on PATH, "
                 "or pass --model-cmd with an absolute path",
        ) from None
    except OSError as exc:
        raise WakeFailed(f"{label} call: cannot run {argv[0]}: {exc.strerror or exc}",
                         hint="nothing was written and the cue is kept: "
                              f"make {argv[0]} executable, or pass --model-cmd naming one that is, "
                              "then run memstore wake again") from None
    try:
        out, err = proc.communicate(prompt.encode("utf-8"), timeout=timeout)
    except processes.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(processes.TimeoutExpired):
            proc.communicate(timeout=5)
        raise WakeFailed(f"{label} call timed out after {timeout:g} s ({argv[0]})",
                         hint="nothing was written and the cue is kept: run memstore wake again, "
                              f"with a --timeout above {timeout:g} if the model is slow") from None
    if proc.returncode != 0:
        why = _first_line(err)
        raise WakeFailed(f"{label} call failed: {argv[0]} exited {proc.returncode}"
                         + (f": {why}" if why else ""), hint=RETRY)
    text = out.decode("utf-8", errors="replace").replace("\x00", "").replace("\r\n", "\n").strip()
    if not text:
        why = _first_line(err)
        raise WakeFailed(f"{label} call returned no output ({argv[0]})"
                         + (f": {why}" if why else ""), hint=RETRY)
    return text


# ---------------------------------------------------------------- writing the entries


def proposals(dream: str) -> str | None:
    """The body under the dream's Proposals heading (to the next heading of its level), or None."""
    text = split_proposals(dream)[1]
    return None if not text or text.lower() in _NOTHING else text


def new_proposals(root: Path, text: str | None, written: set[str] | None = None) -> str | None:
    """The dream's proposals less those open or answered already: an identical one is written once.

    Each list item is one proposal (a text with no list is one proposal); None when none is new.
    `written`: the ids this wake's other dreams already proposed (added to as it goes).
    """
    if not text:
        return None
    lines = review.proposal_lines(text) or [" ".join(text.split())]
    written = set() if written is None else written
    known = {item.id for item in review.open_proposals(root)} | set(review.answers(root))
    fresh: list[str] = []
    for line in lines:
        ident = review.proposal_id(line)
        if ident not in known and ident not in written:
            written.add(ident)
            fresh.append(f"- {line}")
    return "\n".join(fresh) if fresh else None


def _yaml_value(value: str) -> str:
    return value if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", value) else json.dumps(value)


def entry_bytes(front: dict[str, str], body: str) -> bytes:
    head = "".join(f"{key}: {_yaml_value(value)}\n" for key, value in front.items())
    return f"---\n{head}---\n\n{body.strip()}\n".encode()


def unique_path(folder: Path, stem: str, taken: set[Path]) -> Path:
    """folder/stem.md, else stem-2.md, stem-3.md, ...: never an existing one (archive/ included)."""
    n = 1
    while True:
        name = f"{stem}.md" if n == 1 else f"{stem}-{n}.md"
        path = folder / name
        if path not in taken and not path.exists() and not (folder / "archive" / name).exists():
            return path
        n += 1


@dataclass
class Planned:
    path: Path
    data: bytes


def _write_all(planned: list[Planned]) -> None:
    """Write every file or none: on an error, the files already written are removed again."""
    done: list[Path] = []
    try:
        for item in planned:
            item.path.parent.mkdir(parents=True, exist_ok=True)
            if item.path.exists():  # appeared since we picked the name: never overwrite an entry
                raise FileExistsError(17, "appeared while wake was writing", str(item.path))
            atomic_write(item.path, item.data)
            done.append(item.path)
    except BaseException:
        for path in done:
            with contextlib.suppress(OSError):
                path.unlink()
        raise


# ---------------------------------------------------------------- git


def _git(root: Path, *args: str) -> processes.CompletedProcess[str]:
    try:  # run_git: nothing the repository's config names runs (hooks, filters, ...)
        return processes.run_git(root, *args, timeout=60, identity=args[:1] == ("commit",))
    except FileNotFoundError:
        raise WakeFailed("--commit: git is not installed",
                         hint="install git, or run memstore wake without --commit") from None


def check_git(root: Path) -> None:
    proc = _git(root, "rev-parse", "--is-inside-work-tree")
    if proc.returncode != 0 or proc.stdout.strip() != "true":
        raise BadUsage(f"--commit: {root} is not inside a git work tree",
                       hint="run git init there, or drop --commit")


# ---------------------------------------------------------------- the whole wake


def scoped(root: Path, items: list[dict[str, object]]
           ) -> tuple[dict[str | None, list[dict[str, object]]], list[str]]:
    """The cue's items by scope (person-wide, then projects by name), and a note per item left out.

    An item naming files of two projects is dreamt by neither (no one dream may read both); with
    nothing at all to split, one person-wide dream over the person-wide facts, as before.
    """
    groups: dict[str | None, list[dict[str, object]]] = {}
    notes: list[str] = []
    for item in items:
        try:
            groups.setdefault(item_scope(root, item), []).append(item)
        except Mixed as exc:
            notes.append(f"left out of the dreams: a {item.get('kind', 'cue')} item names files of "
                         f"two projects ({exc}); answer it with memstore review")
    if not groups:
        groups[None] = []
    ordered = sorted(groups, key=lambda scope: (scope is not None, scope or ""))
    return {scope: groups[scope] for scope in ordered}, notes




def run(root: Path, now: dt.datetime, config: Config, *, model_cmd: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S, commit: bool = False) -> WakeResult:
    """One wake at `now`: read the cue, dream, sit, write, consume the cue. `commit`: the entries
    will be committed (commit_entries), so the root must be in a git work tree before any model
    call.
    The mirror's sync and the commit that follow are memstore.api.flows.wake's."""
    paths = RootPaths(root)
    ran_at = fmt(now)
    argv = model_argv(DEFAULT_MODEL_CMD if model_cmd is None else model_cmd)
    if timeout <= 0:
        raise BadUsage(f"--timeout must be above 0, not {timeout:g}")
    cue_path = Path(paths.cue)

    def nothing(cue: dict[str, object] | None) -> WakeResult | None:
        if cue is None:
            return WakeResult(
                False, f"nothing to wake for: no cue at {os.path.relpath(cue_path, root)}", ran_at)
        if cue.get("anything") is not True:
            return WakeResult(False, idle_reason(cue), ran_at)
        return None

    idle = nothing(read_cue(cue_path)[0])  # the usual night: nothing to do, and nothing written
    if idle is not None:
        return idle
    try:
        with file_lock(Path(paths.state) / "wake.lock", timeout=0):
            cue, cue_raw = read_cue(cue_path)  # again, under the lock: another wake may take it
            idle = nothing(cue)
            if idle is not None:
                return idle
            assert cue is not None
            if commit:
                check_git(root)  # before paying for two model calls

            today = now.date()
            dreamt = dreamt_ids(root)
            # Only what no wake dreamt about yet: an item dreamt on stays answered by that dream.
            items = [item for item in cue_items(cue) if item.get("id") not in dreamt]
            groups, notes = scoped(root, items)
            choice, objects = next_choice(root, now)
            notes += ([f"skipped {s['path']}: {s['reason']}" for s in choice.skipped]
                      + list(choice.notes))

            # One dream per scope: a project's facts and items, or the person-wide ones, unmixed.
            dreams: list[tuple[str | None, str]] = []
            for scope, group in groups.items():
                prompt = dream_prompt(root, {**cue, "items": group},
                                      recent_facts(root, today, config.short_term_days, scope),
                                      named_files(root, group), config.short_term_days, scope)
                dreams.append((scope, call_model(argv, prompt, timeout,
                                                 "dream" if scope is None else f"dream ({scope})")))
            sit = None
            chosen = next((o for o in objects if o.stem == choice.object), None)
            if chosen is not None:
                sit = call_model(argv,
                                 sit_prompt(chosen.stem, chosen.shelf, chosen.path, chosen.text),
                                 timeout, f"meditation ({chosen.stem})")
            else:
                notes.append("no meditation object in meditations/ (memstore init lays out four): "
                             "the sit was skipped")

            # Every answer is in: now write, all or nothing.
            day = f"{today:%y%m%d}"
            journal = Path(paths.dream_journal)
            taken: set[Path] = set()
            planned: list[Planned] = []
            dream_paths: list[Path] = []
            note_paths: list[Path] = []
            known: set[str] = set()
            for scope, dream in dreams:
                tail = f"-{scope_slug(scope)}" if scope is not None else ""
                where = {"project": scope} if scope is not None else {}
                dream_path = unique_path(journal, f"{day}-dream{tail}", taken)
                taken.add(dream_path)
                dream_paths.append(dream_path)
                planned.append(Planned(dream_path, entry_bytes(
                    {"date": today.isoformat(), "kind": "dream", **where}, dream)))
                proposed = new_proposals(root, proposals(dream), known)
                if proposed:
                    note_path = unique_path(Path(paths.short_term), f"{day}-wake-proposals{tail}",
                                            taken)
                    taken.add(note_path)
                    note_paths.append(note_path)
                    source = dream_path.relative_to(root).as_posix()
                    body = (f"# Proposed memory changes (the dream of {today.isoformat()})\n\n"
                            f"Not applied. The nightly dream ({source}) proposed these; "
                            f"apply, adapt or drop them in a session.\n\n{proposed}")
                    planned.append(Planned(note_path, entry_bytes(
                        {"date": today.isoformat(), "kind": "wake-proposals", "source": source,
                         **where}, body)))
            sit_path = None
            if chosen is not None and sit is not None:
                sit_path = unique_path(journal, f"{day}-meditation-{chosen.stem}", taken)
                front = {"date": today.isoformat(), "kind": "meditation", "object": chosen.stem,
                         "shelf": chosen.shelf}
                planned.append(Planned(sit_path, entry_bytes(front, sit)))
            # The record first: only notes whose bytes it holds count as proposals
            # (hook.proposal_notes), and a digest of a note then unwritten proves nothing of a file.
            remember(root, [(item.path.name, item.data) for item in planned
                            if item.path in note_paths])
            _write_all(planned)

            def rel(path: Path | None) -> str | None:
                return path.relative_to(root).as_posix() if path is not None else None

            result = WakeResult(
                True, "woke", ran_at, dream=rel(dream_paths[0]) if dream_paths else None,
                meditation=rel(sit_path),
                object=chosen.stem if chosen else None, shelf=chosen.shelf if chosen else None,
                proposals=rel(note_paths[0]) if note_paths else None, notes=notes,
                dreams=[p.relative_to(root).as_posix() for p in dream_paths],
                proposal_notes=[p.relative_to(root).as_posix() for p in note_paths],
            )
            seen = [*sorted(dreamt), *(str(i["id"]) for i in items if i.get("id"))][-DREAMT_KEEP:]
            status = {"ran_at": ran_at, "dream": result.dream, "dreams": result.dreams,
                      "meditation": result.meditation, "object": result.object,
                      "shelf": result.shelf,
                      "proposals": result.proposals, "proposal_notes": result.proposal_notes,
                      "dreamt": list(dict.fromkeys(seen))}
            state = Path(paths.wake_status)
            state.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(state, (json.dumps(status, indent=2) + "\n").encode())
            consumed = {**cue, "anything": False, "consumed_at": ran_at,
                        "consumed_by": "memstore wake"}
            # expect=: a tick that wrote a fresh cue meanwhile wins; that cue is for the next wake.
            atomic_write(cue_path, (json.dumps(consumed, indent=2) + "\n").encode(), expect=cue_raw)
    except LockTimeout:
        raise WakeFailed("another memstore wake is running on this root",
                         hint="let it finish") from None

    return result


def commit_entries(root: Path, now: dt.datetime, result: WakeResult) -> WakeResult:
    """Commit exactly the entries and notes a wake wrote; the result with what git said."""
    from dataclasses import replace

    written = [*result.dreams, *result.proposal_notes, *filter(None, [result.meditation])]
    sit = f", sit on {result.object}" if result.object else ""
    message = f"memstore wake {now.date().isoformat()}: dream{sit}"
    return replace(result, commit=commit_paths(root, written, message))  # pathspec-limited

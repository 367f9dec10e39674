"""What the agent wrote that may hold a relative date, kept for the nightly tick to date.

The hook sees the text of each Write/Edit of a memory, but reading dates takes dateparser, which
the hook's path cannot import (standard library only). So the hook keeps the written text, with the
instant of writing, in runtime/state/dates-pending.jsonl when it holds a word that can begin a
relative date (CUE); the tick (memstore.life.date_stamping.date_written) adds the absolute dates
it meant, from that instant, to the lines of the memory that still hold that text. Standard
library only.

The file is taken by renaming it (TAKING), so a hook appending meanwhile starts a new one; a take
that died leaves TAKING behind, and the next take reads it first.
"""

from __future__ import annotations

import json
import os
import re

from memstore.core.agent_root import state_dir

PENDING = "dates-pending.jsonl"
TAKING = "dates-pending.taking.jsonl"
MAX_TEXT = 64 * 1024  # a memory longer than this is not the agent's note of the day: left to lint
# between two ticks; past it, writes go undated (lint names them) rather than let a loop of writes
# fill the disk
MAX_PENDING = 8 * 1024 * 1024

# A word that begins a relative date in dateparser's English data: a cost gate only (the parsing,
# and what counts, is memstore.mirror.date_phrases's). Lint uses it too.
CUE = re.compile(r"\b(?:ago|yesterday|tomorrow|today|tonight|last|next|coming|past|previous|"
                 r"this\s+\w+|the\s+\d{1,2}(?:st|nd|rd|th)\b|"
                 r"in\s+(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few)\s)",
                 re.I)


def written_text(tool_input: object, tool_response: object = None) -> str:
    """The lines a Write/Edit/MultiEdit added to the file, one per line: only those, so that a line
    it carried along unchanged (an Edit's context, the rest of a rewritten file) keeps the day it
    was really written on. Claude Code's answer holds the diff (structuredPatch: its "+" lines);
    without one, the lines of each new_string that its old_string did not have, or of Write's
    content that the original file did not have; a Write with neither (a new file; Gemini's
    write_file): all of it."""
    if not isinstance(tool_input, dict):
        return ""
    response = tool_response if isinstance(tool_response, dict) else {}
    patch = response.get("structuredPatch")
    if isinstance(patch, list) and patch:
        added = [line[1:] for hunk in patch
                 if isinstance(hunk, dict) and isinstance(hunk.get("lines"), list)
                 for line in hunk["lines"] if isinstance(line, str) and line.startswith("+")]
        return "\n".join(added)
    pairs: list[tuple[object, object]] = [(tool_input.get("old_string"),
                                           tool_input.get("new_string"))]
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        pairs += [(edit.get("old_string"), edit.get("new_string")) for edit in edits
                  if isinstance(edit, dict)]
    original = response.get("originalFile")
    pairs.append((original if response.get("type") == "update" else None,
                  tool_input.get("content")))
    out: list[str] = []
    for old, new in pairs:
        if isinstance(new, str) and new:
            had = set(old.splitlines()) if isinstance(old, str) else set()
            out += [line for line in new.splitlines() if line not in had]
    return "\n".join(out)


def remember(root: str, rel: str, text: str, at: str) -> bool:
    """Keep (rel, at, text) for the tick when `text` may hold a relative date. `at`: the instant of
    writing, ISO. Returns whether it was kept. An OSError is the caller's (the hook logs it)."""
    if not text or len(text) > MAX_TEXT or not CUE.search(text):
        return False
    from memstore.core.journal import append_line

    target = os.path.join(state_dir(root), PENDING)
    try:
        if os.path.getsize(target) > MAX_PENDING:
            return False
    except OSError:
        pass  # none yet
    # ASCII: a lone surrogate stays JSON
    line = json.dumps({"path": rel, "at": at, "text": text}) + "\n"
    append_line(target, line.encode("utf-8"))
    return True


def _records(path: str) -> list[dict[str, str]]:
    """The well-formed records of one kept file, in order (a line that is not one is skipped).
    Raises OSError when it cannot be read."""
    records = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and all(isinstance(record.get(k), str)
                                                for k in ("path", "at", "text")):
                records.append({k: record[k] for k in ("path", "at", "text")})
    return records


def pending_lines(root: str) -> dict[str, set[str]]:
    """The lines kept and not yet dated, by path (stripped): lint leaves them to the tick, which
    dates them from the day they were written, not the file's `created`. Reads; takes nothing."""
    out: dict[str, set[str]] = {}
    for name in (TAKING, PENDING):
        try:
            for record in _records(os.path.join(state_dir(root), name)):
                out.setdefault(record["path"], set()).update(
                    x.strip() for x in record["text"].split("\n"))
        except OSError:
            continue
    return out


def take(root: str) -> tuple[list[dict[str, str]], str | None]:
    """The records kept so far, in order, and the file they were taken from (None: there were none).
    The caller removes that file once it has dated them (a crash before then dates them again next
    time; dating twice changes nothing). Lines that are not records are skipped."""
    folder = state_dir(root)
    taking = os.path.join(folder, TAKING)
    try:
        if not os.path.lexists(taking):
            os.replace(os.path.join(folder, PENDING), taking)
        if os.path.islink(taking) or not os.path.isfile(taking):
            # not a file memstore made: nothing to date (the size cap keeps PENDING bounded)
            return [], None
        return _records(taking), taking
    except OSError:
        # nothing kept yet, or a state folder this process cannot use: no dating tonight
        return [], None

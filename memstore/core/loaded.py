"""The one writer of what the client loads. Standard library only.

Two things memstore makes reach the model without anyone reading them first: the rendered files
under memory/ that the client imports (MEMORY.md, MEMORY-archive.md, current-state.md) and the
hook's answers (the SessionStart bundle and import parts, lens injections, notices, refusals).
Each producer makes memory text inert item by item (memstore.core.inert); this module is the
last step for all of them, so a producer that forgets cannot turn memory text into instructions:

- `publish` writes the rendered files, each to a temp file renamed into place, under the render
  lock;
- `answer` turns a hook response into the JSON the hook prints;
- both pass every text through `guard` first: no `<` that could open a tag, no control or invisible
  character, and in the files, no `@` that could open an import (the client expands imports in
  files it loads, not in a hook's context, where the person's own lens or identity keeps its `@`).
  What the producers make is already inert, so for them `guard` changes nothing
  (tests/test_loaded.py holds both halves).

Headings cannot be checked here (the files' own sections are headings): that part of inertness
stays with `inert_line` / `inert_block` at each producer.
"""

from __future__ import annotations

import json

from memstore.core.inert import TAG_OPEN, TAG_SAFE, UNSEEN, pattern

TYPE_CHECKING = False  # not typing's: the hook prints every answer through here; start-up counts
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

RENDERED = ("MEMORY.md", "MEMORY-archive.md", "current-state.md")  # memory/ files the client loads
_AT = r"(?<!\\)((?:\\\\)*)@"  # an `@` after an even run of backslashes (none, or escaped) is live
# as inert's, with no exception: a link's destination is percent-encoded (index_rows.link)
_TAG = TAG_OPEN


def guard(text: str, *, imports: bool = True) -> str:
    """`text` with nothing left that the client could act on: a tag's `<` made fullwidth, controls
    (but tab and newline) and invisible characters (inert's list) dropped and, with `imports` (a
    file), every unescaped `@` escaped."""
    # patterns compile on first use (inert.pattern): most hook answers are plain ASCII and need none
    if not (text.isascii() and text.replace("\n", "").replace("\t", "").isprintable()):
        # first: a hidden character between `\` and `@` must not survive as one
        text = pattern(UNSEEN).sub("", text)
    if imports and "@" in text:
        text = pattern(_AT).sub(r"\1\\@", text)
    if "<" in text:
        text = pattern(_TAG).sub(TAG_SAFE, text)
    return text


def publish(folder: Path, outputs: dict[str, str], lock: Path) -> list[str]:
    """Write the rendered files (names from RENDERED) into `folder`, guarded, each atomically, under
    `lock`; the names whose content changed."""
    from memstore.core.locks import atomic_write, file_lock, sweep_stale  # render's, not the hook's

    unknown = set(outputs) - set(RENDERED)
    if unknown:
        raise ValueError(f"not a file the client loads: {sorted(unknown)}")
    written = []
    with file_lock(lock):
        sweep_stale(folder)  # temp files of a render or flush that was killed
        for name, text in outputs.items():
            if atomic_write(folder / name, guard(text).encode("utf-8")):
                written.append(name)
    return written


# the answer's fields the model or the person reads as text; others (a decision, an updated tool
# input) are the client's to act on and pass through as they are
TEXT_FIELDS = frozenset({"additionalContext", "permissionDecisionReason", "reason", "systemMessage",
                         "stopReason"})


def _guarded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: guard(v, imports=False) if k in TEXT_FIELDS and isinstance(v, str)
                else _guarded(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_guarded(v) for v in value]
    return value


def answer(response: dict[str, Any]) -> str:
    """The JSON a hook prints for `response`, its text fields guarded (TEXT_FIELDS, at any
    depth)."""
    return json.dumps(_guarded(response), ensure_ascii=False)

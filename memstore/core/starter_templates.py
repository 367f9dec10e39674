"""The starter files `memstore init` lays out in a new agent root: identity, an example
lens, a meditation library on both shelves, and the .gitignore files that keep derived
state out of git. Plain text; scaffold.py decides where each one goes.
"""

from __future__ import annotations

IDENTITY = """\
---
type: identity
---

# Identity

Who this agent is, in a few lines that hold in every session. Loaded whole at every
start, so every line here is paid for every time: keep only what would make a
decision wrong if it were missing. Situational rules belong in lenses/, facts to look
up belong in memory/.

- Name: (the agent chooses one)
- Works for: (the person, and the kind of work)
- Standing rules: (at most a handful)
"""

EXAMPLE_LENS = """\
---
name: delegation-discipline
type: lens
trigger:
  tool_match: "^(Task|Agent)$"
body_token_cap: 200
---

# Before handing work to a helper agent

- Give the helper everything it needs in the prompt: it sees none of this session.
- Name the files it owns, so two helpers never edit the same one.
- Ask for figures and failures, not reassurance, in its final message.
- Check what it did before building on it.
"""

# file name -> (shelf, cadence_weight, title, prompt)
MEDITATIONS = {
    "attention-to-the-present-task.md": (
        "awareness",
        1.0,
        "Attention to the present task",
        "Sit with what the current work actually is, before what it could become.",
    ),
    "not-knowing.md": (
        "awareness",
        0.95,
        "Not knowing",
        "Notice where the last sessions acted as if they knew, and what that cost.",
    ),
    "the-memory-itself.md": (
        "instrumental",
        0.9,
        "The memory itself",
        "Read the Cold band: which rows would you miss, which would you not notice gone?",
    ),
    "recurring-mistakes.md": (
        "instrumental",
        0.9,
        "Recurring mistakes",
        "Look at the open bugs and corrections: is one shape behind several of them?",
    ),
}

RUNTIME_GITIGNORE = """\
# Derived or machine-local state: rebuilt on each machine by `memstore rebuild`.
# The access journal is the exception: it travels in git (one file per clone and day)
# and is never pruned. Never delete this folder whole: the journal is in it.
/*
!/.gitignore
!/journal/
"""

MEMORY_GITIGNORE = """\
# Rendered from the topic files by `memstore render`; regenerated on each machine.
/MEMORY.md
/MEMORY-archive.md
/current-state.md
"""


def meditation(title: str, shelf: str, weight: float, prompt: str) -> str:
    """The text of one meditation object."""
    return (f"---\ntype: meditation\nshelf: {shelf}\ncadence_weight: {weight}\n---\n\n"
            f"# {title}\n\n{prompt}\n")

"""A memory's row in MEMORY.md: a link the agent can Read, and the file's own summary, made inert.

Sync stores each T2 file's row in the mirror (files.index_row) and render lays the rows out;
the migrations that recompute stored rows build them here too, so the row has one maker.
"""

from __future__ import annotations

from memstore.core.inert import LINK_CODES, inert_line, safe_name
from memstore.core.teams import team_of

NO_SUMMARY = "(no readable summary: run memstore lint)"


def link(name: str, filename: str) -> str:
    """A CommonMark link: brackets in the text escaped; spaces, parentheses and angle brackets in
    the destination percent-encoded (no `<...>` form: no `<` reaches what the client loads)."""
    text = safe_name(name).replace("[", "\\[").replace("]", "\\]")
    dest = safe_name(filename)
    for plain, coded in LINK_CODES:
        dest = dest.replace(plain, coded)
    return f"[{text}]({dest})"




def make_row(name: str, filename: str, summary: str) -> str:
    """The one place a row's text is built: clean text, or a placeholder if none is readable."""
    if summary:
        row = f"- [{name}]({filename}): {summary}"
        # Most rows are clean already, and these checks run in C. isprintable() is False for
        # every control, surrogate, format (bidi) character, noncharacter and space but " ".
        # "@" and "<" are checked too: memory text must never become an import or a tag (inert.py).
        if (row.isprintable() and "\ufffd" not in row and "  " not in row and row[-1] != " "
                and "@" not in row and "<" not in row and not any(c in name for c in " []()>")):
            return row  # exactly what the cleaning below would build
    return f"- {link(name, filename)}: {inert_line(summary) or NO_SUMMARY}"


def index_row(rel: str, summary: str) -> str:
    """The row of the T2 file at root-relative `rel`. A team's memory links into its clone from
    memory/ (../teams/<name>/memory/<file>) and says whose it is: `(team <name>)` first."""
    filename = rel.rsplit("/", 1)[-1]
    team = team_of(rel)
    if team is None:
        return make_row(filename[:-3], filename, summary)
    return make_row(filename[:-3], f"../{rel}", f"(team {team}) {summary}" if summary else "")

"""Who added a team memory and when, and what happened to it since: the team clone's git log.

Read from the clone as it is (no fetch): the history the person's agent is reading. Author names
and commit subjects are the team's text: whoever shows them makes them inert.
"""

from __future__ import annotations

import os

from memstore.core.teams import split
from memstore.team.gitconf import GitError, git

RECENT = 10
_SEP = "\x1f"
_FORMAT = _SEP.join(("%H", "%an", "%aI", "%s"))


def history(root: str, rel: str, recent: int = RECENT) -> list[dict[str, str]]:
    """The commits that touched this team file (root-relative teams/<team>/...), newest first, at
    most `recent`, and the one that added it last when it is older than those. [] when git cannot
    say."""
    found = split(rel)
    if found is None:
        return []
    team, inner = found
    folder = os.path.join(root, "teams", team)
    try:  # one walk of the history: every commit that touched the file, with how (A: added)
        log = git(folder, "log", f"--format=\x1e{_FORMAT}", "--name-status", "--", inner,
                  check=False)
    except GitError:
        return []
    rows, adds = [], []
    for record in log.stdout.split("\x1e")[1:]:
        head, _, changes = record.partition("\n")
        parsed = _rows(head)
        if not parsed:
            continue
        rows.append(parsed[0])
        if any(line.startswith("A\t") for line in changes.splitlines()):
            adds.append(parsed[0])
    # the oldest add: a file taken out and put back was added twice
    first = [dict(adds[-1])] if adds else []
    rows = rows[:recent]
    if first:
        first[0]["added"] = "yes"
        if all(row["commit"] != first[0]["commit"] for row in rows):
            rows += first
        else:
            for row in rows:
                if row["commit"] == first[0]["commit"]:
                    row["added"] = "yes"
    return rows


def _rows(text: str) -> list[dict[str, str]]:
    rows = []
    for line in text.splitlines():
        parts = line.split(_SEP)
        if len(parts) == 4:
            rows.append({"commit": parts[0], "author": parts[1], "date": parts[2],
                         "subject": parts[3]})
    return rows

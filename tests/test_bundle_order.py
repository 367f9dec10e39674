"""The SessionStart bundle is the same bytes from session to session while nothing changed (issue
31, item 8): a part or item order that moves defeats prompt caching of everything after it."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from memstore.core.config import Config
from memstore.hook.bundle import bundle
from tests.helpers import write
from tests.wakestub import as_the_wake_wrote

FILES = {
    "memory/current-state.md": "---\nkind: current-state\n---\n- the export rewrite\n"
                               "- the flaky watcher test\n",
    "memory/short-term/260729-export-bug.md": "---\ndate: 2026-07-29\n---\n"
                                              "The export dropped the last row.\n",
    "memory/short-term/260730-cache.md": "---\ndate: 2026-07-30\nproject: github.com/me/proja\n"
                                         "---\nWarm the cache.\n",
    "memory/short-term/260730-tea.md": "---\ndate: 2026-07-30\n---\nShort answers.\n",
    "memory/short-term/260730-wake-proposals.md": "---\ndate: 2026-07-30\nkind: wake-proposals\n"
                                                  "---\n\n- merge a into b\n- retire c\n",
    "memory/short-term/260730-wake-proposals-proja.md": "---\ndate: 2026-07-30\n"
                                                        "kind: wake-proposals\n"
                                                        "project: github.com/me/proja\n---\n\n"
                                                        "- fold the cache fact\n",
    "memory/dream-journal/260730-dream.md": "---\ndate: 2026-07-30\nkind: dream\n---\n"
                                            "A person-wide dream.\n",
    "memory/dream-journal/260730-dream-proja.md": "---\ndate: 2026-07-30\nkind: dream\n"
                                                  "project: github.com/me/proja\n"
                                                  "---\nA dream of proja.\n",
    "memory/dream-journal/260729-dream.md": "---\ndate: 2026-07-29\nkind: dream\n---\n"
                                            "An older dream.\n",
    "memory/bugs/0002-b.md": "---\nid: 2\ntitle: second bug\n---\n",
    "memory/bugs/0001-a.md": "---\nid: 1\ntitle: first bug\n---\n",
}


def lay_out(root: Path, names: list[str]) -> None:
    for i, rel in enumerate(names):
        path = write(root, rel, FILES[rel])
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # creation order shows in the mtimes
        if "wake-proposals" in rel:
            as_the_wake_wrote(root, rel)  # a proposals note counts only as the wake recorded it


def test_two_bundles_hours_apart_with_nothing_changed_are_byte_identical(tmp_path: Path) -> None:
    """Failure caught: the order of the bundle's parts, or of the items inside one, depending on the
    clock, on file mtimes or on the order the folder lists its files."""
    forward, backward = tmp_path / "a", tmp_path / "b"
    lay_out(forward, list(FILES))
    lay_out(backward, list(reversed(FILES)))
    config = Config()
    morning = dt.datetime(2026, 7, 30, 7, 0, tzinfo=dt.UTC)
    evening = morning + dt.timedelta(hours=14)
    for project in (None, "github.com/me/proja"):
        first = bundle(forward, morning, config, project, evidence=[])
        assert first and first == bundle(forward, evening, config, project, evidence=[])
        assert first == bundle(backward, evening, config, project,
                               evidence=[]).replace(str(backward), str(forward))
    text = bundle(forward, morning, config, "github.com/me/proja", evidence=[])
    assert text.index("first bug") < text.index("second bug")
    assert text.index("260730-dream-proja.md") < text.index("260730-dream.md") < \
        text.index("260729-dream.md")

"""`memstore tick`: the nightly deterministic half of the sleep cycle.

Sync the mirror, fold policy state into frontmatter (flush skips files touched in the
last minutes, so a live session is left alone), render the index, and record what it
found in runtime/state/tick-status.json for the morning (and for a wake to read).
The reflective half, `wake`, which needs a model, is not built yet.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from memstore.agent_root import RootPaths
from memstore.config import Config
from memstore.flush import flush
from memstore.locks import atomic_write, file_lock
from memstore.render import render
from memstore.sync import open_mirror, sync_into
from memstore.timeutil import fmt
from memstore.views import lint_view


def tick(root: Path, now: dt.datetime, config: Config, notify: Any = None) -> dict[str, Any]:
    conn = open_mirror(root, config, notify)
    try:
        with file_lock(Path(RootPaths(root).mirror_lock)):
            synced = sync_into(conn, root, config)
            flushed = flush(conn, root, now, config)
            sync_into(conn, root, config)
        rendered = render(conn, root, now, config)
        problems = lint_view(conn)
    finally:
        conn.close()
    status = {
        "ran_at": fmt(now),
        "sync": synced.summary(),
        "flush": flushed.summary(),
        "render": rendered.summary(),
        "lint_errors": sum(1 for p in problems if p["level"] == "error"),
        "lint_warnings": sum(1 for p in problems if p["level"] != "error"),
        "live_session": bool(flushed.skipped_recent),
    }
    target = Path(RootPaths(root).tick_status)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, (json.dumps(status, indent=2) + "\n").encode())
    return status

"""`RootState`: one agent root as the Store holds it, shared by the api modules.

Where the root is (as named and as resolved), its clock (pinned or real), its config (read
again when memstore.toml changes) and where notices and progress go. `Store` is a RootState
with the methods a front end calls; memstore.api.flows, .writes, .queries and .teams take the
state and hand the layers below its values and the mirror object (memstore.api.mirroring.Mirror).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

from memstore.api import naming
from memstore.api.mirroring import Mirror
from memstore.core.agent_root import RootPaths, find_root
from memstore.core.config import Config, load_config
from memstore.core.timeutil import UTC, to_utc

Notify = Callable[[str], None]
Progress = Callable[[int, int], None]


class RootState:
    """One agent root. `now` pins the clock (a datetime); None reads the real clock at each call."""

    def __init__(self, root: str | os.PathLike[str], now: dt.datetime | None = None, *,
                 config: Config | None = None, notify: Notify | None = None,
                 progress: Progress | None = None) -> None:
        self.root = Path(find_root(root, None, Path.cwd()))
        self.alias = naming.alias(root, self.root)  # the root as named, through a symlink
        self.paths = RootPaths(self.root)
        self._now = to_utc(now) if now is not None else None
        self._config = config
        # one-line notices (a mirror rebuilt, ...)
        self.notify: Notify = notify or (lambda _message: None)
        self.progress = progress  # (done, total) during long walks

    @property
    def now(self) -> dt.datetime:
        return self._now if self._now is not None else dt.datetime.now(UTC)

    @property
    def config(self) -> Config:
        if self._config is None:
            self._config = load_config(self.root)
        return self._config

    def reload_config(self) -> None:
        """memstore.toml changed (a team joined or left): read it again at the next use."""
        self._config = None

    def mirror(self) -> Mirror:
        """The mirror for one call, at one instant of the clock."""
        return Mirror(self.root, self.config, self.now, self.notify, self.progress)

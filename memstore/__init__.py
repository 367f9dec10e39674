"""memstore: a coding agent's memory kept as markdown files, mirrored into SQLite.

    from memstore import Store
    store = Store("~/agents/me")
    store.search("what did we decide about the export")

Nothing is imported here eagerly on purpose: `memstore hook` runs on every Read in
every session and its path must load only the standard library, and `import memstore`
must stay cheap for any front end. `Store` and the result types load on first use.
"""

from __future__ import annotations

__version__ = "0.3.0"  # each release bumps it, with plugin.json and docs/upgrading.md (tests agree)

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would cost the hook start-up
if TYPE_CHECKING:
    from typing import Any

    from memstore.api.store import Store
    from memstore.core.errors import BadUsage, Busy, MemstoreError, NotFound, RootNotFound
    from memstore.core.results import (
        Check,
        Hit,
        Memory,
        MemoryRow,
        Problem,
        Status,
        TickStatus,
        Touch,
    )

_LAZY = {
    "Store": "memstore.api.store",
    "Busy": "memstore.core.errors",
    "MemstoreError": "memstore.core.errors",
    "BadUsage": "memstore.core.errors",
    "NotFound": "memstore.core.errors",
    "RootNotFound": "memstore.core.errors",
    **{name: "memstore.core.results" for name in
       ("Check", "Hit", "Memory", "MemoryRow", "Problem", "Status", "TickStatus", "Touch")},
}

__all__ = [  # noqa: RUF022  (grouped as above, not sorted)
    "__version__",
    "Store", "Busy", "MemstoreError", "BadUsage", "NotFound", "RootNotFound",
    "Check", "Hit", "Memory", "MemoryRow", "Problem", "Status", "TickStatus", "Touch",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memstore' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

#!/usr/bin/env python3
"""A year of sessions: the benchmark of the whole context (MEMORY.md, the SessionStart bundle,
prompt pointers, lenses) against other policies on the same stream; code:
memstore_devtools.bench.season."""

from memstore_devtools.bench.season import main

raise SystemExit(main())

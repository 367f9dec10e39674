#!/usr/bin/env python3
"""Search quality on memory-shaped data (LoCoMo observations, LongMemEval pooled);
code: memstore_devtools.memories."""

from memstore_devtools.memories import main

raise SystemExit(main())

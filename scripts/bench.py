#!/usr/bin/env python3
"""memstore's benchmarks (BENCHMARKS.md); the code is memstore_devtools.bench in devtools/."""

from memstore_devtools.bench import main

raise SystemExit(main())

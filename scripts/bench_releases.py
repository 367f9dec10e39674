#!/usr/bin/env python3
"""Two releases of memstore side by side, as ratios, against issue 43's goals (BENCHMARKS.md).

The code is memstore_devtools.bench.releases in devtools/; `--help` lists the options.
"""

from memstore_devtools.bench.releases import main

raise SystemExit(main())

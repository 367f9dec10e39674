#!/usr/bin/env python3
"""Search quality on the LoCoMo dev split against plain BM25;
the code is memstore_devtools.locomo in devtools/."""

from memstore_devtools.locomo import main

raise SystemExit(main())

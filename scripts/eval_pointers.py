#!/usr/bin/env python3
"""The prompt's pointers on memory-shaped data (push recall, precision, off-topic pushes);
code: memstore_devtools.pointers_eval."""

from memstore_devtools.pointers_eval import main

raise SystemExit(main())

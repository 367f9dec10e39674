#!/usr/bin/env python3
"""Plain Okapi BM25 over a folder's *.md files: `bm25_baseline.py DIR QUERY`; the code is
memstore_devtools.bm25_baseline in devtools/."""

from memstore_devtools.bm25_baseline import main

raise SystemExit(main())

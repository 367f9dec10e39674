#!/usr/bin/env python3
"""Write a synthetic agent root into an empty folder;
the code is memstore_devtools.corpus in devtools/."""

from memstore_devtools.corpus.cli import main

raise SystemExit(main())

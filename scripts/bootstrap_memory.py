#!/usr/bin/env python3
"""Lay out an agent root and build its mirror (memstore init). Dry run unless --apply.

Usage: python scripts/bootstrap_memory.py [--root DIR] ROOT [--apply]

A thin wrapper kept for people following the seed's three-script install; it runs
`memstore init` with the same arguments.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from memstore.frontends.cli import run_as
except ImportError:  # running from a checkout without an install
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from memstore.frontends.cli import run_as

if __name__ == "__main__":
    run_as("init", sys.argv[1:])

#!/usr/bin/env python3
"""Prove the wiring works on the real files (memstore verify); exit 1 listing what is missing.

Usage: python scripts/verify_memory_install.py [--root DIR] [--settings F] [--claude-md F] [--cron]

A thin wrapper kept for people following the seed's three-script install; it runs
`memstore verify` with the same arguments.
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
    run_as("verify", sys.argv[1:])

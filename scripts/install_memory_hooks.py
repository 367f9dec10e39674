#!/usr/bin/env python3
"""Register the Claude Code hooks and CLAUDE.md imports, optionally the nightly cron line
(memstore install). Dry run unless --apply.

Usage: python scripts/install_memory_hooks.py [--root DIR] [--apply] [--cron]
           [--scope project|user] [--settings F] [--claude-md F]

A thin wrapper kept for people following the seed's three-script install; it runs
`memstore install` with the same arguments.
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
    run_as("install", sys.argv[1:])

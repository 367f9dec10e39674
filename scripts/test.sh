#!/usr/bin/env bash
# Install memstore with its test dependencies and the developer tooling (devtools/,
# memstore-devtools: corpus generator, benchmarks) into .venv and run the whole suite.
# This is the README's test command and exactly what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || { echo "memstore needs Python 3.11 or newer (found: $("$PY" --version 2>&1)); set PYTHON=/path/to/python3.11" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
echo "installing memstore, its test dependencies and the developer tooling (devtools/) into .venv ..." >&2
# The distribution was called `memstore` before it became `memstore-md` (PyPI's memstore is another
# project): an older install of this checkout in .venv goes first, or two would claim the package.
.venv/bin/python -m pip uninstall --quiet --yes memstore >/dev/null 2>&1 || true
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]' -e ./devtools
RUFF_CACHE_DIR="$PWD/.ruff_cache" .venv/bin/ruff check .  # one cache, none inside plugin/ (its pyproject.toml links here)
echo "checking the import contracts (setup.cfg [importlinter]) and the types (setup.cfg [mypy]) ..." >&2
.venv/bin/lint-imports --no-cache
.venv/bin/mypy
# every tier: fast, slow and e2e (plain pytest is the fast one); pyproject's addopts run it on a
# pytest-xdist worker a core (-n auto) and give every test a timeout (pytest-timeout)
.venv/bin/python -m pytest -q -m ""

#!/usr/bin/env bash
# Install memstore into .venv and run the main job on a copy of the bundled fixture
# corpus: build the mirror, search it, record a reinforcement, show the result.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || { echo "memstore needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
echo "installing memstore into .venv ..." >&2
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
ms=.venv/bin/memstore
demo="${DEMO_DIR:-demo}"
rm -rf "$demo" && mkdir -p "$demo" && cp -R fixtures/corpus/. "$demo/"
export MEMSTORE_ROOT="$demo" MEMSTORE_NOW="2026-07-30T12:00:00Z"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step memstore rebuild;                     $ms rebuild
step memstore status;                      $ms status
step memstore search "vendor api returns dates in local time"
$ms search "vendor api returns dates in local time" --limit 3
step memstore lint "(the fixture has malformed files on purpose)"
$ms lint | tail -4 || true
printf '\nThe demo root is %s; try: MEMSTORE_ROOT=%s %s search "your words"\n' "$demo" "$demo" "$ms"

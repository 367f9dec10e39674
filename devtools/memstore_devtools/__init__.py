"""memstore's developer tooling: a distribution of its own (memstore-devtools, in devtools/),
never part of the memstore wheel.

- `corpus`: the deterministic synthetic agent-root generator (tests, benchmarks, the
  bundled fixture); `corpus.cli` is scripts/make_corpus.py's command line;
- `bench`: the speed figures in BENCHMARKS.md (scripts/bench.py);
- `locomo`: search quality on the LoCoMo dev split against plain BM25 (scripts/eval_locomo.py);
- `bm25_baseline`: that plain Okapi BM25 (scripts/bm25_baseline.py).

Install it editable from the checkout, beside memstore itself (scripts/test.sh does):
`.venv/bin/python -m pip install -e '.[test]' -e ./devtools`.
"""

from pathlib import Path

# The checkout this package is installed from (editable): devtools/memstore_devtools/ is two
# levels below it. The benchmarks find BENCHMARKS.md and memstore's sources there, the LoCoMo
# evaluation its data beside it (../shared/data).
REPO = Path(__file__).resolve().parents[2]

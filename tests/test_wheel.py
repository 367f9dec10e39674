"""The memstore wheel holds the runtime and nothing else.

The developer tooling (the synthetic corpus generator, the benchmarks, the LoCoMo
evaluation, the BM25 baseline) is its own distribution in devtools/ (memstore-devtools).
This builds the real wheel from setup.cfg and reads its file list, so a package added
back to setup.cfg's `packages` (say memstore.corpus) fails here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Built from a copy of the checkout: an in-place build would leave build/ and egg-info behind
# in the working tree, and files a stale build/lib still holds can slip into the wheel.
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", ".claude-bin", "node_modules", "demo", "build", "dist", "*.egg-info",
    "__pycache__", ".hypothesis", ".pytest_cache", ".ruff_cache",
)
# Developer tooling: one of these words at the start of a path component or after a `_`, `.`
# or `-` (corpus/, bench.py, benchmarks/, eval_locomo.py, memstore_devtools/, bm25_baseline.py).
# Not inside a word, so a module such as retrieval.py would be no false alarm.
TOOLING = re.compile(r"(?:^|[/_.-])(?:corpus|corpora|bench|locomo|eval|devtools|bm25)", re.I)


def build_wheel(tmp_path: Path) -> list[str]:
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=NOT_COPIED, symlinks=True)
    out = tmp_path / "wheel"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-q", "-w", str(out), "."],
        cwd=src, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, (
        "pip wheel failed (it builds without isolation, so setuptools>=68 and wheel must be installed "
        f"here; the `test` extra brings them):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    )
    wheels = sorted(out.glob("memstore-*.whl"))
    assert len(wheels) == 1, [p.name for p in out.iterdir()]
    with zipfile.ZipFile(wheels[0]) as whl:
        return whl.namelist()


def test_tooling_pattern() -> None:
    for name in ("memstore/corpus/spec.py", "memstore_devtools/bench/cli.py", "memstore/eval_locomo.py",
                 "benchmarks/common.py", "memstore/bm25_baseline.py", "memstore/Evaluation.py"):
        assert TOOLING.search(name), name
    for name in ("memstore/retrieval.py", "memstore/search.py", "memstore-0.1.0.dist-info/RECORD"):
        assert not TOOLING.search(name), name


def test_wheel_holds_the_runtime_and_no_developer_tooling(tmp_path: Path) -> None:
    names = build_wheel(tmp_path)
    modules = {n for n in names if re.fullmatch(r"memstore/[^/]+\.py", n)}
    assert {"memstore/__init__.py", "memstore/cli.py", "memstore/hook.py", "memstore/hookrun.py"} <= modules
    assert modules == {f"memstore/{p.name}" for p in (REPO / "memstore").glob("*.py")}
    assert "memstore/migrations/__init__.py" in names
    tops = {n.split("/")[0] for n in names}  # memstore/ and its dist-info, nothing beside them
    assert {t for t in tops if not re.fullmatch(r"memstore-[^-/]+\.dist-info", t)} == {"memstore"}, tops
    tooling = [n for n in names if TOOLING.search(n)]
    assert tooling == [], f"developer tooling in the memstore wheel: {tooling}"

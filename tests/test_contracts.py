"""The import contracts in setup.cfg are seen to fail when an import against the grain is added.

scripts/test.sh runs `lint-imports` over the package as it is; these tests prove each contract has
teeth. Each copies the package into a temporary folder, adds one import that breaks one rule, and
runs the real lint-imports there with the project's own setup.cfg: that contract, and only that
rule's contract, must come back BROKEN.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memstore

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(memstore.__file__).resolve().parent
LINT = Path(sys.executable).with_name("lint-imports")


def lint(tmp_path: Path, contract: str, module: str | None = None,
         line: str = "") -> subprocess.CompletedProcess[str]:
    copy = tmp_path / "src"
    if not copy.exists():
        shutil.copytree(PACKAGE, copy / "memstore", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(REPO / "setup.cfg", copy / "setup.cfg")
    if module:
        target = copy / "memstore" / (module.replace(".", "/") + ".py")
        target.write_text(target.read_text() + f"\n{line}\n")
    env = {**os.environ, "PYTHONPATH": str(copy)}  # the copy is found before the installed package
    return subprocess.run([str(LINT), "--contract", contract, "--no-cache"], cwd=copy,
                          capture_output=True, text=True, env=env, timeout=120)


CASES = [
    # (contract id, the module that gains an import, the import, why it must fail)
    ("layers", "core.inert", "from memstore.mirror import db",
     "the ground floor reaching up into the mirror"),
    ("layers", "wiring.audit", "from memstore.life import nightly",
     "wiring and the memory's life are independent"),
    ("acyclic", "hook.paths", "from memstore.hook import handler",
     "a cycle between two modules of the hook"),
    ("hook-stdlib", "hook.review", "import yaml", "a third-party import on every tool call's path"),
    ("hook-stdlib", "core.locks", "import click",
     "a third-party import in the standard-library core"),
    ("processes", "life.capture", "import subprocess",
     "a process started outside memstore.core.processes"),
    ("writer", "life.wake", "from memstore.core import loaded",
     "a new writer of what the client loads"),
    ("commands", "frontends.commands.memory", "from memstore.frontends import cli",
     "a command importing its gatherer"),
]


@pytest.mark.parametrize(("contract", "module", "line", "why"), CASES,
                         ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_a_contract_fails_on_an_import_against_the_grain(
        tmp_path: Path, contract: str, module: str, line: str, why: str) -> None:
    """Failure caught: a contract that passes whatever the imports are (a typo in a module name, a
    contract type that checks nothing): the build would hold no layer at all."""
    before = lint(tmp_path, contract)
    assert before.returncode == 0, ("the contract is already broken on the package as it is:\n"
                                    f"{before.stdout}")
    after = lint(tmp_path, contract, module, line)
    assert after.returncode == 1 and "BROKEN" in after.stdout, f"{why}: not caught\n{after.stdout}"
    # the report names the importer (acyclic names it relative to its package)
    importer = module.rsplit(".", 1)[-1]
    assert f"memstore.{module}" in after.stdout or f".{importer} ->" in after.stdout, after.stdout

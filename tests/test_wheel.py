"""The memstore wheel holds the runtime, all of it, and nothing else, and runs as installed.

The developer tooling (the synthetic corpus generator, the benchmarks, the LoCoMo
evaluation, the BM25 baseline) is its own distribution in devtools/ (memstore-devtools).
This builds the real wheel from setup.cfg and reads its file list, so a package added
back to setup.cfg's `packages` (say a `corpus` subpackage of memstore) fails here, and so does a
subpackage of memstore/ left off that list (memstore.frontends.commands once was: every command
of a non-editable install died with ModuleNotFoundError). Then it installs the wheel
into a fresh venv, away from the checkout, and runs every command's --help and a demo
there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import click
import pytest

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


def build_wheel(tmp_path: Path) -> tuple[Path, Path]:
    """(the wheel, the copy of the checkout it was built from)."""
    src = tmp_path / "src"
    shutil.copytree(REPO, src, ignore=NOT_COPIED, symlinks=True)
    out = tmp_path / "wheel"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-q", "-w", str(out), "."],
        cwd=src, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, (
        "pip wheel failed (it builds without isolation, so setuptools>=68 and wheel must be "
        f"installed here; the `test` extra brings them):\n{proc.stdout[-2000:]}\n"
        f"{proc.stderr[-2000:]}"
    )
    # the distribution memstore-md (PyPI's memstore is another project)
    wheels = sorted(out.glob("memstore_md-*.whl"))
    assert len(wheels) == 1, [p.name for p in out.iterdir()]
    return wheels[0], src


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as whl:
        return whl.namelist()


def source_modules(src: Path) -> set[str]:
    """Where each .py of the checkout lands in the wheel (migrations/ as memstore.migrations)."""
    found = set()
    for folder, installed in (("memstore", "memstore"), ("migrations", "memstore/migrations")):
        for path in (src / folder).rglob("*.py"):
            rel = path.relative_to(src / folder)
            if "__pycache__" not in rel.parts:
                found.add(f"{installed}/{rel.as_posix()}")
    return found


def test_tooling_pattern() -> None:
    for name in ("memstore/corpus/spec.py", "memstore_devtools/bench/cli.py",
                 "memstore/eval_locomo.py", "benchmarks/common.py", "memstore/bm25_baseline.py",
                 "memstore/Evaluation.py"):
        assert TOOLING.search(name), name
    for name in ("memstore/retrieval.py", "memstore/mirror/search.py",
                 "memstore-0.1.0.dist-info/RECORD"):
        assert not TOOLING.search(name), name


def test_wheel_holds_the_runtime_and_no_developer_tooling(built: tuple[Path, Path]) -> None:
    wheel, src = built
    names = wheel_names(wheel)
    modules = {n for n in names if n.endswith(".py")}
    assert {"memstore/__init__.py", "memstore/frontends/cli.py", "memstore/hook/handler.py",
            "memstore/hookrun.py", "memstore/frontends/commands/__init__.py",
            "memstore/migrations/__init__.py"} <= modules
    assert "memstore/hookgate.sh" in names  # the PreToolUse gate the settings install registers
    # every module of every package under memstore/ (and migrations/), so a subpackage left off
    # setup.cfg's `packages` fails here, and nothing that is not in the checkout
    expected = source_modules(src)
    assert modules == expected, (
        "missing from the wheel (add their package to setup.cfg's packages): "
        f"{sorted(expected - modules)}; in the wheel and not in the checkout: "
        f"{sorted(modules - expected)}"
    )
    # the web inspector's templates and stylesheet (package data): without them serve's pages fail
    data = {p.relative_to(src).as_posix()
            for p in (src / "memstore" / "frontends" / "web").rglob("*")
            if p.suffix in (".html", ".css")}
    missing = sorted(data - set(names))
    assert data and not missing, f"missing from the wheel (setup.cfg's package_data): {missing}"
    tops = {n.split("/")[0] for n in names}  # memstore/ and its dist-info, nothing beside them
    assert {t for t in tops if not re.fullmatch(r"memstore_md-[^-/]+\.dist-info", t)} == {
        "memstore"}, tops
    tooling = [n for n in names if TOOLING.search(n)]
    assert tooling == [], f"developer tooling in the memstore wheel: {tooling}"


# ---------------------------------------------------------------- the wheel as people install it


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and subcommand of the CLI, as the argv that names it."""
    found = []
    for name, command in sorted(group.commands.items()):
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += commands(command, (*prefix, name))
    return found


def _under(path: str, folder: Path) -> bool:
    try:
        Path(path).resolve().relative_to(folder)
    except ValueError:
        return False
    return True


@pytest.mark.slow  # a fresh venv and an install into it
@pytest.mark.timeout(600)
def test_the_installed_wheel_runs_from_a_fresh_venv(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    """Fails if a plain `pip install` of the wheel gives a memstore that cannot run a command.

    The venv is fresh and the wheel goes in with --no-deps (no network here); the
    dependencies come from this test's own environment through a .pth file that lists its
    site-packages folders as plain paths. A plain path in a .pth is added to sys.path as it
    is: the .pth files inside it are not run, so the editable install's path finder never
    loads, and the checkout itself is left out. So memstore can only come from the wheel.
    """
    from memstore.frontends.cli import cli

    wheel, _src = built
    venv = tmp_path / "fresh"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index",
         "--disable-pip-version-check", "-q", str(wheel)], capture_output=True, text=True,
        timeout=120,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    elsewhere = tmp_path / "elsewhere"  # every run's cwd: outside the checkout
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "MEMSTORE_ROOT",
                        "MEMSTORE_NOW")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", PYTHONNOUSERSITE="1",
               # the semantic extra may be importable through the .pth: no embedding pass
               MEMSTORE_SEMANTIC="off")

    def fresh(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=elsewhere, env=env, capture_output=True, text=True,
                              timeout=120)

    probe = ("import json, sys, sysconfig; "
             "print(json.dumps([sysconfig.get_paths()['purelib'], sys.path]))")
    site, fresh_path = json.loads(fresh(str(python), "-c", probe).stdout)
    repo = REPO.resolve()
    # this environment's own folders (a .venv inside the checkout included), never the checkout's
    # source folders, nor one that holds a memstore (the checkout is one)
    deps = [p for p in sys.path if p and os.path.isdir(p) and p not in fresh_path
            and not (_under(p, repo) and "site-packages" not in Path(p).parts)
            and not any(os.path.exists(os.path.join(p, name))
                        for name in ("memstore", "memstore.py"))]
    assert deps, sys.path
    Path(site, "_test_deps.pth").write_text("".join(f"{p}\n" for p in deps), encoding="utf-8")

    where = fresh(str(python), "-c",
                  "import sys, memstore, memstore.frontends.commands, memstore.migrations; "
                  "print(memstore.__file__); print(any('editable' in repr(f) for f "
                  "in sys.meta_path))")
    assert where.returncode == 0, where.stderr
    origin, editable = where.stdout.split()
    assert _under(origin, Path(site).resolve()) and editable == "False", (origin, editable, site)

    memstore = str(venv / "bin" / "memstore")
    top = fresh(memstore, "--help")
    assert top.returncode == 0, top.stderr
    every = commands(cli)
    assert len(every) > 10 and ("sync",) in every
    for argv in every:
        if len(argv) == 1:
            assert re.search(rf"^\s+{re.escape(argv[0])}\b", top.stdout, re.M), (
                f"{argv[0]} not in --help")
        shown = fresh(memstore, *argv, "--help")
        assert shown.returncode == 0 and "Usage:" in shown.stdout, (
            f"memstore {' '.join(argv)} --help: {shown.stderr}")

    def ok(*argv: str) -> str:
        done = fresh(memstore, *argv)
        assert done.returncode == 0, f"memstore {' '.join(argv)}: {done.stdout}{done.stderr}"
        return done.stdout

    ok("init", "agent", "--apply")
    root = ("--root", "agent")
    ok(*root, "new", "feedback", "sqlite wal", "--summary",
       "SQLite in WAL mode needs the -shm file beside the db")
    assert re.match(r"\d+ files: ", ok(*root, "sync"))
    # `new` rendered already: the row is there, nothing to rewrite
    assert "hot 1" in ok(*root, "render")
    assert "feedback_sqlite-wal" in (elsewhere / "agent" / "memory" / "MEMORY.md").read_text()
    hits = json.loads(ok(*root, "search", "shm file beside", "--json"))
    assert [h["path"] for h in hits][:1] == ["memory/feedback_sqlite-wal.md"]
    assert "reinforced" in ok(*root, "touch", "agent/memory/feedback_sqlite-wal.md")
    rows = json.loads(ok(*root, "list", "--json"))
    assert [(r["name"], r["access_count"]) for r in rows] == [("feedback_sqlite-wal", 1)]

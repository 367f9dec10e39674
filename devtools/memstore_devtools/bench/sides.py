"""Two releases of memstore ready to run side by side: their code, their workers, their roots.

A side is a git ref checked out in a temporary worktree (`git worktree add --detach`, removed at
the end), the working tree itself (`WORKTREE`), or a folder holding a checkout (used as it is).
Each side runs only its own code: the hook as its `install` registers it, its CLI through the
bootstrap of memstore_devtools.bench.baseline, and library calls in a long-lived worker process
of its own. Each side gets its own copy of every corpus (`cp -a` without runtime/), whose mirror
that side's code builds, since schemas differ.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from memstore_devtools.bench.baseline import BOOT, CLI_MAIN, WORKER_LOOP, WORKER_OPS, Worker
from memstore_devtools.bench.common import REPO, Bench, Child, git_describe, log, run_child

WORKTREE = "WORKTREE"  # the --current/--base value that names the working tree, edits and all

# Library calls each side's worker answers, beside WORKER_OPS' (render, search, rebuild, sync,
# hook_command). Each goes through memstore.Store, the one entry point of every release measured.
RELEASE_OPS = r"""
def _store(root, now=None):
    return memstore.Store(Path(root), _when(now) if now else None)


def _sync_module():
    try:
        from memstore.mirror import sync as module
    except ImportError:  # before the layers (61dc891)
        from memstore import sync as module
    return module


def op_first_sync(root):
    root = Path(root)
    for path in (root / "runtime").glob("memstore.db*"):
        path.unlink()
    import resource

    module = _sync_module()
    before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    report = module.sync(root)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = [a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, before)]
    return {"seconds": seconds, "scanned": report.scanned, "cpu": cpu[0], "cpu_children": cpu[1]}


def op_store_search(root, query, limit, catch_up):
    hits = [hit.path for hit in _store(root).search(query, limit, catch_up=catch_up)]
    return {"hits": len(hits), "top": hits[0] if hits else None}


def op_store_render(root, now):
    _store(root, now).render()
    return {}


def op_tick(root, now):
    _store(root, now).tick()
    return {}


def op_team_prepare(root, settings, url=None, name=None):
    root = Path(root)
    (root / "memstore.toml").write_text(settings, encoding="utf-8")
    store = _store(root)
    store.sync()
    store.trust(["memstore.toml"])
    if url:
        store.teams.add(url, name=name)
    return {}

"""


class Side:
    """One release: its code, its worker, its copies of the corpora."""

    def __init__(self, bench: Bench, ref: str, index: int) -> None:
        self.bench = bench
        self.ref = ref
        self.index = index
        self.folder: Path | None = None
        if ref == WORKTREE:
            self.code = REPO
            self.sha = git_describe()
            self.subject = "the working tree"
        elif (Path(ref) / "memstore" / "__init__.py").is_file():  # a checkout as it is on disk
            self.code = Path(ref).resolve()
            self.sha = self.code.name
            self.subject = f"the checkout at {self.code}"
        else:
            self.sha = _git("rev-parse", "--short", f"{ref}^{{commit}}")
            self.subject = _git("log", "-1", "--format=%s", self.sha)
            self.folder = Path(tempfile.mkdtemp(prefix=f"memstore-release-{index}-"))
            self.code = self.folder / "tree"
            log(f"{self.label}: git worktree add {self.code}")
            _git("worktree", "add", "--detach", "--quiet", str(self.code), self.sha)
        self._worker: Worker | None = None
        self.roots: dict[str, Path] = {}
        self.compiled = False

    @property
    def label(self) -> str:
        return "working tree" if self.ref == WORKTREE else self.sha

    def describe(self) -> str:
        if self.ref == WORKTREE:
            return f"the working tree ({self.sha})"
        if self.folder is None:
            return self.subject
        cut = self.subject[:80] + ("..." if len(self.subject) > 80 else "")
        return f'`{self.ref}` = {self.sha} ("{cut}")'

    @property
    def env(self) -> dict[str, str]:
        return {**self.bench.env, "BENCH_MEMSTORE_CODE": str(self.code)}

    def worker(self) -> Worker:
        if self._worker is None:
            logs = self.bench.workdir / "release-logs"
            logs.mkdir(exist_ok=True)
            program = WORKER_OPS + RELEASE_OPS + WORKER_LOOP
            self._worker = Worker(
                self.code,
                self.bench.python,
                self.bench.env,
                logs / f"worker-{self.index}.log",
                program,
            )
        return self._worker

    def call(self, op: str, timeout: float | None = None, **args: Any) -> tuple[float, Any]:
        return self.worker().call(op, timeout, **args)

    def cli_argv(self, root: Path, *args: str) -> list[str]:
        """`python -m memstore --root ROOT ARGS` from this side's code (run with self.env)."""
        return [self.bench.python, "-c", BOOT + CLI_MAIN, "--root", str(root), *args]

    def cli(self, root: Path, *args: str) -> Child:
        child = run_child(self.cli_argv(root, *args), self.env)
        if child.returncode != 0:
            raise RuntimeError(
                f"{self.label}: memstore {' '.join(args)} exited {child.returncode}: "
                f"{child.stderr[-500:]}"
            )
        return child

    def hook_argv(self, root: Path) -> list[str]:
        """The hook as this side's `install` registers it (python -S CODE/memstore/hookrun.py)."""
        argv = shlex.split(self.call("hook_command", root=str(root))[1])
        if not any(part.startswith(str(self.code)) for part in argv):
            raise RuntimeError(f"{self.label}: its hook command runs other code: {argv}")
        return argv

    def compile_bytecode(self) -> None:
        """As `memstore install` does (the hook starts with -S and never writes bytecode itself)."""
        if not self.compiled:
            subprocess.run(
                [self.bench.python, "-m", "compileall", "-q", "memstore"],
                cwd=self.code,
                check=True,
                env=self.bench.env,
                capture_output=True,
            )
            self.compiled = True

    def root(self, key: str, source: Path, build: bool = True) -> Path:
        """This side's copy of `source` (cp -a keeps mtimes; runtime/ left out), its mirror built by
        this side's own sync unless build is False. Made once per run."""
        if key in self.roots:
            return self.roots[key]
        target = self.bench.workdir / f"side-{self.index}" / key
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", str(source), str(target)], check=True)
        shutil.rmtree(target / "runtime", ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            (target / ".bench-corpus").unlink()
        if build:
            start = time.perf_counter()
            self.call("sync", root=str(target))
            log(
                f"  {self.label}: {key} copied, mirror built in {time.perf_counter() - start:.1f} s"
            )
        self.roots[key] = target
        return target

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
        if self.folder is not None:
            with contextlib.suppress(subprocess.CalledProcessError, OSError):
                _git("worktree", "remove", "--force", str(self.code))
            shutil.rmtree(self.folder, ignore_errors=True)
            with contextlib.suppress(subprocess.CalledProcessError, OSError):
                _git("worktree", "prune")


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()

"""An older commit measured in the same run: `--baseline-ref REF`.

The baseline's code is checked out with `git worktree add --detach` in a temporary folder
(removed at the end of the run). Its figures come from child processes that import
memstore from that folder and nothing else:

- a `Worker` is a long-lived child that takes one JSON command a line on stdin (render,
  search, rebuild, sync), times the call itself and answers with the seconds. Every
  comparison starts two of them from the same bootstrap, one on the current checkout and
  one on the baseline's, so both sides run in the same kind of process with the same
  warm caches, and the bench alternates their calls in one loop;
- `cli_argv` runs `python -m memstore` from either checkout through the same bootstrap;
- the hook runs as registered, `python -S <checkout>/memstore/hookrun.py --root ROOT`,
  which puts its own checkout on the path.

The bootstrap puts the checkout first on sys.path and drops the editable install's import
finders, which would otherwise hand out the current checkout's modules (in particular
`memstore.migrations`, installed from the top-level migrations/ folder). Each worker
reports where its memstore and migrations came from, and that is checked.

The baseline never touches the current corpora: each gets a copy (`cp -a`, so mtimes,
which render falls back on, are kept; runtime/ left out) whose mirror the baseline
code builds itself, since the mirror's schema differs between commits.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore_devtools.bench.common import REPO, OverBudget, log

if TYPE_CHECKING:
    from memstore_devtools.bench.common import Bench

CODE_ENV = "BENCH_MEMSTORE_CODE"
# A slower side within this share of the other counts as "not slower" (the medians of
# back-to-back runs on this shared 2-core machine move by about this much).
TOLERANCE = 0.05

BOOT = r"""
import importlib.util, os, sys
_code = os.environ["BENCH_MEMSTORE_CODE"]
sys.meta_path[:] = [f for f in sys.meta_path
                    if "editable" not in ((getattr(f, "__module__", "") or "")
                                          + (getattr(f, "__name__", "") or ""))]
sys.path[:] = [_code] + [p for p in sys.path if p not in ("", _code)]
_mig = os.path.join(_code, "migrations")
_inside = os.path.isdir(os.path.join(_code, "memstore", "migrations"))
if not _inside and os.path.isfile(os.path.join(_mig, "__init__.py")):
    class _Migrations:  # setup.cfg installs the top-level migrations/ as memstore.migrations
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name != "memstore.migrations":
                return None
            return importlib.util.spec_from_file_location(
                name, os.path.join(_mig, "__init__.py"), submodule_search_locations=[_mig])
    sys.meta_path.insert(0, _Migrations)
"""

CLI_MAIN = r"""
import runpy
sys.argv = ["memstore", *sys.argv[1:]]
runpy.run_module("memstore", run_name="__main__", alter_sys=True)
"""

WORKER_OPS = r"""
import datetime as dt, json, time, traceback
from pathlib import Path

answer = os.fdopen(os.dup(1), "w", buffering=1)  # replies; anything printed goes to stderr
os.dup2(2, 1)
sys.stdout = sys.stderr
import memstore, memstore.migrations


def _when(text):
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def op_render(root, now):
    from memstore.core.config import load_config
    from memstore.mirror.render import render
    from memstore.mirror.sync import open_mirror

    root = Path(root)
    conn = open_mirror(root, load_config(root))
    try:
        result = render(conn, root, _when(now), load_config(root))
    finally:
        conn.close()
    return {"hot": sorted(e.filename for e in result.bands.hot), "t2": len(result.bands.entries)}


def op_search(root, query, limit):
    try:
        store = memstore.Store
    except AttributeError:
        store = None
    if store is not None:  # the library's one entry point
        hits = [h.path for h in store(root).search(query, limit, catch_up="quick")]
    else:  # before memstore.Store: search_root was the library entry point
        from memstore.mirror.search import search_root
        hits = [h["path"] for h in search_root(Path(root), query, limit=limit)]
    return {"hits": len(hits), "top": hits[0] if hits else None}


def op_rebuild(root):
    from memstore.mirror.sync import rebuild
    return {"scanned": rebuild(Path(root)).scanned}


def op_sync(root):
    from memstore.mirror.sync import sync
    report = sync(Path(root))
    return {"scanned": report.scanned, "changed": report.changed, "added": report.added}


def op_hook_command(root):
    from memstore.wiring.install_base import hook_command
    return hook_command(Path(root))


"""

# The loop after every op_ function a worker program defines; an op may time itself by returning
# a dict with "seconds" (what it did around the measured part is then left out).
WORKER_LOOP = r"""
OPS = {name[3:]: fn for name, fn in list(globals().items()) if name.startswith("op_")}
answer.write(json.dumps({"memstore": memstore.__file__,
                         "migrations": memstore.migrations.__file__}) + "\n")
for line in sys.stdin:
    request = json.loads(line)
    try:
        start = time.perf_counter()
        value = OPS[request["op"]](**request["args"])
        seconds = time.perf_counter() - start
        if isinstance(value, dict) and "seconds" in value:
            seconds = value.pop("seconds")
        answer.write(json.dumps({"ok": True, "seconds": seconds, "value": value}) + "\n")
    except Exception:
        answer.write(json.dumps({"ok": False, "error": traceback.format_exc()}) + "\n")
"""
WORKER_MAIN = WORKER_OPS + WORKER_LOOP


class Worker:
    """A long-lived child running memstore from `code`; `call` times one operation inside it."""

    def __init__(self, code: Path, python: str, env: dict[str, str], log_path: Path,
                 program: str = WORKER_MAIN) -> None:
        self.code = code
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115  (closed in close())
        self.proc = subprocess.Popen(
            [python, "-c", BOOT + program],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env={**env, CODE_ENV: str(code)},
            cwd=code,
            text=True,
            bufsize=1,
        )
        hello = self._read(120.0)
        where = [hello.get("memstore", ""), hello.get("migrations", "")]
        if not all(str(Path(p).resolve()).startswith(str(code.resolve()) + os.sep) for p in where):
            self.close()
            raise RuntimeError(f"worker for {code} imported memstore from elsewhere: {where}")

    def _read(self, timeout: float | None) -> dict[str, Any]:
        assert self.proc.stdout is not None
        if timeout:
            with selectors.DefaultSelector() as sel:
                sel.register(self.proc.stdout, selectors.EVENT_READ)
                if not sel.select(timeout):
                    self.close()
                    raise OverBudget(f"worker for {self.code}: no answer within {timeout:g} s")
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker for {self.code} died; its log: {self.log_path}")
        return json.loads(line)

    def call(self, op: str, timeout: float | None = None, **args: Any) -> tuple[float, Any]:
        """(seconds the operation took inside the worker, its value)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, "args": args}) + "\n")
        self.proc.stdin.flush()
        reply = self._read(timeout)
        if not reply["ok"]:
            raise RuntimeError(f"worker for {self.code}, {op}: {reply['error']}")
        return reply["seconds"], reply["value"]

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def _git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.strip()


class Baseline:
    """The commit `ref` checked out in a temporary worktree, and the means to run it."""

    def __init__(self, ref: str, b: Bench) -> None:
        self.ref = ref
        self.bench = b
        self.sha = _git("rev-parse", "--short", f"{ref}^{{commit}}")
        self.subject = _git("log", "-1", "--format=%s", self.sha)
        self.folder = Path(tempfile.mkdtemp(prefix="memstore-bench-baseline-"))
        self.code = self.folder / "tree"
        log(f"baseline {ref} = {self.sha}: git worktree add {self.code}")
        _git("worktree", "add", "--detach", "--quiet", str(self.code), self.sha)
        self.workers: dict[str, Worker] = {}
        self.roots: dict[str, Path] = {}
        self.compiled = False

    @property
    def label(self) -> str:
        return self.ref if self.ref == self.sha else f"{self.ref} ({self.sha})"

    def describe(self) -> str:
        return f"`{self.ref}` = {self.sha} (\"{self.subject}\")"

    def code_for(self, side: str) -> Path:
        return self.code if side == "baseline" else REPO

    def env_for(self, side: str) -> dict[str, str]:
        return {**self.bench.env, CODE_ENV: str(self.code_for(side))}

    def worker(self, side: str) -> Worker:
        """The worker of `side` ("current" or "baseline"), started on first use."""
        if side not in self.workers:
            logs = self.bench.workdir / "baseline-logs"
            logs.mkdir(exist_ok=True)
            self.workers[side] = Worker(self.code_for(side), self.bench.python, self.bench.env,
                                        logs / f"worker-{side}.log")
        return self.workers[side]

    def restart(self, side: str) -> None:
        worker = self.workers.pop(side, None)
        if worker is not None:
            worker.close()

    def cli_argv(self, side: str, root: Path, *args: str) -> list[str]:
        """`python -m memstore --root ROOT ARGS` from the checkout of `side`
        (env: env_for(side))."""
        return [self.bench.python, "-c", BOOT + CLI_MAIN, "--root", str(root), *args]

    def cli(self, side: str, root: Path, *args: str) -> Any:
        from memstore_devtools.bench.common import run_child

        child = run_child(self.cli_argv(side, root, *args), self.env_for(side))
        if child.returncode != 0:
            raise RuntimeError(f"{side} memstore {' '.join(args)} exited {child.returncode}: "
                               f"{child.stderr[-500:]}")
        return child

    def compile_bytecode(self) -> None:
        """As `memstore install` does, for the baseline's checkout (the hook starts with -S)."""
        if not self.compiled:
            subprocess.run([self.bench.python, "-m", "compileall", "-q", "memstore"],
                           cwd=self.code, check=True, env=self.bench.env)
            self.compiled = True

    def root(self, n: int, **overrides: Any) -> Path:
        """A copy of the bench's corpus (n T2 files, overrides) for the baseline, its mirror built
        by the baseline's own `sync` (a first build: the schema differs between commits)."""
        source = self.bench.corpus(n, **overrides)
        key = source.name
        if key in self.roots:
            return self.roots[key]
        target = self.bench.workdir / f"baseline-{self.sha}" / key
        marker = target / ".bench-baseline"
        stamp = f"{self.sha} {(source / '.bench-corpus').read_text()}"
        if marker.exists() and marker.read_text() == stamp:
            log(f"baseline: reusing the copy of {key} at {target}")
        else:
            if target.exists():
                shutil.rmtree(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            log(f"baseline: copying {key} (cp -a, without runtime/)")
            start = time.perf_counter()
            subprocess.run(["cp", "-a", str(source), str(target)], check=True)
            shutil.rmtree(target / "runtime", ignore_errors=True)
            log(f"  copied in {time.perf_counter() - start:.1f} s; building its mirror with "
                f"{self.sha}'s sync")
            start = time.perf_counter()
            self.worker("baseline").call("sync", root=str(target))
            log(f"  built in {time.perf_counter() - start:.1f} s")
            marker.write_text(stamp)
        self.roots[key] = target
        return target

    def close(self) -> None:
        for side in list(self.workers):
            self.restart(side)
        with contextlib.suppress(subprocess.CalledProcessError, OSError):
            _git("worktree", "remove", "--force", str(self.code))
        shutil.rmtree(self.folder, ignore_errors=True)
        with contextlib.suppress(subprocess.CalledProcessError, OSError):
            _git("worktree", "prune")


def not_slower(current: float, baseline: float) -> bool:
    """current / baseline within TOLERANCE of 1 or below."""
    return current / baseline <= 1 + TOLERANCE


def fmt_speedup(current: float, baseline: float) -> str:
    """How many times faster the current code is (baseline / current)."""
    from memstore_devtools.bench.common import fmt_x

    return fmt_x(baseline / current)


__all__ = ["TOLERANCE", "Baseline", "Worker", "fmt_speedup", "not_slower"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit("memstore_devtools.bench.baseline is used by scripts/bench.py --baseline-ref REF")

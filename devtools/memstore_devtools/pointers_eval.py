"""The prompt's pointers (memstore.core.pointers) on memory-shaped data: push recall and precision
on the LoCoMo observations and the LongMemEval pool (memstore_devtools.memories builds the roots),
pushes on off-topic prompts, and the largest push.

Each question is a prompt. A push succeeds when one of its pointers came from the question's
evidence (recall: questions with such a push; precision: pointers that are such). MEMORY.md is
left out (no root here has one), so the pointers are measured alone. The floor is the one the
nightly tick measures. About 15% of the questions (by a hash of their text) are held out and
reported apart; nothing was tuned on them.

    .venv/bin/python scripts/eval_pointers.py [--set locomo-observations|longmemeval|all]
    .venv/bin/python scripts/eval_pointers.py --timing     # the hook at 2,000 and 20,000 memories
    .venv/bin/python scripts/eval_pointers.py --meaning [--timing]  # with the prompt's meaning
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"

# Prompts no memory of a chat or a person's life answers; not PROBES (the floor's own).
OFF_TOPIC = (
    "refactor this class to use dependency injection", "why does mypy complain about this line",
    "add a retry with exponential backoff to the http client", "squash my last three commits",
    "the docker build is slow, can you cache the layers", "write a makefile target for the docs",
    "turn this callback into async await", "what does the -P flag of python do",
    "pin the numpy version in the requirements", "rename the module and fix the imports",
    "explain the difference between a process and a thread", "set up pre-commit hooks",
    "profile this function and tell me the hot spot", "migrate the config from ini to toml",
    "add pagination to the list endpoint", "how do I revert a merge commit",
    "generate an openapi spec for this service", "why is the ci pipeline red",
    "write a bash one-liner to find large files", "what is a monad in simple words",
    "convert these timestamps to utc", "split the test file by feature",
    "suggest a name for the new cli flag", "replace print statements with logging",
    "cache the result of this expensive call", "add a dark mode toggle to the page",
    "the linter wants shorter lines here", "document the public functions",
    "what's a good way to structure a monorepo", "bump the minor version and tag it",
    "fix the flaky test in the scheduler", "how many bytes is a utf-8 emoji",
    "make the error message friendlier", "remove the dead code in utils",
    "compare sqlite and postgres for this use", "write a changelog entry",
    "lint the yaml files", "how do I undo git add", "add type stubs for the vendored library",
    "what does idempotent mean", "sort the imports alphabetically", "speed up the startup time",
)


def held_out(text: str) -> bool:
    return hashlib.sha256(text.encode("utf-8")).digest()[0] < 38  # about 15% of 256


def _root_of(corpus: Any, base: Path) -> tuple[Path, float]:
    from memstore.core import pointers
    from memstore.mirror.sync import sync

    root = base / corpus.label
    corpus.write(root)
    sync(root)
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        found = pointers.measure_floor(conn, str(root), "2026-12-05T00:00:00Z", time.time())
    finally:
        conn.close()
    return root, float(found["floor"])  # type: ignore[arg-type]


def _meaning(root: Path, embedder: Any) -> Any:
    """The prompt's meaning over this root, as the warm process keeps it, every memory embedded."""
    from memstore.meaning.prompt_meaning import PromptMeaning
    from memstore.meaning.vectors import embed_pending

    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        embed_pending(conn, embedder)
        found = PromptMeaning(embedder)
        found.load(conn)
    finally:
        conn.close()
    return found


def evaluate(mset: Any, base: Path, embedder: Any = None) -> dict[str, Any]:
    from memstore.core import pointers

    tally: dict[str, dict[str, float]] = {k: {"questions": 0, "pushed": 0, "hit": 0,
                                              "pointers": 0, "good": 0}
                                          for k in ("tuning", "held out")}
    off = {"prompts": 0, "pushed": 0}
    largest = 0
    floors = []
    for corpus in mset.corpora:
        root, floor = _root_of(corpus, base)
        floors.append(floor)
        meaning = _meaning(root, embedder) if embedder is not None else None

        def near(prompt: str, meaning: Any = meaning) -> list[tuple[str, float]]:
            return meaning.ask(prompt, pointers.POOL) if meaning is not None else []
        conn = sqlite3.connect(root / "runtime" / "memstore.db")
        try:
            for q in corpus.questions:
                picks = pointers.choose(conn, str(root), q.question, "2026-12-05", None, None,
                                        floor, near(q.question))
                part = tally["held out" if held_out(q.question) else "tuning"]
                part["questions"] += 1
                wanted = set(q.evidence)
                good = [p for _s, p, _r in picks if corpus.sources.get(p, frozenset()) & wanted]
                part["pushed"] += bool(picks)
                part["hit"] += bool(good)
                part["pointers"] += len(picks)
                part["good"] += len(good)
                largest = max(largest, len(pointers.text_of(str(root), picks).encode("utf-8")))
            for prompt in OFF_TOPIC:
                off["prompts"] += 1
                off["pushed"] += bool(pointers.choose(conn, str(root), prompt, "2026-12-05",
                                                      None, None, floor, near(prompt)))
        finally:
            conn.close()
    out: dict[str, Any] = {"roots": len(mset.corpora), "floors": [min(floors), max(floors)],
                           "largest_push_bytes": largest,
                           "off_topic_pushed": off["pushed"] / max(1, off["prompts"]),
                           "off_topic_prompts": off["prompts"]}
    for key, t in tally.items():
        out[key] = {"questions": int(t["questions"]),
                    "push_recall": round(t["hit"] / max(1, t["questions"]), 3),
                    "push_precision": round(t["good"] / max(1, t["pointers"]), 3),
                    "pushed_share": round(t["pushed"] / max(1, t["questions"]), 3)}
    return out


PROMPTS = ("how do I annotate chargebacks for the board pack", "rename this variable please",
           "cite prepayments in the csv exports before the deploy", "why is the build red again",
           "the vendor exports broke the kingfisher records")


class _StandIn:
    """The real model's key and size with random unit vectors, for timing alone: embedding the
    20,000-memory root's 43,000 parts took over an hour on two shared cores, and what the hook
    then costs (one query embedding by the real model, one matrix product, the pick) does not
    depend on what the stored vectors hold."""

    def __init__(self) -> None:
        import numpy as np

        from memstore.meaning.embedding import load

        real = load()
        self.key, self.dim = real.key, real.dim
        self._rng = np.random.default_rng(7)

    def passages(self, texts: list[str], bulk: bool = True) -> Any:
        import numpy as np

        found = self._rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return found / np.linalg.norm(found, axis=1, keepdims=True)


def _warm(root: Path, stand_in: bool = False) -> None:
    """Every memory embedded (by the model, or with `stand_in` by _StandIn) and the root's meaning
    process up, as after a SessionStart."""
    from memstore import Store
    from memstore.core import meaning_client

    if stand_in:
        from memstore.meaning.vectors import embed_pending
        from memstore.mirror.embed_background import note_coverage

        embedder = _StandIn()
        conn = sqlite3.connect(root / "runtime" / "memstore.db")
        try:
            done = embed_pending(conn, embedder)  # type: ignore[arg-type]
            note_coverage(root, conn, embedder.key, done.pending)
        finally:
            conn.close()
    else:
        Store(root).embed()
    meaning_client.start(str(root))
    ends = time.monotonic() + 120
    while meaning_client.ask(str(root), "warm up", 1, timeout=2.0) is None:
        if time.monotonic() > ends:
            raise SystemExit("the meaning process did not come up: see "
                             "runtime/state/meaning-server.log")
        time.sleep(0.2)


def timing(sizes: tuple[int, ...] = (2000, 20000), calls: int = 40, meaning: bool = False,
           stand_in: bool = False) -> None:
    """The prompt hook's median, as the client runs it (`python -S hookrun.py`), against a bare
    `python -c pass`, interleaved call by call (a shared machine's load hits both alike). With
    `meaning`: the hook asking the root's warm meaning process, beside the hook by words alone."""
    import json
    import statistics
    import subprocess
    import sys

    from memstore import Store
    from memstore.mirror import meaning_server
    from memstore_devtools.corpus import CorpusSpec, generate_corpus

    hookrun = Path(__file__).resolve().parents[2] / "memstore" / "hookrun.py"
    words_env = {**os.environ, "MEMSTORE_SEMANTIC": "off"}
    meant_env = {**os.environ, "MEMSTORE_SEMANTIC": "auto"}
    with tempfile.TemporaryDirectory(prefix="memstore-pointer-timing-") as tmp:
        for size in sizes:
            root = Path(tmp) / f"t2-{size}"
            generate_corpus(root, CorpusSpec(t2=size, seed=7))
            Store(root).tick()  # the mirror, MEMORY.md and the floor, as after a night
            if meaning:
                os.environ["MEMSTORE_SEMANTIC"] = "auto"
                _warm(root, stand_in)
            runs: dict[str, list[float]] = {"hook": [], "meaning": [], "bare": []}
            for i in range(calls):
                payload = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": f"t{i}",
                                      "cwd": str(root), "prompt": PROMPTS[i % len(PROMPTS)]})
                for key, env in (("hook", words_env), ("meaning", meant_env)):
                    if key == "meaning" and not meaning:
                        continue
                    t0 = time.perf_counter()
                    subprocess.run([sys.executable, "-S", str(hookrun), "--root", str(root)],
                                   input=payload.encode(), capture_output=True, check=False,
                                   env=env)
                    runs[key].append(time.perf_counter() - t0)
                t1 = time.perf_counter()
                subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=False)
                runs["bare"].append(time.perf_counter() - t1)
            if meaning:
                meaning_server.stop(str(root))
                os.environ["MEMSTORE_SEMANTIC"] = "off"
            mb = statistics.median(runs["bare"])
            for key in ("hook", "meaning"):
                if runs[key]:
                    mh = statistics.median(runs[key])
                    label = "hook, words" if key == "hook" else "hook, meaning"
                    print(f"{size:,} memories: {label} {mh * 1000:.0f} ms, python -c pass "
                          f"{mb * 1000:.0f} ms, {mh / mb:.2f}x (goal at most 3x)")


def main(argv: list[str] | None = None) -> int:
    from memstore_devtools.memories import load_locomo_observations, load_longmemeval

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="all",
                    choices=("all", "locomo-observations", "longmemeval"))
    ap.add_argument("--meaning", action="store_true",
                    help="words and the prompt's meaning (the semantic extra), as the warm process")
    ap.add_argument("--stand-in-vectors", action="store_true",
                    help="with --meaning --timing: random vectors under the model's key instead of "
                         "embedding every memory (the cost is the same; an hour saved at 20,000)")
    ap.add_argument("--sizes", default="2000,20000",
                    help="with --timing: the root sizes, comma-separated")
    ap.add_argument("--timing", action="store_true",
                    help="the hook's median at 2,000 and 20,000 memories against bare python")
    args = ap.parse_args(argv)
    os.environ["MEMSTORE_SEMANTIC"] = "off"
    os.environ["MEMSTORE_EMBED_BACKGROUND"] = "off"
    if args.timing:
        timing(sizes=tuple(int(n) for n in args.sizes.split(",")), meaning=args.meaning,
               stand_in=args.stand_in_vectors)
        return 0
    sets = []
    if args.set in ("all", "locomo-observations"):
        sets.append(load_locomo_observations(DATA / "locomo-dev.json"))
    if args.set in ("all", "longmemeval"):
        sets.append(load_longmemeval(DATA / "longmemeval-oracle-dev.json"))
    embedder = None
    if args.meaning:
        from memstore.meaning.embedding import load

        embedder = load()
    for mset in sets:
        with tempfile.TemporaryDirectory(prefix="memstore-pointers-") as tmp:
            started = time.perf_counter()
            found = evaluate(mset, Path(tmp), embedder)
        print(f"{mset.name}: {found['roots']} root(s), floor {found['floors'][0]:.2f} to "
              f"{found['floors'][1]:.2f}, {time.perf_counter() - started:.0f} s")
        for key in ("tuning", "held out"):
            part = found[key]
            print(f"  {key:9} {part['questions']:4} questions: push recall "
                  f"{part['push_recall']:.3f}, precision {part['push_precision']:.3f}, "
                  f"pushed on {part['pushed_share']:.0%}")
        print(f"  off-topic: {found['off_topic_pushed']:.1%} of {found['off_topic_prompts']} "
              f"pushed; largest push {found['largest_push_bytes']} bytes")
    return 0

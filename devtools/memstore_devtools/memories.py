"""Measure memstore's search on memories shaped like memories:
LoCoMo's observations, LongMemEval's sessions.

Turn-level LoCoMo (memstore_devtools.locomo) asks for one chat turn out of a conversation,
and most of its misses cannot be found from one turn alone. An agent's memories are
shaped otherwise: a fact, or what a session was about. Two sets measure that (issue 34;
the definitions are those of ../shared/data/README.md):

- ``locomo-observations``: LoCoMo's own fact-shaped memories, the ``observation`` lists
  its authors wrote per session and speaker, each with the turn(s) it came from. One
  observation per memory file (body "(session date) fact"), one root per conversation
  (a search sees only its conversation). A question (category 5 left out) succeeds at k
  when one of the first k hits came from a turn in its evidence; questions whose evidence
  has no observation are left out (nothing could be found) and counted.
- ``longmemeval``: LongMemEval's oracle variant, pooled. Every evidence session of every
  question is one memory (its user turns joined, as the paper's session-level corpus), all
  in one root; each question whose id does not end in ``_abs`` (abstention) is asked over
  the whole pool, and succeeds at k when an answer session is among the first k.

Backends (``--backend``, default ``all``, reported side by side): ``fts``, the library in
process with FTS5 alone, and ``hybrid``, the same after every file is embedded (the
``semantic`` extra), searched with ``mode="hybrid"``. Both are memstore_devtools.locomo's.

Usage (scripts/eval_memories.py only calls `main` here)::

    .venv/bin/python scripts/eval_memories.py                       # both sets, both backends
    .venv/bin/python scripts/eval_memories.py --set longmemeval --backend fts
    .venv/bin/python scripts/eval_memories.py --json out.json --verbose
    .venv/bin/python scripts/eval_memories.py --conversations 0 --questions 40   # a quick look

``--conversations`` keeps some of LoCoMo's roots; ``--questions N`` asks a seeded sample of
N questions of each set (every memory of the set stays in its roots): the figures of a
subset, for a quick check, not the headline.

Exit status: 0; 1 when a backend asked for could not be measured (said why); 2 for bad
usage. The data is a measuring stick, not a training set: do not tune to single questions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstore_devtools import REPO
from memstore_devtools.locomo import (
    DEFAULT_DATA as LOCOMO_DATA,
)
from memstore_devtools.locomo import (
    EVIDENCE_RE,
    KS,
    LIMIT,
    UNRELATED,
    Backend,
    Conversation,
    HybridBackend,
    MemstoreBackend,
    Question,
    format_table,
    load_conversations,
    parse_conversation_spec,
    parse_session_date,
    relative_path,
    summarize,
)

LONGMEMEVAL_DATA = REPO.parent / "shared" / "data" / "longmemeval-oracle-dev.json"
SETS = ("locomo-observations", "longmemeval")
BACKENDS = ("fts", "hybrid")
OBSERVATION_KEY_RE = re.compile(r"session_(\d+)_observation")
# LongMemEval's question types, numbered so a Question's category stays an int.
LME_TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
             "multi-session", "knowledge-update", "temporal-reasoning")
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
PROGRESS_EVERY_S = 20.0  # a stderr line at least this often while embedding (the test's watchdog)


@dataclass
class Corpus:
    """One root of memory files and the questions asked of it."""

    label: str  # "c0", "pool"
    files: dict[str, str]  # file name -> file text
    sources: dict[str, frozenset[str]]  # "memory/<file>" -> the turn or session ids it came from
    questions: list[Question]
    left_out: int = 0  # its questions with nothing to find
    holder: Conversation = field(init=False)  # what locomo's backends search: only its root is used

    def __post_init__(self) -> None:
        self.holder = Conversation(0, self.label, [], [])

    def write(self, root: Path) -> None:
        mem = root / "memory"
        mem.mkdir(parents=True, exist_ok=True)
        for name, text in self.files.items():
            (mem / name).write_text(text, encoding="utf-8")
        self.holder.root = root


@dataclass
class MemorySet:
    name: str
    data: Path
    corpora: list[Corpus]
    left_out: int  # questions with nothing to find (no observation of their evidence)
    category_names: dict[int, str]


def memory_file(name: str, summary: str, created: str, body: str) -> str:
    flat = " ".join(summary.split())[:120]  # a summary is one line
    # json.dumps is a valid YAML double-quoted scalar; ensure_ascii=False keeps emoji as they are.
    return (f"---\nname: {name}\ntype: reference\nsummary: {json.dumps(flat, ensure_ascii=False)}\n"
            f"created: {created}\n---\n{body}\n")


# ----------------------------------------------------------------------------- the sets


def source_ids(raw: Any) -> frozenset[str]:
    """'D1:3', ['D15:3', 'D15:5'] or a typo such as 'D:11:26' -> {'D1:3', ...}."""
    items = raw if isinstance(raw, list) else [raw]
    return frozenset(f"D{int(s)}:{int(t)}"
                     for item in items for s, t in EVIDENCE_RE.findall(str(item)))


def load_locomo_observations(path: Path) -> MemorySet:
    raw = json.loads(path.read_text(encoding="utf-8"))
    convs = load_conversations(path, None)  # the questions: category 5 out, evidence ids cleaned
    corpora: list[Corpus] = []
    left_out = 0
    for conv, item in zip(convs, raw, strict=True):
        files: dict[str, str] = {}
        sources: dict[str, frozenset[str]] = {}
        for key, by_speaker in item["observation"].items():
            m = OBSERVATION_KEY_RE.fullmatch(key)
            if not m:
                continue
            session = int(m.group(1))
            when = item["conversation"][f"session_{session}_date_time"]
            facts = [fact for lst in by_speaker.values() for fact in lst]
            for j, (text, dia) in enumerate(facts, 1):
                name = f"reference_c{conv.index}-s{session}-o{j}"
                files[f"{name}.md"] = memory_file(name, text, parse_session_date(when),
                                                  f"({when}) {text}")
                sources[f"memory/{name}.md"] = source_ids(dia)
        observed = frozenset().union(*sources.values())
        kept = [q for q in conv.questions if observed & set(q.evidence)]
        left_out += len(conv.questions) - len(kept)
        corpora.append(Corpus(f"c{conv.index}", files, sources, kept,
                              len(conv.questions) - len(kept)))
    return MemorySet("locomo-observations", path, corpora, left_out, LOCOMO_CATEGORIES)


def lme_date(value: str) -> str:
    """'2023/05/21 (Sun) 19:50' -> '2023-05-21'."""
    return value.split(" ", 1)[0].replace("/", "-")


def load_longmemeval(path: Path) -> MemorySet:
    raw = json.loads(path.read_text(encoding="utf-8"))
    files: dict[str, str] = {}
    sources: dict[str, frozenset[str]] = {}
    for item in raw:
        for sid, when, turns in zip(item["haystack_session_ids"], item["haystack_dates"],
                                    item["haystack_sessions"], strict=True):
            name = "reference_lme-" + re.sub(r"[^a-z0-9_-]", "-", sid.lower())
            if f"memory/{name}.md" in sources:
                continue  # a session two questions share is one memory
            said = [str(t["content"]).strip() for t in turns if t.get("role") == "user"]
            files[f"{name}.md"] = memory_file(name, said[0] if said else sid, lme_date(when),
                                              "\n\n".join(said))
            sources[f"memory/{name}.md"] = frozenset([sid])
    questions = [
        Question(0, qi, item["question"], str(item.get("answer", "")),
                 LME_TYPES.index(item["question_type"]) + 1, list(item["answer_session_ids"]))
        for qi, item in enumerate(raw)
        if not str(item["question_id"]).endswith("_abs")
    ]
    names = {i + 1: t for i, t in enumerate(LME_TYPES)}
    abstentions = len(raw) - len(questions)
    return MemorySet("longmemeval", path, [Corpus("pool", files, sources, questions)], abstentions,
                     names)


# --------------------------------------------------------------------------- backends


class EmbeddingBackend(HybridBackend):
    """locomo's hybrid backend, saying on stderr how the embedding goes
    (a long pass is not a stall)."""

    verbose = False

    def prepare(self, conv: Conversation) -> None:
        assert self._store is not None and conv.root is not None
        last = [time.monotonic()]

        def progress(done: int, total: int) -> None:
            if self.verbose and time.monotonic() - last[0] >= PROGRESS_EVERY_S:
                last[0] = time.monotonic()
                print(f"  hybrid: {conv.sample_id} embedding {done}/{total}", file=sys.stderr,
                      flush=True)

        store = self._store(conv.root)
        first = store.rebuild().vectors or {}  # embeds for its budget; embed() does the rest
        report = store.embed(progress=progress)
        self.embedded += int(first.get("embedded", 0)) + report.embedded
        self.embed_seconds += float(first.get("seconds", 0.0)) + report.seconds


def make_backend(name: str) -> Backend:
    backend: Backend = MemstoreBackend() if name == "fts" else EmbeddingBackend()
    backend.name = name  # the key its results are kept under
    return backend


def run(backend: Backend, mset: MemorySet, verbose: bool) -> dict[str, Any]:
    """Prepare each root of the set and ask its questions; the backend's figures for the set."""
    t_index = t_ask = 0.0
    errors = 0
    first_error: str | None = None
    embedded0, embed_s0 = getattr(backend, "embedded", 0), getattr(backend, "embed_seconds", 0.0)
    for corpus in mset.corpora:
        t0 = time.perf_counter()
        try:
            backend.prepare(corpus.holder)
        except Exception as exc:  # reported as unavailable, never a crash of the whole run
            return {"available": False,
                    "why": f"preparing {corpus.label} failed: {type(exc).__name__}: {exc}"}
        t_index += time.perf_counter() - t0
        t0 = time.perf_counter()
        for q in corpus.questions:
            started = time.perf_counter()
            try:
                hits = backend.search(corpus.holder, q.question)
                error = None
            except Exception as exc:  # a failed query is a miss, and is reported
                hits, error = [], f"{type(exc).__name__}: {exc}"
                errors += 1
                first_error = first_error or f"{q.question!r}: {error}"
            paths = [relative_path(corpus.holder, h.get("path", "")) for h in hits[:LIMIT]]
            wanted = set(q.evidence)
            rank = next((i + 1 for i, p in enumerate(paths)
                         if corpus.sources.get(p, frozenset()) & wanted), None)
            q.results[backend.name] = {"rank": rank, "paths": paths,
                                       "latency_ms": (time.perf_counter() - started) * 1000.0,
                                       **({"error": error} if error else {})}
        t_ask += time.perf_counter() - t0
        if verbose:
            print(f"  {backend.name}: {mset.name} {corpus.label} done "
                  f"({len(corpus.questions)} questions)", file=sys.stderr, flush=True)
    out: dict[str, Any] = {"available": True, **summarize(questions_of(mset), backend.name),
                           "index_seconds": t_index, "ask_seconds": t_ask, "errors": errors,
                           "first_error": first_error}
    out["per_category"] = {f"{c} {mset.category_names.get(int(c), '?')}": v
                           for c, v in out["per_category"].items()}
    if isinstance(backend, HybridBackend):
        out["embedded"] = backend.embedded - embedded0
        out["embed_seconds"] = backend.embed_seconds - embed_s0
    return out


def subset(mset: MemorySet, conversations: str | None, questions: int | None, seed: int) -> None:
    """Keep the LoCoMo roots `conversations` names,
    then a seeded sample of `questions` questions."""
    if conversations is not None and mset.name == "locomo-observations":
        keep = parse_conversation_spec(conversations, len(mset.corpora))
        mset.corpora = [mset.corpora[i] for i in keep]
        mset.left_out = sum(corpus.left_out for corpus in mset.corpora)
    if questions is not None:
        pool = questions_of(mset)
        picked = {id(q) for q in random.Random(seed).sample(pool, min(questions, len(pool)))}
        for corpus in mset.corpora:
            corpus.questions = [q for q in corpus.questions if id(q) in picked]


def ask_unrelated(mset: MemorySet) -> dict[str, Any]:
    """locomo's UNRELATED asked of each (embedded) root of the set:
    hits, and how many found by meaning."""
    from memstore import Store

    hits = by_meaning = 0
    found: list[str] = []
    for corpus in mset.corpora:
        assert corpus.holder.root is not None
        store = Store(corpus.holder.root, notify=lambda _message: None)
        for question in UNRELATED:
            for hit in store.search(question, limit=LIMIT, mode="hybrid"):
                hits += 1
                if "vector" in hit.signals:
                    by_meaning += 1
                    found.append(f"{corpus.label} {question!r}: {hit.path}")
    return {"questions": len(UNRELATED) * len(mset.corpora), "hits": hits, "by_meaning": by_meaning,
            "found": found}


def questions_of(mset: MemorySet) -> list[Question]:
    return [q for c in mset.corpora for q in c.questions]


# ------------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=(*SETS, "all"), default="all", dest="which")
    ap.add_argument("--backend", choices=(*BACKENDS, "all"), default="all")
    ap.add_argument("--locomo", type=Path, default=LOCOMO_DATA,
                    help=f"LoCoMo JSON (default {LOCOMO_DATA})")
    ap.add_argument("--longmemeval", type=Path, default=LONGMEMEVAL_DATA,
                    help=f"LongMemEval oracle JSON (default {LONGMEMEVAL_DATA})")
    ap.add_argument("--conversations", metavar="SPEC",
                    help="LoCoMo's roots to keep: 'N' = the first N; '0,2' or '1-3' = those "
                         "(default: all)")
    ap.add_argument("--questions", type=int, metavar="N",
                    help="ask a seeded sample of N questions of each set (default: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the --questions sample")
    ap.add_argument("--root", type=Path,
                    help="write the agent roots here and keep them (default: a temp folder)")
    ap.add_argument("--json", type=Path, metavar="FILE", dest="json_out",
                    help="write figures and per-question ranks")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="a line on stderr per backend, set and root")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    # the harness embeds each root: a detached pass started by a rebuild would race it for the lock
    os.environ.setdefault("MEMSTORE_EMBED_BACKGROUND", "off")
    ap = build_parser()
    args = ap.parse_args(argv)
    set_names = list(SETS) if args.which == "all" else [args.which]
    loaders = {"locomo-observations": (load_locomo_observations, args.locomo),
               "longmemeval": (load_longmemeval, args.longmemeval)}
    for name in set_names:
        if not loaders[name][1].is_file():
            ap.error(f"no data file for {name} at {loaders[name][1]}")
    sets = [loaders[name][0](loaders[name][1]) for name in set_names]
    try:
        for mset in sets:
            subset(mset, args.conversations, args.questions, args.seed)
    except ValueError as exc:
        ap.error(str(exc))
    wanted = list(BACKENDS) if args.backend == "all" else [args.backend]

    tmp = None if args.root else tempfile.TemporaryDirectory(prefix="memstore-memories-")
    base = Path(tmp.name) if tmp else args.root.resolve()
    report: dict[str, Any] = {"sets": {}}
    if args.conversations is not None or args.questions is not None:
        report["subset"] = {"conversations": args.conversations, "questions": args.questions,
                            "seed": args.seed}
    failed = False
    try:
        for mset in sets:
            for corpus in mset.corpora:
                corpus.write(base / mset.name / corpus.label)
            report["sets"][mset.name] = {
                "data": str(mset.data), "roots": len(mset.corpora),
                "memories": sum(len(c.files) for c in mset.corpora),
                "questions": len(questions_of(mset)), "left_out": mset.left_out, "backends": {}}
        for name in wanted:
            backend = make_backend(name)
            if isinstance(backend, EmbeddingBackend):
                backend.verbose = args.verbose
            for mset in sets:
                if args.verbose:
                    print(f"{name}: {mset.name} ...", file=sys.stderr, flush=True)
                entry = run(backend, mset, args.verbose) if backend.available else {
                    "available": False, "why": backend.why_unavailable}
                failed = failed or not entry["available"]
                if not entry["available"]:
                    print(f"{name} on {mset.name}: {entry['why']}", file=sys.stderr)
                report["sets"][mset.name]["backends"][name] = entry
                if isinstance(backend, EmbeddingBackend) and entry["available"]:
                    entry["unrelated"] = ask_unrelated(mset)
                if args.verbose:
                    print(f"{name}: {mset.name} done", file=sys.stderr, flush=True)
        print_report(report, wanted)
        for mset in sets:
            report["sets"][mset.name]["per_question"] = [
                {"root": c.label, "qid": q.qid, "question": q.question, "evidence": q.evidence,
                 "rank": {n: r["rank"] for n, r in q.results.items()}}
                for c in mset.corpora for q in c.questions]
        if args.json_out:
            args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            print(f"\nwrote {args.json_out}")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 1 if failed else 0


def print_report(report: dict[str, Any], wanted: list[str]) -> None:
    """success@1/5/10 of each set, the backends side by side; then how long each took."""
    headers = ["set", "memories", "questions"] + [f"{b} s@{k}" for b in wanted for k in KS]
    rows, times = [], []
    for name, entry in report["sets"].items():
        row: list[Any] = [name, entry["memories"], entry["questions"]]
        for b in wanted:
            figures = entry["backends"].get(b, {})
            row += [figures["overall"][f"s@{k}"] if figures.get("available") else None for k in KS]
            if figures.get("available"):
                times.append([name, b, figures["index_seconds"], figures["ask_seconds"],
                              figures["overall"]["mean_ms"], figures.get("embedded"),
                             figures["errors"]])
        rows.append(row)
        print(f"{name}: {entry['memories']} memories in {entry['roots']} root(s), "
              f"{entry['questions']} questions ({entry['left_out']} left out: "
              + ("evidence with no observation)" if name == "locomo-observations"
                 else "abstention, _abs)"))
    print()
    print(format_table(headers, rows))
    print()
    print(format_table(["set", "backend", "index s", "ask s", "mean ms", "embedded", "errors"],
                       times))
    for name, entry in report["sets"].items():
        unrelated = entry["backends"].get("hybrid", {}).get("unrelated")
        if unrelated:
            print(f"\n{name}: {unrelated['questions']} unrelated questions asked (six of each "
                  f"root): {unrelated['hits']} hits, {unrelated['by_meaning']} of them found by "
                  "meaning")


if __name__ == "__main__":
    sys.exit(main())

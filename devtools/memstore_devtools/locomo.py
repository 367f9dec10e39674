"""Measure memstore's search on LoCoMo: does an answering turn reach the top k?

Each dialogue turn of each LoCoMo conversation becomes one memory file in an agent root
of its own (ROOT/c{i}/memory/reference_c{i}-d{s}-{t}.md), so a search only ever sees
that conversation. Every question except category 5 (adversarial: unanswerable by
design) is then asked through one or more search backends, and success@k counts a
question as found when any of its evidence turns' files is among the first k results.

Backends (``--backend``, default ``all``, reported side by side):

- ``bm25``     memstore_devtools.bm25_baseline over the same files' summary + body: the
               reference the data README describes (about 0.54 success@5 on this split);
- ``memstore`` the library in process, FTS5 alone: ``memstore.Store(root).rebuild()``
               then ``Store(root).search(query, limit=10, mode="fts")`` (quick catch-up first);
- ``hybrid``   the library with the ``semantic`` extra: every turn embedded
               (``Store(root).embed()``), then ``search(..., mode="hybrid")``: bm25 and
               vector similarity fused (memstore/mirror/hybrid.py). Unavailable, and said so,
               without the extra;
- ``hybrid-sync`` a root just installed: a fresh copy of the turns with no vectors, one
               ``Store(root).sync()`` (which embeds for its default budget, config
               embed_budget_s, and leaves the rest pending), then ``search(..., mode="hybrid")``
               as a person would run it right then. Reports the share that was embedded;
- ``vector``   the vectors alone: hybrid with ``semantic_weight = 1.0`` (the model's own
               recall, the yardstick for choosing a model);
- ``cli``      ``memstore --root ROOT search QUESTION --json --limit 10 --mode fts`` as a
               subprocess on a sample of questions (``--cli-sample``), to check the
               command line returns what the library does;
- ``cli-hybrid`` the same with ``--mode hybrid``, on the same sample.

Usage (scripts/eval_locomo.py only calls `main` here)::

    .venv/bin/python scripts/eval_locomo.py                     # all backends, 5 conversations
    .venv/bin/python scripts/eval_locomo.py --backend bm25
    .venv/bin/python scripts/eval_locomo.py --backend bm25,memstore,cli --cli-sample 12
    .venv/bin/python scripts/eval_locomo.py --conversations 0,2 --dump-misses 15
    .venv/bin/python scripts/eval_locomo.py --json out.json --min-s5 0.55   # CI gate
    .venv/bin/python scripts/eval_locomo.py --backend hybrid --with-context  # turns with context

Exit status: 0 on success; 1 when ``--min-s5`` is given and memstore's success@5 is
below it (or memstore could not be measured); 2 for bad usage. The data is a
measuring stick, not a training set: do not tune to individual questions.
"""

from __future__ import annotations

import abc
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memstore_devtools import REPO
from memstore_devtools.bm25_baseline import BM25Index

DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo-dev.json"
KS = (1, 5, 10)
LIMIT = 10
BACKENDS = ("bm25", "memstore", "hybrid-sync", "hybrid", "vector", "cli", "cli-hybrid")
# Questions no LoCoMo conversation discusses (chats about family, hobbies and work): after
# the hybrid backend, each is asked of every conversation, and what comes back is counted.
UNRELATED = ("capital of Mongolia", "国際宇宙ステーションの軌道",
             "rust borrow checker lifetime error", "kubernetes pod eviction policy",
             "how to rotate TLS certificates", "boiling point of mercury")
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SESSION_KEY_RE = re.compile(r"session_(\d+)")
# Evidence ids are mostly "D1:3", but the data carries a few typos: "D8:6; D9:17" in
# one string and "D:11:26". Pull out every D<session>:<turn> we can recognise.
EVIDENCE_RE = re.compile(r"D:?(\d+):(\d+)")


# ----------------------------------------------------------------------------- data


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    when: str  # the session's date_time string as written, e.g. "1:56 pm on 8 May, 2023"
    caption: str | None


@dataclass
class Question:
    conv: int
    qid: int  # position in the conversation's qa list
    question: str
    answer: str
    category: int
    evidence: list[str]
    # backend -> {"rank": 1-based rank of the first evidence file or None,
    #             "paths": [...], "summaries": [...], "latency_ms": float, "error": str?}
    results: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Conversation:
    index: int
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    root: Path | None = None
    path_to_dia: dict[str, str] = field(default_factory=dict)  # "memory/x.md" -> dia_id
    dia_to_path: dict[str, str] = field(default_factory=dict)
    skipped_questions: int = 0  # non-adversarial questions with no usable evidence id


def parse_session_date(value: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08'."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%d")


def normalize_evidence(raw: Sequence[str], known: set[str]) -> list[str]:
    """Recognisable evidence ids that name a real turn, in order, without repeats."""
    found: list[str] = []
    for item in raw:
        for sess, turn in EVIDENCE_RE.findall(str(item)):
            dia = f"D{int(sess)}:{int(turn)}"
            if dia in known and dia not in found:
                found.append(dia)
    return found


def parse_conversation_spec(spec: str | None, total: int) -> list[int]:
    """'3' -> first three; '0,2' or '1-3' or '2-2' -> those indices."""
    if spec is None:
        return list(range(total))
    spec = spec.strip()
    if spec.isdigit():
        return list(range(min(int(spec), total)))
    chosen: list[int] = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        lo, _, hi = part.partition("-")
        for i in range(int(lo), int(hi or lo) + 1):
            if not 0 <= i < total:
                raise ValueError(f"conversation index {i} out of range 0..{total - 1}")
            if i not in chosen:
                chosen.append(i)
    return chosen


def load_conversations(path: Path, indices: list[int] | None) -> list[Conversation]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    wanted = range(len(raw)) if indices is None else indices
    out: list[Conversation] = []
    for ci in wanted:
        item = raw[ci]
        conv = item["conversation"]
        sessions = sorted((int(m.group(1)), key) for key in conv
                          if (m := SESSION_KEY_RE.fullmatch(key)))
        turns: list[Turn] = []
        for _, key in sessions:
            when = conv.get(f"{key}_date_time", "")
            for t in conv[key] or []:
                caption = t.get("blip_caption")
                if caption is None and t.get("img_url"):
                    caption = ""  # an image without a caption is still worth saying
                turns.append(Turn(t["dia_id"], t["speaker"], t["text"], when, caption))
        known = {t.dia_id for t in turns}
        questions: list[Question] = []
        skipped = 0
        for qi, q in enumerate(item["qa"]):
            if q.get("category") == 5:
                continue
            evidence = normalize_evidence(q.get("evidence") or [], known)
            if not evidence:
                skipped += 1  # nothing to find: counting it would only add noise
                continue
            questions.append(Question(ci, qi, q["question"], str(q.get("answer", "")),
                                      int(q["category"]), evidence))
        out.append(Conversation(ci, item.get("sample_id", f"conv-{ci}"), turns, questions,
                                skipped_questions=skipped))
    return out


# ------------------------------------------------------------------------ the corpus


def memory_name(conv: int, dia_id: str) -> str:
    return f"reference_c{conv}-{dia_id.lower().replace(':', '-')}"


def render_turn(conv: int, turn: Turn, before: Turn | None = None) -> tuple[str, str]:
    """(file name, file text) of one turn as a memory file;
    `before`, the turn it replied to, as its context."""
    name = memory_name(conv, turn.dia_id)
    flat = " ".join(turn.text.split())  # a summary is one line
    # json.dumps yields a valid YAML double-quoted scalar; ensure_ascii=False keeps emoji
    # as themselves rather than surrogate-pair escapes a YAML parser would mangle.
    summary = json.dumps(f"{turn.speaker}: {flat[:120]}", ensure_ascii=False)
    body = f"{turn.speaker} said on {turn.when}: {turn.text}"
    if turn.caption is not None:
        body += f" [shared an image: {turn.caption}]" if turn.caption else " [shared an image]"
    context = "" if before is None else json.dumps(
        before.speaker + ": " + " ".join(before.text.split()), ensure_ascii=False)
    text = (
        "---\n"
        f"name: {name}\n"
        "type: reference\n"
        f"summary: {summary}\n"
        + (f"context: {context}\n" if before is not None else "")
        + f"created: {parse_session_date(turn.when)}\n"
        "---\n"
        f"{body}\n"
    )
    return f"{name}.md", text


def write_corpus(conv: Conversation, root: Path, with_context: bool = False) -> None:
    """Lay out ROOT/memory/ with one file per turn and record the path <-> id maps.

    with_context: each turn's memory says the turn before it in its session as `context:` (a
    session's first turn has none), the "turns with context" input: not the plain turns'."""
    mem = root / "memory"
    mem.mkdir(parents=True, exist_ok=True)
    ours: set[str] = set()
    for i, turn in enumerate(conv.turns):
        before = conv.turns[i - 1] if with_context and i else None
        if before is not None and before.dia_id.split(":")[0] != turn.dia_id.split(":")[0]:
            before = None
        filename, text = render_turn(conv.index, turn, before)
        (mem / filename).write_text(text, encoding="utf-8")
        rel = f"memory/{filename}"
        ours.add(filename)
        conv.path_to_dia[rel] = turn.dia_id
        conv.dia_to_path[turn.dia_id] = rel
    strays = [p.name for p in mem.glob("*.md") if p.name not in ours]
    if strays:
        print(
            f"warning: {mem} holds {len(strays)} other .md files (e.g. {strays[0]}); "
            "they are searched too",
            file=sys.stderr,
        )
    conv.root = root


def reader_text(path: Path) -> str:
    """Summary + body of a memory file: what a person reading it would take in."""
    text = path.read_text(encoding="utf-8")
    summary = ""
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            for line in text[4:end].splitlines():
                key, _, value = line.partition(":")
                if key.strip() == "summary":
                    value = value.strip()
                    try:
                        summary = json.loads(value) if value.startswith('"') else value
                    except json.JSONDecodeError:
                        summary = value
            body = text[end + 5 :]
    return f"{summary}\n{body}"


# -------------------------------------------------------------------------- backends


class Backend(abc.ABC):
    """One way of searching a conversation's root. Subclasses fill in the hooks."""

    name = "?"

    def __init__(self) -> None:
        self.available = True
        self.why_unavailable = ""
        self.build_seconds = 0.0
        self.first_error: str | None = None
        self.errors = 0

    def prepare(self, conv: Conversation) -> None:  # noqa: B027 - optional: most backends need none
        """Index one conversation's root (timed by the caller)."""

    @abc.abstractmethod
    def search(self, conv: Conversation, query: str) -> list[dict[str, Any]]:
        """Top results as dicts with at least 'path' relative to the root."""


class BM25Backend(Backend):
    name = "bm25"

    def __init__(self) -> None:
        super().__init__()
        self._index: dict[int, tuple[BM25Index, list[str], list[str]]] = {}

    def prepare(self, conv: Conversation) -> None:
        assert conv.root is not None
        paths = sorted(conv.path_to_dia)
        texts = [reader_text(conv.root / p) for p in paths]
        summaries = [t.split("\n", 1)[0] for t in texts]
        self._index[conv.index] = (BM25Index(texts), paths, summaries)

    def search(self, conv: Conversation, query: str) -> list[dict[str, Any]]:
        index, paths, summaries = self._index[conv.index]
        return [{"path": paths[i], "summary": summaries[i], "score": s}
                for i, s in index.search(query, LIMIT)]


class MemstoreBackend(Backend):
    name = "memstore"
    mode = "fts"

    def __init__(self) -> None:
        super().__init__()
        self._store: Callable[..., Any] | None = None
        try:
            from memstore import Store  # type: ignore[import-not-found]
        except Exception as exc:  # any failure means "not ready yet", never a crash
            self.available = False
            self.why_unavailable = f"memstore not importable yet ({type(exc).__name__}: {exc})"
        else:
            self._store = Store

    def prepare(self, conv: Conversation) -> None:
        assert self._store is not None and conv.root is not None
        from memstore.core.config import Config

        # FTS alone: the rebuild need not embed anything (vectors already made are carried over).
        self._store(conv.root, config=Config(semantic="off")).rebuild()

    def search(self, conv: Conversation, query: str) -> list[dict[str, Any]]:
        assert self._store is not None and conv.root is not None
        return [hit.to_json()
                for hit in self._store(conv.root).search(query, limit=LIMIT, mode=self.mode)]


class HybridBackend(MemstoreBackend):
    name = "hybrid"
    mode = "hybrid"

    def __init__(self) -> None:
        super().__init__()
        if self.available:
            from memstore.meaning import embedding

            if not embedding.installed():
                self.available = False
                self.why_unavailable = ("the semantic extra is not installed "
                                        "(pip install 'memstore[semantic]')")
        self.embedded = 0
        self.embed_seconds = 0.0

    def prepare(self, conv: Conversation) -> None:
        assert self._store is not None and conv.root is not None
        store = self._store(conv.root)
        first = store.rebuild().vectors or {}  # embeds for its budget; embed() does the rest
        report = store.embed()
        self.embedded += int(first.get("embedded", 0)) + report.embedded
        self.embed_seconds += float(first.get("seconds", 0.0)) + report.seconds


class HybridSyncBackend(HybridBackend):
    """Hybrid search on a root whose vectors are still mostly pending:
    right after the first sync."""

    name = "hybrid-sync"

    def __init__(self) -> None:
        super().__init__()
        self._roots: dict[int, Path] = {}
        self.shares: list[float] = []

    def prepare(self, conv: Conversation) -> None:
        assert self._store is not None and conv.root is not None
        fresh = conv.root.parent / f"{conv.root.name}-sync"
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(conv.root / "memory", fresh / "memory")
        report = self._store(fresh, notify=lambda _message: None).sync()
        vectors = report.vectors or {}
        total = len(conv.turns)
        self.shares.append((total - int(vectors.get("pending", total))) / total if total else 0.0)
        self._roots[conv.index] = fresh

    def search(self, conv: Conversation, query: str) -> list[dict[str, Any]]:
        assert self._store is not None
        store = self._store(self._roots[conv.index], notify=lambda _message: None)
        return [hit.to_json() for hit in store.search(query, limit=LIMIT, mode="hybrid")]


def find_cli() -> list[str] | None:
    """The memstore console script next to this interpreter, on PATH, or `-m memstore`."""
    candidates: list[list[str]] = []
    beside = Path(sys.executable).parent / "memstore"
    if beside.exists():
        candidates.append([str(beside)])
    on_path = shutil.which("memstore")
    if on_path:
        candidates.append([on_path])
    candidates.append([sys.executable, "-m", "memstore"])
    for cmd in candidates:
        try:
            probe = subprocess.run([*cmd, "--help"], capture_output=True, text=True, timeout=60,
                                   env=cli_env())
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return cmd
    return None


def cli_env() -> dict[str, str]:
    # memstore is installed (memstore-devtools depends on it), so the child finds the same
    # memstore this process imports; nothing is added to its path.
    env = dict(os.environ)
    env.pop("MEMSTORE_ROOT", None)  # --root is passed explicitly; never let it leak in
    return env


class VectorBackend(HybridBackend):
    """The model alone: every hybrid score from the vector side
    (the embedding made by `hybrid`, or here)."""

    name = "vector"

    def prepare(self, conv: Conversation) -> None:
        assert self._store is not None and conv.root is not None
        self._store(conv.root).embed()  # nothing left to do when the hybrid backend ran first

    def search(self, conv: Conversation, query: str) -> list[dict[str, Any]]:
        assert self._store is not None and conv.root is not None
        from memstore.core.config import Config

        store = self._store(conv.root, config=Config(semantic_weight=1.0))
        return [hit.to_json() for hit in store.search(query, limit=LIMIT, mode="hybrid")]


class CliBackend(Backend):
    name = "cli"
    mode = "fts"

    def __init__(self) -> None:
        super().__init__()
        self._env = cli_env()
        cmd = find_cli()
        if cmd is None:
            self.available = False
            self.why_unavailable = (
                "memstore command not runnable yet (no console script, "
                "`python -m memstore --help` failed)"
            )
        self.cmd = cmd or []

    def _run(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.cmd + args, capture_output=True, text=True, timeout=120,
                              env=self._env)

    def prepare(self, conv: Conversation) -> None:
        proc = self._run(["--root", str(conv.root), "sync", "--quiet"])
        if proc.returncode != 0:
            raise RuntimeError(f"sync exited {proc.returncode}: {proc.stderr.strip()[:300]}")

    def search(self, conv: Conversation, query: str) -> list[dict[str, Any]]:
        proc = self._run(
            ["--root", str(conv.root), "search", query, "--json", "--limit", str(LIMIT),
             "--mode", self.mode]
        )
        if proc.returncode != 0:
            raise RuntimeError(f"search exited {proc.returncode}: {proc.stderr.strip()[:300]}")
        data = json.loads(proc.stdout)
        if not isinstance(data, list):
            raise RuntimeError(f"search --json printed {type(data).__name__}, not a list")
        return data


class CliHybridBackend(CliBackend):
    name = "cli-hybrid"
    mode = "hybrid"

    def prepare(self, conv: Conversation) -> None:
        proc = self._run(["--root", str(conv.root), "embed"])
        if proc.returncode != 0:
            raise RuntimeError(f"embed exited {proc.returncode}: {proc.stderr.strip()[:300]}")


# ------------------------------------------------------------------------ evaluation


def relative_path(conv: Conversation, path: str) -> str:
    """Results should be root-relative, but accept absolute paths and backslashes."""
    p = Path(str(path).replace("\\", "/"))
    if p.is_absolute() and conv.root is not None:
        try:
            p = p.resolve().relative_to(conv.root.resolve())
        except ValueError:
            pass
    return p.as_posix()


def run_backend(
    backend: Backend, convs: list[Conversation], sample: set[tuple[int, int]] | None, verbose: bool
) -> None:
    """Prepare each conversation and ask its questions, storing results on the questions."""
    for conv in convs:
        questions = [q for q in conv.questions if sample is None or (q.conv, q.qid) in sample]
        if not questions:
            continue
        t0 = time.perf_counter()
        try:
            backend.prepare(conv)
        except Exception as exc:
            backend.available = False
            backend.why_unavailable = f"preparing c{conv.index} failed: {type(exc).__name__}: {exc}"
            return
        backend.build_seconds += time.perf_counter() - t0
        for q in questions:
            t0 = time.perf_counter()
            error = None
            try:
                hits = backend.search(conv, q.question)
            except Exception as exc:  # a failed query is a miss, and is reported
                hits = []
                error = f"{type(exc).__name__}: {exc}"
                backend.errors += 1
                backend.first_error = backend.first_error or f"{q.question!r}: {error}"
            elapsed = (time.perf_counter() - t0) * 1000.0
            paths = [relative_path(conv, h.get("path", "")) for h in hits[:LIMIT]]
            wanted = {conv.dia_to_path[d] for d in q.evidence}
            rank = next((i + 1 for i, p in enumerate(paths) if p in wanted), None)
            record: dict[str, Any] = {
                "rank": rank,
                "paths": paths,
                "summaries": [str(h.get("summary", "")) for h in hits[:LIMIT]],
                "latency_ms": elapsed,
            }
            if error:
                record["error"] = error
            q.results[backend.name] = record
        if verbose:
            print(f"  {backend.name}: c{conv.index} done ({len(questions)} questions)",
                  file=sys.stderr)


def summarize(questions: list[Question], name: str) -> dict[str, Any]:
    """success@k overall and per category, plus latency, for one backend."""
    answered = [q for q in questions if name in q.results]

    def block(qs: list[Question]) -> dict[str, Any]:
        n = len(qs)
        out: dict[str, Any] = {"n": n}
        for k in KS:
            hits = sum(1 for q in qs if (r := q.results[name]["rank"]) is not None and r <= k)
            out[f"s@{k}"] = hits / n if n else None
        return out

    lat = [q.results[name]["latency_ms"] for q in answered]
    overall = block(answered)
    overall.update(
        {
            "mean_ms": statistics.fmean(lat) if lat else None,
            "median_ms": statistics.median(lat) if lat else None,
            "p95_ms": sorted(lat)[int(0.95 * (len(lat) - 1))] if lat else None,
        }
    )
    per_cat = {str(c): block([q for q in answered if q.category == c])
               for c in sorted({q.category for q in answered})}
    return {"overall": overall, "per_category": per_cat}


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A pipe table (GitHub style) without a dependency on tabulate."""

    def cell(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.3f}"
        return str(v)

    cells = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    numeric = [all(re.fullmatch(r"[-\d.]+", r[i]) for r in cells) if cells else False
               for i in range(len(headers))]

    def line(vals: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w)
                 for v, w, num in zip(vals, widths, numeric, strict=True)]
        return "| " + " | ".join(parts) + " |"

    rule = (
        "|"
        + "|".join(("-" * (w + 1) + ":") if num else ("-" * (w + 2))
                   for w, num in zip(widths, numeric, strict=True))
        + "|"
    )
    return "\n".join([line(list(headers)), rule] + [line(r) for r in cells])


def cli_agreement(questions: list[Question], cli: str = "cli",
                  lib: str = "memstore") -> dict[str, Any] | None:
    """How often the CLI's ranked paths equal the in-process library's, question by question."""
    both = [q for q in questions if cli in q.results and lib in q.results]
    if not both:
        return None
    same_top10 = sum(q.results[cli]["paths"] == q.results[lib]["paths"] for q in both)
    same_top5 = sum(q.results[cli]["paths"][:5] == q.results[lib]["paths"][:5] for q in both)
    # The CLI row covers only its sample; give the library's s@5 on that same sample.
    lib_s5 = sum(1 for q in both if (r := q.results[lib]["rank"]) is not None and r <= 5)
    return {
        "n": len(both),
        "same_top10": same_top10 / len(both),
        "same_top5": same_top5 / len(both),
        f"{lib}_s@5_on_sample": lib_s5 / len(both),
    }


def dump_misses(convs: list[Conversation], limit: int) -> None:
    """Questions memstore missed at 5 that bm25 found: the cases to learn from."""
    by_conv = {c.index: c for c in convs}
    turn_of = {(c.index, t.dia_id): t for c in convs for t in c.turns}
    misses = [
        q
        for c in convs
        for q in c.questions
        if "memstore" in q.results
        and "bm25" in q.results
        and (q.results["bm25"]["rank"] or 99) <= 5
        and (q.results["memstore"]["rank"] or 99) > 5
    ]
    # bm25's most confident finds first: those are the least excusable misses.
    misses.sort(key=lambda q: (q.results["bm25"]["rank"], q.conv, q.qid))
    print(
        f"\n== misses: memstore missed at 5, bm25 hit at 5 ({len(misses)} in all, "
        f"showing {min(limit, len(misses))}) =="
    )
    for n, q in enumerate(misses[:limit], 1):
        conv = by_conv[q.conv]
        ms = q.results["memstore"]
        print(f"\n[{n}] c{q.conv} q{q.qid} cat {q.category} "
              f"({CATEGORY_NAMES.get(q.category, '?')}): {q.question}")
        print(f"    answer: {q.answer}")
        print(
            f"    bm25 rank {q.results['bm25']['rank']}, memstore rank {ms['rank'] or '>10'}"
            + (f", memstore error: {ms['error']}" if "error" in ms else "")
        )
        for d in q.evidence:
            t = turn_of[(q.conv, d)]
            extra = f" [image: {t.caption}]" if t.caption else ""
            print(f"    evidence {d} ({conv.dia_to_path[d]}): {t.speaker}: {t.text}{extra}")
        print("    memstore top 5:")
        for i, (p, s) in enumerate(zip(ms["paths"][:5], ms["summaries"][:5], strict=True), 1):
            print(f"      {i}. {Path(p).stem}: {s[:140]}")


# ------------------------------------------------------------------------------ main


def backend_list(value: str) -> str | list[str]:
    """'all', or 'bm25,memstore' -> ['bm25', 'memstore'] in BACKENDS' order (each a known name)."""
    if value == "all":
        return value
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in BACKENDS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown backend {', '.join(unknown) or value!r} "
                                         f"(choose from {', '.join(BACKENDS)} or all)")
    return [name for name in BACKENDS if name in names]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help=f"LoCoMo JSON (default {DEFAULT_DATA})")
    ap.add_argument(
        "--conversations", metavar="SPEC",
        help="'N' = first N conversations; '0,2' or '1-3' = those indices"
    )
    ap.add_argument("--root", type=Path,
                    help="write the agent roots here and keep them (default: a temp folder)")
    ap.add_argument("--backend", type=backend_list, default="all", metavar="NAME[,NAME...]",
                    help=f"'all' (default) or a comma-separated list of: {', '.join(BACKENDS)}")
    ap.add_argument(
        "--cli-sample",
        type=int,
        default=100,
        metavar="N",
        help="questions asked through the CLI (default 100; 0 = all)",
    )
    ap.add_argument("--seed", type=int, default=0, help="seed for the CLI sample")
    ap.add_argument(
        "--json", type=Path, metavar="FILE", dest="json_out",
        help="write figures and per-question ranks to FILE"
    )
    ap.add_argument("--min-s5", type=float, metavar="X",
                    help="exit 1 if memstore's success@5 is below X")
    ap.add_argument(
        "--dump-misses", type=int, default=0, metavar="N",
        help="print N questions memstore missed at 5 but bm25 found"
    )
    ap.add_argument("--with-context", action="store_true",
                    help="turns with context: each turn's memory carries the turn before it as "
                         "`context:` (a different input; report it apart from the plain turns)")
    ap.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    # the harness embeds each corpus: a detached pass started by a sync would race it for the lock
    os.environ.setdefault("MEMSTORE_EMBED_BACKGROUND", "off")
    ap = build_parser()
    args = ap.parse_args(argv)
    if not args.data.is_file():
        ap.error(f"no data file at {args.data}")
    try:
        n_total = len(json.loads(args.data.read_text(encoding="utf-8")))
        indices = parse_conversation_spec(args.conversations, n_total)
    except (ValueError, json.JSONDecodeError) as exc:
        ap.error(str(exc))
    wanted = list(BACKENDS) if args.backend == "all" else args.backend
    if args.dump_misses and not {"bm25", "memstore"} <= set(wanted):
        ap.error("--dump-misses needs both the bm25 and memstore backends")

    convs = load_conversations(args.data, indices)
    all_questions = [q for c in convs for q in c.questions]

    tmp: tempfile.TemporaryDirectory[str] | None = None
    if args.root is None:
        tmp = tempfile.TemporaryDirectory(prefix="memstore-locomo-")
        base = Path(tmp.name)
    else:
        base = args.root.resolve()
    try:
        t0 = time.perf_counter()
        for conv in convs:
            write_corpus(conv, base / f"c{conv.index}", args.with_context)
        write_seconds = time.perf_counter() - t0

        sample: set[tuple[int, int]] | None = None
        if (any(w.startswith("cli") for w in wanted) and args.cli_sample
                and args.cli_sample < len(all_questions)):
            picked = random.Random(args.seed).sample(all_questions, args.cli_sample)
            sample = {(q.conv, q.qid) for q in picked}

        makers: dict[str, Callable[[], Backend]] = {
            "bm25": BM25Backend,
            "memstore": MemstoreBackend,
            "hybrid-sync": HybridSyncBackend,
            "hybrid": HybridBackend,
            "vector": VectorBackend,
            "cli": CliBackend,
            "cli-hybrid": CliHybridBackend,
        }
        backends: list[Backend] = []
        for name in wanted:
            backend = makers[name]()
            if backend.available:
                run_backend(backend, convs, sample if name.startswith("cli") else None,
                            args.verbose)
            backends.append(backend)
            if not backend.available:
                print(f"{name}: {backend.why_unavailable}")

        report = produce_report(args, convs, all_questions, backends, write_seconds)
        hybrid = next((b for b in backends if b.name == "hybrid" and b.available), None)
        if hybrid is not None:
            report["unrelated"] = ask_unrelated(convs)
        if args.dump_misses:
            dump_misses(convs, args.dump_misses)
        if args.json_out:
            args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            print(f"\nwrote {args.json_out}")
    finally:
        if tmp is not None:
            tmp.cleanup()

    if args.min_s5 is not None:
        ms = report["backends"].get("memstore")
        s5 = ms["overall"]["s@5"] if ms and ms.get("available") else None
        if s5 is None:
            print(f"gate: memstore s@5 not measured; --min-s5 {args.min_s5} fails", file=sys.stderr)
            return 1
        if s5 < args.min_s5:
            print(f"gate: memstore s@5 {s5:.3f} < --min-s5 {args.min_s5}", file=sys.stderr)
            return 1
        print(f"gate: memstore s@5 {s5:.3f} >= {args.min_s5}")
    return 0


def ask_unrelated(convs: list[Conversation]) -> dict[str, Any]:
    """UNRELATED asked of every (embedded) conversation:
    how many hits, and how many found by meaning."""
    from memstore import Store

    hits = by_meaning = 0
    found: list[str] = []
    for conv in convs:
        assert conv.root is not None
        store = Store(conv.root, notify=lambda _message: None)
        for question in UNRELATED:
            for hit in store.search(question, limit=LIMIT, mode="hybrid"):
                hits += 1
                if "vector" in hit.signals:
                    by_meaning += 1
                    found.append(f"c{conv.index} {question!r}: {hit.path}")
    print(f"\nunrelated questions: {len(UNRELATED)} asked of {len(convs)} conversations: "
          f"{hits} hits, {by_meaning} of them found by meaning"
          + (f" (first: {found[0]})" if found else ""))
    return {"questions": len(UNRELATED) * len(convs), "hits": hits, "by_meaning": by_meaning,
            "found": found}


def produce_report(
    args: argparse.Namespace,
    convs: list[Conversation],
    all_questions: list[Question],
    backends: list[Backend],
    write_seconds: float,
) -> dict[str, Any]:
    """Print the tables and return everything as one JSON-ready dict."""
    skipped = sum(c.skipped_questions for c in convs)
    print(
        f"LoCoMo {args.data.name}{' (turns with context)' if args.with_context else ''}: "
        f"{len(convs)} conversations, "
        f"{sum(len(c.turns) for c in convs)} turns (memory files, written in "
        f"{write_seconds:.2f}s), {len(all_questions)} questions (category 5 left out"
        + (f"; {skipped} with no usable evidence id skipped" if skipped else "")
        + ")\n"
    )

    report: dict[str, Any] = {
        "data": str(args.data),
        "conversations": [c.index for c in convs],
        "with_context": bool(args.with_context),
        "questions": len(all_questions),
        "skipped_no_evidence": skipped,
        "backends": {},
    }
    rows, cat_rows = [], []
    for b in backends:
        entry: dict[str, Any] = {"available": b.available}
        if not b.available:
            entry["why"] = b.why_unavailable
        if any(b.name in q.results for q in all_questions):
            entry.update(summarize(all_questions, b.name))
            entry.update({"build_seconds": b.build_seconds, "errors": b.errors,
                          "first_error": b.first_error})
            o = entry["overall"]
            rows.append(
                [b.name, o["n"], o["s@1"], o["s@5"], o["s@10"], o["mean_ms"], o["p95_ms"],
                 b.build_seconds, b.errors]
            )
            for cat, blk in entry["per_category"].items():
                cat_rows.append(
                    [
                        b.name,
                        f"{cat} {CATEGORY_NAMES.get(int(cat), '?')}",
                        blk["n"],
                        blk["s@1"],
                        blk["s@5"],
                        blk["s@10"],
                    ]
                )
        report["backends"][b.name] = entry
    if rows:
        print(format_table(["backend", "n", "s@1", "s@5", "s@10", "mean ms", "p95 ms", "index s",
                            "errors"], rows))
        print()
        print(format_table(["backend", "category", "n", "s@1", "s@5", "s@10"], cat_rows))
    for b in backends:
        if b.errors:
            print(f"\n{b.name}: {b.errors} queries failed; first: {b.first_error}")
    for cli, lib in (("cli", "memstore"), ("cli-hybrid", "hybrid")):
        agree = cli_agreement(all_questions, cli, lib)
        if agree:
            report[f"{cli}_agreement"] = agree  # "cli_agreement", "cli-hybrid_agreement"
            print(
                f"\n{cli} vs in-process {lib} on {agree['n']} questions: identical top 10 "
                f"{agree['same_top10']:.1%}, identical top 5 {agree['same_top5']:.1%} "
                f"(in-process s@5 on this sample {agree[f'{lib}_s@5_on_sample']:.3f})"
            )
    for b in backends:
        if isinstance(b, HybridSyncBackend) and b.shares:
            share = statistics.fmean(b.shares)
            report["backends"][b.name]["embedded_share"] = share
            print(f"\nhybrid-sync: {share:.0%} of the turns had a vector after the first sync "
                  "(its default budget)")
    for b in backends:
        if isinstance(b, HybridBackend) and not isinstance(b, HybridSyncBackend) and b.embedded:
            report["embedding"] = {"files": b.embedded, "seconds": b.embed_seconds,
                                   "files_per_s": (b.embedded / b.embed_seconds
                                                   if b.embed_seconds else None)}
            print(f"\nembedding: {b.embedded} turns in {b.embed_seconds:.1f}s "
                  f"({b.embedded / max(b.embed_seconds, 1e-9):.1f} files/s)")
    report["per_question"] = [
        {
            "conv": q.conv,
            "qid": q.qid,
            "category": q.category,
            "question": q.question,
            "evidence": q.evidence,
            "rank": {name: r["rank"] for name, r in q.results.items()},
            "top": {name: r["paths"] for name, r in q.results.items()},
        }
        for q in all_questions
    ]
    return report


if __name__ == "__main__":
    sys.exit(main())

"""The season benchmark's scoring: what each policy put in front of the agent, turn by turn.

A policy is a set of channels. memstore's own four were recorded by the simulation (season_sim):
`md` (MEMORY.md as Claude Code loads it at session start), `bundle` (the SessionStart
additionalContext), `ptr` (the UserPromptSubmit pointers), `lens` (PreToolUse lenses). `search`
(memstore's top three hits on every prompt, no floor) was recorded beside them without being shown
to anyone. `cc` (Claude Code's own MEMORY.md: a row appended per memory written, in that order,
a forgotten one taken out, nothing else pruned) and `recent` (the most recently used memories, as
many rows as memstore's MEMORY.md had; used: written, or needed by a turn while in this list, the
policy's own reads) are built here from the world.

A memory is in front for a turn when its file name is in the text of a delivery made at the
session's start or at a turn up to this one (a prompt's pointers arrive before the agent plans;
a lens before the tool call that needs it).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from memstore_devtools.bench.season_world import Memory, Session, World

NAME = re.compile(r"\b((?:feedback|project|reference|user|process|handoff)_[a-z0-9][a-z0-9-]*)\.md")
START = ("md", "bundle", "cc", "recent")
PUSH = ("ptr", "lens", "search")
POLICIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("memstore: MEMORY.md", ("md",)),
    ("memstore: SessionStart bundle", ("bundle",)),
    ("memstore: prompt pointers", ("ptr",)),
    ("memstore: lenses", ("lens",)),
    ("memstore: all channels", ("md", "bundle", "ptr", "lens")),
    ("memstore, no prompt push", ("md", "bundle", "lens")),
    ("Claude Code MEMORY.md (rows as written)", ("cc",)),
    ("recency alone", ("recent",)),
    ("top-3 search on every prompt", ("search",)),
    ("memstore no push + top-3 search", ("md", "bundle", "lens", "search")),
)
SCORED = ("silent", "plain", "para", "tool")
LINES, BYTES = 200, 25_000  # what Claude Code loads of MEMORY.md


def names_in(text: str) -> set[str]:
    return set(NAME.findall(text or ""))


def loaded(text: str) -> str:
    """MEMORY.md as Claude Code loads it: the first 200 lines or 25 KB, whichever is less."""
    head = text.encode("utf-8")[:BYTES].decode("utf-8", errors="ignore")
    return "".join(head.splitlines(keepends=True)[:LINES])


def rows(title: str, mems: list[Memory]) -> str:
    return f"# {title}\n\n" + "".join(f"- [{m.name}]({m.name}.md): {m.summary}\n" for m in mems)


def _offline(world: World, stream: list[dict[str, Any]]) -> dict[int, dict[str, str]]:
    """The `cc` and `recent` texts of every session."""
    mems = world.memories
    written: list[str] = []  # Claude Code's index: in the order the rows were appended
    last_used: dict[str, tuple[int, int]] = {}
    out: dict[int, dict[str, str]] = {}
    for s, rec in zip(world.sessions, stream, strict=True):
        here = [mems[n] for n in written if n in mems and not _gone(mems[n], s.index)]
        used = sorted((n for n in last_used if not _gone(mems[n], s.index)),
                      key=lambda n: last_used[n], reverse=True)[: rec["md_rows"]]
        out[s.index] = {"cc": loaded(rows("Memory index", here)),
                        "recent": rows("Recently used memories", [mems[n] for n in used])}
        shown = set(used)
        for i, turn in enumerate(s.turns):
            if turn.writes and turn.writes in mems:
                written.append(turn.writes)
                last_used[turn.writes] = (s.index, i)
            for n in turn.gold:  # used: needed, and found in this policy's own list
                if n in shown:
                    last_used[n] = (s.index, i)
    return out


def _gone(m: Memory, session: int) -> bool:
    """Forgotten by this session: its file left memory/ (both offline policies drop the row)."""
    return m.how == "forget" and m.aside_session is not None and session >= m.aside_session


def _aside(world: World, name: str, session: int) -> bool:
    m = world.memories.get(name)
    return m is not None and m.aside_session is not None and session >= m.aside_session


def _deliveries(rec: dict[str, Any], extra: dict[str, str], channels: tuple[str, ...]
                ) -> list[tuple[int, str, str]]:
    """(turn index, channel, text) of every delivery; -1 for the session's start."""
    found = []
    for ch in channels:
        if ch in START:
            text = extra[ch] if ch in extra else rec[ch]
            if text:
                found.append((-1, ch, text))
        else:
            found.extend((i, ch, t[ch]) for i, t in enumerate(rec["turns"]) if t[ch])
    return found


def score_session(world: World, s: Session, rec: dict[str, Any], extra: dict[str, str],
                  channels: tuple[str, ...], c: Counter[str]) -> None:
    deliveries = _deliveries(rec, extra, channels)
    named = [(i, ch, names_in(text), text) for i, ch, text in deliveries]
    start = set().union(*(n for i, _ch, n, _t in named if i < 0))
    needed = {n for t in s.turns if t.kind in SCORED for n in (*t.gold, *t.acceptable)}
    c["sessions"] += 1
    for _i, _ch, names, text in named:
        for line in text.splitlines(keepends=True):
            size = len(line.encode("utf-8"))
            c["bytes"] += size
            if not names_in(line) & needed:
                c["unneeded_bytes"] += size
        c["stale"] += sum(1 for n in names if _aside(world, n, s.index))
    shown: Counter[str] = Counter(n for _i, _ch, names, _t in named for n in names)
    pushed_count: Counter[str] = Counter(n for i, _ch, names, _t in named if i >= 0 for n in names)
    c["dups"] += sum(k - 1 for k in shown.values() if k > 1)
    c["repeats"] += sum(k - 1 for k in pushed_count.values() if k > 1)
    front = set(start)
    pushed_so_far: set[str] = set()
    for i, turn in enumerate(s.turns):
        now = [(names, text) for j, _ch, names, text in named if j == i]
        for names, _text in now:
            front |= names
            pushed_so_far |= names
        if turn.kind not in SCORED:
            continue
        if not turn.should_retrieve:
            c["silent_turns"] += 1
            c["false_fires"] += 1 if now else 0
        ok = set(turn.gold) | set(turn.acceptable)
        for names, _text in now:
            c["pushed"] += len(names)
            c["pushed_hits"] += len(names & ok)
        if not turn.gold:
            continue
        c["need_turns"] += 1
        hits = [g for g in turn.gold if g in front]
        c["failed_turns"] += 0 if hits else 1
        for g in turn.gold:
            c["need_pairs"] += 1
            c[f"need_{turn.kind}"] += 1
            c["covered"] += g in front
            c[f"covered_{turn.kind}"] += g in front
            if g not in start:
                c["push_need"] += 1
                c["push_caught"] += g in pushed_so_far


def score(world: World, stream: list[dict[str, Any]]) -> dict[str, Any]:
    """Raw counts per policy, overall and per month (summed across seeds before any ratio)."""
    extra = _offline(world, stream)
    out: dict[str, Any] = {"policies": {}, "months": {}}
    for label, channels in POLICIES:
        total: Counter[str] = Counter()
        months: dict[str, Counter[str]] = {}
        for s, rec in zip(world.sessions, stream, strict=True):
            month = rec["at"][:7]
            c: Counter[str] = Counter()
            score_session(world, s, rec, extra[s.index], channels, c)
            total.update(c)
            months.setdefault(month, Counter()).update(c)
        out["policies"][label] = dict(total)
        out["months"][label] = {m: dict(v) for m, v in months.items()}
    return out


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"policies": {}, "months": {}}
    for part in parts:
        for label, counts in part["policies"].items():
            out["policies"].setdefault(label, Counter()).update(counts)
        for label, months in part["months"].items():
            mine = out["months"].setdefault(label, {})
            for month, counts in months.items():
                mine.setdefault(month, Counter()).update(counts)
    return out


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def metrics(c: dict[str, int], channels: tuple[str, ...]) -> dict[str, float | None]:
    """The table's numbers from one policy's counts."""
    g = c.get
    pushes = any(ch in PUSH for ch in channels)
    sessions = g("sessions", 0)
    return {
        "coverage": _ratio(g("covered", 0), g("need_pairs", 0)),
        "coverage_plain": _ratio(g("covered_plain", 0), g("need_plain", 0)),
        "coverage_para": _ratio(g("covered_para", 0), g("need_para", 0)),
        "coverage_tool": _ratio(g("covered_tool", 0), g("need_tool", 0)),
        "know_to_ask": _ratio(g("failed_turns", 0), g("need_turns", 0)),
        "false_fire": _ratio(g("false_fires", 0), g("silent_turns", 0)),
        "false_fires": float(g("false_fires", 0)),
        "precision": _ratio(g("pushed_hits", 0), g("pushed", 0)) if pushes else None,
        "recall": _ratio(g("push_caught", 0), g("push_need", 0)) if pushes else None,
        "kb_session": _ratio(g("bytes", 0) / 1024, sessions),
        "unneeded": _ratio(g("unneeded_bytes", 0), g("bytes", 0)),
        "stale": _ratio(g("stale", 0), sessions),
        "dups": _ratio(g("dups", 0), sessions),
        "repeats": _ratio(g("repeats", 0), sessions),
    }

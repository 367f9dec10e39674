"""Agent roots for the paraphrase-and-abstention checks: the hand-written set, small and large.

Used by tests/test_paraphrase.py and scripts/eval_paraphrase.py.

tests/data/agent_recall.json holds twenty memories in the shape an agent writes them,
questions that paraphrase them and questions nothing in them answers. The small root is
those memories beside what `memstore init` writes; the large one adds several hundred
generated work notes (services, hosts, owners, schedules: the ordinary background of a
long-lived root) so that the floor is tried where many files compete. `long_tail` puts a
memory's line at the end of a 5 KB memory instead, where only a tail part holds it.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from memstore_devtools import REPO

DATA = REPO / "tests" / "data" / "agent_recall.json"

SERVICES = ["billing", "ledger", "catalogue", "checkout", "notifications", "identity", "reporting",
            "ingest", "pricing", "shipping", "inventory", "recommendations", "audit-log", "media",
            "geocoder", "chat"]
OWNERS = ["Ana", "Bruno", "Chen", "Dara", "Elif", "Femi", "Goran", "Hana", "Ines", "Jonas", "Kofi",
          "Lena"]
LANGS = ["Go", "Kotlin", "Python", "TypeScript", "Rust", "Java", "Elixir"]
TOOLS = ["Grafana", "Datadog", "Sentry", "Honeycomb", "Kibana"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
FACTS = [
    "The {s} service is written in {lang} and owned by {o}; questions go to the #{s} channel.",
    "{o} keeps the runbook for {s}; its alerts page the owner after five minutes of errors above "
    "2%.",
    "The {s} service exposes metrics on port {port}; the main dashboard is in {tool}.",
    "Load tests for {s} run on {day}s against a copy of last week's traffic.",
    "The {s} API is versioned in the URL; v{v} is deprecated and answers with a Sunset header.",
    "Logs from {s} are kept for {n} days, then dropped; audit events are kept separately.",
    "{o} asked that changes to the {s} schema be announced a week ahead in the architecture forum.",
    "The {s} worker pool scales between {a} and {b} pods on queue depth.",
    "A flaky test in {s} (test_{t}) is quarantined; {o} tracks the fix.",
    "The {s} service caches responses for {n} seconds; the cache key includes the locale.",
]
WORDS = ["retry", "timeout", "pagination", "rounding", "locale", "webhook", "batching", "ordering"]


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def memory_text(name: str, type_: str, summary: str, body: str) -> str:
    return (f"---\nname: {name}\ntype: {type_}\nsummary: {json.dumps(summary)}\n---\n\n"
            f"# {name}\n\n{body}\n")


def filler_notes(count: int, seed: int = 7) -> dict[str, str]:
    """`count` distinct generated work notes, name -> text, the same for a seed."""
    rng = random.Random(seed)
    notes: dict[str, str] = {}
    while len(notes) < count:
        s = rng.choice(SERVICES)
        line = rng.choice(FACTS).format(
            s=s, o=rng.choice(OWNERS), lang=rng.choice(LANGS), tool=rng.choice(TOOLS),
            day=rng.choice(DAYS), port=rng.randrange(8000, 9999), v=rng.randrange(1, 4),
            n=rng.choice([30, 60, 90, 120, 365]),
            a=rng.randrange(2, 5), b=rng.randrange(8, 40), t=rng.choice(WORDS))
        name = f"project_{s}-{len(notes):03d}"
        notes[name] = memory_text(name, "project", line.split(";")[0][:80], line)
    return notes


def long_tail(line: str) -> str:
    """A 5 KB memory body whose last paragraph is `line`."""
    paras: list[str] = []
    notes = list(filler_notes(60, seed=11).values())
    while sum(len(p) for p in paras) < 5000:
        paras.append(notes[len(paras) % len(notes)].split("\n\n", 2)[-1].strip())
    return "\n\n".join([*paras, line])


HOUSEHOLD = ["Sourdough starter gets fed at 8am and 8pm; discard half before feeding.",
             "The garage door remote takes a CR2032 battery.",
             "Tomato seedlings need a week of hardening off before planting out.",
             "The bike's rear derailleur needs a quarter turn on the barrel adjuster after a wash."]


def build(root: Path, *, large: bool = False, tail_of: str | None = None,
          in_log: str | None = None) -> dict[str, Any]:
    """Write the agent root (init's starters, the set's memories, and filler when `large`); return
    the set.

    `tail_of`: that memory's line becomes the last paragraph of a 5 KB memory of the same name.
    `in_log`: that memory's line becomes the third item of a household log, summary "Household
    and hobby log", under the same name (the issue's one-line runbook entry under a vague
    summary).
    """
    exe = Path(sys.executable).parent / "memstore"
    subprocess.run([str(exe), "init", str(root), "--apply"], check=True, capture_output=True,
                   env={**os.environ, "MEMSTORE_SEMANTIC": "off"})
    data = load()
    folder = root / "memory"
    for mem in data["memories"]:
        body = long_tail(mem["body"]) if mem["name"] == tail_of else mem["body"]
        summary = mem["summary"]
        if mem["name"] == in_log:
            items = [*HOUSEHOLD[:2], " ".join(mem["body"].split()), *HOUSEHOLD[2:]]
            body, summary = "".join(f"- {item}\n" for item in items), "Household and hobby log"
        (folder / f"{mem['name']}.md").write_text(
            memory_text(mem["name"], mem["type"], summary, body), encoding="utf-8")
    if large:
        for name, text in filler_notes(400).items():
            (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return data

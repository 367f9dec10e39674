"""`memstore init`: lay out an agent root (folders and starter files) and bring existing
memory files into shape.

Planning and applying are separate steps over the same list of actions, so the dry
run prints exactly what --apply would do. Existing files are never overwritten; only
the frontmatter of T2 memories is normalised (missing policy fields added with their
defaults, `name` made to match the file stem), through fmedit, which keeps every
other byte.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path

from memstore.core.agent_root import FOLDERS
from memstore.core.config import Config
from memstore.core.kinds import T2_NAME
from memstore.core.locks import atomic_write
from memstore.core.starter_templates import (
    EXAMPLE_LENS,
    IDENTITY,
    MEDITATIONS,
    MEMORY_GITIGNORE,
    RUNTIME_GITIGNORE,
    meditation,
)
from memstore.core.timeutil import UTC, to_utc
from memstore.mirror.fmedit import CannotEdit, set_fields
from memstore.mirror.parsing import parse_bytes


@dataclass
class Action:
    kind: str  # mkdir | write | normalise | skip
    path: Path
    detail: str = ""
    content: bytes | None = None


@dataclass
class Plan:
    root: Path
    actions: list[Action] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        for action in self.actions:
            rel = os.path.relpath(action.path, self.root) if action.path != self.root else "."
            out.append(f"{action.kind:9} {rel}" + (f"  ({action.detail})" if action.detail else ""))
        return out


def plan_init(root: Path, config: Config) -> Plan:
    plan = Plan(root)
    if not root.exists():
        plan.actions.append(Action("mkdir", root))
    for folder in FOLDERS:
        if not (root / folder).is_dir():
            plan.actions.append(Action("mkdir", root / folder))

    def new_file(rel: str, text: str, detail: str) -> None:
        target = root / rel
        if not target.exists():
            plan.actions.append(Action("write", target, detail, text.encode("utf-8")))

    new_file("identity.md", IDENTITY, "identity template")
    new_file("runtime/.gitignore", RUNTIME_GITIGNORE, "keep derived state out of git")
    new_file("memory/.gitignore", MEMORY_GITIGNORE, "rendered files are rebuilt per machine")
    lenses = root / "lenses"
    if not (lenses.is_dir() and any(lenses.glob("*.md"))):
        new_file("lenses/delegation-discipline.md", EXAMPLE_LENS, "example lens")
    meditations = root / "meditations"
    if not (meditations.is_dir() and any(meditations.glob("*.md"))):
        for filename, (shelf, weight, title, prompt) in MEDITATIONS.items():
            new_file(f"meditations/{filename}", meditation(title, shelf, weight, prompt),
                     f"{shelf} shelf")

    memory = root / "memory"
    if memory.is_dir():
        for path in sorted(memory.glob("*.md")):
            # never a link (its target would be copied into memory/) nor a FIFO (opening it blocks)
            if T2_NAME.match(path.name) and not path.is_symlink() and path.is_file():
                action = _normalise(path, config)
                if action is not None:
                    plan.actions.append(action)
    return plan


def _normalise(path: Path, config: Config) -> Action | None:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Action("skip", path, f"unreadable: {exc.strerror}")
    stem = path.name[:-3]
    parsed = parse_bytes(raw, stem, config, is_t2=True)
    broken = [p.message for p in parsed.problems
              if p.level == "error" and "frontmatter" in p.message]
    if broken:
        return Action("skip", path, f"{broken[0]}; fix it by hand, then run init again")
    meta = parsed.meta
    updates: dict[str, object] = {}
    if meta.get("name") != stem:
        updates["name"] = stem
    if "type" not in meta:
        updates["type"] = stem.split("_", 1)[0]
    mtime = to_utc(dt.datetime.fromtimestamp(path.stat().st_mtime, UTC))
    if "created" not in meta:
        updates["created"] = mtime.date()
    defaults: dict[str, object] = {
        "access_count": 0,
        "last_accessed": mtime,
        "last_reinforced": None,
        "stability": config.initial_stability,
    }
    for key, value in defaults.items():
        if key not in meta:
            updates[key] = value
    if not updates:
        return None
    try:
        new = set_fields(raw, updates)
    except CannotEdit as exc:
        return Action("skip", path, f"cannot normalise safely: {exc}")
    return Action("normalise", path, "set " + ", ".join(updates), new)


def apply_plan(plan: Plan) -> None:
    for action in plan.actions:
        if action.kind == "mkdir":
            action.path.mkdir(parents=True, exist_ok=True)
        elif action.kind in ("write", "normalise") and action.content is not None:
            action.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(action.path, action.content)

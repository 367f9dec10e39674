"""The season benchmark's run: one world's year through the real CLI and hook, in a fresh root.

Everything goes in process: the hook through `memstore.hook.handler.main` with the payload Claude
Code sends, the commands through click's CliRunner on `memstore.frontends.cli.cli`. The clock is
always the world's (`--now`), never the wall clock; the memory files the agent writes are stamped
with the instant they were written (os.utime), and files a command rewrites are stamped back to
the command's instant, so the tick's "someone is at work" check and the flush see the world's
time. MEMSTORE_SEMANTIC=off: words only.

Per session it records what each channel put in front of the agent (MEMORY.md as loaded at
start, the SessionStart bundle, each prompt's pointers, each tool call's lenses) and, shown to
no one, memstore's top three search hits on every prompt. The agent Reads a memory a turn needs
when one of memstore's channels has it in front (a PostToolUse Read: a reinforcement).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memstore_devtools.bench.season_catalog import LENSES, PROJECTS
from memstore_devtools.bench.season_score import loaded, names_in
from memstore_devtools.bench.season_world import Memory, Session, World, remote

ENV = {"MEMSTORE_SEMANTIC": "off", "MEMSTORE_ROOT": None, "MEMSTORE_NOW": None,
       "MEMSTORE_HOOKS": None, "GIT_CONFIG_NOSYSTEM": "1"}


def iso(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.contextmanager
def environment(home: Path) -> Iterator[None]:
    """MEMSTORE_SEMANTIC=off, no MEMSTORE_ROOT/NOW, HOME in the work folder; restored after."""
    saved = {k: os.environ.get(k) for k in (*ENV, "HOME")}
    try:
        for key, value in {**ENV, "HOME": str(home)}.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class Sim:
    """One root and the folders its sessions work in."""

    def __init__(self, world: World, base: Path) -> None:
        from click.testing import CliRunner

        self.world, self.base = world, base
        self.root = base / "root"
        self.runner = CliRunner()
        self.stats: dict[str, Any] = {"ticks": 0, "ticks_at_work": 0, "command_failures": 0,
                                      "hook_said_on_write": 0, "reads": 0}
        self.order: list[str] = []

    # ---------------------------------------------------------------- the two doors

    def cli(self, when: dt.datetime, *args: str) -> str:
        from memstore.frontends.cli import cli

        result = self.runner.invoke(cli, ["--root", str(self.root), "--now", iso(when), *args])
        if result.exit_code != 0:
            self.stats["command_failures"] += 1
            self.stats.setdefault("failures", []).append(
                f"{args[0]} {iso(when)}: {result.exit_code} {result.output[-300:]!r}")
        self.settle(when)
        return result.output

    def hook(self, when: dt.datetime, payload: dict[str, Any]) -> str:
        """The additionalContext the hook answered ("" for nothing)."""
        from memstore.hook.handler import main as hook_main

        out = io.StringIO()
        hook_main(["--root", str(self.root), "--now", iso(when)],
                  stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out)
        text = out.getvalue().strip()
        if not text:
            return ""
        said = json.loads(text).get("hookSpecificOutput", {})
        return str(said.get("additionalContext", "")) if isinstance(said, dict) else ""

    def settle(self, when: dt.datetime) -> None:
        """Stamp back to `when` the memory files a command just wrote on the wall clock."""
        stamp = when.timestamp()
        for path in (self.root / "memory").rglob("*.md"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime > stamp + 60:
                    os.utime(path, (stamp, stamp))

    # ---------------------------------------------------------------- the world's pieces

    def lay_out(self) -> None:
        """Lenses first (the person's, accepted at init), then `memstore init`, then the
        projects' clones (git work trees with an origin remote) and a folder outside git."""
        lenses = self.root / "lenses"
        lenses.mkdir(parents=True)
        for name, tools, pattern, body, _names in LENSES:
            (lenses / f"{name}.md").write_text(
                f"---\nname: {name}\ntype: lens\ntrigger:\n  tool_match: '{tools}'\n"
                f"  path_pattern: '{pattern}'\nbody_token_cap: 200\n---\n\n{body}\n")
        first = self.world.days[0]
        self.cli(dt.datetime(first.year, first.month, first.day, 7, tzinfo=dt.UTC),
                 "init", str(self.root), "--apply")
        (self.base / "scratch").mkdir()
        for p in PROJECTS:
            tree = self.base / "code" / p.key
            tree.mkdir(parents=True)
            subprocess.run(["git", "init", "-q", str(tree)], check=True)
            subprocess.run(["git", "-C", str(tree), "remote", "add", "origin",
                            f"git@github.com:acme/{p.key}.git"], check=True)

    def cwd(self, s: Session) -> Path:
        return self.base / "code" / s.project if s.project else self.base / "scratch"

    def write(self, when: dt.datetime, m: Memory, s: Session) -> None:
        front = {"name": m.name, "type": m.type, "summary": json.dumps(m.summary),
                 "created": when.date().isoformat()}
        if m.project:
            front["project"] = remote(m.project)
        if m.valid_until:
            front["valid_until"] = m.valid_until
        if m.in_flight:
            front["in_flight"] = "true"
            front["state"] = json.dumps(m.in_flight)
        path = self.root / "memory" / f"{m.name}.md"
        text = ("---\n" + "".join(f"{k}: {v}\n" for k, v in front.items()) + "---\n\n"
                + f"{m.summary}\n\n{m.body}\n")
        path.write_text(text, encoding="utf-8")
        os.utime(path, (when.timestamp(), when.timestamp()))
        said = self.hook(when, {"hook_event_name": "PostToolUse", "session_id": s.sid,
                                "cwd": str(self.cwd(s)), "tool_name": "Write",
                                "tool_input": {"file_path": str(path), "content": text},
                                "tool_response": {"type": "create", "filePath": str(path)}})
        self.stats["hook_said_on_write"] += bool(said)

    def search(self, when: dt.datetime, prompt: str, cwd: Path) -> str:
        """memstore's top three hits for the prompt, as index rows (no floor; shown to no one)."""
        from memstore import Store

        hits = Store(self.root, when).search(prompt, 3, catch_up="none", cwd=cwd)
        return "".join(f"- [{h.name}]({h.path}): {h.summary}\n" for h in hits)

    # ---------------------------------------------------------------- a session

    def session(self, s: Session) -> dict[str, Any]:
        start = dt.datetime.fromisoformat(s.at.replace("Z", "+00:00"))
        cwd = str(self.cwd(s))
        index = self.root / "memory" / "MEMORY.md"
        md = loaded(index.read_text(encoding="utf-8")) if index.exists() else ""
        bundle = self.hook(start, {"hook_event_name": "SessionStart", "session_id": s.sid,
                                   "cwd": cwd, "source": "startup"})
        front = names_in(md) | names_in(bundle)
        turns = []
        for i, turn in enumerate(s.turns):
            when = start + dt.timedelta(minutes=3 * i + 1)
            rec = {"ptr": "", "lens": "", "search": ""}
            if turn.prompt is not None:
                rec["ptr"] = self.hook(when, {
                    "hook_event_name": "UserPromptSubmit", "session_id": s.sid, "cwd": cwd,
                    "prompt": turn.prompt, "transcript_path": ""})
                rec["search"] = self.search(when, turn.prompt, self.cwd(s))
            if turn.path is not None:
                rec["lens"] = self.hook(when, {
                    "hook_event_name": "PreToolUse", "session_id": s.sid, "cwd": cwd,
                    "tool_name": "Edit", "tool_input": {
                        "file_path": str(self.cwd(s) / turn.path), "old_string": "a",
                        "new_string": "b"}})
            if turn.writes:
                self.write(when, self.world.memories[turn.writes], s)
            if turn.event:
                how, name, other = turn.event
                args = ("--by", other) if how == "supersede" else ("--why", other)
                self.cli(when + dt.timedelta(seconds=30), how, name, *args)
            front |= names_in(rec["ptr"]) | names_in(rec["lens"])
            for name in turn.gold:
                if name in front:  # the agent Reads what it was shown and needs
                    self.stats["reads"] += 1
                    self.hook(when + dt.timedelta(minutes=1), {
                        "hook_event_name": "PostToolUse", "session_id": s.sid, "cwd": cwd,
                        "tool_name": "Read", "tool_input": {
                            "file_path": str(self.root / "memory" / f"{name}.md")},
                        "tool_response": {}})
            turns.append(rec)
        self.hook(start + dt.timedelta(minutes=3 * len(s.turns) + 2), {
            "hook_event_name": "SessionEnd", "session_id": s.sid, "cwd": cwd, "reason": "exit"})
        md_rows = sum(1 for line in md.splitlines() if line.startswith("- ["))
        return {"sid": s.sid, "at": s.at, "md": md, "md_rows": md_rows, "bundle": bundle,
                "turns": turns}

    def tick(self, night: dt.datetime) -> None:
        out = self.cli(night, "tick", "--json")
        self.stats["ticks"] += 1
        with contextlib.suppress(ValueError):
            if json.loads(out).get("live_session"):
                self.stats["ticks_at_work"] += 1


def run(world: World, base: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The year: each working day's sessions, then the nightly tick every night (weekends too)."""
    started = time.monotonic()
    base.mkdir(parents=True, exist_ok=True)
    (base / "home").mkdir(exist_ok=True)
    with environment(base / "home"):
        sim = Sim(world, base)
        sim.lay_out()
        by_day: dict[int, list[Session]] = {}
        for s in world.sessions:
            by_day.setdefault(s.day, []).append(s)
        stream: list[dict[str, Any]] = []
        day, last = world.days[0], world.days[-1]
        working = {d: i for i, d in enumerate(world.days)}
        while day <= last:
            for s in by_day.get(working.get(day, -1), []):
                stream.append(sim.session(s))
            nxt = day + dt.timedelta(days=1)
            sim.tick(dt.datetime(nxt.year, nxt.month, nxt.day, 2, tzinfo=dt.UTC))
            day = nxt
    sim.stats["seconds"] = round(time.monotonic() - started, 1)
    return stream, sim.stats

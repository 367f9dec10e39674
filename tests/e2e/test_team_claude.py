"""A team's memory, end to end with the real Claude Code binary (issue 33, "Proven by").

Two people, A and B, each with a HOME, an agent root in ~/agents/me and a project in ~/code/p,
and a bare git repository as the team's remote (laid out by `memstore team init`, holding one
lens that fires on Bash). The flow, each step as the person would take it:

1. A and B join the team at their terminals (`memstore team add`, a pty, a typed y).
2. A writes a memory of their own and shares it (`memstore share`, a pty, y): a branch is pushed.
3. The pull request is merged in the bare repository (a fast-forward of main to the branch).
4. A and B pull (`memstore team pull`); B runs a real Claude Code session (bypassPermissions,
   allowed for root with IS_SANDBOX=1) against the scripted stand-in API server.

Asserted, each catching a named failure:
- the team memory's row, `(team acme)` and its summary, reached B's model (MEMORY.md imported);
- B's Read of the team file reinforced it for B (B's journal and mirror) and not for A;
- the team's lens fired on B's Bash (its marker right after that tool's result);
- the agent's Write under teams/ was denied by the hook (no file) and its `memstore share` was
  refused twice: by the hook (the literal words) and by the CLI (a spelling the hook cannot
  see, run without a terminal); the bare repository gained no branch;
- B's clone is unchanged (git status empty) after the session, `flush --force` and `tick`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git
from tests.ptyrun import run_in_pty

from .binaries import find_memstore
from .claude import (
    CLAUDE_TIMEOUT,
    CLI_TIMEOUT,
    after_result,
    find_claude,
    person_at_home,
    request_text,
    write,
)
from .debriefs import wait_for_debriefs
from .fake_anthropic import FakeAnthropic, text, tool_use

pytestmark = pytest.mark.e2e

TEAM = "acme"
TOPIC = "vendor-quirk"
NAME = f"feedback_{TOPIC}"


@dataclass
class Person:
    home: Path
    root: Path
    project: Path
    env: dict[str, str]
    ms: Callable[..., subprocess.CompletedProcess[str]]
    memstore: str

    def at_terminal(self, *args: str) -> str:
        """`memstore --root ROOT ARGS` in a pty, the person typing y: must succeed."""
        done = run_in_pty([self.memstore, "--root", str(self.root), *args], ["y"], env=self.env,
                          cwd=self.project)
        assert done.exit_code == 0 and done.asked == 1, \
            f"memstore {' '.join(args)}: exit {done.exit_code}\n{done.output}"
        return done.output

    def listed(self) -> dict[str, dict[str, Any]]:
        self.ms("sync")
        return {row["path"]: row for row in json.loads(self.ms("list", "--json").stdout)}

    def journal(self) -> list[dict[str, Any]]:
        return [json.loads(line)
                for path in sorted((self.root / "runtime" / "journal").glob("*.jsonl"))
                for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def person(tmp_path: Path, who: str, memstore: str) -> Person:
    """A person at home (person_at_home) with their own git identity and memstore on the agent's
    PATH."""
    path = f"{Path(memstore).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    ident = {f"GIT_{role}_{field}": value for role in ("AUTHOR", "COMMITTER")
             for field, value in (("NAME", f"Person {who.upper()}"),
                                  ("EMAIL", f"{who}@example.com"))}
    home, root, project, env, ms = person_at_home(tmp_path / who, memstore, PATH=path, **ident)
    return Person(home, root, project, env, ms, memstore)


def branches(bare: Path, env: dict[str, str]) -> list[str]:
    return sorted(git(bare, "branch", "--list", "--format=%(refname:short)", env=env).split())


def test_a_team_memory_from_share_to_bs_session(tmp_path: Path) -> None:
    started = time.monotonic()
    claude, memstore = find_claude(), find_memstore()
    from memstore.frontends.terminal import client_among
    from memstore.life.provenance import parents

    among = client_among(parents())
    # every command this run starts is refused by design then, terminal or not
    if among is not None:
        pytest.skip(f"this test run is inside a coding client ({among[0]}): memstore "
                    "refuses team add there")
    tag = uuid.uuid4().hex[:10]
    lens_marker, summary = (f"TEAMLENS-{tag}",
                            f"Vendor X returns 200 on errors: check the body ({tag})")
    a, b = person(tmp_path, "a", memstore), person(tmp_path, "b", memstore)

    # ---- the team's repository: laid out, one lens, a bare remote
    seed, bare = tmp_path / "seed", tmp_path / "acme.git"
    made = subprocess.run([memstore, "team", "init", str(seed)], env=a.env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=CLI_TIMEOUT,
                          stdin=subprocess.DEVNULL)
    assert made.returncode == 0, made.stdout + made.stderr
    write(seed / "lenses" / "team-shell.md",
          f"---\nname: team-shell\ntype: lens\ntrigger:\n  tool_match: \"^Bash$\"\n---\n\n"
          f"# The team's shell rule\n\n- Never deploy on Friday. ({lens_marker})\n")
    git(seed, "add", "-A", env=a.env)
    git(seed, "commit", "-q", "-m", "Lay the team out", env=a.env)
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare), env=a.env)

    # ---- both join, at their terminals
    for who in (a, b):
        who.ms("init", str(who.root), "--apply")
        who.ms("install", "--scope", "user", "--apply")
        joined = who.at_terminal("team", "add", str(bare), "--name", TEAM)
        assert f"joined team {TEAM}" in joined and "1 lenses" in joined, joined
        assert (who.root / "teams" / TEAM / "lenses" / "team-shell.md").is_file()
        assert f"[teams.{TEAM}]" in (who.root / "memstore.toml").read_text(encoding="utf-8")
    # B's own memory, for the agent to try sharing
    b.ms("new", "feedback", "b-own", "--summary", "B's own lesson about retries", "--global")

    # ---- A shares a memory of their own
    a.ms("new", "feedback", TOPIC, "--summary", summary, "--importance", "7", "--global")
    before = branches(bare, a.env)
    shared = a.at_terminal("share", NAME, "--team", TEAM)
    new = [x for x in branches(bare, a.env) if x not in before]
    assert len(new) == 1 and new[0].startswith("memstore/share-"), (before, new, shared)
    assert f"branch {new[0]}" in shared and "next: open a pull request" in shared, shared
    # what went is A's authored text, with A's name on the commit
    author = git(bare, "log", "-1", "--format=%an <%ae>", new[0], env=a.env)
    assert author == "Person A <a@example.com>", author

    # ---- the pull request is merged: main fast-forwarded to the branch, in the bare repository
    merger = tmp_path / "merger"
    git(tmp_path, "clone", "-q", str(bare), str(merger), env=a.env)
    git(merger, "merge", "-q", "--ff-only", f"origin/{new[0]}", env=a.env)
    git(merger, "push", "-q", "origin", "main", env=a.env)

    # ---- both pull
    for who in (a, b):
        pulled = who.ms("team", "pull").stdout
        assert TEAM in pulled and "updated" in pulled, pulled
    team_file = b.root / "teams" / TEAM / "memory" / f"{NAME}.md"
    team_rel = f"teams/{TEAM}/memory/{NAME}.md"
    assert team_file.is_file() and summary in team_file.read_text(encoding="utf-8")
    memory_md = (b.root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    row = f"- [{NAME}](../{team_rel}): (team {TEAM}) {summary}"
    assert row in memory_md, f"B's MEMORY.md has no team row:\n{memory_md}"
    assert a.listed()[team_rel]["access_count"] == 0
    assert b.listed()[team_rel]["access_count"] == 0
    searched = json.loads(b.ms("search", tag, "--json").stdout)
    assert any(hit.get("team") == TEAM for hit in searched), searched

    # ---- B's session
    bare_branches = branches(bare, b.env)
    sneaky = b.root / "teams" / TEAM / "memory" / "feedback_agent-wrote.md"
    by_shell = b.root / "teams" / TEAM / "memory" / "feedback_shell-wrote.md"
    hooked = f"memstore share b-own --team {TEAM}"
    # no literal `share`: the CLI must refuse
    unseen = f"s=sha; memstore ${{s}}re feedback_b-own --team {TEAM}"
    steps = [
        [tool_use("Read", file_path=str(team_file))],
        [tool_use("Bash", command="echo hi", description="Say hi")],
        [tool_use("Write", file_path=str(sneaky),
                  content="---\nname: feedback_agent-wrote\ntype: feedback\n"
                          "summary: planted\n---\nplanted\n")],
        [tool_use("Bash", command=f"printf planted > {by_shell}", description="plant")],
        [tool_use("Bash", command=hooked, description="share")],
        [tool_use("Bash", command=unseen, description="share again")],
        [text("done")],
    ]
    read_id, bash_id, write_id, plant_id, hooked_id, unseen_id = (
        f"toolu_e2e_{n:02d}_0" for n in range(6))
    with FakeAnthropic(steps) as fake:
        env = {**b.env, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake", "ANTHROPIC_BASE_URL": fake.url,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "IS_SANDBOX": "1"}
        t0 = time.monotonic()
        proc = subprocess.run([claude, "-p", "Use what the team knows.", "--output-format", "json",
                               "--permission-mode", "bypassPermissions"], cwd=b.project, env=env,
                              capture_output=True, text=True, timeout=CLAUDE_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        session_seconds = time.monotonic() - t0
        wait_for_debriefs(tmp_path)
    assert proc.returncode == 0, (
        f"claude: exit {proc.returncode}\n{proc.stdout[-900:]}\n{proc.stderr[-900:]}")
    result = json.loads(proc.stdout)
    assert result.get("is_error") is False, result
    main = [r for r in fake.requests if r.is_main]
    assert len(main) == len(steps), fake.summary()
    messages = main[-1].body["messages"]

    # the team memory's row reached the model from the first request on
    first = request_text(main[0].body)
    assert f"(team {TEAM}) {summary}" in first, "the team memory's row never reached B's model"

    # B's read (it really read the file) reinforced it for B: B's journal, B's mirror; A's untouched
    assert summary in after_result(messages, read_id), after_result(messages, read_id)
    reads = [e for e in b.journal() if e.get("path") == team_rel and e.get("tool") == "Read"]
    assert len(reads) == 1, b.journal()
    assert b.listed()[team_rel]["access_count"] >= 1
    assert a.listed()[team_rel]["access_count"] == 0
    assert not [e for e in a.journal() if e.get("path") == team_rel], "B's read reached A's journal"

    # the team's lens fired on B's first Bash
    assert lens_marker in after_result(messages, bash_id), "the team lens did not fire on Bash"
    assert lens_marker not in "\n".join(request_text(r.body) for r in main[:2]), (
        "the lens text came before the Bash")

    # the agent's Write under teams/ was denied (Claude Code's deny rules install wrote from
    # memstore's table, else the hook), its shell write by the hook; no file came
    denied = [(d["tool_name"], d["tool_input"].get("file_path") or d["tool_input"].get("command"))
              for d in result["permission_denials"]]
    assert ("Write", str(sneaky)) in denied, denied
    refused = after_result(messages, write_id)
    assert ("denied by your permission settings" in refused
            or "is not the agent's to change" in refused), refused
    assert ("Bash", f"printf planted > {by_shell}") in denied, denied
    assert "is not the agent's to change" in after_result(messages, plant_id), (
        after_result(messages, plant_id))
    assert not sneaky.exists() and not by_shell.exists(), "the agent wrote into the team's clone"
    # its `memstore share`: the hook refused the literal one, memstore the one spelled past the hook
    assert ("Bash", hooked) in denied, denied
    assert "sharing with a team" in after_result(messages, hooked_id)
    assert ("Bash", unseen) not in denied, (
        "the hook saw through ${s}re: the CLI's refusal is then untested")
    assert ("proposing a change to a team needs you at a terminal"
            in after_result(messages, unseen_id)), after_result(messages, unseen_id)
    assert branches(bare, b.env) == bare_branches, "the agent's share pushed a branch"

    # B's clone holds the team's text only: nothing rewrote it, not the session, flush or tick
    clone = str(b.root / "teams" / TEAM)
    for step in ("session", "flush", "tick"):
        if step == "flush":
            b.ms("flush", "--force")
        elif step == "tick":
            b.ms("tick")
        status = git(Path(clone), "status", "--porcelain", "--untracked-files=all", env=b.env)
        assert status == "", f"after {step}, B's team clone changed:\n{status}"
    assert b.listed()[team_rel]["access_count"] >= 1, (
        "the reinforcement did not survive flush and tick")
    print(f"team e2e: session {session_seconds:.1f}s, test {time.monotonic() - started:.1f}s")

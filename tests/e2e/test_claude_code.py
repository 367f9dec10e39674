"""End to end with the real Claude Code binary, its model replaced by a scripted fake.

The binary runs `claude -p PROMPT --output-format json` in a temp project whose agent
root is the project itself (PROJECT/memory, PROJECT/lenses), with HOME in a temp
folder and ANTHROPIC_BASE_URL pointing at tests/e2e/fake_anthropic.py. The hooks are
the real `memstore --root PROJECT hook`. The scripted model:

  0. Reads memory/feedback_x.md             -> PostToolUse reinforces it (journal + mirror)
  1. Writes memory/project_new-thing.md      -> PreToolUse approves it (else `-p` denies it)
  2. Writes lenses/sneaky.md                 -> nobody approves it: denied, file absent
  3. Bash `echo hi`                          -> the ^Bash$ lens fires: its text follows the result
  4. Bash `echo again`                       -> the same lens does not fire twice in a session
  5. final text

Where things land in the request bodies (Claude Code 2.1.332):
- CLAUDE.md, its `@memory/MEMORY.md` import expanded, is a <system-reminder> text block
  of the first user message.
- SessionStart additionalContext is prepended to messages[1], a role "system" message
  that also carries the "# Environment" section: "SessionStart hook additional context: <text>".
- PreToolUse additionalContext is a role "system" message right after the user message
  holding that tool's tool_result: "PreToolUse:Bash hook additional context: <text>".
The assertions below look for the text between a tool_result and the next assistant
turn, so they hold whether a version uses a system message or an extra text block.

Binary: $CLAUDE_BIN, else ./.claude-bin/claude (scripts/install_claude.sh), else
`claude` on PATH; none found means the test is skipped, saying so.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .binaries import find_memstore
from .claude import (
    CLAUDE_TIMEOUT,
    CLI_TIMEOUT,
    Markers,
    after_result,
    clean_env,
    find_claude,
    make_project,
    request_text,
)
from .debriefs import wait_for_debriefs
from .fake_anthropic import FakeAnthropic, Recorded, text, tool_use

PROMPT = "Look at your memory, record what you learn, then check the shell."
# The final answer holds one rule: the SessionEnd debrief must keep it as a lesson, and only it.
RULE = "Always quote every path in a shell command."
FINAL_ANSWER = f"All done with the scripted session. I fixed the lens on 2026-07-30. {RULE}"

# project-hook-only: the project layout with its read grant removed, so the Read must be
# approved by the PreToolUse hook alone (the fallback), and verify must say the grant is gone.
LAYOUTS = ("inside", "user", "project", "project-hook-only")


def wire(layout: str, root: Path, project: Path, home: Path, run: Any) -> tuple[Path, list[str]]:
    """Wire memstore in exactly as a user of this layout would, with `memstore install`.

    Returns the settings file that holds the hooks and the arguments `verify` needs.
    - inside: the agent root is the project itself; project scope.
    - user: one agent root in ~/agents/me for every project; `install --scope user`.
    - project: the same root outside the project; plain `install` run in the project.
    """
    if layout == "inside":
        settings = project / ".claude" / "settings.json"
        args = ["--scope", "project", "--settings", str(settings), "--claude-md",
                str(project / "CLAUDE.md")]
    elif layout == "user":
        settings = home / ".claude" / "settings.json"
        args = ["--scope", "user"]
    else:
        settings = project / ".claude" / "settings.json"
        args = []
    run("install", "--apply", *args)
    registered = json.loads(settings.read_text(encoding="utf-8"))
    for event in ("SessionStart", "PreToolUse", "PostToolUse"):
        assert registered.get("hooks", {}).get(event), (
            f"memstore install registered no {event} hook in {settings}")
    if layout == "inside":
        imports = (project / "CLAUDE.md").read_text(encoding="utf-8")
        assert "@memory/MEMORY.md" in imports, (
            f"memstore install left out the MEMORY.md import:\n{imports}")
    elif layout == "user":
        rules = (home / ".claude" / "rules" / "memstore.md").read_text(encoding="utf-8")
        assert f"@{root}/memory/MEMORY.md" in rules, rules
    else:
        local = json.loads(
            (project / ".claude" / "settings.local.json").read_text(encoding="utf-8"))
        assert str(root) in local["permissions"]["additionalDirectories"], local
        ignored = subprocess.run(
            ["git", "-C", str(project), "check-ignore", "-q", ".claude/settings.local.json"])
        assert ignored.returncode == 0, "install left the read grant where git would commit it"
    return settings, args


# ---------------------------------------------------------------- the test


@pytest.mark.parametrize("layout", LAYOUTS)
def test_claude_code_session_with_memstore_hooks(tmp_path: Path, layout: str) -> None:
    started = time.monotonic()
    claude = find_claude()
    memstore = find_memstore()
    home = (tmp_path / "home").resolve()
    home.mkdir()
    if layout == "inside":
        project = root = (tmp_path / "project").resolve()
    else:  # where a person keeps one agent for every project, and a project of theirs
        root = home / "agents" / "me"
        project = home / "code" / "my-project"
    project.mkdir(parents=True, exist_ok=True)
    if layout.startswith("project") and shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=CLI_TIMEOUT)
    now = dt.datetime.now(dt.UTC)
    markers = Markers()
    make_project(root, markers, now)
    base_env = clean_env(HOME=str(home))

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [memstore, "--root", str(root), *args],
            cwd=project,
            env=base_env,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
        )
        if check:
            command = " ".join(args)
            assert proc.returncode == 0, (
                f"memstore {command} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc

    version = subprocess.run([claude, "--version"], capture_output=True, text=True,
                             timeout=CLI_TIMEOUT, env=base_env)
    assert version.returncode == 0, f"{claude} --version failed: {version.stderr}"

    # The mirror must exist before the session: lenses are read from it by the hook.
    run("sync")
    run("render")
    memory_md = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert markers.hot in memory_md, f"render did not put feedback_x in MEMORY.md:\n{memory_md}"
    listed = {row["name"]: row for row in json.loads(run("list", "--json").stdout)}
    assert listed["feedback_x"]["band"] == "hot", listed["feedback_x"]
    assert listed["feedback_x"]["access_count"] == 0
    bundle = run("context").stdout
    assert markers.t1 in bundle, f"memstore context left out the T1 fact:\n{bundle}"
    settings, install_args = wire(layout, root, project, home, run)
    # install renders it again
    memory_md = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")

    # verify passes, and its probe leaves the journal and the policy state as they were
    journal_before = sorted(p.name for p in (root / "runtime" / "journal").glob("*")) if (
        root / "runtime" / "journal").exists() else []
    if layout == "project-hook-only":
        (project / ".claude" / "settings.local.json").unlink()
    verified = run("verify", *install_args, "--json", check=False)
    failed = [c for c in json.loads(verified.stdout) if not c["ok"]]
    if layout == "project-hook-only":
        # the grant's file gone by hand: a missing grant, and wiring gone as tamper evidence sees it
        assert [c["name"] for c in failed] == ["read grant", "person's files and wiring"], failed
        assert all("install --apply" in c["fix"] for c in failed), failed
    else:
        assert verified.returncode == 0 and not failed, (
            f"verify failed in layout {layout}:\n{failed}")
    journal_after = sorted(p.name for p in (root / "runtime" / "journal").glob("*")) if (
        root / "runtime" / "journal").exists() else []
    assert journal_after == journal_before, "verify left a journal file behind"
    assert "verify-probe" not in run("list", "--json").stdout

    mem = root / "memory"
    new_memory = (
        "---\nname: project_new-thing\ntype: project\nsummary: A thing the e2e session learned\n"
        "---\n\n"
        "# project_new-thing\n\nWritten by the scripted session.\n"
    )
    steps = [
        [text("Reading my notes first."), tool_use("Read", file_path=str(mem / "feedback_x.md"))],
        [tool_use("Write", file_path=str(mem / "project_new-thing.md"), content=new_memory)],
        [tool_use("Write", file_path=str(root / "lenses" / "sneaky.md"),
                  content="---\ntype: lens\n---\nsneaky\n")],
        [tool_use("Bash", command="echo hi", description="Say hi")],
        [tool_use("Bash", command="echo again", description="Say it again")],
        [text(FINAL_ANSWER)],
    ]
    first_bash, second_bash = "toolu_e2e_03_0", "toolu_e2e_04_0"

    with FakeAnthropic(steps) as fake:
        env = clean_env(
            HOME=str(home),
            ANTHROPIC_API_KEY="sk-ant-e2e-fake",
            ANTHROPIC_BASE_URL=fake.url,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )
        t0 = time.monotonic()
        try:
            proc = subprocess.run(
                [claude, "-p", PROMPT, "--output-format", "json"],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=CLAUDE_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
            wait_for_debriefs(tmp_path)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(
                f"claude did not finish within {CLAUDE_TIMEOUT}s\n--- stdout ---\n{exc.stdout!r}\n"
                f"--- stderr ---\n{exc.stderr!r}\n--- requests ---\n{fake.summary()}"
            )
        claude_seconds = time.monotonic() - t0

    main = [r for r in fake.requests if r.is_main]
    hook_log = root / "runtime" / "state" / "hook-errors.log"

    def diagnostics() -> str:
        return "\n".join(
            [
                f"layout {layout}: claude {claude} ({version.stdout.strip()}), exit "
                f"{proc.returncode}, {claude_seconds:.1f}s",
                f"--- claude stdout ---\n{proc.stdout[-6000:]}",
                f"--- claude stderr ---\n{proc.stderr[-4000:]}",
                f"--- requests ---\n{fake.summary()}",
                "--- hook-errors.log ---\n"
                f"{hook_log.read_text() if hook_log.exists() else '(none)'}",
                f"--- {settings} ---\n{settings.read_text()}",
            ]
        )

    try:
        check_session(proc, main, root, markers, bundle, memory_md, first_bash, second_bash, run)
        assert not hook_log.exists(), "the hook logged errors"
    except AssertionError:
        print(diagnostics())
        raise
    print(f"claude {version.stdout.strip()} ({layout}): session {claude_seconds:.1f}s, "
          f"test {time.monotonic() - started:.1f}s")


def check_session(
    proc: subprocess.CompletedProcess[str],
    main: list[Recorded],
    root: Path,
    markers: Markers,
    bundle: str,
    memory_md: str,
    first_bash: str,
    second_bash: str,
    run: Any,
) -> None:
    assert proc.returncode == 0, "claude exited non-zero"
    result = json.loads(proc.stdout)
    assert result.get("is_error") is False and result.get("result") == FINAL_ANSWER, result
    assert len(main) == 6, f"expected 6 model turns, saw {len(main)}"
    first = main[0].body
    final_messages = main[-1].body["messages"]

    # (a) The Read was reinforced: a journal line now, the mirror after sync.
    events = [
        json.loads(line)
        for path in sorted((root / "runtime" / "journal").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    reads = [e for e in events
             if e.get("path") == "memory/feedback_x.md" and e.get("tool") == "Read"]
    assert len(reads) == 1, f"journal events: {events}"
    assert reads[0].get("session") == result["session_id"], (reads[0], result["session_id"])
    run("sync")
    shown = json.loads(run("show", "feedback_x", "--json").stdout)
    assert shown["access_count"] == 1, shown

    # (b) The memory write went through (approved by the hook); the lens write did not.
    new_file = root / "memory" / "project_new-thing.md"
    assert new_file.is_file(), "the Write to memory/ was not approved"
    assert "Written by the scripted session." in new_file.read_text(encoding="utf-8")
    writes = [e for e in events
              if e.get("path") == "memory/project_new-thing.md" and e.get("tool") == "Write"]
    assert len(writes) == 1, f"journal events: {events}"
    denied = [(d.get("tool_name"), (d.get("tool_input") or {}).get("file_path"))
              for d in result["permission_denials"]]
    assert denied == [("Write", str(root / "lenses" / "sneaky.md"))], denied
    assert not (root / "lenses" / "sneaky.md").exists()

    # (c) The lens reached the model once, right after the first Bash result, not after the second.
    final_text = request_text(main[-1].body)
    assert final_text.count(markers.lens) == 1, (
        f"lens text occurs {final_text.count(markers.lens)} times")
    assert markers.lens in after_result(final_messages, first_bash)
    assert markers.lens not in after_result(final_messages, second_bash)
    for earlier in main[:4]:  # before any Bash ran, no request carried it
        assert markers.lens not in request_text(earlier.body)

    # (d) The SessionStart bundle reached the model whole, in the first request.
    first_text = request_text(first)
    assert markers.t1 in first_text, "SessionStart bundle missing from the first request"
    # line by line: SessionStart may put tamper evidence on top (the grant's file removed by hand)
    missing = [line for line in bundle.strip().splitlines()
               if line.strip() and line not in first_text]
    assert not missing, f"the first request holds only part of the bundle: {missing}"

    # (f) The SessionEnd debrief read the real transcript and kept only the rule, as a lesson.
    lessons = [p.read_text(encoding="utf-8") for p in (root / "memory" / "short-term").glob("*.md")
               if "kind: lesson" in p.read_text(encoding="utf-8")]
    assert len(lessons) == 1 and RULE in lessons[0] and "2026-07-30" not in lessons[0], lessons

    # (e) identity.md and MEMORY.md reached the model whole before its first turn: through
    # the CLAUDE.md or user-memory imports, or (root outside the project) SessionStart.
    assert markers.identity in first_text, "identity.md missing from the first request"
    assert markers.hot in first_text, "MEMORY.md's Hot row missing from the first request"
    assert memory_md.strip() in first_text, "MEMORY.md arrived only in part"

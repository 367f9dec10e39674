"""The PreToolUse gate (memstore/hookgate.sh): a tool call that touches no memory and matches no
lens starts no Python; every call the hook would decide still reaches it (issue 31, item 5)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memstore.hook import gate as hookgate
from memstore.mirror.sync import sync
from tests.helpers import call, memory, write

REPO = Path(__file__).resolve().parents[1]
GATE = REPO / "memstore" / "hookgate.sh"
HOOKRUN = REPO / "memstore" / "hookrun.py"
# stands in for the hook: says it ran, and what it got
RECORD = 'printf "PASS %s\\n" "$MEMSTORE_GATE"; cat'


@pytest.fixture
def home_root(tmp_path: Path) -> Path:
    # the usual place: the folders above it are words
    root = Path(os.environ["HOME"]) / "agents" / "me"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha rule"))
    write(root, "identity.md", "# me\n")
    write(root, "lenses/task-care.md", "---\ntype: lens\ntrigger:\n  tool_match: ^(Task|Agent)$\n"
                                       "---\nTASKMARK\n")
    sync(root)
    (tmp_path / "proj").mkdir()
    hookgate.session_refresh(str(root), 100)
    return root


def gate(root: Path, payload: object, *, raw: bytes | None = None,
         mode: tuple[str, ...] = ()) -> str:
    """What the recorder saw ('' when the gate let the call go by without the hook)."""
    data = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode()
    done = subprocess.run(["bash", str(GATE), *mode, "sh", "-c", RECORD, "sh", "--root", str(root)],
                          input=data, capture_output=True, timeout=20)
    assert done.returncode == 0 and done.stderr == b"", done
    return done.stdout.decode("utf-8", errors="replace")


def bash(command: str, cwd: str) -> dict:
    return {"session_id": "s", "transcript_path": "/x/.claude/projects/p/s.jsonl", "cwd": cwd,
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}}


def tool(name: str, cwd: str, **tool_input: str) -> dict:
    return {"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": name,
            "tool_input": tool_input}


def test_a_plain_tool_call_goes_by_and_the_hooks_business_does_not(
        home_root: Path, tmp_path: Path) -> None:
    """Failure caught: the gate starting the hook for a Bash `ls` (no saving), or letting by a call
    the hook must see: an edit tool, memstore's MCP tools, a lens's tool, a command with the hook's
    words, a shell standing in the root, a tool it has never seen, a Read through a link into the
    memory."""
    proj = str(tmp_path / "proj")
    assert gate(home_root, bash("ls -la", proj)) == ""
    assert gate(home_root, tool("Grep", proj, pattern="x")) == ""
    assert gate(home_root, tool("Read", proj, file_path=f"{proj}/a.py")) == ""
    for payload, why in [
        (tool("Write", proj, file_path=f"{proj}/a.py", content="x"), "edit"),
        (tool("NotebookEdit", proj, notebook_path=f"{proj}/a.ipynb"), "edit"),
        (tool("mcp__plugin_memstore_memstore__search", proj, query="x"), "new"),
        (tool("Task", proj, prompt="x"), "lens"),
        (tool("mcp__other__thing", proj), "new"),
        (bash("rm notes.txt", proj), "word"),
        (bash("cat ~/.bashrc", proj), "word"),
        (bash(f"cat {home_root}/memory/x.md", proj), "word"),
        (bash("echo ag''ents/me/iden\"\"tity.md", proj), "word"),
        (bash("echo hi > sett\\ings.json", proj), "word"),
        (bash("ls", str(home_root / "memory")), "cwd"),
        ({**bash("ls", proj), "hook_event_name": "PostToolUse"}, "event"),
    ]:
        assert gate(home_root, payload).startswith(f"PASS {why}\n"), (payload, why)
    os.symlink(home_root / "memory", tmp_path / "proj" / "door")
    assert gate(home_root,
                tool("Read", proj, file_path="door/feedback_alpha.md")).startswith("PASS ")
    os.symlink(home_root / "memory" / "feedback_alpha.md", tmp_path / "proj" / "one.md")
    assert gate(home_root, tool("Read", proj, file_path=f"{proj}/one.md")).startswith("PASS link")
    # the settings install's gate: the lens question, and for Bash the same word check as the hook's
    # cheap look (its `if` filters read raw text: this is the net for quotes, tabs, doubled slashes)
    assert gate(home_root, bash("ls -la", proj), mode=("--lenses-only",)) == ""
    assert gate(home_root, bash("rm notes.txt", proj),
                mode=("--lenses-only",)).startswith("PASS word\n")
    assert gate(home_root, tool("Grep", proj, pattern="x"), mode=("--lenses-only",)) == ""
    assert gate(home_root, tool("Task", proj, prompt="x"),
                mode=("--lenses-only",)).startswith("PASS lens")


def test_garbage_goes_to_the_hook_whole_and_the_gate_exits_zero(
        home_root: Path, tmp_path: Path) -> None:
    """Failure caught: the gate failing the call (non-zero, a message) on input it cannot read, or
    handing the hook less than it was given (a payload past its read limit, a NUL)."""
    for raw in (b"", b"garbage", b"{", b"\x00\x01\xff", b'{"tool_name": "Bash"}' * 2000,
                "日本".encode() * 9000):
        seen = gate(home_root, None, raw=raw)
        assert seen.startswith("PASS "), raw[:40]
        if b"\x00" not in raw:
            assert seen.split("\n", 1)[1].rstrip("\n") == raw.decode("utf-8", errors="replace"), \
                raw[:40]
    big = bash("ls " + "x" * 40_000, str(tmp_path / "proj"))
    # past the read limit: handed on whole
    assert json.loads(gate(home_root, big).split("\n", 1)[1]) == big
    # \u escapes could spell any word
    escaped = json.dumps(bash("cat \u00e9", str(tmp_path / "proj")))
    assert gate(home_root, None, raw=escaped.encode()).startswith("PASS escaped")


def test_a_missing_or_stale_list_starts_the_hook_which_writes_it_again(
        home_root: Path, tmp_path: Path) -> None:
    """Failure caught: a check skipped because the gate's list was missing, or written before a lens
    was added, edited or removed (a lens on a new tool must fire without a reinstall or a sync); and
    a list the hook never rewrites, so every later call pays Python."""
    proj = str(tmp_path / "proj")
    listed = Path(hookgate.gate_file(str(home_root)))
    ls = bash("ls", proj)
    assert gate(home_root, ls) == ""
    listed.unlink()
    assert gate(home_root, ls).startswith("PASS missing")
    hookgate.session_refresh(str(home_root), 100)
    time.sleep(0.01)
    write(home_root, "lenses/shell.md", "---\ntype: lens\ntrigger:\n  tool_match: ^Bash$\n---\n"
                                        "SHELLMARK\n")
    assert gate(home_root, ls).startswith("PASS stale")
    # the real hook behind the gate: the lens fires at once, and the list is written again
    env = {**os.environ, "PATH": os.environ["PATH"]}
    done = subprocess.run(["bash", str(GATE), sys.executable, "-S", str(HOOKRUN), "--root",
                           str(home_root)],
                          input=json.dumps(ls).encode(), capture_output=True, timeout=30, env=env)
    assert "SHELLMARK" in done.stdout.decode(), done
    # a Bash lens: every Bash call is the hook's now
    assert gate(home_root, ls).startswith("PASS lens")
    (home_root / "lenses/shell.md").unlink()
    assert gate(home_root, ls).startswith("PASS stale")
    hookgate.session_refresh(str(home_root), 100)
    assert gate(home_root, ls) == ""
    later = listed.stat().st_mtime_ns + 1_000_000_000
    # edited in place: the folder's mtime stays
    os.utime(home_root / "lenses/task-care.md", ns=(later, later))
    assert gate(home_root, ls).startswith("PASS stale")
    # a tool never seen goes to the hook once, which learns it
    hookgate.session_refresh(str(home_root), 100)
    novel = tool("mcp__other__thing", proj)
    assert gate(home_root, novel).startswith("PASS new")
    env["MEMSTORE_GATE"] = "new"
    subprocess.run([sys.executable, "-S", str(HOOKRUN), "--root", str(home_root)],
                   input=json.dumps(novel).encode(), capture_output=True, timeout=30, env=env,
                   check=True)
    assert gate(home_root, novel) == ""


def test_the_gate_never_lets_by_a_call_the_hook_refuses(home_root: Path, tmp_path: Path) -> None:
    """Failure caught: the gate's look being narrower than the hook's (a word spelt with quotes or
    backslashes, a path through `~` or `..`, a verb): a shell command the hook would deny ran
    unseen. Random commands built from the hook's own words, quoted and escaped every way; each the
    hook denies must reach it through the gate."""
    proj = str(tmp_path / "proj")
    pieces = [*hookgate.words(str(home_root)), "identity.md", "lenses/x.md", "memstore.toml", "/",
              "echo", "cat", "sed -i", ">", ">>", "tee", "python3 -c", "open(", "'", '"', "\\", " ",
              ";", "&&", "$HOME", "~/", "../", "agents", "me", str(home_root), "x", "review/",
              "runtime/", "$(", ")", "\n", "\t"]
    rng = random.Random(31)
    denied = 0
    for _ in range(400):
        command = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        cwd = rng.choice([proj, str(home_root), str(home_root / "memory"), "/"])
        payload = bash(command, cwd)
        decision = ((call(home_root, payload)[1] or {}).get("hookSpecificOutput")
                    or {}).get("permissionDecision")
        if decision == "deny":
            denied += 1
            assert gate(home_root, payload).startswith("PASS "), (command, cwd)
    assert denied > 40  # the sample holds enough refusals to mean something


def test_what_an_attacker_tried_reaches_the_hook(home_root: Path, tmp_path: Path) -> None:
    """Failures caught (issue 31's attacker walkthrough): Claude Code's Monitor tool, which runs a
    shell command, skipped once the gate had learnt its name (the hook checked commands of Bash
    only) and writing identity.md; a forged list with no watch line and `skip` for the edit tools
    trusted for good (its lock made a directory so the hook could never rewrite it); a payload with
    `cwd` twice skipping the cwd check."""
    proj = str(tmp_path / "proj")
    monitor = tool("Monitor", proj, command=f"echo x >> {home_root}/identity.md",
                   description="watch")
    assert gate(home_root, monitor).startswith("PASS "), "Monitor's command went by the hook"
    gate_file = Path(hookgate.gate_file(str(home_root)))
    # the name learnt and judged free of lenses, as the hook records it
    with gate_file.open("a") as listed:
        listed.write("tool\tMonitor\nskip\tMonitor\nfree\tMonitor\n")
    assert gate(home_root, tool("Monitor", proj, pattern="x")) == "", \
        "the recorded list is not in force"
    assert gate(home_root, monitor).startswith("PASS "), \
        "a learnt Monitor's command went by the hook"
    code, out = call(home_root, monitor)
    # the hook refuses it
    assert code == 0 and out["hookSpecificOutput"]["permissionDecision"] == "deny", out

    lines = [line for line in gate_file.read_text().splitlines()
             if not line.startswith(("watch\t", "word\t"))] + \
        ["skip\tWrite", "skip\tEdit", "skip\tBash"]
    gate_file.write_text("\n".join(lines) + "\n")
    write_call = tool("Write", proj, file_path=f"{home_root}/identity.md", content="x")
    assert gate(home_root, write_call).startswith("PASS "), \
        "a forged list let a Write of identity.md by"
    assert gate(home_root,
                bash(f"echo x >> {home_root}/identity.md", proj)).startswith("PASS stale")
    Path(str(gate_file) + ".lock").unlink(missing_ok=True)
    Path(str(gate_file) + ".lock").mkdir()
    hookgate.session_refresh(str(home_root), 100)  # cannot write it: the forged list must not stand
    assert not gate_file.exists(), \
        "a list the hook could not rewrite was left for the gate to trust"

    twice = json.dumps(bash("echo x > i?entity.md", proj))[:-2] + \
        f', "cwd": "/tmp"}}, "cwd": "{home_root}"}}'
    assert gate(home_root, None, raw=twice.encode()).startswith("PASS "), twice


def test_tabs_and_doubled_slashes_reach_the_shell_check(tmp_path: Path) -> None:
    """Failure caught (issue 32's attacker walkthrough): `cp<TAB>-r<TAB>payload/.<TAB>/home//me/`
    overwrote identity.md through the real client. The shell check refuses it, but the looks in
    front of it (the hook's cheap look, the gate in both modes) matched `cp ` with its space and the
    root spelt with one slash, so nothing asked it. A root with no folder words above it (~/me) has
    only its spellings and the verbs."""
    home = Path(os.environ["HOME"])
    root = home / "me"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha rule"))
    write(root, "identity.md", "# me\n")
    sync(root)
    hookgate.session_refresh(str(root), 100)
    proj = str(tmp_path / "proj")
    doubled = str(root).replace("/me", "//me")
    commands = [f"cp\t-r\t{tmp_path}/payload/.\t{doubled}/", f"rm\t-rf\t{doubled}",
                f"mv\t{doubled}\t/tmp/gone", f"chmod -R 000 {home}/./me",
                f"python3 -c \"import shutil;shutil.rmtree('{home}/./me')\"", f"rm\t-rf\t{home}",
                f"chmod -R 000 {home}", f"chown -R nobody {home}/./me"]
    for command in commands:
        payload = bash(command, proj)
        decision = ((call(root, payload)[1] or {}).get("hookSpecificOutput")
                    or {}).get("permissionDecision")
        assert decision == "deny", (command, decision)
        # the plugin's gate, and the settings install's `*` handler
        for mode in ((), ("--lenses-only",)):
            assert gate(root, payload, mode=mode).startswith("PASS "), (mode, command)
    relative = bash("chmod -R 000 me", str(home))  # the root named from the folder above it
    assert ((call(root, relative)[1] or {}).get("hookSpecificOutput") or {}).get(
        "permissionDecision") == "deny"
    assert all(gate(root, relative, mode=mode).startswith("PASS ")
               for mode in ((), ("--lenses-only",)))

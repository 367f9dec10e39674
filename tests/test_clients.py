"""Codex CLI and Gemini CLI through the one hook (memstore.hook.clients), their install and verify,
and their transcripts. The real binaries run in tests/e2e/test_codex.py and test_gemini.py."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from pathlib import Path

import pytest

from memstore.hook.clients.codex import patch_files
from memstore.hook.handler import main as hook_main
from memstore.life.capture import final_answer
from memstore.mirror.sync import sync
from memstore.wiring.install_clients import (
    codex_trust_hash,
    codex_trust_key,
    plan_codex,
    plan_gemini,
)
from tests.helpers import memory, write

NOW = "2026-07-30T12:00:00Z"
LENS = ("---\nname: memory-care\ntype: lens\ntrigger:\n  tool_match: \"^Read$\"\n"
        "  path_pattern: memory/\n---\nLENSMARK read memories with care\n")


@pytest.fixture
def client_root(root: Path) -> Path:
    write(root, "memory/feedback_x.md", memory("feedback_x", "the x rule", body="Always x."))
    write(root, "identity.md", "# me\nIDENTITYMARK\n")
    write(root, "lenses/memory-care.md", LENS)
    sync(root)
    return root


def call(root: Path, client: str, payload: dict) -> dict | None:
    out = io.StringIO()
    code = hook_main(["--root", str(root), "--now", NOW, "--client", client],
                     stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out)
    assert code == 0
    return json.loads(out.getvalue()) if out.getvalue() else None


def access(root: Path, rel: str) -> int:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        row = conn.execute("SELECT access_count FROM policy WHERE path = ?", (rel,)).fetchone()
    finally:
        conn.close()
    return row[0] if row else 0


def codex(event: str, tool: str, command: str, cwd: Path) -> dict:
    return {"hook_event_name": event, "session_id": "s1", "cwd": str(cwd), "tool_name": tool,
            "tool_input": {"command": command}}


def gemini(event: str, tool: str, cwd: Path, **tool_input: str) -> dict:
    return {"hook_event_name": event, "session_id": "g1", "cwd": str(cwd), "tool_name": tool,
            "tool_input": tool_input}


# ---------------------------------------------------------------- Codex


def test_patch_paths() -> None:
    """Failure caught: a file a patch touches left out (never refused, never reinforced)."""
    patch = ("*** Begin Patch\n*** Add File: memory/new.md\n+x\n*** Update File: identity.md\n"
             "*** Move to: lenses/l.md\n@@\n-a\n+b\n"
             "*** Delete File: memory/old.md\n*** End Patch\n")
    assert patch_files(patch) == [("Write", "memory/new.md"), ("Edit", "identity.md"),
                                  ("Write", "lenses/l.md"), ("Write", "memory/old.md")]
    assert patch_files("not a patch") == []


def test_codex_session_start_carries_identity_index_and_bundle(client_root: Path) -> None:
    """Failure caught: Codex (no `@` imports in AGENTS.md) starting without identity and the
    index."""
    from memstore.api.store import Store

    Store(client_root).render()
    out = call(client_root, "codex", {"hook_event_name": "SessionStart", "session_id": "s1",
                                      "cwd": str(client_root), "source": "startup"})
    text = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "IDENTITYMARK" in text and "feedback_x" in text  # identity.md and MEMORY.md


def test_codex_shell_read_reinforces_and_a_non_read_does_not(client_root: Path) -> None:
    """Failure caught: a memory read through Codex's shell never reinforced (or `ls` counted as a
    read)."""
    call(client_root, "codex", codex("PostToolUse", "Bash",
                                     "ls memory; grep -l x memory/feedback_x.md", client_root))
    assert access(client_root, "memory/feedback_x.md") == 0
    call(client_root, "codex", codex("PostToolUse", "Bash", "sed -n '1,20p' memory/feedback_x.md",
                                     client_root))
    assert access(client_root, "memory/feedback_x.md") == 1


def test_codex_patch_of_a_persons_file_is_refused_with_a_reason(client_root: Path) -> None:
    """Failure caught: a patch to identity.md let through, or refused without a reason (Codex then
    runs it)."""
    patch = "*** Begin Patch\n*** Update File: identity.md\n@@\n-# me\n+# you\n*** End Patch\n"
    out = call(client_root, "codex", codex("PreToolUse", "apply_patch", patch, client_root))
    spec = out["hookSpecificOutput"]
    assert spec["permissionDecision"] == "deny" and spec["permissionDecisionReason"].strip()
    mixed = ("*** Begin Patch\n*** Add File: memory/feedback_ok.md\n+x\n"
             "*** Add File: lenses/evil.md\n+y\n*** End Patch\n")
    # one person's file in a patch refuses the patch
    assert call(client_root, "codex", codex("PreToolUse", "apply_patch", mixed, client_root))[
        "hookSpecificOutput"]["permissionDecision"] == "deny"
    fine = "*** Begin Patch\n*** Add File: memory/feedback_ok.md\n+x\n*** End Patch\n"
    answer = call(client_root, "codex", codex("PreToolUse", "apply_patch", fine, client_root))
    assert answer is None or answer["hookSpecificOutput"].get("permissionDecision") != "deny"
    out = call(client_root, "codex", codex("PreToolUse", "Bash", "echo you > identity.md",
                                           client_root))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_codex_patch_of_a_memory_reinforces_it(client_root: Path) -> None:
    """Failure caught: the agent's own edit of a memory through apply_patch not counted."""
    patch = ("*** Begin Patch\n*** Update File: memory/feedback_x.md\n@@\n-Always x.\n"
             "+Always x, twice.\n*** End Patch\n")
    call(client_root, "codex", codex("PostToolUse", "apply_patch", patch, client_root))
    assert access(client_root, "memory/feedback_x.md") == 1


def test_codex_lens_fires_on_a_shell_read(client_root: Path) -> None:
    """Failure caught: a lens whose trigger is reading memory files never reaching a Codex
    session."""
    out = call(client_root, "codex", codex("PreToolUse", "Bash", "cat memory/feedback_x.md",
                                           client_root))
    assert "LENSMARK" in out["hookSpecificOutput"]["additionalContext"]


def test_garbage_from_a_client_is_ignored(client_root: Path) -> None:
    """Failure caught: a malformed payload from another client failing the hook (it must exit 0,
    silent)."""
    for client in ("codex", "gemini", "nonsense"):
        for payload in ({"hook_event_name": "PreToolUse", "tool_name": "apply_patch",
                         "tool_input": "x"},
                        {"hook_event_name": "BeforeTool", "tool_name": "read_file",
                         "tool_input": {"file_path": 3}},
                        {"hook_event_name": 7}):
            out = io.StringIO()
            assert hook_main(["--root", str(client_root), "--client", client],
                             stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out) == 0


# ---------------------------------------------------------------- Gemini


def test_gemini_refuses_a_persons_file_before_the_tool(client_root: Path) -> None:
    """Failure caught: Gemini's replace/write_file of identity.md let through."""
    out = call(client_root, "gemini", gemini("BeforeTool", "replace", client_root,
                                             file_path="identity.md", old_string="me",
                                             new_string="you"))
    assert out["decision"] == "deny" and out["reason"].strip()
    out = call(client_root, "gemini", gemini("BeforeTool", "run_shell_command", client_root,
                                             command="rm identity.md"))
    assert out["decision"] == "deny"
    assert call(client_root, "gemini", gemini("BeforeTool", "write_file", client_root,
                                              file_path="memory/feedback_new.md",
                                              content="x")) is None


def test_gemini_reads_reinforce_after_the_tool_and_lenses_come_with_them(client_root: Path) -> None:
    """Failure caught: read_file or a shell read not reinforced; a lens fired before the tool, where
    Gemini drops the context (it would be spent and never seen)."""
    assert call(client_root, "gemini", gemini("BeforeTool", "read_file", client_root,
                                              file_path="memory/feedback_x.md")) is None
    out = call(client_root, "gemini", gemini("AfterTool", "read_file", client_root,
                                             file_path="memory/feedback_x.md"))
    assert access(client_root, "memory/feedback_x.md") == 1
    assert "LENSMARK" in out["hookSpecificOutput"]["additionalContext"]
    # run in dir_path, not the session's cwd
    call(client_root, "gemini", gemini("AfterTool", "run_shell_command", client_root.parent,
                                       command="cat feedback_x.md",
                                       dir_path=str(client_root / "memory")))
    # the same minute: inside the spacing gate, but journaled
    assert access(client_root, "memory/feedback_x.md") == 1
    journal = "".join(p.read_text() for p in (client_root / "runtime" / "journal").glob("*.jsonl"))
    assert journal.count("memory/feedback_x.md") == 2


# ---------------------------------------------------------------- install


def test_codex_install_keeps_foreign_config_trusts_its_handlers_and_uninstalls_cleanly(
        client_root: Path, tmp_path: Path) -> None:
    """Failure caught: install losing a person's Codex settings or hooks, moving a foreign hook (its
    trust entry names its index), trust entries that do not match the handlers, or an uninstall that
    leaves ours."""
    home = tmp_path / "codex"
    home.mkdir()
    foreign_hooks = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                         {"type": "command", "command": "/usr/bin/audit-bash"}]}]},
                     "other": 1}
    (home / "hooks.json").write_text(json.dumps(foreign_hooks, indent=2) + "\n")
    foreign_toml = ('model = "gpt-5.5"\n\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n\n'
                    '[hooks.state."/x/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:abc"\n')
    (home / "config.toml").write_text(foreign_toml)
    before = {p.name: p.read_text() for p in home.iterdir()}

    plan_codex(client_root, home=home).apply()
    hooks = json.loads((home / "hooks.json").read_text())
    assert hooks["other"] == 1 and hooks["hooks"]["PreToolUse"][0] == \
        foreign_hooks["hooks"]["PreToolUse"][0]
    ours = hooks["hooks"]["PreToolUse"][1]
    import tomllib

    config = tomllib.loads((home / "config.toml").read_text())
    assert config["model"] == "gpt-5.5" and \
        config["sandbox_workspace_write"]["exclude_slash_tmp"] is True
    assert config["hooks"]["state"]["/x/hooks.json:stop:0:0"]["trusted_hash"] == "sha256:abc"
    assert str(client_root / "memory") in config["sandbox_workspace_write"]["writable_roots"]
    key = codex_trust_key(home / "hooks.json", "PreToolUse", 1, 0)
    assert config["hooks"]["state"][key]["trusted_hash"] == \
        codex_trust_hash("PreToolUse", ours["hooks"][0], ours["matcher"])
    for event in ("SessionStart", "PostToolUse", "SessionEnd"):
        assert codex_trust_key(home / "hooks.json", event, 0, 0) in config["hooks"]["state"]

    again = plan_codex(client_root, home=home)
    assert not any(c.changed for c in again.changes)  # idempotent

    plan_codex(client_root, home=home, uninstall=True).apply()
    after = {p.name: p.read_text() for p in home.iterdir()}
    assert json.loads(after["hooks.json"]) == foreign_hooks
    assert tomllib.loads(after["config.toml"]) == tomllib.loads(before["config.toml"])


def test_gemini_install_keeps_settings_and_its_commands_never_block(
        client_root: Path, tmp_path: Path) -> None:
    """Failure caught: install losing a person's Gemini settings; a hook command that, when memstore
    is gone, exits 127 with text and so blocks every tool it matches; an uninstall that leaves
    ours."""
    home = Path.home()
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "ui": {"theme": "x"},
                "context": {"includeDirectories": ["/srv/other"]}}
    settings.write_text(json.dumps(original))
    plan_gemini(client_root, "user", tmp_path).apply()
    data = json.loads(settings.read_text())
    assert data["security"] == original["security"] and data["ui"] == original["ui"]
    # the person's own folder kept; of the root, memory/ alone
    assert data["context"]["includeDirectories"] == ["/srv/other", str(client_root / "memory")]
    for event in ("SessionStart", "BeforeTool", "AfterTool", "SessionEnd"):
        (group,) = data["hooks"][event]
        assert group["hooks"][0]["command"].endswith(" || true")
    assert not any(c.changed for c in plan_gemini(client_root, "user", tmp_path).changes)
    plan_gemini(client_root, "user", tmp_path, uninstall=True).apply()
    assert json.loads(settings.read_text()) == original


def test_verify_client_says_what_is_missing(client_root: Path, run, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught: verify passing a Codex wiring whose trust entries are gone (Codex would skip
    every hook, silently)."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert run(client_root, "install", "--client", "codex", "--apply").exit_code == 0
    ok = run(client_root, "verify", "--client", "codex")
    assert ok.exit_code == 0, ok.stdout
    config = tmp_path / "codex" / "config.toml"
    config.write_text("\n".join(line for line in config.read_text().splitlines()
                                if "trusted_hash" not in line))
    bad = run(client_root, "verify", "--client", "codex")
    assert bad.exit_code == 1 and "Codex skips this hook, silently" in bad.stdout


# ------------------------------------------------------------- transcripts and the detached debrief


def test_final_answer_of_codex_and_gemini_transcripts(tmp_path: Path) -> None:
    """Failure caught: a Codex or Gemini session's final answer not found, so its lessons never
    captured."""
    rollout = tmp_path / "rollout.jsonl"
    lines = [{"type": "session_meta", "payload": {"id": "x"}},
             {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                   "content": [{"type": "input_text",
                                                                "text": "Never do this."}]}},
             {"type": "response_item", "payload": {"type": "message", "id": "m1",
                                                   "role": "assistant",
                                                   "content": [{"type": "output_text",
                                                                "text": "First."}]}},
             {"type": "response_item", "payload": {"type": "message", "id": "m2",
                                                   "role": "assistant",
                                                   "content": [{"type": "output_text",
                                                                "text": "Always quote."}]}},
             {"type": "event_msg", "payload": {"type": "task_complete"}}]
    rollout.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert final_answer(rollout) == "Always quote."
    chat = tmp_path / "session.jsonl"
    lines = [{"sessionId": "s", "kind": "main"},
             {"id": "u1", "type": "user", "content": [{"text": "Never do this."}]},
             {"id": "g1", "type": "gemini", "content": "", "toolCalls": []},
             {"id": "g2", "type": "gemini", "content": "Always check."},
             # rewritten under its id
             {"id": "g2", "type": "gemini", "content": "Always check.", "tokens": {}},
             {"$set": {"lastUpdated": "x"}}]
    chat.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert final_answer(chat) == "Always check."


def test_detached_debrief_survives_a_client_that_kills_its_hook(
        client_root: Path, tmp_path: Path) -> None:
    """Failure caught: Codex's SessionEnd hook, killed with its process group after 1-3 s, cut off
    before the lesson is written. Here the session added 1,500 memories (the debrief's sync takes
    seconds) and the hook gets one second, as Codex gives it by default."""
    import os
    import signal
    import subprocess
    import sys

    for i in range(1500):  # the debrief's sync has them to read: it takes a while
        write(client_root, f"memory/reference_bulk-{i}.md",
              memory(f"reference_bulk-{i}", f"bulk fact {i}"))
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(json.dumps({"type": "response_item", "payload": {
        "type": "message", "id": "m1", "role": "assistant",
        "content": [{"type": "output_text",
                     "text": "Done. Always quote every path in a shell command."}]}}) + "\n")
    payload = {"hook_event_name": "SessionEnd", "session_id": "s1", "cwd": str(tmp_path),
               "transcript_path": str(rollout), "reason": "other"}
    hook = subprocess.Popen([sys.executable, "-m", "memstore", "--root", str(client_root),
                             "debrief", "--hook", "--detach"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, _ = hook.communicate(json.dumps(payload), timeout=1.0)
        assert hook.returncode == 0 and out == ""
        # handed off, not done in the hook: the lesson is written after the hook returned
        assert not any("Always quote" in p.read_text()
                       for p in (client_root / "memory" / "short-term").glob("*.md"))
    except subprocess.TimeoutExpired:
        os.killpg(hook.pid, signal.SIGKILL)  # what Codex does to a SessionEnd hook past its time
        hook.wait()
        pytest.fail("the SessionEnd hook was still running after 1 s: Codex would have killed it")
    deadline = time.monotonic() + 60
    lessons: list[str] = []
    while time.monotonic() < deadline and not lessons:
        lessons = [p.read_text() for p in (client_root / "memory" / "short-term").glob("*.md")
                   if "Always quote every path" in p.read_text()]
        time.sleep(0.25)
    assert lessons, "no lesson captured after the hook returned"


def test_codex_uninstall_keeps_a_later_foreign_hook_trusted(
        client_root: Path, tmp_path: Path) -> None:
    """Failure caught: taking memstore's group out moves the person's later hook down one place, and
    its trust entry (which names the place) no longer matches: Codex then skips the person's hook,
    silently."""
    import tomllib

    home = tmp_path / "codex"
    home.mkdir()
    plan_codex(client_root, home=home).apply()
    hooks = json.loads((home / "hooks.json").read_text())
    theirs = {"type": "command", "command": "/bin/true", "timeout": 5}
    # after ours: index 1
    hooks["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [theirs]})
    (home / "hooks.json").write_text(json.dumps(hooks))
    digest = codex_trust_hash("PreToolUse", theirs, "Bash")
    with (home / "config.toml").open("a") as handle:
        handle.write('\n[hooks.state.'
                     f'"{codex_trust_key(home / "hooks.json", "PreToolUse", 1, 0)}"]\n'
                     f'trusted_hash = "{digest}"\n')

    plan_codex(client_root, home=home, uninstall=True).apply()
    state = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    assert json.loads((home / "hooks.json").read_text())["hooks"]["PreToolUse"] == \
        [{"matcher": "Bash", "hooks": [theirs]}]
    assert state == \
        {codex_trust_key(home / "hooks.json", "PreToolUse", 0, 0): {"trusted_hash": digest}}

    plan_codex(client_root, home=home).apply()  # back in: appended after theirs, theirs untouched
    state = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    assert state[codex_trust_key(home / "hooks.json", "PreToolUse", 0, 0)] == \
        {"trusted_hash": digest}
    ours = json.loads((home / "hooks.json").read_text())["hooks"]["PreToolUse"][1]
    assert state[codex_trust_key(home / "hooks.json", "PreToolUse", 1, 0)]["trusted_hash"] == \
        codex_trust_hash("PreToolUse", ours["hooks"][0], ours["matcher"])


def test_writes_by_folder_runtime_and_client_wiring_are_refused(
        client_root: Path, tmp_path: Path) -> None:
    """Failure caught (found by a newcomer's attack): a shell run in lenses/ (Gemini's dir_path, or
    a `cd`) writing a lens by its bare name; a journal line forged through a file tool (fake
    reinforcement); the agent rewriting Codex's or Gemini's settings to drop memstore's hooks."""
    lenses = client_root / "lenses"
    out = call(client_root, "gemini", gemini("BeforeTool", "run_shell_command", client_root.parent,
                                             command="echo x > new.md", dir_path=str(lenses)))
    assert out and out["decision"] == "deny"
    out = call(client_root, "codex", codex("PreToolUse", "Bash",
                                           f"cd {lenses} && echo x > planted.md",
                                           client_root.parent))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    reading = codex("PreToolUse", "Bash", f"cd {lenses} && cat memory-care.md", client_root)
    assert call(client_root, "codex", reading) is None or \
        call(client_root, "codex", reading)[
            "hookSpecificOutput"].get("permissionDecision") != "deny"  # reading there is fine
    forged = client_root / "runtime" / "journal" / "forged.jsonl"
    out = call(client_root, "gemini", gemini("BeforeTool", "write_file", client_root,
                                             file_path=str(forged), content="{}"))
    assert out and out["decision"] == "deny"
    home = Path.home()
    for target in (home / ".gemini" / "settings.json", home / ".codex" / "hooks.json",
                   home / ".codex" / "config.toml"):
        out = call(client_root, "gemini", gemini("BeforeTool", "write_file", client_root,
                                                 file_path=str(target), content="{}"))
        assert out and out["decision"] == "deny", target
    out = call(client_root, "gemini", gemini("BeforeTool", "run_shell_command", client_root,
                                       command="echo '{}' > ~/.gemini/settings.json"))
    assert out and out["decision"] == "deny"
    out = call(client_root, "codex", codex("PreToolUse", "Bash",
                                           "echo '{}' > $CODEX_HOME/hooks.json", client_root))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_projects_own_files_named_like_the_persons_are_not_refused(
        client_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught (found by the plugin's end-to-end test): with the root under HOME, its
    `$HOME/...` spelling resolved against the hook's folder, so every project counted as above the
    root and any command there naming `review`, `lenses` or `identity.md` was refused."""
    monkeypatch.setenv("HOME", str(client_root.parent))
    project = tmp_path / "code" / "proj"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)  # Claude Code runs its hooks from the project folder
    for command in ("npm run review", "mkdir lenses", "python3 -m pytest -k identity.md"):
        out = call(client_root, "codex", codex("PreToolUse", "Bash", command, project))
        assert out is None or out["hookSpecificOutput"].get("permissionDecision") != "deny", command
    out = call(client_root, "codex", codex("PreToolUse", "Bash",
                                           f"echo x > {client_root}/lenses/planted.md", project))
    # the person's files still refused
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"

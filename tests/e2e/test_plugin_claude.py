"""memstore's Claude Code plugin, end to end with the real binary and the checkout as its
marketplace.

What a person does, and nothing more: a fresh HOME, PATH=/usr/bin:/bin (no memstore anywhere on
it; the system's python3 runs the plugin's hooks), then

    claude plugin install memstore --marketplace <checkout> --config root=~/agents/me
    claude --init-only        # the plugin's Setup hook: builds its venv, lays the missing root out

then `claude -p` in a project (a git repository of its own, outside the agent root), the model
replaced by tests/e2e/fake_anthropic.py. The scripted model:

  0. Reads <root>/memory/feedback_x.md
     -> the PreToolUse hook allows it, PostToolUse reinforces it
  1. Writes <root>/memory/project_new.md
     -> the PreToolUse hook approves it (else `-p` denies it)
  2. Writes <root>/lenses/sneaky.md
     -> the hook denies it, naming memstore; the file never appears
  3. ToolSearch "select:mcp__plugin_memstore_memstore__read"
     -> the deferred MCP tool's schema is loaded from the server
  4. mcp__plugin_memstore_memstore__read {"name": "feedback_x"}
     -> the hook approves it (else `-p` denies it); the memory's text
  5. a final answer stating one rule
     -> the SessionEnd debrief (run.py, the plugin's venv) keeps it

Facts about Claude Code 2.1.332 this file relies on (seen here, offline):
- `claude plugin install` with ANTHROPIC_BASE_URL unset spends about 17 s retrying DNS for
  api.anthropic.com (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC does not stop it), so every claude
  run below points at a fake server, which they do not call.
- A directory marketplace is served live from the folder (`plugin list --json` says
  readFromFolder: <checkout>/plugin), although install also copies it into ~/.claude/plugins/cache.
- The plugin's MCP tools are deferred: only their names are listed (in the first request's system
  text), and ToolSearch "select:NAME" puts the schema into the next request's tool list. A direct
  call without ToolSearch also went through in 2.1.332; the script does what a model is told to do.
- The Setup hook's output and exit status are shown nowhere (`claude --init-only` exits 0 and
  prints nothing even when the hook fails; only --debug-file records it), so the only evidence
  that setup worked is what it left behind, which is what is asserted.
- `claude plugin uninstall` drops the option from ~/.claude/settings.json and deletes
  ~/.claude/plugins/data/memstore-memstore (the venv) unless --keep-data.

Binary: as tests/e2e/test_claude_code.py finds it; absent means skipped, saying so, except under
CI (env CI set), where it fails. The plugin's venv is built by its own Setup hook (pip, from the
package registry: about 10-30 s) in each of the two tests that need one; they share pip's download
cache, nothing else. Note: `pip install -e <checkout>/plugin` writes plugin/*.egg-info into the
checkout (git ignores it).
"""

from __future__ import annotations

import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from .claude import REPO, block_texts, request_text
from .fake_anthropic import text, tool_use
from .plugin import (
    MCP_READ,
    PLUGIN,
    PLUGIN_ID,
    SETUP_TIMEOUT,
    Claude,
    claude_binary,
    fresh_home,
    install_and_set_up,
    make_project,
    plugin_runner,
    system_python_ok,
)

# two Setups (pip) of up to SETUP_TIMEOUT; one pip download cache for the module
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800), pytest.mark.usefixtures("pip_cache")]

# The final answer holds one rule: the plugin's SessionEnd debrief must keep it as a lesson.
RULE = "Always quote every path in a shell command."
FINAL_ANSWER = f"Finished the scripted plugin session. {RULE}"


# ---------------------------------------------------------------- reading what happened


def tool_result(messages: list[dict[str, Any]], tool_use_id: str) -> dict[str, Any]:
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result" and (
                    block.get("tool_use_id") == tool_use_id):
                return block
    raise AssertionError(f"no tool_result for {tool_use_id} in the conversation")


def result_text(block: dict[str, Any]) -> str:
    return "\n".join(block_texts([block]))


def journal(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in sorted((root / "runtime" / "journal").glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under the root: directories, symlinks (their targets) and files (their bytes)."""
    entries: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                entries[rel] = ("symlink", os.readlink(path))
            elif path.is_dir():
                entries[rel] = "dir"
            else:
                entries[rel] = path.read_bytes()
    return entries


def differences(before: dict[str, object], after: dict[str, object]) -> list[str]:
    return [f"{rel}: "
            f"{'added' if rel not in before else 'removed' if rel not in after else 'changed'}"
            for rel in sorted(before.keys() | after.keys()) if before.get(rel) != after.get(rel)]


# ---------------------------------------------------------------- the tests


def test_plugin_and_marketplace_validate(tmp_path: Path) -> None:
    """`claude plugin validate` accepts the plugin folder and the checkout as a marketplace.

    Catches: a manifest, hooks.json, mcp.json or commands/ the binary rejects (a typo'd key, a hook
    event it does not know, a marketplace entry whose source does not resolve)."""
    claude = Claude(claude_binary(), fresh_home(tmp_path))
    for target in (PLUGIN, REPO):
        done = claude("plugin", "validate", str(target), check=False)
        assert done.returncode == 0 and "Validation passed" in done.stdout, (
            f"claude plugin validate {target} exited {done.returncode}:\n"
            f"{done.stdout}\n{done.stderr}")
    provided = claude("plugin", "validate", str(PLUGIN)).stdout
    for part in ("hooks: Setup", "hooks: SessionStart", "hooks: PreToolUse", "hooks: PostToolUse",
                 "hooks: SessionEnd", "mcpServers: memstore"):
        assert part in provided, (
            f"validate does not list {part!r} among what the plugin provides:\n{provided}")


def test_plugin_install_setup_session_and_uninstall(tmp_path: Path) -> None:
    """The whole life of the plugin for a person who has nothing but Claude Code and python3.

    Catches: an install the binary refuses or that does not record the root option; a Setup hook
    that does not build the venv or does not lay out a missing root; a SessionStart hook that leaves
    identity or the index out of the first request; a memory Read denied outside the project or not
    reinforced; a memory Write not approved; a lens Write let through or denied without saying why;
    the plugin's MCP server not starting, or its `read` tool denied in `-p` (the hook's plugin tool
    names wrong); the SessionEnd debrief not running from the plugin's venv; an uninstall that
    touches the agent's files."""
    started = time.monotonic()
    home = fresh_home(tmp_path)
    claude = Claude(claude_binary(), home)
    system_python_ok(claude.env, home)
    root = home / "agents" / "me"
    tag = uuid.uuid4().hex[:10]
    identity_mark, summary_mark, body_mark = f"IDENTITY-{tag}", f"SUMMARY-{tag}", f"BODY-{tag}"

    # 1-2. Install (checkout as marketplace, the root option naming a folder not made yet); Setup.
    data, setup_seconds = install_and_set_up(claude, root)
    assert list((root / "lenses").glob("*.md")), "init laid out no starter lens"

    # 3. The person's touches: an identity line, a T2 memory; the plugin's venv rebuilds the index
    with (root / "identity.md").open("a", encoding="utf-8") as identity:
        identity.write(f"- Marker: {identity_mark}\n")
    (root / "memory" / "feedback_x.md").write_text(
        "---\nname: feedback_x\ntype: feedback\n"
        f"summary: Always run the e2e test before merging ({summary_mark})\nimportance: 5\n---\n\n"
        f"# feedback_x\n\nThe e2e test drives the real binary ({body_mark}).\n", encoding="utf-8")
    run = plugin_runner(claude, root)
    run("sync")
    run("render")
    memory_md = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert summary_mark in memory_md, f"render left feedback_x out of MEMORY.md:\n{memory_md}"
    assert json.loads(run("show", "feedback_x", "--json"))["access_count"] == 0

    # A second `claude --init-only` (the person unsure it worked) rebuilds and re-lays nothing.
    marker = data / "venv" / ".memstore-plugin"
    kept = {p: p.read_bytes()
            for p in (root / "identity.md", root / "memory" / "feedback_x.md", marker)}
    kept_venv = (data / "venv" / "bin" / "memstore").stat().st_mtime_ns
    claude("--init-only", timeout=SETUP_TIMEOUT)
    assert {p: p.read_bytes() for p in kept} == kept, (
        "a second claude --init-only changed the person's files")
    assert (data / "venv" / "bin" / "memstore").stat().st_mtime_ns == kept_venv, (
        "a second Setup rebuilt the venv")
    # Setup renders it again
    memory_md = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")

    # 4. A session in a project of the person's.
    project = make_project(home)
    mem = root / "memory"
    new_memory = ("---\nname: project_new\ntype: project\n"
                  "summary: A thing the plugin session learned\n---\n\n"
                  "# project_new\n\nWritten by the scripted plugin session.\n")
    steps = [
        [text("Reading my notes first."), tool_use("Read", file_path=str(mem / "feedback_x.md"))],
        [tool_use("Write", file_path=str(mem / "project_new.md"), content=new_memory)],
        [tool_use("Write", file_path=str(root / "lenses" / "sneaky.md"),
                  content="---\ntype: lens\n---\nsneaky\n")],
        [tool_use("ToolSearch", query=f"select:{MCP_READ}")],
        # (a dict, not tool_use(): the tool's argument is `name`, as tool_use's first parameter is)
        [{"type": "tool_use", "name": MCP_READ, "input": {"name": "feedback_x"}}],
        [text(FINAL_ANSWER)],
    ]
    read_id, lens_id, mcp_id = "toolu_e2e_00_1", "toolu_e2e_02_0", "toolu_e2e_04_0"
    t0 = time.monotonic()
    proc, main, detail = claude.session(project, steps,
                                        "Look at your memory and record what you learn.")
    session_seconds = time.monotonic() - t0
    hook_log = root / "runtime" / "state" / "hook-errors.log"
    detail += ("\n--- hook-errors.log ---\n"
               f"{hook_log.read_text() if hook_log.exists() else '(none)'}")

    assert proc.returncode == 0, detail
    result = json.loads(proc.stdout)
    assert result.get("is_error") is False and result.get("result") == FINAL_ANSWER, detail
    assert len(main) == len(steps), f"expected {len(steps)} model turns, saw {len(main)}\n{detail}"
    messages = main[-1].body["messages"]

    # identity and the index were in the first request (SessionStart, the root being outside)
    first_text = request_text(main[0].body)
    assert identity_mark in first_text, f"identity.md missing from the first request\n{detail}"
    assert summary_mark in first_text, (
        f"MEMORY.md's row for feedback_x missing from the first request\n{detail}")
    assert memory_md.strip() in first_text, f"MEMORY.md arrived only in part\n{detail}"

    # the memory Read was allowed (outside the project) and reinforced
    read = tool_result(messages, read_id)
    assert not read.get("is_error") and body_mark in result_text(read), (
        f"the memory Read did not go through: {read}")
    events = journal(root)
    hook_reads = [e for e in events
                  if e.get("path") == "memory/feedback_x.md" and e.get("tool") == "Read"
                  and e.get("session") == result["session_id"]]
    assert len(hook_reads) == 1, f"PostToolUse did not journal the Read once: {events}"

    # the memory Write was approved; the lens Write was denied, saying it was memstore
    written = mem / "project_new.md"
    assert (written.is_file()
            and "Written by the scripted plugin session." in written.read_text(encoding="utf-8")), (
        f"the Write to memory/ was not approved\n{detail}")
    denied = [(d.get("tool_name"), (d.get("tool_input") or {}).get("file_path"))
              for d in result["permission_denials"]]
    assert denied == [("Write", str(root / "lenses" / "sneaky.md"))], (
        f"permission denials: {denied}\n{detail}")
    assert not (root / "lenses" / "sneaky.md").exists(), "the lens Write went through"
    refusal = tool_result(messages, lens_id)
    assert refusal.get("is_error") and "memstore" in result_text(refusal), (
        f"the model was not told why: {refusal}")

    # the MCP server started (ToolSearch loaded its tool's schema); its read went through undenied
    assert MCP_READ in [t.get("name") for t in main[4].body.get("tools", [])], (
        f"ToolSearch did not load {MCP_READ}: is the plugin's MCP server running?\n{detail}")
    via_mcp = tool_result(messages, mcp_id)
    mcp_text = result_text(via_mcp)
    assert not via_mcp.get("is_error") and body_mark in mcp_text, (
        f"the MCP read failed: {via_mcp}\n{detail}")
    assert "permission" not in mcp_text.lower(), via_mcp
    assert MCP_READ not in [d.get("tool_name") for d in result["permission_denials"]], detail
    mcp_reads = [e for e in events
                 if e.get("path") == "memory/feedback_x.md" and e.get("tool") == "Read"
                 and e.get("session") != result["session_id"]]
    assert len(mcp_reads) == 1, f"the MCP read was not journaled as a read: {events}"

    # the SessionEnd debrief ran from the plugin's venv and kept the rule as a lesson
    lessons = [p.read_text(encoding="utf-8") for p in (mem / "short-term").glob("*.md")
               if "kind: lesson" in p.read_text(encoding="utf-8")]
    assert len(lessons) == 1 and RULE in lessons[0], (
        f"SessionEnd debrief lessons: {lessons}\n{detail}")
    assert not hook_log.exists(), f"the hook logged errors\n{detail}"

    run("sync")
    shown = json.loads(run("show", "feedback_x", "--json"))
    assert shown["access_count"] >= 1, f"the Read was not reinforced: {shown}"

    # 5. Uninstall: the option and the venv go, the agent's files stay exactly as they were.
    before = snapshot(root)
    uninstalled = json.loads(claude("plugin", "uninstall", PLUGIN_ID, "--json").stdout)
    assert uninstalled.get("outcome") == "ok", uninstalled
    assert differences(before, snapshot(root)) == [], (
        "uninstalling the plugin changed the agent root")
    settings = claude.settings()
    assert (PLUGIN_ID not in settings.get("enabledPlugins", {})
            and PLUGIN_ID not in settings.get("pluginConfigs", {})), settings
    assert PLUGIN_ID not in {p["id"] for p in json.loads(claude("plugin", "list", "--json").stdout)}
    assert not data.exists(), f"uninstall left the plugin's data folder {data}"
    print(f"plugin e2e: setup {setup_seconds:.1f}s, session {session_seconds:.1f}s, "
          f"test {time.monotonic() - started:.1f}s")


@pytest.mark.parametrize("option", ["unset", "missing"])
def test_plugin_without_a_root_says_so(tmp_path: Path, option: str) -> None:
    """A session whose root option is unset, or names a folder not laid out yet, tells the model so.

    Catches: a SessionStart hook that stays silent (the model would act as if it had a memory, or
    the person would never learn why it has none), one that fails the session, or a plain session
    that lays out (or half lays out) a root, which is the Setup hook's job alone."""
    home = fresh_home(tmp_path)
    claude = Claude(claude_binary(), home)
    system_python_ok(claude.env, home)
    root = home / "agents" / "me"
    config = [] if option == "unset" else ["--config", f"root={root}"]
    claude("plugin", "install", "memstore", "--marketplace", str(REPO), *config)
    options = claude.settings().get("pluginConfigs", {}).get(PLUGIN_ID, {}).get("options", {})
    assert options == ({} if option == "unset" else {"root": str(root)}), options
    project = make_project(home)

    proc, main, detail = claude.session(project, [[text("No memory here.")]],
                                        "What do you remember?")
    assert proc.returncode == 0, detail
    result = json.loads(proc.stdout)
    assert result.get("is_error") is False and result["permission_denials"] == [], detail
    first_text = request_text(main[0].body)
    if option == "unset":
        expected = "memstore plugin: no agent root is set"
    else:
        expected = f"memstore plugin: the agent root {root} is not laid out yet"
    assert expected in first_text, f"the first request does not say {expected!r}\n{detail}"
    assert "claude --init-only" in first_text, (
        f"the model is not told how the person fixes it\n{detail}")
    assert not root.exists(), "a plain session laid out the root"


# Known bugs, recognised by their exact symptom (see test_plugin_slash_commands_run_on_the_root).
NO_ROOT_IN_BASH = "no agent root is set"
REVIEW_WORD_DENIED = "memstore: review is not the agent's to change"


def test_plugin_slash_commands_run_on_the_root(tmp_path: Path) -> None:
    """/memstore:status and /memstore:review: the model runs the Bash line the command's text gives
    it, and gets the report on the person's agent root.

    Catches: a command body whose ${CLAUDE_PLUGIN_ROOT} is not the plugin folder, an `allowed-tools`
    that does not cover the line (denied in `-p`), memstore's own hook refusing the line, and a
    runner that cannot find the root from where the Bash tool runs it.

    Two of those are known bugs, reported as an expected failure by their exact symptom (anything
    else fails): the Bash tool's environment holds no CLAUDE_PLUGIN_OPTION_ROOT, so plugin/run.py
    says "no agent root is set" while it is set; and memstore/hook/shellcmd.py's `_near` resolves
    the root's "$HOME/..." spelling against the hook's own working directory (the project), so every
    shell command in a project that names a bare `review` (or lenses, identity.md ...) and is not a
    plain read is denied as touching the person's files."""
    home = fresh_home(tmp_path)
    claude = Claude(claude_binary(), home)
    system_python_ok(claude.env, home)
    root = home / "agents" / "me"
    install_and_set_up(claude, root)
    project = make_project(home)
    for command, expected in (("status", str(root)), ("review", "nothing waits for review")):
        body = (PLUGIN / "commands" / f"{command}.md").read_text(encoding="utf-8")
        found = re.search(r"`(python3 [^`]*run\.py\S* " + command + r")`", body)
        assert found, f"commands/{command}.md gives no `python3 .../run.py {command}` line:\n{body}"
        line = found.group(1).replace("${CLAUDE_PLUGIN_ROOT}", str(PLUGIN))
        steps = [[tool_use("Bash", command=line, description=f"memstore {command}")],
                 [text("Shown.")]]
        proc, main, detail = claude.session(project, steps, f"/memstore:{command}")
        assert proc.returncode == 0, detail
        result = json.loads(proc.stdout)
        assert line in request_text(main[0].body), (
            f"/memstore:{command} did not reach the model as {line!r}\n{detail}")
        output = result_text(tool_result(main[-1].body["messages"], "toolu_e2e_00_0"))
        # both once failed: the hook denied `review` ($HOME unexpanded), run.py saw no root in Bash
        assert REVIEW_WORD_DENIED not in output, f"memstore's hook denied {line!r}\n{detail}"
        assert result["permission_denials"] == [], f"{line!r} was denied: {output!r}\n{detail}"
        assert NO_ROOT_IN_BASH not in output, f"run.py found no root from the Bash tool: {output!r}"
        assert expected in output and "Exit code" not in output, (
            f"/memstore:{command} gave:\n{output}\n{detail}")

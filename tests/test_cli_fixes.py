"""CLI fixes: the list pin header, `hook --help`, `touch` of a non-memory, progress of an implicit
rebuild."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import memory, write

REPO = Path(__file__).resolve().parents[1]


def _journal_lines(root: Path) -> list[str]:
    folder = root / "runtime" / "journal"
    if not folder.exists():
        return []
    return [line for path in sorted(folder.glob("*.jsonl"))
            for line in path.read_text().splitlines() if line]


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("memstore: error:")]


# ---------------------------------------------------------------- list: every column has a header


def test_list_pin_column_has_a_header(run, root: Path) -> None:
    write(root, "memory/feedback_pinned.md", memory("feedback_pinned", "always shown", pin="true"))
    write(root, "memory/feedback_plain.md", memory("feedback_plain", "sometimes shown"))
    result = run(root, "list")
    assert result.exit_code == 0, result.output + result.stderr
    lines = result.stdout.splitlines()
    header = lines[0]
    assert header.split() == ["band", "score", "reinf", "stability", "pin", "name"], header
    # The header names the column the "pin" marks are in.
    pinned = next(line for line in lines if line.rstrip().endswith("feedback_pinned"))
    plain = next(line for line in lines if line.rstrip().endswith("feedback_plain"))
    at = header.index(" pin ") + 1
    assert pinned[at : at + 3] == "pin" and plain[at : at + 3].strip() == ""


# ---------------------------------------------------------------- hook --help


def _memstore(*args: str) -> list[str]:
    return [sys.executable, "-m", "memstore", *args]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMSTORE_ROOT"}
    env["PYTHONPATH"] = str(REPO)
    return env


@pytest.mark.parametrize("argv", [("hook", "--help"), ("hook", "-h"),
                                  ("--root", "ROOT", "hook", "--help")])
def test_hook_help_prints_help_and_never_reads_stdin(root: Path, argv: tuple[str, ...]) -> None:
    """Through the real entry point (which skips click for the hook): help, exit 0, stdin left open
    and unread."""
    args = [str(root) if a == "ROOT" else a for a in argv]
    proc = subprocess.Popen(_memstore(*args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(), cwd=root)
    try:
        # stdin is never written nor closed: a hook reading it would hang here
        code = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("`memstore hook --help` waited on stdin")
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.stdin is not None
    proc.stdin.close()
    proc.stdout and proc.stdout.close()
    proc.stderr and proc.stderr.close()
    assert code == 0, err
    assert "Usage: memstore hook" in out and "always exits 0" in out, (out, err)


def test_hook_help_in_process_does_not_run_the_hook(
        run, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memstore.hook.handler

    calls: list[object] = []
    monkeypatch.setattr(memstore.hook.handler, "main", lambda *a, **k: calls.append(a) or 0)
    result = run(root, "hook", "--help", input="{}")
    assert result.exit_code == 0 and "Usage:" in result.stdout and "always exits 0" in result.stdout
    assert calls == []


STDINS = [b"", b"garbage \x00\xff\xfe", b"[1, 2, 3]", b'{"hook_event_name": "PostToolUse"}',
          b'{"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": '
          b'{"file_path": 7}}', b"{" * 5000]


@pytest.mark.parametrize("stdin", STDINS)
def test_hook_always_exits_0_on_any_stdin(root: Path, stdin: bytes) -> None:
    for extra in ((), ("--bogus", "x")):
        done = subprocess.run(_memstore("--root", str(root), "hook", *extra), input=stdin,
                              capture_output=True, env=_env(), cwd=root, timeout=60)
        assert done.returncode == 0, (extra, done.stderr)
        assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("extra", [(), ("--bogus",), ("stray", "-x", "--part=1")])
def test_hook_through_click_always_exits_0(run, root: Path, extra: tuple[str, ...]) -> None:
    for stdin in ("", "garbage", "[]", '{"hook_event_name": "SessionStart"}'):
        result = run(root, "hook", *extra, input=stdin)
        assert result.exit_code == 0, (extra, stdin, result.output)


# ---------------------------------------------------------------- touch: a non-memory is an error


@pytest.fixture
def touch_root(root: Path) -> Path:
    write(root, "memory/feedback_a.md", memory("feedback_a", "alpha"))
    write(root, "identity.md", "# me\n")
    write(root, "memory/short-term/260730-note.md", "a note\n")
    write(root.parent, "outside.md", memory("feedback_out", "outside"))
    return root


@pytest.mark.parametrize("target", ["OUTSIDE", "identity.md", "memory/short-term/260730-note.md",
                                    "memory/feedback_missing.md", "MISSING_ABS", "memory"])
def test_touch_of_a_non_memory_is_one_error_line_exit_1(run, touch_root: Path, target: str) -> None:
    path = {"OUTSIDE": str(touch_root.parent / "outside.md"),
            "MISSING_ABS": str(touch_root / "memory" / "feedback_gone.md")}.get(target, target)
    result = run(touch_root, "touch", path)
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert len(_error_lines(result.stderr)) == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert [line for line in result.stderr.splitlines()
            if not line.startswith("memstore: hint:")] == \
        _error_lines(result.stderr)
    assert _journal_lines(touch_root) == []  # nothing was recorded


def test_touch_with_a_tool_that_never_reinforces_is_bad_usage(run, touch_root: Path) -> None:
    result = run(touch_root, "touch", "memory/feedback_a.md", "--tool", "Grep")
    assert result.exit_code == 2 and len(_error_lines(result.stderr)) == 1
    assert "does not reinforce" in result.stderr and _journal_lines(touch_root) == []


def test_touch_of_a_real_memory_exits_0(run, touch_root: Path) -> None:
    result = run(touch_root, "touch", "memory/feedback_a.md")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "memory/feedback_a.md: journaled; the mirror does not exist " \
                                    "yet (next sync folds it in)"
    assert run(touch_root, "sync").exit_code == 0
    result = run(touch_root, "touch", str(touch_root / "memory" / "feedback_a.md"), "--tool",
                 "Edit")
    # the sync folded in the first touch, reinforced at this same pinned minute: inside the gate
    assert result.exit_code == 0 and result.stdout.strip() == \
        "memory/feedback_a.md: read recorded, not reinforced (inside the spacing gate)"
    assert [json.loads(line)["path"] for line in _journal_lines(touch_root)] == \
        ["memory/feedback_a.md"] * 2


def test_hook_on_a_non_memory_still_exits_0(root: Path) -> None:
    """The hook calls record_touch directly: a non-memory is nothing to it, never an error."""
    write(root, "identity.md", "# me\n")
    payload = {"hook_event_name": "PostToolUse", "tool_name": "Read", "cwd": str(root),
               "tool_input": {"file_path": str(root / "identity.md")}}
    done = subprocess.run(_memstore("--root", str(root), "hook"),
                          input=json.dumps(payload).encode(), capture_output=True, env=_env(),
                          cwd=root, timeout=60)
    assert done.returncode == 0 and done.stderr == b""


# --------------------------------------------------------------- an implicit rebuild shows progress


def test_rebuild_of_a_missing_mirror_says_why_and_shows_progress(run, root: Path) -> None:
    memory_dir = root / "memory"
    total = 2500
    for i in range(total):
        (memory_dir / f"reference_bulk-{i:04d}.md").write_text(
            f"---\nname: reference_bulk-{i:04d}\nsummary: bulk apples {i}\n---\nfiller {i}\n")
    assert run(root, "sync", "--quiet").exit_code == 0
    for suffix in ("", "-wal", "-shm"):
        (root / "runtime" / f"memstore.db{suffix}").unlink(missing_ok=True)

    result = run(root, "search", "apples", "--json")
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line]
    assert lines[0] == "memstore: mirror missing; rebuilding it from the files", lines
    progress = [line for line in lines if re.fullmatch(rf"rebuild: \d+/{total} files", line)]
    assert progress, lines
    assert sum("mirror" in line for line in lines) == 1, lines  # the reason is said once
    assert len(json.loads(result.stdout)) == 10  # and the search still answers


# ------------------------------------------- search and show: memory text reaches a terminal inert


def test_search_and_show_never_send_a_memorys_escape_sequences_to_the_terminal(
        root: Path, run) -> None:
    # Failure caught (walkthrough): a memory holding ESC [31m and ESC ]0;TITLE BEL printed
    # as-is by `search` and `show`, so a memory could recolour, retitle or rewrite the
    # person's terminal.
    write(root, "memory/project_colours.md",
          memory("project_colours", "Colour codes \x1b[31mred\x1b[0m in the log",
                 "The title trick \x1b]0;pwned\x07 and a bell \x07 and DEL \x7f, then a "
                 "tab\tand é 東."))
    for args in (("search", "colour codes"), ("show", "project_colours")):
        result = run(root, *args)
        assert result.exit_code == 0, result.stderr
        assert not [ch for ch in result.stdout
                    if (ord(ch) < 32 and ch not in "\n\t") or ord(ch) == 0x7f], args
        assert "\\x1b[31m" in result.stdout  # shown, escaped
    shown = run(root, "show", "project_colours").stdout
    # tabs and letters stay themselves
    assert "\t" in shown and "é 東" in shown and "\\x1b]0;pwned\\x07" in shown


def test_a_query_the_length_of_a_page_is_a_usage_error_not_minutes_of_work(root: Path, run) -> None:
    # Failure caught (walkthrough): 100,000 characters pasted as a query ran for 152 s with
    # nothing said.
    write(root, "memory/project_a.md", memory("project_a", "Anything", "Words."))
    result = run(root, "search", "word " * 1000)
    assert result.exit_code == 2 and "at most 2000" in result.stderr and \
        "Traceback" not in result.stderr
    assert run(root, "search", "word " * 300).exit_code == 0  # a long question is still a question

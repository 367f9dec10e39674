"""Recognising reads of files in shell commands (memstore.hook.shellreads): how Codex and Gemini's
shell reads of a memory are reinforced. Each case is a failure caught: a read missed, or a non-read
counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstore.hook.shellreads import files_read

CWD = "/work/proj"
MEM = "/agents/me/memory/feedback_x.md"


@pytest.mark.parametrize("command, expected", [
    ("cat /agents/me/memory/feedback_x.md", [MEM]),
    ("cat '/agents/me/memory/feedback_x.md'", [MEM]),
    ('cat "/agents/me/memory/feedback_x.md"', [MEM]),
    ("sed -n '1,40p' /agents/me/memory/feedback_x.md", [MEM]),
    ("sed -e 's/a/b/' /agents/me/memory/feedback_x.md", [MEM]),
    ("head -n 20 /agents/me/memory/feedback_x.md", [MEM]),
    ("head -20 /agents/me/memory/feedback_x.md", [MEM]),
    ("tail -n +5 /agents/me/memory/feedback_x.md", [MEM]),
    ("less /agents/me/memory/feedback_x.md", [MEM]),
    ("nl -ba /agents/me/memory/feedback_x.md", [MEM]),
    ("rg -n export /agents/me/memory/feedback_x.md", [MEM]),
    ("grep -n -e export /agents/me/memory/feedback_x.md", [MEM]),
    ("grep -rn 'export' /agents/me/memory/feedback_x.md", [MEM]),
    ("cat /agents/me/memory/feedback_x.md | head -5", [MEM]),
    ("cat /agents/me/memory/feedback_x.md 2>/dev/null", [MEM]),
    ("cat /agents/me/memory/feedback_x.md 2>&1 | less", [MEM]),
    ("cd /agents/me && cat memory/feedback_x.md", [MEM]),
    ("cd /agents/me/memory; sed -n 1,5p feedback_x.md", [MEM]),
    ("LC_ALL=C cat /agents/me/memory/feedback_x.md", [MEM]),
    ("cat < /agents/me/memory/feedback_x.md", [MEM]),
    ("cat /agents/me/memory/feedback_x.md | tee /tmp/copy", [MEM]),  # tee prints what it copies
    ("cat -- /agents/me/memory/feedback_x.md /agents/me/memory/feedback_x.md", [MEM]),  # once
    ("bash -lc 'ls'; cat ../../agents/me/memory/feedback_x.md", [MEM]),
])
def test_reads_are_recognised(command: str, expected: list[str]) -> None:
    assert files_read(command, CWD) == expected


def test_relative_paths_resolve_against_the_shell_folder() -> None:
    assert files_read("cat memory/feedback_x.md", "/agents/me") == [MEM]
    assert files_read('head -n 3 "./memory/feedback_x.md"', "/agents/me") == [MEM]


def test_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    want = [str(tmp_path / "agents/me/memory/feedback_x.md")]
    assert files_read("cat ~/agents/me/memory/feedback_x.md", CWD) == want
    assert files_read("cat $HOME/agents/me/memory/feedback_x.md", CWD) == want


@pytest.mark.parametrize("command", [
    "ls /agents/me/memory/feedback_x.md",
    "echo /agents/me/memory/feedback_x.md",
    "cp /agents/me/memory/feedback_x.md /tmp/y",
    "rm /agents/me/memory/feedback_x.md",
    "cat /agents/me/memory/feedback_x.md > /tmp/copy",
    "cat /agents/me/memory/feedback_x.md >> /tmp/copy",
    "cat /agents/me/memory/feedback_x.md | head -3 > /tmp/copy",
    "cat /agents/me/memory/feedback_x.md &> /tmp/copy",
    "sed -i 's/a/b/' /agents/me/memory/feedback_x.md",
    "sed -i.bak -n 1p /agents/me/memory/feedback_x.md",
    "grep -l export /agents/me/memory/feedback_x.md",
    "grep -c export /agents/me/memory/feedback_x.md",
    "rg -q export /agents/me/memory/feedback_x.md",
    "grep export",  # the pattern is no file
    "sed -n 1p",  # the script is no file
    "cat /agents/me/memory/*.md",  # a glob: not a read of any one memory
    "cat $DIR/feedback_x.md",
    "cat 'unbalanced /agents/me/memory/feedback_x.md",
    "python3 -c 'print(open(\"/agents/me/memory/feedback_x.md\").read())'",
    "",
])
def test_what_is_not_a_read_is_not_counted(command: str) -> None:
    assert files_read(command, CWD) == []


def test_a_folder_is_not_a_read(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    assert files_read(f"grep -rn export {tmp_path / 'memory'}", CWD) == []
    assert files_read(f"cat {tmp_path / 'memory'}", CWD) == []

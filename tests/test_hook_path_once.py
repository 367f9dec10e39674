"""The hook's path, once: one resolver, one rule set for what reinforces and what the agent may
write, one resolution per call, one writer of the hook's log, hook modules a reader can hold.

Failures caught:
- the hook and policy answering "is this a memory?" by two rule sets (depth, case, dot files, the
  length limit measured on different strings): a write approved that the walk never indexes, a
  path refused as too long by one and resolved by the other;
- a Write resolving the same real path several times in one call;
- a second writer of runtime/state/hook-errors.log (its own rotation, its own format);
- PATH_MAX spelled in two modules; a hook module past 500 lines.
"""

from __future__ import annotations

import ast
import io
import json
import os
from pathlib import Path

import pytest

import memstore
from memstore.core.toolpath import PATH_MAX, may_read, may_write, reinforces, resolve
from memstore.hook.handler import main as hook_main

PACKAGE = Path(memstore.__file__).resolve().parent
NOW = "2026-07-30T12:00:00Z"
TEAM = "crew"
MEMORY = "---\nname: feedback_a\ntype: feedback\nsummary: a rule\n---\nbody\n"


@pytest.fixture
def linked_root(root: Path, tmp_path: Path) -> Path:
    """A root with a memory, a joined team's memory, links in and out of memory/, and a project."""
    (root / "memory" / "feedback_a.md").write_text(MEMORY)
    (root / "memstore.toml").write_text(f'[teams.{TEAM}]\nurl = "https://example.invalid/c.git"\n')
    (root / "teams" / TEAM / "memory").mkdir(parents=True)
    (root / "teams" / TEAM / "memory" / "feedback_t.md").write_text(MEMORY)
    (tmp_path / "outside.md").write_text("not a memory\n")
    os.symlink(tmp_path / "outside.md", root / "memory" / "feedback_link-out.md")
    os.symlink(root / "memory" / "feedback_a.md", root / "memory" / "feedback_link-in.md")
    os.symlink(root / "memory", root / "door")  # out of memory/ by name, back in by real path
    (tmp_path / "project").mkdir()
    return root


def _far(root: Path) -> str:
    """A spelling of memory/feedback_a.md longer than PATH_MAX that realpath folds back in."""
    return "/" + "a/../" * (PATH_MAX // 5 + 1) + str(root / "memory" / "feedback_a.md").lstrip("/")


# (how the path is given, relative to the root unless absolute; reinforces, may write, may read)
TABLE = [
    ("memory/feedback_a.md", True, True, True),
    ("memory/../memory/feedback_a.md", True, True, True),
    ("door/feedback_a.md", True, True, True),
    ("memory/feedback_link-in.md", True, True, True),
    ("memory/feedback_link-out.md", False, False, False),
    # case: approval needs the walk's exact spelling; a derived name refuses in any case
    ("memory/Feedback_a.md", False, True, True),
    ("memory/feedback_a.MD", False, False, False),
    ("Memory/feedback_a.md", False, False, False),
    ("memory/MEMORY.md", False, False, True),
    ("memory/memory.md", False, False, True),
    ("memory/Memory-Archive.md", False, False, True),
    ("memory/current-state.md", False, False, True),
    # depth: a topic memory lies right in memory/; a write may go anywhere the walk reaches
    ("memory/short-term/260730-x.md", False, True, True),
    ("memory/sub/feedback_a.md", False, True, True),
    ("memory/archive/feedback_a.md", False, False, True),
    # dot files and folders the walk skips, at any depth
    ("memory/.feedback_a.md", False, False, False),
    ("memory/.hidden/feedback_a.md", False, False, False),
    ("memory/node_modules/feedback_a.md", False, False, False),
    ("memory/runtime/feedback_a.md", False, False, False),
    # a joined team's memory reinforces and may be read, never written; another team's is nothing
    (f"teams/{TEAM}/memory/feedback_t.md", True, False, True),
    (f"teams/{TEAM}/memory/sub/feedback_t.md", False, False, True),
    ("teams/other/memory/feedback_t.md", False, False, False),
    ("identity.md", False, False, False),
    ("lenses/x.md", False, False, False),
    ("runtime/journal/x.md", False, False, False),
    ("FAR", False, False, False),
]


def _given(root: Path, spelled: str) -> str:
    return _far(root) if spelled == "FAR" else str(root / spelled)


def _call(root: Path, payload: dict[str, object]) -> dict[str, object] | None:
    out = io.StringIO()
    code = hook_main(["--root", str(root), "--now", NOW],
                     stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out)
    assert code == 0
    return json.loads(out.getvalue()) if out.getvalue() else None


def _decision(response: dict[str, object] | None) -> object:
    said = (response or {}).get("hookSpecificOutput")
    return said.get("permissionDecision") if isinstance(said, dict) else None


def _journaled(root: Path) -> int:
    return sum(len(f.read_text().splitlines())
               for f in (root / "runtime" / "journal").glob("*.jsonl"))


@pytest.mark.parametrize(("spelled", "touch", "write", "read"), TABLE,
                         ids=[row[0] for row in TABLE])
def test_the_predicates_and_the_hook_give_one_answer(
        linked_root: Path, tmp_path: Path, spelled: str, touch: bool, write: bool,
        read: bool) -> None:
    given = _given(linked_root, spelled)
    found = resolve(linked_root, given, None)
    assert (reinforces(found, [TEAM]) is not None) == touch
    assert (may_write(found) is not None) == write
    assert (may_read(found, [TEAM]) is not None) == read
    # what reinforces or may be written may be read; nothing outside the root is any of them
    assert not (touch or write) or read

    # the hook answers by the same predicates, on each of its three paths
    pre = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/", "tool_name": "Write",
           "tool_input": {"file_path": given}}
    assert (_decision(_call(linked_root, pre)) == "allow") == write
    away = {**pre, "tool_name": "Read", "cwd": str(tmp_path / "project")}
    assert (_decision(_call(linked_root, away)) == "allow") == read
    before = _journaled(linked_root) if (linked_root / "runtime" / "journal").is_dir() else 0
    post = {**pre, "hook_event_name": "PostToolUse", "tool_name": "Read"}
    _call(linked_root, post)
    journaled = (linked_root / "runtime" / "journal").is_dir() and _journaled(linked_root) > before
    assert journaled == touch


def test_the_length_limit_is_the_joined_paths_for_every_question(linked_root: Path) -> None:
    """A relative path and a folder each within PATH_MAX, together past it: no question resolves it
    (one rule had measured the file_path alone and approved it, the other refused)."""
    cwd = str(linked_root) + "/" + "y/../" * 600
    rel = "x/../" * 300 + "memory/feedback_a.md"
    assert len(cwd) < PATH_MAX and len(rel) < PATH_MAX < len(cwd) + len(rel)
    assert resolve(linked_root, rel, cwd) is None
    pre = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": cwd, "tool_name": "Write",
           "tool_input": {"file_path": rel}}
    assert _decision(_call(linked_root, pre)) is None
    # an ordinary one is resolved
    assert resolve(linked_root, "memory/feedback_a.md", str(linked_root)) is not None


@pytest.mark.parametrize("value", ["", "memory/a\x00.md", "memory/\ud800.md", 42, None])
def test_a_path_no_file_can_have_is_nothing(linked_root: Path, value: object) -> None:
    assert resolve(linked_root, value, str(linked_root)) is None
    assert reinforces(None) is None and may_write(None) is None and may_read(None) is None


@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every argument os.path.realpath is called with in this process, in order."""
    seen: list[str] = []
    real = os.path.realpath

    def counting(path: str | os.PathLike[str], *args: object, **kwargs: object) -> str:
        seen.append(os.fspath(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os.path, "realpath", counting)
    return seen


@pytest.mark.parametrize(("event", "tool"), [("PostToolUse", "Write"), ("PreToolUse", "Write"),
                                             ("PostToolUse", "Read"), ("PostToolUse", "Edit"),
                                             ("PreToolUse", "Read")])
def test_one_call_resolves_its_path_once(linked_root: Path, tmp_path: Path, resolved: list[str],
                                         event: str, tool: str) -> None:
    target = str(linked_root / "memory" / "feedback_a.md")
    payload = {"hook_event_name": event, "session_id": "s", "cwd": str(tmp_path / "project"),
               "tool_name": tool,
               "tool_input": {"file_path": target, "content": MEMORY},
               "tool_response": {"type": "update"}}
    _call(linked_root, payload)  # a first call makes the journal's and the state's folders
    resolved.clear()
    _call(linked_root, payload)
    assert resolved.count(target) == 1, resolved
    assert str(linked_root) in resolved  # the root is resolved too, and (below) once
    assert sorted(p for p in set(resolved) if resolved.count(p) > 1) == [], resolved


_WRITES = {"open", "open_own", "write_own", "write_text", "write_bytes", "atomic_write", "replace"}


def _names_log(node: ast.AST, tainted: set[str]) -> bool:
    """Does this expression spell the hook's log (hook_log, "hook-errors"), or a name holding it?"""
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and (part.id == "hook_log" or part.id in tainted):
            return True
        if isinstance(part, ast.Attribute) and part.attr == "hook_log":
            return True
        if (isinstance(part, ast.Constant) and isinstance(part.value, str)
                and "hook-errors" in part.value):
            return True
    return False


def test_the_hook_log_has_one_writer() -> None:
    """No function but core.logs.hook_error opens, writes or moves the hook's log."""
    writers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            tainted: set[str] = set()
            for _ in range(3):  # names assigned from the log's path, and from those
                for node in ast.walk(func):
                    if isinstance(node, ast.Assign) and _names_log(node.value, tainted):
                        tainted |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            for node in ast.walk(func):
                if not isinstance(node, ast.Call):
                    continue
                called = node.func.attr if isinstance(node.func, ast.Attribute) else \
                    node.func.id if isinstance(node.func, ast.Name) else ""
                receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
                target = [*node.args[:1],
                          *([receiver] if receiver is not None and called.startswith("write")
                            else [])]
                if called in _WRITES and any(_names_log(part, tainted) for part in target):
                    writers.append(f"{path.relative_to(PACKAGE)}:{func.name}")
    assert sorted(set(writers)) == ["core/logs.py:hook_error"], writers


def test_path_max_is_spelled_once() -> None:
    spelled = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                     if "PATH_MAX =" in path.read_text(encoding="utf-8"))
    assert spelled == ["core/toolpath.py"], spelled


def test_every_hook_module_stays_under_500_lines() -> None:
    long = {str(path.relative_to(PACKAGE)): n for path in [*PACKAGE.joinpath("hook").rglob("*.py"),
                                                            PACKAGE / "hookrun.py"]
            if (n := len(path.read_text(encoding="utf-8").splitlines())) >= 500}
    assert long == {}, long

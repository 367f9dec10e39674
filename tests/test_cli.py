"""Root resolution, the clock, init, and one clean line for every kind of bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstore.frontends.cli import cli
from memstore.frontends.entry import _is_hook
from tests.helpers import memory, write


def test_missing_root_is_one_line_exit_1(run, tmp_path: Path) -> None:
    result = run(tmp_path / "nope", "sync")
    assert result.exit_code == 1
    assert result.stderr.startswith("memstore: error: root") and "Traceback" not in result.output
    assert "memstore init" in result.stderr  # says what to do next


def test_no_root_anywhere(run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = run(None, "status")
    assert result.exit_code == 1 and "no agent root" in result.stderr


def test_root_from_env_and_from_cwd(run, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, "memory/feedback_a.md", memory("feedback_a", "alpha"))
    monkeypatch.setenv("MEMSTORE_ROOT", str(root))
    assert json.loads(run(None, "status", "--json").stdout)["root"] == str(root.resolve())
    monkeypatch.delenv("MEMSTORE_ROOT")
    deep = root / "memory" / "short-term"
    deep.mkdir()
    monkeypatch.chdir(deep)
    assert json.loads(run(None, "status", "--json").stdout)["root"] == str(root.resolve())


def test_bad_now_is_usage_error(run, root: Path) -> None:
    write(root, "memory/feedback_a.md", memory("feedback_a", "alpha"))
    result = run(root, "show", "feedback_a", "--now", "yesterday-ish")
    assert result.exit_code == 2 and "ISO 8601" in result.stderr


def test_now_pins_the_score(run, root: Path) -> None:
    write(root, "memory/feedback_a.md", memory("feedback_a", "alpha", access_count=0, stability=14,
                                                last_accessed="2026-07-16T12:00:00Z"))
    early = json.loads(run(root, "show", "feedback_a", "--json", "--now",
                           "2026-07-16T12:00:00Z").stdout)
    late = json.loads(run(root, "--now", "2026-07-30T12:00:00Z", "show", "feedback_a",
                          "--json").stdout)
    assert early["score"] == 1.0
    assert late["score"] == pytest.approx(0.367879, abs=1e-6)  # exp(-14/14)


def test_show_unknown_name(run, root: Path) -> None:
    write(root, "memory/feedback_a.md", memory("feedback_a", "alpha"))
    result = run(root, "show", "feedback_zzz")
    assert result.exit_code == 1 and "no memory named" in result.stderr


def test_init_dry_run_writes_nothing_then_apply_lays_out(tmp_path: Path) -> None:
    target = tmp_path / "agent"
    runner = CliRunner()
    dry = runner.invoke(cli, ["init", str(target)])
    assert dry.exit_code == 0 and "nothing written" in dry.stdout
    assert not target.exists()
    done = runner.invoke(cli, ["init", str(target), "--apply"])
    assert done.exit_code == 0, done.output
    for rel in ("identity.md", "memory/short-term", "memory/dream-journal", "memory/bugs",
                "runtime/.gitignore", "runtime/memstore.db"):
        assert (target / rel).exists(), rel
    assert list((target / "lenses").glob("*.md"))
    shelves = {p.read_text().split("shelf: ")[1].split("\n")[0]
               for p in (target / "meditations").glob("*.md")}
    assert shelves == {"awareness", "instrumental"}
    again = runner.invoke(cli, ["init", str(target)])
    assert "0 change(s) planned" in again.stdout  # idempotent


def test_init_normalises_existing_memories_preserving_bytes(tmp_path: Path) -> None:
    target = tmp_path / "agent"
    original = ("---\nname: wrong-name   # keep me\ntype: feedback\nsummary: 'keep: quoted'\n---\n"
                "\n# Body\n")
    write(target, "memory/feedback_keep.md", original)
    write(target, "memory/feedback_broken.md", '---\nname: "x\n---\nbody\n')
    runner = CliRunner()
    dry = runner.invoke(cli, ["init", str(target)])
    assert "normalise memory/feedback_keep.md" in dry.stdout
    assert "skip      memory/feedback_broken.md" in dry.stdout
    assert (target / "memory/feedback_keep.md").read_text() == original  # dry run wrote nothing
    runner.invoke(cli, ["init", str(target), "--apply"])
    text = (target / "memory/feedback_keep.md").read_text()
    assert text.startswith("---\nname: feedback_keep   # keep me\ntype: feedback\n"
                           "summary: 'keep: quoted'\n")
    assert text.endswith("---\n\n# Body\n")
    for key in ("access_count: 0", "stability: 14.0", "last_accessed: ", "created: "):
        assert key in text
    assert (target / "memory/feedback_broken.md").read_text() == '---\nname: "x\n---\nbody\n'


def test_hook_dispatch_skips_click() -> None:
    assert _is_hook(["hook"]) and _is_hook(["--root", "x", "hook"]) and \
        _is_hook(["--now=1", "hook"])
    assert not _is_hook(["search", "hook"]) and not _is_hook([])


def test_console_script_runs_end_to_end(tmp_path: Path) -> None:
    import subprocess
    import sys

    target = tmp_path / "agent"
    env = {**os.environ, "MEMSTORE_NOW": "2026-07-30T12:00:00Z"}
    out = subprocess.run([sys.executable, "-m", "memstore", "init", str(target), "--apply"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    bad = subprocess.run([sys.executable, "-m", "memstore", "--root", str(target), "search", "x",
                          "--limit", "0"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_a_named_folder_without_memory_is_not_treated_as_a_root(run, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    write(tmp_path, "notes/readme.md", "# not a memory\n")
    result = run(tmp_path / "notes", "sync")
    assert result.exit_code == 1 and "not an agent root" in result.stderr and \
        "memstore init" in result.stderr
    assert not (tmp_path / "notes" / "runtime").exists()  # nothing left behind


def test_lint_reports_broken_lenses(run, root: Path) -> None:
    write(root, "lenses/bad-regex.md", "---\ntype: lens\ntrigger:\n  tool_match: '(unclosed'\n---\n"
                                       "body\n")
    write(root, "lenses/no-trigger.md", "---\ntype: lens\n---\nbody\n")
    items = json.loads(run(root, "lint", "--json").stdout)
    messages = {i["path"]: i["message"] for i in items}
    assert "bad regex" in messages["lenses/bad-regex.md"]
    assert "never fires" in messages["lenses/no-trigger.md"]

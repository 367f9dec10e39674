"""`memstore audit`: the per-session cost of the always-loaded files, and their narrative lines."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from memstore.wiring.install_base import BEGIN, END
from tests.helpers import write

# line number -> the reasons it must carry (exactly)
NARRATIVE = {
    3: ("- Shipped the exporter on 2026-07-30.", ["date", "status"]),
    4: ("- Exporter review slipped to Jul 30.", ["date"]),
    5: ("- Yesterday the build broke.", ["date"]),
    6: ("- The cache moved last week.", ["date"]),
    7: ("- Rolled back to 3f9e2c1 after the outage.", ["commit"]),
    8: ("- 42 tests pass on the branch.", ["count"]),
    9: ("- Gate check at 3/5 for the importer.", ["count"]),
    10: ("- The importer is done.", ["status"]),
    11: ("- The branch was merged.", ["status"]),
    12: ("- Search rewrite in progress.", ["status"]),
    13: ("- WIP: the watcher.", ["status"]),
    14: ("- The flaky lock test is fixed.", ["status"]),
    15: ("- Migration completed.", ["status"]),
    16: ("- TODO: rename the index: done", ["status"]),
    17: ("- We ran the migration on staging.", ["first-person"]),
    18: ("- Today we were on call.", ["first-person"]),
    19: ("- See #123 for the details.", ["ticket"]),
}
RULES = [
    "Always run the e2e test before merging.",
    "Never push to main.",
    "Use a fixed seed in tests; keep functions under 50 lines.",
    "Delete branches once merged.",
    "We need to keep the index under 10,000 characters.",
    "The fixed-width parser lives in src/parse.py and reads UTF-8.",
]


def crafted() -> str:
    """A CLAUDE.md: one heading, the narrative lines at their numbers, then rules and structure."""
    lines = ["# Status of 2026-07-30 (shipped, done)", ""]
    lines += [text for _n, (text, _r) in sorted(NARRATIVE.items())]
    lines += ["", "## Rules", "", *RULES, "",
              "```sh", "git revert 3f9e2c1   # done 2026-07-30, fixed #12, 42 tests pass", "```",
              "", BEGIN, "@identity.md", END, ""]
    return "\n".join(lines)


def audit_json(run, root: Path, *args: str) -> list[dict]:
    result = run(root, "audit", "--json", *args)
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)


def test_each_narrative_kind_is_flagged_with_its_reason(run, root: Path, tmp_path: Path) -> None:
    md = write(tmp_path, "proj/CLAUDE.md", crafted())
    [entry] = [e for e in audit_json(run, root, str(md)) if e["path"] == str(md)]
    got = {item["line"]: item["reasons"] for item in entry["flagged"]}
    want = {number: why for number, (_text, why) in NARRATIVE.items()}
    assert got == want  # each kind, with exactly its reason(s), and nothing else in the file
    texts = {item["line"]: item["text"] for item in entry["flagged"]}
    assert texts[3] == NARRATIVE[3][0]


def test_rules_headings_fences_and_the_import_block_are_never_flagged(
        run, root: Path, tmp_path: Path) -> None:
    text = "\n".join([
        "---", "created: 2026-07-30", "---",  # frontmatter
        "# Shipped on 2026-07-30: done, 42 tests pass",  # a heading
        *RULES,
        "~~~", "We fixed it in a1b2c3d on Jul 30 (#9), 3/5 done", "~~~",  # a fence, its content
        BEGIN, "@memory/MEMORY.md", "hand-edited 2026-07-30, merged", END,  # the import block
        "| when | what |", "| --- | --- |", "---",
        "",
    ])
    md = write(tmp_path, "proj/CLAUDE.md", text)
    [entry] = [e for e in audit_json(run, root, str(md)) if e["path"] == str(md)]
    assert entry["flagged"] == []
    # and the same fence text outside its fence is flagged: the skip is the fence's doing
    md.write_text(text.replace("~~~\n", ""), encoding="utf-8")
    [entry] = [e for e in audit_json(run, root, str(md)) if e["path"] == str(md)]
    assert [item["text"] for item in entry["flagged"]] == \
        ["We fixed it in a1b2c3d on Jul 30 (#9), 3/5 done"]
    assert entry["flagged"][0]["reasons"] == ["date", "commit", "count", "status", "first-person",
                                              "ticket"]


def sent(text: str) -> str:
    """What Claude Code sends of a CLAUDE.md: its one-line HTML comments (crafted() has only those)
    left out."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if not (line.startswith("<!--") and line.rstrip().endswith("-->")))


def test_costs_are_characters_and_characters_over_four(run, root: Path, tmp_path: Path) -> None:
    """Failure caught (walkthrough): audit counted the HTML comments Claude Code strips before
    sending."""
    text = crafted()
    md = write(tmp_path, "proj/CLAUDE.md", text)
    [entry] = [e for e in audit_json(run, root, str(md)) if e["path"] == str(md)]
    assert "<!--" in text and entry["chars"] == len(sent(text)) < len(text)
    assert entry["tokens"] == math.ceil(len(sent(text)) / 4)
    assert entry["lines"] == len(text.splitlines())
    saved = sum(len(line) + 1 for line, _why in NARRATIVE.values())  # each line with its newline
    assert entry["flagged_chars"] == saved
    assert entry["flagged_tokens"] == math.ceil(saved / 4)
    assert sum(item["chars"] for item in entry["flagged"]) == saved


def test_default_files_are_identity_and_the_project_and_root_instruction_files(
        run, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    identity = write(root, "identity.md", "# Me\n\nI am Rowan. Prefer small diffs.\n")
    project = write(tmp_path, "proj/CLAUDE.md", "# Rules\n\nNever push to main.\n")
    agents = write(root, "AGENTS.md", "Shipped the exporter yesterday.\n")
    write(tmp_path, "elsewhere/CLAUDE.md", "Never read me.\n")
    monkeypatch.chdir(tmp_path / "proj")
    found = audit_json(run, root)
    assert [(e["path"], e["role"]) for e in found] == [
        (str(project.resolve()), "project"), (str(identity.resolve()), "identity"),
        (str(agents.resolve()), "root")]
    assert found[2]["flagged"][0]["reasons"] == ["date", "status"]
    # no CLAUDE.md in cwd: only what exists is listed
    project.unlink()
    assert [e["role"] for e in audit_json(run, root)] == ["identity", "root"]
    # run from inside the root: its AGENTS.md is both the project's and the root's, listed once
    monkeypatch.chdir(root)
    assert [e["role"] for e in audit_json(run, root)] == ["identity", "project"]


def test_audit_counts_what_user_memory_imports(
        run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failure caught: in the recommended setup audit counted identity.md only (177 chars) while
    Claude Code also loads MEMORY.md through ~/.claude/rules/memstore.md."""
    import os

    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    assert run(root, "install", "--scope", "user", "--apply").exit_code == 0
    monkeypatch.chdir(tmp_path)
    found = audit_json(run, root)
    paths = {e["path"]: e for e in found}
    rules = str(Path(os.environ["HOME"]) / ".claude" / "rules" / "memstore.md")
    index = str((root / "memory" / "MEMORY.md").resolve())
    assert rules in paths and index in paths and paths[index]["imported_by"] == rules
    loaded = sum(e["chars"] for e in found)
    assert loaded >= len((root / "memory" / "MEMORY.md").read_text()) + \
        len((root / "identity.md").read_text())


def test_imports_of_a_claude_md_are_followed_one_level(run, root: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    write(root, "identity.md", "Prefer small diffs.\n")
    write(root, "memory/MEMORY.md", "# Hot\n\n- 2026-07-30 shipped: a memory summary\n")
    write(tmp_path, "proj/docs/a.md", "We decided on SQLite last week.\n@b.md\n")
    write(tmp_path, "proj/docs/b.md", "Merged yesterday.\n")
    rel = Path("..") / "agent"
    write(tmp_path, "proj/CLAUDE.md",
          f"Read @docs/a.md first.\n@docs/missing.md\n{BEGIN}\n@{rel}/identity.md\n"
          f"@{rel}/memory/MEMORY.md\n{END}\n")
    monkeypatch.chdir(tmp_path / "proj")
    listed = audit_json(run, root)
    found = {Path(e["path"]).name: e for e in listed}
    # b.md: a second level, not followed
    assert set(found) == {"identity.md", "CLAUDE.md", "a.md", "MEMORY.md"}
    assert len(listed) == 4  # identity.md once, though it is a default file and imported too
    imports = {i["ref"]: i for i in found["CLAUDE.md"]["imports"]}
    assert imports["@docs/a.md"]["found"] and imports["@docs/a.md"]["chars"] == \
        found["a.md"]["chars"]
    assert imports["@docs/missing.md"]["found"] is False
    assert found["a.md"]["role"] == "import" and found["a.md"]["imported_by"].endswith("CLAUDE.md")
    assert found["a.md"]["flagged"][0]["reasons"] == ["date", "first-person"]
    assert found["identity.md"]["role"] == "identity"  # listed once, though also imported
    assert found["MEMORY.md"]["flagged"] == [] and "rendered by memstore" in \
        found["MEMORY.md"]["note"]


def test_a_missing_named_file_exits_1_with_one_line(run, root: Path, tmp_path: Path) -> None:
    present = write(tmp_path, "CLAUDE.md", "Never push to main.\n")
    result = run(root, "audit", str(present), str(tmp_path / "nope.md"))
    assert result.exit_code == 1
    assert result.stderr == f"memstore: error: no such file: {tmp_path / 'nope.md'}\n"
    assert result.stdout == ""


def test_human_output_reports_and_exits_0(
        run, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "proj/CLAUDE.md", crafted())
    monkeypatch.chdir(tmp_path / "proj")
    result = run(root, "audit", "CLAUDE.md")
    assert result.exit_code == 0  # narrative found, still 0: it reports, it does not judge
    lines = result.stdout.splitlines()
    size, count = len(sent(crafted())), len(crafted().splitlines())
    assert lines[0] == (f"CLAUDE.md  (named)  {size:,} chars ≈ {math.ceil(size / 4):,} tokens, "
                        f"{count} line(s)")
    assert "  L3  date, status: - Shipped the exporter on 2026-07-30." in lines
    assert "  L17  first-person: - We ran the migration on staging." in lines
    saved = sum(len(line) + 1 for line, _why in NARRATIVE.values())
    total = (f"total: 1 file(s), {size:,} chars ≈ {math.ceil(size / 4):,} tokens every session; "
             f"{len(NARRATIVE)} narrative line(s), {saved:,} chars "
             f"≈ {math.ceil(saved / 4):,} tokens")
    assert lines[-1].startswith(total)


def test_json_is_a_list_of_file_objects(run, root: Path, tmp_path: Path) -> None:
    md = write(tmp_path, "CLAUDE.md", "Merged #4.\n@notes.md\n")
    write(tmp_path, "notes.md", "Never push to main.\n")
    found = audit_json(run, root, str(md))
    assert isinstance(found, list) and len(found) == 2
    assert list(found[0]) == ["path", "role", "chars", "tokens", "lines", "flagged",
                              "flagged_chars", "flagged_tokens", "imports", "imported_by", "note"]
    assert found[0]["flagged"] == [{"line": 1, "reasons": ["status", "ticket"], "chars": 11,
                                    "text": "Merged #4."}]
    assert found[0]["imports"] == [{"ref": "@notes.md", "path": str(tmp_path / "notes.md"),
                                    "found": True, "chars": 20, "tokens": 5}]
    assert found[1]["role"] == "import" and found[1]["imported_by"] == str(md)


@pytest.mark.parametrize(("line", "why"), [
    ("42 tests pass", ["count"]),
    ("The suite has 312 tests.", ["count"]),
    ("Tests: 120 passed, 2 skipped.", ["count"]),
    ("Verify gate 4 next.", ["count"]),
    ("Shipped on 30 July.", ["date", "status"]),
    ("Deployed to staging 3 days ago.", ["date", "status"]),
    ("Fixed the lock race.", ["status"]),
    ("- [x] rename the index", ["status"]),
    ("We've added retries.", ["first-person"]),
    ("I then tried pnpm.", ["first-person"]),
    ("See PR 45 and https://github.com/o/r/pull/46.", ["ticket"]),
    ("Cherry-pick 0a1b2c3d4e5f60718293a4b5c6d7e8f901234567.", ["commit"]),
    # rules and facts: nothing
    ("Do not mark a task as done until the tests pass.", []),
    ("If we need more speed, profile first.", []),
    ("We are required to sign commits.", []),
    ("The API returns 429 when rate-limited; back off 30 s.", []),
    ("Read docs/adr/0007-storage.md and use ISO-8601 dates.", []),
    ("Brand colours are #fff and #a1b2c3; the cache key is sha256 of the path.", []),
    ("Ask @alice about billing. Never deploy on Friday.", []),
])
def test_reasons_of_single_lines(line: str, why: list[str]) -> None:
    from memstore.wiring.audit import reasons

    assert reasons(line) == why

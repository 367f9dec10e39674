"""One hostile frontmatter never stops a command (issue 30, item 6).

Failures caught:
- a self-referential YAML alias (`b: &b [*b]`) built into a cyclic list, which sync, render,
  tick, lint, status, search and show then walked into a RecursionError traceback;
- a "billion laughs" frontmatter (nine levels of nine aliases) expanded by the constructor:
  sync ran past two minutes and 6 GB;
- nesting deeper than Python's recursion limit (no alias at all), the same traceback by
  another spelling;
- flush (fmedit's own YAML load) reading any of them differently from the parser.
Each must become that file's lint problem; the file is still indexed and rendered with the
defaults, and the normal memory beside them is untouched.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from memstore.core.config import Config
from memstore.mirror import parsing
from tests.helpers import NOW, memory, write

SELF = "project_self-ref"
LAUGHS = "project_laughs"
DEEP = "project_deep"
NORMAL = "project_widgets"


def laughs() -> str:
    lines = ["---", f"name: {LAUGHS}",
             'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for level in "bcdefghi":
        lines.append(f"{level}: &{level} [" + ",".join([f"*{previous}"] * 9) + "]")
        previous = level
    return "\n".join([*lines, "---", "", "# laughs", "", "nine to the ninth lols", ""])


def hostile_root(root: Path) -> Path:
    write(root, f"memory/{SELF}.md",
          f"---\nname: {SELF}\ntype: project\nb: &b [*b]\n---\n\n# self\n\nmy own list\n")
    write(root, f"memory/{LAUGHS}.md", laughs())
    write(root, f"memory/{DEEP}.md",
          f"---\nname: {DEEP}\na: {'[' * 990}{']' * 990}\n---\n\n# deep\n")
    write(root, f"memory/{NORMAL}.md", memory(NORMAL, "how the widgets are oiled",
                                              "Oil the widgets weekly."))
    return root


def cli(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real CLI in a child whose memory is capped, so a regression fails fast instead of eating
    the machine."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = {**os.environ, "MEMSTORE_NOW": NOW}
    env.pop("MEMSTORE_ROOT", None)
    return subprocess.run([sys.executable, "-m", "memstore", "--root", str(root), *args],
                          capture_output=True, text=True, env=env, timeout=timeout, preexec_fn=cap)


def test_billion_laughs_sync_finishes(root: Path) -> None:
    # alone: no other hostile file fails the sync first
    write(root, f"memory/{LAUGHS}.md", laughs())
    write(root, f"memory/{NORMAL}.md", memory(NORMAL, "how the widgets are oiled",
                                              "Oil the widgets weekly."))
    started = time.monotonic()
    # a hang guard, not a timing claim (it took minutes and 6 GB)
    done = cli(root, "sync", timeout=20)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and elapsed < 20
    lint = cli(root, "lint", "--json", timeout=20)
    assert {(i["path"], i["message"]) for i in json.loads(lint.stdout)} >= \
        {(f"memory/{LAUGHS}.md", parsing.ALIASES)}


def test_every_command_survives_and_lint_names_each_file(root: Path, run) -> None:
    hostile_root(root)
    assert cli(root, "sync", timeout=20).returncode == 0  # first, capped: a regression stops here
    for name in (SELF, LAUGHS, DEEP):  # touched, so flush has policy state to write into each
        assert run(root, "touch", str(root / f"memory/{name}.md")).exit_code == 0
    flushed = cli(root, "flush", "--force", timeout=20)  # fmedit loads the YAML itself: capped too
    assert flushed.returncode in (0, 1) and "Traceback" not in flushed.stderr, \
        flushed.stderr[-2000:]
    for args in (["sync"], ["render"], ["tick"], ["lint"], ["status"], ["status", "--json"],
                 ["search", "widgets"], ["list", "--json"], ["show", SELF], ["show", LAUGHS],
                 ["show", DEEP], ["flush", "--force"], ["context"], ["rebuild"]):
        # in-process, catch_exceptions=False: any traceback fails the test here
        result = run(root, *args)
        assert result.exit_code in (0, 1), (args, result.output, result.stderr)
        assert "Traceback" not in result.output + result.stderr, args

    found = json.loads(run(root, "lint", "--json").stdout)
    said = {(item["path"], item["message"]) for item in found}
    assert (f"memory/{SELF}.md", parsing.ALIASES) in said
    assert (f"memory/{LAUGHS}.md", parsing.ALIASES) in said
    assert any(path == f"memory/{DEEP}.md" and "nests deeper" in message for path, message in said)
    assert not any(path == f"memory/{NORMAL}.md" and item_level == "error"
                   for path, item_level in ((i["path"], i["level"]) for i in found))

    # The hostile files are still indexed and rendered, with the defaults; the normal memory is too.
    listed = {row["name"]: row for row in json.loads(run(root, "list", "--json").stdout)}
    assert {SELF, LAUGHS, DEEP, NORMAL} <= set(listed)
    # policy from the defaults (0, 14), then the one touch: (1, 22.4)
    assert (listed[SELF]["access_count"], listed[SELF]["stability"]) == (1, 22.4)
    index = (root / "memory/MEMORY.md").read_text(encoding="utf-8")
    assert NORMAL in index and "how the widgets are oiled" in index
    rendered = index + (root / "memory/MEMORY-archive.md").read_text(encoding="utf-8")
    assert all(f"{name}.md" in rendered for name in (SELF, LAUGHS, DEEP))
    hits = json.loads(run(root, "search", "widgets", "--json").stdout)
    assert hits and hits[0]["name"] == NORMAL
    shown = run(root, "show", SELF)
    assert shown.exit_code == 0 and parsing.ALIASES in shown.stdout
    # flush never rewrote a hostile frontmatter it could not read the parser's way
    assert "&b [*b]" in (root / f"memory/{SELF}.md").read_text(encoding="utf-8")


def test_the_parser_refuses_aliases_and_depth_and_keeps_ordinary_yaml() -> None:
    config = Config()
    cases = {
        "b: &b [*b]": parsing.ALIASES,
        "base: &x {a: 1}\nother:\n  <<: *x": parsing.ALIASES,  # a merge key is an alias too
        "a: &s text\nb: *s": parsing.ALIASES,
        "a: " + "[" * 40 + "]" * 40: "nests deeper",
    }
    for front, message in cases.items():
        parsed = parsing.parse_bytes(f"---\n{front}\n---\n\nbody\n".encode(), "x", config)
        assert parsed.meta == {} and parsed.body == "body\n", front
        assert any(message in p.message for p in parsed.problems), (front, parsed.problems)
    # An anchor nobody aliases is harmless; trigger maps, lists and dates read as before.
    ok = parsing.parse_bytes(b"---\nlabel: &x plain\ntrigger: {tool_match: Bash, path_pattern: x}\n"
                             b"tags: [a, b]\ncreated: 2026-07-01\n---\nbody\n", "x", config)
    assert ok.problems == [] and ok.meta["label"] == "plain" and \
        ok.meta["trigger"]["tool_match"] == "Bash"
    assert str(ok.created) == "2026-07-01"

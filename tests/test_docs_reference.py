"""The documentation says what the code does: the README stays a front page,
the reference is generated.

- docs/reference.md is exactly what scripts/gen_reference.py prints from the click commands and
  the config defaults;
- every `memstore COMMAND [SUBCOMMAND]` the README and docs/ show in code is a command of the CLI;
- README.md stays within 200 lines, and every relative link in README.md and docs/ reaches a
  file that exists (and, with #anchor, a heading in it).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import click

from memstore.frontends.cli import cli

HERE = Path(__file__).resolve().parent.parent
README = HERE / "README.md"
DOCS = HERE / "docs"
README_MAX_LINES = 200


def _generator():
    spec = importlib.util.spec_from_file_location("gen_reference",
                                                  HERE / "scripts" / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


FENCE = re.compile(r"^(```|~~~)(.*)$")
SPAN = re.compile(r"`([^`\n]+)`")
# `memstore` as a command: at a word's start or after a path (.venv/bin/memstore), then its words
INVOCATION = re.compile(r"(?:(?<=[\s/(\"'])|^)memstore((?:[ \t]+[^\s`|]+)+)")
GLOBAL_WITH_VALUE = ("--root", "--now")
# diagrams and layouts hold prose, not commands
SHELL_FENCES = ("sh", "bash", "shell", "console", "zsh")


def code_snippets(text: str) -> list[str]:
    """Every line of a shell block (```sh and the like) and every inline code span outside
    blocks."""
    snippets: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        marker = FENCE.match(line.strip())
        if fence is None and marker:
            fence = marker.group(2).strip().lower() or "text"
            continue
        if fence is not None:
            if marker and not marker.group(2).strip():
                fence = None
            elif fence in SHELL_FENCES:
                snippets.append(line)
            continue
        snippets.extend(SPAN.findall(line))
    return snippets


def named_commands(snippet: str) -> list[list[str]]:
    """Each `memstore [--root X] WORD [WORD]` in a snippet, as its command words (options
    skipped)."""
    found = []
    for match in INVOCATION.finditer(snippet):
        words = match.group(1).split()
        while words and (words[0] in GLOBAL_WITH_VALUE
                         or words[0].startswith(("--root=", "--now="))):
            words = words[1 if "=" in words[0] else 2:]
        if not words or not re.fullmatch(r"[a-z][a-z-]*", words[0]):
            continue  # `memstore --help`, `memstore # comment`, a path: no command named
        found.append(words[:2])
    return found


def unknown_commands(text: str) -> list[str]:
    bad = []
    for snippet in code_snippets(text):
        for words in named_commands(snippet):
            command = cli.get_command(click.Context(cli), words[0])
            if command is None:
                bad.append(words[0])
                continue
            sub = words[1] if len(words) > 1 and re.fullmatch(r"[a-z][a-z-]+", words[1]) else None
            if (isinstance(command, click.Group) and sub
                    and command.get_command(click.Context(command), sub) is None):
                bad.append(" ".join(words))
    return bad


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats
    numbered."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fence = False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fence = not fence
            continue
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fence or not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


LINK = re.compile(r"\]\(([^)\s]+)\)")


def dead_links(page: Path) -> list[str]:
    dead = []
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto:: not ours to check
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        missing = not where.exists()
        if not missing and anchor and where.suffix == ".md":
            missing = anchor not in anchors(where.read_text(encoding="utf-8"))
        if missing:
            dead.append(target)
    return dead


def test_reference_is_what_the_generator_prints() -> None:
    """Catches: a command, option or config key added or changed without regenerating
    docs/reference.md."""
    committed = (DOCS / "reference.md").read_text(encoding="utf-8")
    generated = _generator().generate()
    rerun = ("docs/reference.md is out of date: run `python scripts/gen_reference.py > "
             "docs/reference.md`")
    assert committed == generated, rerun


def test_check_flag_says_to_rerun(tmp_path: Path, monkeypatch, capsys) -> None:
    """Catches: --check passing on a stale reference (CI would then never see the drift)."""
    gen = _generator()
    stale = tmp_path / "reference.md"
    stale.write_text(gen.generate() + "| `--fake` | not a real option |\n", encoding="utf-8")
    monkeypatch.setattr(gen, "REFERENCE", stale)
    assert gen.main(["--check"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gen_reference.py" in err[0]
    stale.write_text(gen.generate(), encoding="utf-8")
    assert gen.main(["--check"]) == 0


def test_every_command_the_docs_name_exists() -> None:
    """Catches: the README or a docs page showing a command (or subcommand) that was renamed or
    removed."""
    named = 0
    problems = {}
    for page in _pages():
        text = page.read_text(encoding="utf-8")
        named += sum(len(named_commands(s)) for s in code_snippets(text))
        bad = unknown_commands(text)
        if bad:
            problems[page.relative_to(HERE).as_posix()] = sorted(set(bad))
    assert not problems, f"commands the docs name that the CLI does not have: {problems}"
    assert named > 50, "the scan found almost no commands: its patterns no longer match the docs"


def test_the_scan_sees_a_wrong_command() -> None:
    """The check above is not vacuous: a renamed command, a wrong subcommand, in a block or a
    span."""
    assert unknown_commands("```sh\nmemstore --root ~/a serch 'x'\n```\n") == ["serch"]
    assert unknown_commands("run `memstore bug reopen 3` then") == ["bug reopen"]
    assert unknown_commands("`memstore review accept ID`, `.venv/bin/memstore embed`, "
                            "`memstore.toml`") == []


def test_readme_is_a_front_page_and_its_links_hold() -> None:
    """Catches: the front page growing back past 200 lines, or a link to a docs page or heading that
    is gone."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, \
        f"README.md has {len(lines)} lines; move detail into docs/"
    links = LINK.findall(README.read_text(encoding="utf-8"))
    assert any(link.startswith("docs/") for link in links), "the front page links into docs/"
    dead = {page.relative_to(HERE).as_posix(): dead_links(page) for page in _pages()}
    assert not any(dead.values()), f"dead links: { {k: v for k, v in dead.items() if v} }"

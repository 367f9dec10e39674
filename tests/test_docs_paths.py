"""What the docs and the comments name exists: a reader who follows a pointer finds its target.

Caught here: a comment citing a design file or a test the project does not have, a doc naming a
module that was renamed, a page giving a path to a script that moved. Scanned: README.md,
BENCHMARKS.md, docs/*.md, and the comments and docstrings of every
Python file in memstore/, scripts/, devtools/ and tests/.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TOP = ("memstore", "tests", "scripts", "docs", "devtools", "migrations", "fixtures", "plugin",
       ".ci")
# a repo path: one of the top folders, then path characters; placeholders (`<x>`, `*`, `{}`) end it
_TOPS = "|".join(re.escape(t) for t in TOP)
REPO_PATH = re.compile(r"(?<![\w./-])((?:" + _TOPS + r")/[\w./-]*[\w/])")
BARE_FILE = re.compile(r"(?<![\w./-])((?:test_\w+\.py)|(?:[A-Z][A-Z_]+\.md))(?![\w/])")
# files memstore writes in an agent's root or a client's folder: pages name them, the tree has none
RUNTIME_FILES = {"MEMORY.md", "CLAUDE.md", "AGENTS.md", "GEMINI.md", "IDENTITY.md", "NAME.md"}
MODULE = re.compile(r"(?<![\w./-])(memstore(?:\.[a-z_][a-z0-9_]*)+)(?![\w/-])")
FILE_SUFFIXES = {"db", "toml", "md", "py", "json", "log", "rebuild", "jsonl", "lock", "txt"}
PLACEHOLDER = re.compile(r"[<>*{}$]|\.\.\.|x\.y|N\.N")
# a repo path is checked when it names a file (a suffix) or a folder (a trailing slash);
# `memstore/share-x` with neither is a git branch in a team repository, not a path
CHECKED_PATH = re.compile(r"(\.[a-z]{1,5}|/)$")
# setup.cfg installs the top-level migrations/ under memstore
ALIASES = {"memstore.migrations": "migrations"}


def _texts() -> list[tuple[Path, str]]:
    """(file, the text in it that a reader takes for prose): whole pages, and Python's comments and
    strings."""
    out: list[tuple[Path, str]] = []
    for page in [HERE / "README.md", HERE / "BENCHMARKS.md", *sorted((HERE / "docs").glob("*.md"))]:
        out.append((page, page.read_text(encoding="utf-8")))
    for folder in ("memstore", "scripts", "devtools", "tests"):
        for path in sorted((HERE / folder).rglob("*.py")):
            if "__pycache__" in path.parts or path.is_symlink():
                continue
            out.append((path, _prose_of(path.read_text(encoding="utf-8"))))
    return out


def _prose_of(source: str) -> str:
    """The comments and docstrings of a Python source (its other strings are data, often made-up
    paths)."""
    parts: list[str] = []
    try:
        tree = ast.parse(source)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                parts.append(tok.string)
    except (tokenize.TokenError, SyntaxError):
        return source
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                parts.append(doc)
    return "\n".join(parts)


def _exists_somewhere(name: str) -> bool:
    for folder in ("", *TOP):
        base = HERE / folder if folder else HERE
        if (base / name).exists() or (folder and any(base.rglob(name))):
            return True
    return False


def _module_exists(dotted: str) -> bool:
    """True when the dotted name's package or module prefix is a file or folder of the source
    tree."""
    for alias, folder in ALIASES.items():
        if dotted == alias or dotted.startswith(alias + "."):
            return (HERE / folder).is_dir()
    parts = dotted.split(".")
    path = HERE
    for i, part in enumerate(parts):
        if (path / part).is_dir():
            path = path / part
            continue
        # a module, or (after at least one package) an attribute of the package's __init__
        return (path / f"{part}.py").exists() or i >= 2
    return True


def dangling(items: list[tuple[Path, str]]) -> list[str]:
    """Every named path, file or module that the tree does not have, as 'file: name'."""
    found: list[str] = []
    for path, text in items:
        rel = path.relative_to(HERE).as_posix()
        for match in REPO_PATH.finditer(text):
            name = match.group(1).rstrip(".")
            tail = text[match.end():match.end() + 1]
            if (PLACEHOLDER.search(name + tail) or name.endswith(".egg-info")
                    or not CHECKED_PATH.search(name)):
                continue
            if not (HERE / name).exists():
                found.append(f"{rel}: {name}")
        for match in BARE_FILE.finditer(text):
            if match.group(1) not in RUNTIME_FILES and not _exists_somewhere(match.group(1)):
                found.append(f"{rel}: {match.group(1)}")
        for match in MODULE.finditer(text):
            last = match.group(1).rsplit(".", 1)[-1]
            if last in FILE_SUFFIXES or last.startswith("__"):
                continue
            if not _module_exists(match.group(1)):
                found.append(f"{rel}: {match.group(1)}")
    return sorted(set(found))


def test_every_path_and_module_a_doc_or_comment_names_exists() -> None:
    missing = dangling(_texts())
    assert not missing, "named but not in the tree (fix the reference or the file):\n" + \
        "\n".join(missing)


def test_the_check_catches_a_comment_naming_a_file_the_project_lacks(tmp_path: Path) -> None:
    source = HERE / "memstore" / "fake.py"
    text = _prose_of('"""See DESIGN_NOTES.md and tests/test_nothing_here.py."""\n'
                     '# memstore.nowhere.x\n')
    assert dangling([(source, text)]) == [
        "memstore/fake.py: DESIGN_NOTES.md",
        "memstore/fake.py: memstore.nowhere.x",
        "memstore/fake.py: tests/test_nothing_here.py",
    ]


SUITE_TIME = re.compile(r"\b\d+(?:\.\d+)?\s+min(?:ute)?s?\b", re.I)


def test_the_suites_time_is_stated_in_one_place() -> None:
    """The README gives the suite's times; other pages point to it rather than state their own."""
    for page in sorted((HERE / "docs").glob("*.md")):
        for line in page.read_text(encoding="utf-8").splitlines():
            low = line.lower()
            if ("suite" in low or "tier" in low or "pytest" in low) and SUITE_TIME.search(line):
                raise AssertionError(f"{page.name} states a test time (say it only in README.md): "
                                     f"{line.strip()}")

"""The hook's standard-library-only core is a boundary the build enforces, not a docstring.

Failure caught: a third-party import (yaml, click, sqlite_utils, ...) added anywhere the
hook can reach, even inside a function on a branch the runtime probe in test_hook.py
never takes, would put a heavy import on the path of every memory Read. This test reads
the source of every memstore module the hook can reach (imports at any depth, inside
functions too) and fails on any import that is neither the standard library nor
memstore itself.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import memstore

PACKAGE = Path(memstore.__file__).resolve().parent
# the client adapters are imported by name (`hook --client codex`), which the walk cannot follow
ENTRY_POINTS = ("memstore.hook", "memstore.hookrun", "memstore.clients.codex", "memstore.clients.gemini")


def module_file(name: str) -> Path | None:
    rel = name.split(".")[1:]
    if not rel:
        return PACKAGE / "__init__.py"
    base = PACKAGE.joinpath(*rel)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imports_of(path: Path, module: str) -> list[tuple[str, int]]:
    """Every module named by an import statement in the file, with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in _walk_runtime(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.append((target, node.lineno))
            # `from memstore import x` may name a submodule
            found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names
                      if target.startswith("memstore") and module_file(f"{target}.{alias.name}")]
    return found


def _walk_runtime(tree: ast.AST) -> list[ast.AST]:
    """Every node, except what sits under `if TYPE_CHECKING:` (never executed)."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def reachable(entry_points: tuple[str, ...]) -> tuple[set[str], list[str]]:
    seen: set[str] = set()
    foreign: list[str] = []
    todo = list(entry_points)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name)
        assert path is not None, f"cannot find the source of {name}"
        for target, line in imports_of(path, name):
            top = target.split(".")[0]
            if top == "memstore":
                if module_file(target):
                    todo.append(target)
            elif top not in sys.stdlib_module_names and top != "__future__":
                foreign.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    return seen, foreign


def test_hook_reaches_only_the_standard_library() -> None:
    seen, foreign = reachable(ENTRY_POINTS)
    assert "memstore.policy" in seen and "memstore.context" in seen  # the walk really followed the hook
    assert "memstore.shellreads" in seen  # and the clients' adapters
    assert not foreign, "third-party imports reachable from the hook:\n" + "\n".join(foreign)


def test_the_walk_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = ("def f():\n    import yaml\n    from click import echo\n"
              "if TYPE_CHECKING:\n    import tabulate\n")
    path = tmp_path / "probe.py"
    path.write_text(source)
    names = sorted(n for n, _ in imports_of(path, "memstore.probe"))
    assert names == ["click", "yaml"]  # imports inside functions count; type-checking-only ones do not

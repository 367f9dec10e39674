"""Where SQL stands: each statement against a table lives in one of its homes, and nowhere else.

The homes: the mirror's own package (memstore/mirror/), the hook's statements
(memstore/core/statements.py), the vectors' (memstore/meaning/vector_store.py) and the schema
(migrations/). The check reads the source with `ast`: every string constant, f-string (its
formatted values read as `?`) and `+` chain of strings is matched against the upper-case shape
of an SQL statement against a table. Docstrings are prose and are left out; so are the PRAGMAs
that only set up a connection, and BEGIN, COMMIT and ROLLBACK, which name no table.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
HOMES = ("memstore/mirror/", "memstore/core/statements.py", "memstore/meaning/vector_store.py",
         "migrations/")
# PRAGMAs that set up a connection rather than read or change the database
CONNECTION_PRAGMAS = frozenset({
    "busy_timeout", "cache_size", "cache_spill", "case_sensitive_like", "foreign_keys",
    "journal_mode", "locking_mode", "mmap_size", "query_only", "recursive_triggers",
    "synchronous", "temp_store", "trusted_schema", "wal_autocheckpoint",
})
# Upper case only: "select the newest" or "update from upstream" in a message is English.
STATEMENT = re.compile(r"""
      \bSELECT\b.+?\bFROM\b
    | \bINSERT\s+(?:OR\s+(?:ABORT|FAIL|IGNORE|REPLACE|ROLLBACK)\s+)?INTO\b
    | \bREPLACE\s+INTO\b
    | \bUPDATE\s+(?:OR\s+(?:ABORT|FAIL|IGNORE|REPLACE|ROLLBACK)\s+)?\S+\s+SET\b
    | \bDELETE\s+FROM\b
    | \bCREATE\s+(?:TEMP(?:ORARY)?\s+)?(?:UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b
    | \bDROP\s+(?:TABLE|INDEX|TRIGGER|VIEW)\b
    | \bALTER\s+TABLE\b
    | \b(?:ATTACH|DETACH)\s+DATABASE\b
    | ^\s*(?:VACUUM|ANALYZE|REINDEX)\b
""", re.VERBOSE | re.DOTALL)
PRAGMA = re.compile(r"\bPRAGMA\s+(?:\w+\.)?(\w+)")


def statement_in(text: str) -> str | None:
    """The SQL statement's opening words in `text`, or None when it holds none."""
    found = STATEMENT.search(text)
    if found is not None:
        return " ".join(found.group(0).split())[:60]
    for pragma in PRAGMA.finditer(text):
        if pragma.group(1).lower() not in CONNECTION_PRAGMAS:
            return " ".join(pragma.group(0).split())
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                found.add(id(first.value))
    return found


def _chain(node: ast.expr) -> list[ast.expr]:
    """The operands of a chain of `+`, left to right, and the `+` nodes themselves."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [node, *_chain(node.left), *_chain(node.right)]
    return [node]


def _spelled(node: ast.AST) -> tuple[str, list[ast.AST]] | None:
    """The string a node spells, its computed parts as `?`, and the nodes read to spell it;
    None when it is not a string. A computed part is left to be read on its own."""
    if isinstance(node, ast.Constant):
        return (node.value, [node]) if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        text = "".join(v.value if isinstance(v, ast.Constant) else "?" for v in node.values)
        return text, [node, *(v for v in node.values if isinstance(v, ast.Constant))]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        text, read, strings = "", [], 0
        for part in _chain(node):
            if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
                read.append(part)
                continue
            spelled = _spelled(part)
            strings += spelled is not None
            text += "?" if spelled is None else spelled[0]
            read += [] if spelled is None else spelled[1]
        return (text, read) if strings else None
    return None


def statements(source: str) -> list[tuple[int, str]]:
    """(line, opening words) of every SQL statement against a table that `source` spells."""
    tree = ast.parse(source)
    skipped = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):  # parents first: a string's pieces are read with it, not again
        if id(node) in skipped:
            continue
        spelled = _spelled(node)
        if spelled is None:
            continue
        skipped.update(id(piece) for piece in spelled[1])
        words = statement_in(spelled[0])
        if words is not None:
            found.append((node.lineno, words))
    return sorted(set(found))


def at_home(rel: str) -> bool:
    return rel.startswith(HOMES)


def misplaced(rel: str, source: str) -> list[str]:
    """`rel:line: words` for each statement `source` spells, when `rel` is not one of the homes."""
    return [] if at_home(rel) else [f"{rel}:{line}: {words}" for line, words in statements(source)]


def offenders(top: Path) -> list[str]:
    """Every statement outside its homes in the memstore package under `top`."""
    out = []
    for path in sorted((top / "memstore").rglob("*.py")):
        rel = path.relative_to(top).as_posix()
        out += misplaced(rel, path.read_text(encoding="utf-8"))
    return out


def test_sql_stands_in_its_homes() -> None:
    found = offenders(HERE)
    assert not found, (f"{len(found)} SQL statements outside memstore/mirror/, "
                       "memstore/core/statements.py and memstore/meaning/vector_store.py "
                       "(a query belongs to the mirror, as a named function):\n" + "\n".join(found))


def test_the_check_sees_the_homes() -> None:
    """The homes hold statements the check finds: a blind recogniser would pass the test above."""
    for rel, fewest in (("memstore/mirror/sync.py", 3), ("memstore/core/statements.py", 10),
                        ("memstore/meaning/vector_store.py", 10)):
        assert len(statements((HERE / rel).read_text(encoding="utf-8"))) >= fewest, rel


FRONT_END_QUERY = '''
"""A page that reads the mirror itself."""

def names(conn):
    """SELECT name FROM files, as a docstring: prose, not a statement."""
    return [r[0] for r in conn.execute("SELECT name FROM files WHERE kind = 't2'")]

def count(conn, kind):
    table = "files"
    return conn.execute(f"SELECT count(*) FROM {table} WHERE kind = ?", (kind,)).fetchone()

def forget(conn, path):
    conn.execute("DELETE " + "FROM policy WHERE path = ?", (path,))
    conn.execute("PRAGMA quick_check")
'''


def test_a_query_added_in_a_front_end_fails() -> None:
    found = misplaced("memstore/frontends/web/page.py", FRONT_END_QUERY)
    assert [item.split(": ", 1)[0] for item in found] == [
        "memstore/frontends/web/page.py:6", "memstore/frontends/web/page.py:10",
        "memstore/frontends/web/page.py:13", "memstore/frontends/web/page.py:14"]
    assert misplaced("memstore/mirror/page.py", FRONT_END_QUERY) == []


def test_a_query_in_a_module_on_disk_fails(tmp_path: Path) -> None:
    page = tmp_path / "memstore" / "frontends" / "page.py"
    page.parent.mkdir(parents=True)
    page.write_text(FRONT_END_QUERY, encoding="utf-8")
    home = tmp_path / "memstore" / "mirror" / "page.py"
    home.parent.mkdir(parents=True)
    home.write_text(FRONT_END_QUERY, encoding="utf-8")
    found = [item.split(":", 1)[0] for item in offenders(tmp_path)]
    assert found == ["memstore/frontends/page.py"] * 4


def test_english_is_not_sql() -> None:
    prose = [
        "select the memory from the list", "Select a file from memory/", "update from upstream",
        "Update the configuration file and restart the process.", "delete from the review queue",
        "SELECT", "the UPDATE button", "created the index", "drop the table",
        "PRAGMA busy_timeout=5000", "PRAGMA synchronous=NORMAL", "PRAGMA journal_mode=WAL",
        "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK",
        "an INSERT failed: run memstore rebuild", "vacuum the floor", "run VACUUM later",
    ]
    assert [text for text in prose if statement_in(text) is not None] == []
    sql = [
        "SELECT path FROM files", "INSERT OR IGNORE INTO dirty (path) VALUES (?)",
        "REPLACE INTO x VALUES (1)", "UPDATE policy SET touches = 0", "UPDATE ? SET a = 1",
        "DELETE FROM events", "CREATE VIRTUAL TABLE t USING fts5(a)",
        "CREATE UNIQUE INDEX i ON t(a)",
        "DROP TABLE t", "ALTER TABLE t ADD COLUMN c", "ATTACH DATABASE ? AS old", "VACUUM",
        "PRAGMA quick_check", "PRAGMA old.table_info(vectors)", "EXISTS (SELECT 1 FROM vectors v)",
    ]
    assert [text for text in sql if statement_in(text) is None] == []

"""Fuzzing with hypothesis: no input of any shape crashes memstore or widens what the hook approves.

- Frontmatter of every kind (broken YAML, wrong types, huge or negative numbers,
  far-future dates, unicode, BOM, CRLF, empty and binary files) goes through the parser,
  sync, lint, render, list and status: nothing raises, lint and render keep their contracts.
- fmedit.set_fields, which flush and init use to edit files in place: an edit it makes
  changes only the edited values; an edit it refuses raises CannotEdit and nothing else.
- The hook, given any bytes or any JSON: exit 0, and an approval only for a markdown file
  whose real path lies inside ROOT/memory (derived files excepted), checked independently.
- `memstore search` with any query: exit 0 (or 2 for bad usage), never a traceback.

The default run is derandomized and database-less, so CI sees the same examples every
time; MEMSTORE_LONG=1 runs ten times as many random examples.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from memstore.core.config import Config
from memstore.core.kinds import T2_NAME
from memstore.frontends.cli import cli
from memstore.hook.handler import main as hook_main
from memstore.mirror.fmedit import CannotEdit, set_fields
from memstore.mirror.index_rows import link
from memstore.mirror.indexing import build_row
from memstore.mirror.parsing import parse_bytes
from memstore.mirror.search import MAX_QUERY_CHARS
from memstore.mirror.sync import rebuild, sync
from tests import fuzz_strategies as fz
from tests.helpers import memory, write

LONG = os.environ.get("MEMSTORE_LONG") == "1"
NOW = "2026-07-30T12:00:00Z"
CFG = Config()
REPO = Path(__file__).resolve().parent.parent
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def fuzz(examples: int) -> settings:
    """Deterministic and database-less by default; 10x the examples, randomized, under
    MEMSTORE_LONG=1."""
    return settings(
        max_examples=examples * 10 if LONG else examples,
        derandomize=not LONG,
        database=None,
        deadline=None,
        print_blob=LONG,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
    )


def invoke(root: Path, *args: str) -> Result:
    """The CLI in process, exceptions caught so the test can show them."""
    return CliRunner().invoke(cli, ["--root", str(root), "--now", NOW, *args],
                              catch_exceptions=True)


def clean_exit(result: Result, allowed: tuple[int, ...]) -> None:
    """Exit code in `allowed`, no exception escaped click, no traceback printed."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        detail = "".join(traceback.format_exception(*result.exc_info)) if result.exc_info \
            else repr(result.exception)
        pytest.fail(f"exception escaped the CLI:\n{detail}\nstderr: {result.stderr}")
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    assert result.exit_code in allowed, (result.exit_code, result.stdout[-2000:],
                                         result.stderr[-2000:])


# ---------------------------------------------------------------- the parser


@fuzz(600)
@given(raw=fz.file_bytes(), name=fz.t2_names())
@example(raw=b"---\nimportance: 1" + b"0" * 400 + b"\n---\nbody\n", name="feedback_huge.md")
@example(raw=b"---\nlast_accessed: 9999-12-31T23:00:00-05:00\n---\nbody\n",
         name="feedback_future.md")
@example(raw=b"---\ntrigger: {1: a, b: c}\n---\nbody\n", name="feedback_mixed-keys.md")
def test_parse_never_raises(raw: bytes, name: str) -> None:
    """Any bytes parse, and make a mirror row: defaults for what is missing or invalid, values in
    range."""
    stem = name[:-3]
    parsed = parse_bytes(raw, stem, CFG, is_t2=True)
    assert parsed.name == stem or parsed.meta.get("name") is not None
    assert 0 <= parsed.importance <= 10
    assert parsed.access_count is None or 0 <= parsed.access_count <= 10**9
    assert parsed.stability is None or 0 < parsed.stability <= CFG.stability_cap
    for stamp in (parsed.last_accessed, parsed.last_reinforced):
        assert stamp is None or stamp.tzinfo is not None
    assert isinstance(parsed.body, str) and "\x00" not in parsed.body
    assert all(p.level in ("error", "warning") for p in parsed.problems)
    assert isinstance(parsed.row_text, str)
    # ...and the mirror row sync builds from it (meta as JSON, problems, digest) builds too.
    row = build_row(f"memory/{name}", raw, 0, len(raw), CFG)
    assert row["kind"] == "t2" and json.loads(str(row["meta"])) is not None


# ---------------------------------------------------------------- sync, lint, render, list, status


def _link(filename: str) -> str:
    return f"- {link(filename[:-3], filename)}"  # a name with unsafe characters is shown escaped


def _rows(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("- [")]


LENS_INF = b"---\ntype: lens\ntrigger:\n  tool_match: Bash\nbody_token_cap: .inf\n---\nlens body\n"


@fuzz(60)
@given(files=fz.corpora())
@example(files={"memory/feedback_ok.md": b"---\nname: feedback_ok\n---\nfine\n",
                "memory/feedback_mixed-keys.md": b"---\ntrigger: {1: a, b: c}\n---\nbody\n"})
@example(files={"memory/feedback_ok.md": b"---\nname: feedback_ok\n---\nfine\n",
                "lenses/inf-cap.md": LENS_INF})
def test_bad_files_never_stop_sync_lint_render(files: dict[str, bytes]) -> None:
    """A corpus of damaged files: sync, lint, render, list and status all finish and keep their
    contracts.

    lint: exit 0 or 1 (1 exactly when an error is listed), a JSON list. render: exit 0, and every
    live T2 file has exactly one row, in MEMORY.md or in the archive. list --json agrees with the
    rendered bands. A rebuilt mirror renders the same bytes. The hook still works on the corpus.
    """
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "agent"
        (root / "memory").mkdir(parents=True)
        for rel, raw in files.items():
            write(root, rel, raw)
        t2 = sorted(rel.split("/", 1)[1] for rel in files
                    if rel.count("/") == 1 and rel.startswith("memory/")
                    and T2_NAME.match(rel.split("/", 1)[1]))

        report = sync(root, CFG)
        assert report.scanned == len(files)
        assert not report.unreadable

        lint = invoke(root, "lint", "--json")
        clean_exit(lint, (0, 1))
        items = json.loads(lint.stdout)
        assert isinstance(items, list)
        assert all({"path", "level", "message"} <= set(item) for item in items)
        assert {item["path"] for item in items} <= set(files)
        assert lint.exit_code == (1 if any(item["level"] == "error" for item in items) else 0)

        rendered = invoke(root, "render")
        clean_exit(rendered, (0,))
        index = (root / "memory/MEMORY.md").read_text(encoding="utf-8")
        archive = (root / "memory/MEMORY-archive.md").read_text(encoding="utf-8")
        (root / "memory/current-state.md").read_text(encoding="utf-8")
        in_index, in_archive = _rows(index), _rows(archive)
        for filename in t2:
            hits = [r for r in in_index if r.startswith(_link(filename))]
            kept = [r for r in in_archive if r.startswith(_link(filename))]
            assert len(hits) + len(kept) == 1, (filename, hits, kept)
        assert len(in_index) + len(in_archive) == len(t2)
        assert len(index.splitlines()) <= CFG.index_max_lines and \
            len(index.encode()) <= CFG.index_max_bytes

        listed = invoke(root, "list", "--json")
        clean_exit(listed, (0,))
        rows = json.loads(listed.stdout)
        assert sorted(row["path"] for row in rows) == [f"memory/{f}" for f in t2]
        for row in rows:
            assert row["band"] in ("hot", "new", "cold", "archive", "superseded")
            in_md = any(r.startswith(_link(row["path"][7:])) for r in in_index)
            assert in_md == (row["band"] in ("hot", "new", "cold")), row

        status = invoke(root, "status", "--json")
        clean_exit(status, (0,))
        view = json.loads(status.stdout)
        assert view["files"] - view["kinds"]["derived"] == len(files)

        # The mirror is derived: rebuilt from the files, it renders the same bytes.
        rebuild(root, CFG)
        clean_exit(invoke(root, "render"), (0,))
        assert (root / "memory/MEMORY.md").read_text(encoding="utf-8") == index
        assert (root / "memory/MEMORY-archive.md").read_text(encoding="utf-8") == archive

        # The hook on this corpus (its lenses included) still approves a memory write, answers the
        # other events, and never falls into its catch-all (which would lose approvals and lenses).
        write_one = {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Write",
                     "tool_input": {"file_path": str(root / "memory" / t2[0])}}
        code, out = call_hook(root, json.dumps(write_one).encode())
        assert code == 0 and \
            (out or {}).get("hookSpecificOutput", {}).get("permissionDecision") == "allow", out
        for payload in ({"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash",
                         "tool_input": {"command": "ls"}},
                        {"hook_event_name": "SessionStart", "session_id": "s"}):
            assert call_hook(root, json.dumps(payload).encode())[0] == 0
        log = root / "runtime/state/hook-errors.log"
        assert not log.exists(), log.read_text()


# ---------------------------------------------------------------- fmedit.set_fields


def _eol(raw: bytes) -> str:
    return "\r\n" if b"\r\n" in raw else "\n"


def _check_edit(raw: bytes, out: bytes, updates: dict[str, object]) -> None:
    """`out` differs from `raw` only in the values of `updates`' keys (or lines appended for
    them)."""
    text, new = raw.decode("utf-8"), out.decode("utf-8")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    assert new.startswith(bom)
    text, new = text[len(bom):], new[len(bom):]
    eol = _eol(raw)
    old_lines, new_lines = text.split(eol), new.split(eol)
    if old_lines[0].rstrip() != "---":
        # no frontmatter: a new block in front, the original bytes after it untouched
        assert new.endswith(text)
        block = new[: len(new) - len(text)].split(eol)
        assert block[0] == "---" and block[-2] == "---" and block[-1] == ""
        assert [line.split(":", 1)[0] for line in block[1:-2]] == list(updates)
        return
    close = next(i for i in range(1, len(old_lines)) if old_lines[i].rstrip() == "---")
    added = len(new_lines) - len(old_lines)
    assert 0 <= added <= len(updates)
    new_close = close + added
    assert new_lines[new_close:] == old_lines[close:]  # the closing fence and the whole body
    assert new_lines[0] == old_lines[0]
    appended = [line.split(":", 1)[0] for line in new_lines[close:new_close]]
    assert len(set(appended)) == len(appended) and set(appended) <= set(updates), appended
    for before, after in zip(old_lines[1:close], new_lines[1:close], strict=True):
        if before == after:
            continue
        key = next((k for k in updates if re.match(re.escape(k) + r"[ \t]*:", before)), None)
        assert key is not None, ("a line that is not an edited key changed", before, after)
        colon = before.index(":") + 1
        assert after[:colon] == before[:colon], (before, after)
        comment = re.search(r"[ \t]+#.*$", before[colon:])
        if comment and not re.search(r"['\"]", before[colon:]):
            assert after.endswith(comment.group(0).rstrip()), (before, after)


def _front(out: bytes) -> dict[object, object]:
    """The YAML mapping between the first two `---` lines, read with PyYAML's safe loader (libyaml,
    as memstore)."""
    lines = out.decode("utf-8").lstrip("\ufeff").split(_eol(out))
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip() == "---")
    loaded = yaml.load("\n".join(lines[1:close]), Loader=SAFE_LOADER)
    return loaded if isinstance(loaded, dict) else {}


def _same(a: object, b: object) -> bool:
    """Equal as a value read back: instants to the second, floats to 4 places, NaN equal to NaN."""
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        a, b = (d.replace(tzinfo=d.tzinfo or dt.UTC, microsecond=0) for d in (a, b))
        return a == b
    if isinstance(a, float) and isinstance(b, int | float) and not isinstance(b, bool):
        return round(a, 4) == round(float(b), 4) or repr(a) == repr(b)
    return a == b or repr(a) == repr(b)


@fuzz(300)
@given(raw=st.one_of(fz.editable_files(), fz.editable_files(), fz.editable_files(),
                     fz.file_bytes()),
       updates=fz.policy_updates | fz.init_updates)
@example(raw=b"----\nname: feedback_x\nsummary: kept\n----\nbody\n", updates={"access_count": 1})
@example(raw=b"---\nname: feedback_x\nsummary: kept\n---\r\nbody\r\n", updates={"access_count": 1})
@example(raw=b"\x00---\nname: feedback_x\nsummary: kept\n---\nbody\n", updates={"access_count": 1})
@example(raw=b"---\nlast_reinforced:   # not yet\n---\nbody\n",
         updates={"last_reinforced": dt.datetime(2026, 7, 30, tzinfo=dt.UTC)})
@example(raw=b"---\nname: feedback_x\n---\nbody\n",
         updates={"last_reinforced": dt.datetime(999, 1, 1, tzinfo=dt.UTC)})
@example(raw=b"---\ncreated: 2026-02-30\n---\nbody\n", updates={"access_count": 1})
def test_set_fields_edits_only_the_values_or_refuses(
        raw: bytes, updates: dict[str, object]) -> None:
    """set_fields either raises CannotEdit, or returns bytes that differ only in the edited values.

    Checked three ways: line by line against the input (other lines, the fences, the body, the
    BOM and line endings byte-identical; an edited line keeps its key and its comment); the YAML
    reads the edited keys back as set; and memstore's own parser (what sync will see) reads the
    same body, every other key unchanged, and the policy fields as set.
    """
    try:
        out = set_fields(raw, updates)
    except CannotEdit as exc:
        event(f"refused: {str(exc)[:30]}")
        return  # refused: the caller leaves the file as it is
    event("edited in place" if raw.lstrip(b"\xef\xbb\xbf").startswith(b"---") else "block added")
    # Anything else escaping (OverflowError, ValueError, StopIteration...) fails the test here.
    _check_edit(raw, out, updates)
    after = _front(out)
    for key, value in updates.items():
        assert key in after and _same(value, after[key]), (key, value, after.get(key))

    # What sync will see: the edited keys read back as set, every other key and the body unchanged.
    stem = "feedback_fuzz"
    before_p, after_p = parse_bytes(raw, stem, CFG), parse_bytes(out, stem, CFG)
    assert after_p.has_frontmatter
    for key, value in before_p.meta.items():
        if key not in updates:
            assert key in after_p.meta and _same(after_p.meta[key], value), \
                (key, value, after_p.meta.get(key))
    # (the parser's fence eats leading whitespace)
    assert after_p.body.lstrip() == before_p.body.lstrip()
    if "access_count" in updates:
        assert after_p.access_count == updates["access_count"]
    if "stability" in updates:
        assert after_p.stability == pytest.approx(updates["stability"], abs=1e-4)
    for key in ("last_accessed", "last_reinforced"):
        if key in updates:
            want = updates[key]
            got = getattr(after_p, key)
            assert (got is None) if want is None else got == want.replace(microsecond=0), \
                (key, want, got)


# ---------------------------------------------------------------- the hook


def call_hook(root: Path | None, data: bytes,
              argv: list[str] | None = None) -> tuple[int, dict | None]:
    out = io.StringIO()
    if argv is None:
        argv = ["--root", str(root), "--now", NOW]
    code = hook_main(argv, stdin=io.BytesIO(data), stdout=out)
    text = out.getvalue()
    return code, (json.loads(text) if text else None)


@pytest.fixture(scope="module")
def hook_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An agent root with symlinks in memory/ that lead out, in, to the root and round in a loop."""
    base = tmp_path_factory.mktemp("hookfuzz")
    root = base / "agent"
    outside = base / "outside"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha rule"))
    write(root, "memory/short-term/260730-fact.md", "a fact\n")
    write(root, "memory/bugs/0001-open.md", "---\nstatus: open\ntitle: a bug\n---\n")
    write(root, "identity.md", "# me\n")
    write(root, "lenses/bash-care.md", "---\ntype: lens\ntrigger:\n  tool_match: ^Bash$\n"
                                       "---\nLENS bash\n")
    write(root, "lenses/memory-writes.md",
          "---\ntype: lens\ntrigger:\n  tool_match: Write|Edit\n  path_pattern: memory/.*\\.md$\n"
          "---\nLENS write\n")
    write(root, "meditations/still.md", "---\ntype: meditation\nshelf: awareness\n---\nsit\n")
    write(root, "memory-evil/feedback_sibling.md",
          "a sibling folder whose name starts like memory\n")
    write(outside, "outside.md", "outside\n")
    write(outside, "memory/feedback_elsewhere.md", "elsewhere\n")
    mem = root / "memory"
    links = {
        "link-out": outside,
        "lens-door": root / "lenses",
        "loop": mem / "loop",
        "inner": mem / "short-term",
        "up": root,
        "feedback_link-out.md": outside / "outside.md",
        "dangling.md": outside / "nowhere" / "x.md",
        "feedback_in-link.md": mem / "feedback_alpha.md",
        "MEMORY-link.md": mem / "MEMORY.md",
    }
    for name, target in links.items():
        os.symlink(target, mem / name)
    sync(root, CFG)
    saved = os.environ.pop("MEMSTORE_ROOT", None)
    yield root
    if saved is not None:
        os.environ["MEMSTORE_ROOT"] = saved


COMPONENTS = (".", "..", "", "memory", "MEMORY.md", "MEMORY-archive.md", "current-state.md",
              "feedback_alpha.md", "feedback_new.md", "short-term", "bugs", "lenses", "meditations",
              "identity.md", "bash-care.md", "link-out", "lens-door", "loop", "inner", "up",
              "feedback_link-out.md", "dangling.md", "feedback_in-link.md", "MEMORY-link.md",
              "outside.md", "feedback_elsewhere.md", "x.md", "x.MD", "x.md ", ".md", "notes.txt",
              "a" * 300 + ".md", "b" * 5000, "~", "$HOME", "\x00", "...", "\udcff.md", "\ud800.md",
              "feedback_\u00e9t\u00e9.md", "memory-evil", "memory.md")
PREFIXES = ("ROOT", "MEMORY", "OUTSIDE", "/", "", "~", "/tmp")
TOOLS = ("Write", "Edit", "MultiEdit", "Read", "Bash", "Grep", "write", "Write ", "NotebookEdit")
EVENTS = ("PreToolUse", "PreToolUse", "PostToolUse", "SessionStart", "Stop", "pretooluse")


def _resolve_prefix(token: object, root: Path) -> object:
    table = {"ROOT": str(root), "MEMORY": str(root / "memory"),
             "OUTSIDE": str(root.parent / "outside")}
    return table.get(token, token) if isinstance(token, str) else token


LEAVES = ("feedback_new.md", "feedback_alpha.md", "x.md", "MEMORY.md", "MEMORY-archive.md",
          "current-state.md", "feedback_link-out.md", "dangling.md", "feedback_in-link.md",
          "MEMORY-link.md", "identity.md", "x.MD", "notes.txt", "..", ".", "")


@st.composite
def file_paths(draw: st.DrawFn) -> tuple[str, list[str], str]:
    """(prefix token, path components, separator): resolved against the fixture root by
    _materialize."""
    prefix = draw(st.sampled_from(("MEMORY", "MEMORY", "MEMORY", "ROOT", "ROOT", *PREFIXES)))
    benign = st.sampled_from(["short-term", "bugs", "new-folder", "inner", "."])
    parts = draw(st.lists(benign | benign | st.sampled_from(COMPONENTS) | st.text(max_size=8),
                          max_size=3))
    leaf = draw(st.sampled_from(LEAVES[:4]) | st.sampled_from(LEAVES) | st.sampled_from(COMPONENTS)
                | st.text(max_size=8))
    sep = draw(st.sampled_from(["/", "/", "//", "/./"]))
    return prefix, [*parts, leaf], sep


CWDS = ("ROOT", "MEMORY", "OUTSIDE", "/", "", "memory", "bad\x00cwd")
# Paths that are one step away from an approvable one: a sibling folder named like memory/, a
# symlink out of it, a derived file, a wrong suffix, a walk up and out.
TRICKY = ("ROOT/memory-evil/feedback_x.md", "ROOT/memory.md", "ROOT/memoryx.md",
          "MEMORY/../memory-evil/x.md", "MEMORY/../identity.md", "MEMORY/link-out/x.md",
          "MEMORY/lens-door/bash-care.md", "MEMORY/up/identity.md", "MEMORY/up/lenses/new.md",
          "MEMORY/feedback_link-out.md", "MEMORY/dangling.md", "MEMORY/MEMORY.md",
          "MEMORY/MEMORY-link.md", "MEMORY/current-state.md", "MEMORY/loop/x.md",
          "OUTSIDE/memory/feedback_x.md", "MEMORY/notes.txt", "MEMORY/x.MD",
          "MEMORY/inner/../../identity.md", "MEMORY/up/memory-evil/x.md",
          "MEMORY/short-term/../../meditations/x.md", "MEMORY/feedback_new.md",
          "MEMORY/short-term/260730-x.md", "MEMORY/up/memory/feedback_x.md", "MEMORY/inner/x.md",
          "MEMORY/feedback_in-link.md", "MEMORY/.md")


@st.composite
def write_payloads(draw: st.DrawFn) -> dict[str, object]:
    """A well-formed PreToolUse (mostly of a write tool): only the tool, the path and the cwd are
    fuzzed."""
    if draw(st.booleans()):
        token, _, rest = draw(st.sampled_from(TRICKY)).partition("/")
        path: tuple[object, ...] = ("FP", token, rest.split("/"), "/")
    else:
        path = ("FP", *draw(file_paths()))
    tools = st.sampled_from(["Read", "Grep", "Bash", "NotebookEdit", "write"])
    payload: dict[str, object] = {"hook_event_name": "PreToolUse", "session_id": "w",
                                  "tool_name": draw(tools) if draw(fz.rarely) else
                                  draw(st.sampled_from(["Write", "Edit", "MultiEdit"])),
                                  "tool_input": {"file_path": path, "content": "x"}}
    if draw(st.integers(0, 3)):
        payload["cwd"] = draw(st.sampled_from(CWDS))
    return payload


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=10), children, max_size=4)),
    max_leaves=12,
)


@st.composite
def hook_payloads(draw: st.DrawFn) -> dict[str, object]:
    """A dict shaped like what Claude Code sends, each field fuzzed (sometimes missing or of a wrong
    type)."""
    payload: dict[str, object] = {}
    if draw(st.integers(0, 9)):
        payload["hook_event_name"] = draw(st.sampled_from(EVENTS) | json_values)
    if draw(st.integers(0, 9)):
        payload["tool_name"] = draw(st.sampled_from(TOOLS) | json_values)
    if draw(st.integers(0, 5)):
        payload["cwd"] = draw(st.sampled_from(CWDS) | json_values)
    if draw(st.integers(0, 5)):
        payload["session_id"] = draw(st.sampled_from(["s1", "s2", "", "\udcff"]) | json_values)
    shape = draw(st.integers(0, 9))
    if shape == 0:
        payload["tool_input"] = draw(json_values)
    elif shape > 1:
        prefix, parts, sep = draw(file_paths())
        # resolved by _materialize
        payload["tool_input"] = {"file_path": ("FP", prefix, parts, sep)}
        if draw(st.booleans()):
            payload["tool_input"]["content"] = draw(st.text(max_size=20))  # type: ignore[index]
    for key in draw(st.lists(st.text(max_size=8), max_size=2)):
        payload.setdefault(key, draw(json_values))
    return payload


def _materialize(payload: dict[str, object], root: Path) -> dict[str, object]:
    out = dict(payload)
    if "cwd" in out:
        out["cwd"] = _resolve_prefix(out["cwd"], root)
    data = out.get("tool_input")
    if isinstance(data, dict) and isinstance(data.get("file_path"), tuple):
        _tag, prefix, parts, sep = data["file_path"]
        base = _resolve_prefix(prefix, root)
        text = sep.join(parts)
        data = dict(data)
        data["file_path"] = (str(base).rstrip("/") + "/" + text) if base else text
        out["tool_input"] = data
    return out


def _may_be_approved(root: Path, payload: dict[str, object]) -> tuple[bool, str]:
    """Independently of memstore: is an approval of this payload acceptable?"""
    tool = payload.get("tool_name")
    if (payload.get("hook_event_name") == "PreToolUse" and isinstance(tool, str)
            and tool.startswith("mcp__memstore__")):
        own = {"search", "read", "note", "new_memory", "bug_add", "bug_list", "bug_close"}
        return tool[len("mcp__memstore__"):] in own, "memstore's own MCP tool, by exact name"
    if (payload.get("hook_event_name") != "PreToolUse"
            or tool not in ("Write", "Edit", "MultiEdit", "Read")):
        return False, "not a PreToolUse of a write tool or a Read"
    data = payload.get("tool_input")
    file_path = data.get("file_path") if isinstance(data, dict) else None
    if not isinstance(file_path, str) or not file_path or "\x00" in file_path:
        return False, "no usable file_path"
    cwd = payload.get("cwd")
    if tool == "Read":
        # Reads are approved only where the root lies outside the session's project (cwd).
        if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
            return False, "a Read approval with no project to be outside of"
        project = os.path.realpath(cwd)
        if (os.path.realpath(root) == project
                or os.path.realpath(root).startswith(project.rstrip("/") + "/")):
            return False, "a Read approval for a root inside the project"
    base = cwd if isinstance(cwd, str) and cwd and "\x00" not in cwd else os.getcwd()
    try:
        real = Path(os.path.realpath(os.path.join(base, file_path)))
    except (OSError, ValueError) as exc:
        return False, f"unresolvable: {exc}"
    memory = Path(os.path.realpath(root / "memory"))
    if memory not in real.parents:
        return False, f"{real} is not inside {memory}"
    if not real.name.endswith(".md") or real.name.startswith("."):
        return False, f"{real} is not a visible markdown file"
    derived = real.parent == memory and real.name in ("MEMORY.md", "MEMORY-archive.md",
                                                      "current-state.md")
    if derived and tool != "Read":
        return False, f"{real} is a derived file"
    return True, str(real)


def _may_be_denied(root: Path, payload: dict[str, object]) -> tuple[bool, str]:
    """Independently of memstore: is a refusal of this payload one the person's files call for?"""
    tool = payload.get("tool_name")
    data = payload.get("tool_input")
    if tool == "Bash":
        command = data.get("command") if isinstance(data, dict) else None
        names = ("identity.md", "memstore.toml", "lenses", "meditations")
        return isinstance(command, str) and any(n in command for n in names), \
            "a shell command naming them"
    if tool not in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        return False, "not a tool that writes a file"
    target = (data or {}).get("file_path") if isinstance(data, dict) else None
    if isinstance(target, str) and "\x00" not in target and (
            os.path.realpath(target).endswith(("/.claude/settings.json",
                                               "/.claude/settings.local.json"))
            or os.path.realpath(target).endswith("/.claude/rules/memstore.md")):
        return True, "Claude Code's settings hold memstore's wiring"
    file_path = data.get("file_path") if isinstance(data, dict) else None
    if not isinstance(file_path, str) or not file_path or "\x00" in file_path:
        return False, "no usable file_path"
    cwd = payload.get("cwd")
    base = cwd if isinstance(cwd, str) and cwd and "\x00" not in cwd else os.getcwd()
    real = Path(os.path.realpath(os.path.join(base, file_path)))
    top = Path(os.path.realpath(root))
    if top not in real.parents:
        return False, f"{real} is not inside {top}"
    rel = real.relative_to(top).as_posix().casefold()
    owned = rel in ("identity.md", "memstore.toml") or rel.startswith(("lenses/", "meditations/"))
    # memstore's own: runtime/ (the journal cannot be rebuilt) and the rendered files clients load
    machine = rel.startswith("runtime/") or rel in ("memory/memory.md", "memory/memory-archive.md",
                                                    "memory/current-state.md")
    return owned or machine, f"{rel} is the person's or memstore's" if owned or machine \
        else f"{rel} is neither"


def _check_response(root: Path, payload: dict[str, object], code: int,
                    response: dict | None) -> None:
    assert code == 0
    if response is None:
        event("no output")
        return
    assert isinstance(response, dict) and set(response) == {"hookSpecificOutput"}
    output = response["hookSpecificOutput"]
    event(f"decision: {output.get('permissionDecision')}")
    if output.get("permissionDecision") == "deny":
        ok, why = _may_be_denied(root, payload)
        assert ok, f"refused, but {why}: {payload!r}"
    elif output.get("permissionDecision") is not None:
        assert output["permissionDecision"] == "allow"
        ok, why = _may_be_approved(root, payload)
        assert ok, f"approved, but {why}: {payload!r}"


@fuzz(600)
@given(payload=write_payloads() | write_payloads() | hook_payloads())
def test_hook_payloads_exit_0_and_approve_only_memory_files(
        hook_root: Path, payload: dict[str, object]) -> None:
    payload = _materialize(payload, hook_root)
    try:
        data = json.dumps(payload).encode()
    except (TypeError, ValueError):
        assume(False)
    _check_response(hook_root, payload, *call_hook(hook_root, data))


@fuzz(200)
@given(prefix=st.sampled_from(["ROOT/memory", "MEMORY", "ROOT/memory/inner",
                               "ROOT/memory/up/memory"]),
       parts=st.lists(fz.kebab | st.sampled_from(["..", ".", "short-term", "bugs", "new-folder"]),
                      max_size=4),
       stem=fz.kebab, tool=st.sampled_from(["Write", "Edit", "MultiEdit"]))
def test_hook_approves_writes_that_stay_inside_memory(
        hook_root: Path, prefix: str, parts: list[str], stem: str, tool: str) -> None:
    """The other direction: a write whose real path stays inside memory/ is approved (no prompt
    wall)."""
    base = _resolve_prefix(prefix.split("/", 1)[0], hook_root)
    rest = prefix.split("/", 1)[1] if "/" in prefix else ""
    path = "/".join(p for p in (str(base), rest, *parts, stem + ".md") if p)
    payload = {"hook_event_name": "PreToolUse", "session_id": "inside", "cwd": str(hook_root),
               "tool_name": tool, "tool_input": {"file_path": path}}
    code, response = call_hook(hook_root, json.dumps(payload).encode())
    ok, _why = _may_be_approved(hook_root, payload)
    assume(ok)
    assert code == 0
    assert (response or {}).get("hookSpecificOutput", {}).get("permissionDecision") == "allow", path


raw_json_texts = st.one_of(
    json_values.map(json.dumps),
    hook_payloads().map(lambda p: json.dumps(p, default=str)),
    st.text(max_size=50),
    st.sampled_from(['{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": '
                     '{"file_path": "\\ud800"}}',
                     '{"a": 1e999}', '{"a": NaN}', '{"a": -Infinity}', '{"a": 1' + "0" * 5000 + "}",
                     '{"hook_event_name": "PreToolUse"} trailing', '{"a": 1, "a": 2}', "[" * 100000,
                     '{"session_id": "\\udcff", "hook_event_name": "SessionStart"}']),
)


@fuzz(300)
@given(data=st.one_of(st.binary(max_size=400),
                      raw_json_texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
                      raw_json_texts.map(
                          lambda t: b"\xef\xbb\xbf" + t.encode("utf-8", "surrogatepass"))))
def test_hook_any_bytes_exit_0(hook_root: Path, data: bytes) -> None:
    code, response = call_hook(hook_root, data)
    assert code == 0
    if response is not None:
        try:
            payload = json.loads(data.decode("utf-8", errors="replace"))
        except ValueError:
            pytest.fail(f"answered a payload that is not JSON: {data!r} -> {response!r}")
        _check_response(hook_root, payload, code, response)


@fuzz(100)
@given(argv=st.lists(st.sampled_from(["--root", "--now", "--root=", "--now=", "ROOT", "OUTSIDE",
                                      "/nonexistent", "", "9999-12-31T23:59:59-05:00", "garbage",
                                      "2026-07-30T12:00:00Z", "hook"])
                     | st.text(max_size=10).filter(lambda a: not os.path.isdir(a)), max_size=6),
       payload=hook_payloads())
def test_hook_any_argv_exit_0(hook_root: Path, argv: list[str], payload: dict[str, object]) -> None:
    """Any command line (roots that do not exist, clocks that are not times): exit 0, approvals
    still sound.

    (Random words that name a real folder are left out: the hook would take it as the root and log
    there.)
    """
    argv = [str(_resolve_prefix(a, hook_root)) for a in argv]
    payload = _materialize(payload, hook_root)
    try:
        data = json.dumps(payload).encode()
    except (TypeError, ValueError):
        assume(False)
    code, response = call_hook(None, data, argv=argv)
    assert code == 0
    decision = (response or {}).get("hookSpecificOutput", {}).get("permissionDecision")
    roots = [hook_root, hook_root.parent / "outside"]  # the only folders here that hold memory/
    if decision == "deny":
        assert any(_may_be_denied(r, payload)[0] for r in roots), payload
    elif decision is not None:
        assert any(_may_be_approved(r, payload)[0] for r in roots), payload


GARBAGE_STDIN = [b"", b"\x00\xff\xfe", b"{" * 50000, b'{"hook_event_name": "SessionStart"',
                 b'{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": '
                 b'{"file_path": "/etc/passwd"}}',
                 b'{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": '
                 b'{"file_path": "ROOT/memory/up/identity.md"}}',
                 b'{"hook_event_name": "PostToolUse", "tool_name": "Read", "session_id": '
                 b'"\\udcff", "tool_input": {"file_path": "ROOT/memory/feedback_alpha.md"}}']


@pytest.mark.parametrize("launcher", ["module", "hookrun"])
def test_real_hook_process_exits_0_on_garbage(hook_root: Path, launcher: str) -> None:
    """The real entry points (`python -m memstore hook`, the -S launcher) with garbage on stdin."""
    if launcher == "module":
        command = [sys.executable, "-m", "memstore", "--root", str(hook_root), "--now", NOW, "hook"]
    else:
        command = [sys.executable, "-S", str(REPO / "memstore/hookrun.py"), "--root",
                   str(hook_root)]
    for data in GARBAGE_STDIN:
        data = data.replace(b"ROOT", str(hook_root).encode())
        proc = subprocess.run(command, input=data, capture_output=True, timeout=60, cwd=hook_root)
        assert proc.returncode == 0, (data[:100], proc.stderr)
        assert proc.stderr == b"", (data[:100], proc.stderr)
        if proc.stdout:
            decision = json.loads(proc.stdout)["hookSpecificOutput"].get("permissionDecision")
            # memory/up leads back to the root: that write is to identity.md, the person's, refused
            expected = "deny" if b"memory/up/identity.md" in data else None
            assert decision == expected, (data[:100], proc.stdout)


# ---------------------------------------------------------------- search


@pytest.fixture(scope="module")
def search_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("searchfuzz") / "agent"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "zebra stripes alpha",
                                                   "NEAR the zebra"))
    write(root, "memory/project_beta.md", memory("project_beta", "beta: colons and \"quotes\"",
                                                 "日本 é — x*"))
    write(root, "memory/short-term/260730-fact.md", "a short fact about zebras\n")
    write(root, "memory/feedback_broken.md", b"---\nname: \"broken\n---\n\x00\xff zebra\n")
    sync(root, CFG)
    return root


@fuzz(300)
@given(query=fz.queries, json_out=st.booleans(), dashdash=st.booleans())
@example(query='"\udcff"', json_out=False, dashdash=True)
def test_search_any_query(search_root: Path, query: str, json_out: bool, dashdash: bool) -> None:
    args = ["search", *(["--json"] if json_out else []), *(["--"] if dashdash else []), query]
    result = invoke(search_root, *args)
    # nothing (or a page): bad usage
    if not any(ch.isalnum() for ch in query) or len(query) > MAX_QUERY_CHARS:
        clean_exit(result, (2,))
    elif dashdash or not query.startswith("-"):
        clean_exit(result, (0,))
        if json_out:
            hits = json.loads(result.stdout)
            assert isinstance(hits, list) and all({"path", "name", "score", "snippet"} <= set(h)
                                                  for h in hits)
    else:
        clean_exit(result, (0, 2))  # may read as an unknown option: bad usage


@fuzz(60)
@given(query=fz.queries,
       limit=st.one_of(st.integers(), fz.huge_ints, st.sampled_from(["x", "", "1.5", "-0"])),
       type_=(st.none() | st.sampled_from(["feedback", "lens", "t2", "bogus", ""])
              | st.text(max_size=6)))
@example(query="zebra", limit=10**20, type_=None)
def test_search_options_bad_usage_is_exit_2(
        search_root: Path, query: str, limit: object, type_: str | None) -> None:
    """--limit and --type of any value: results (0) or bad usage (2), never a traceback."""
    args = ["search", "--limit", str(limit)] + (["--type", type_] if type_ is not None else []) + \
        ["--", query]
    clean_exit(invoke(search_root, *args), (0, 2))


SUBPROCESS_QUERIES = [b"zebra", b'"', b"NEAR(", b"-x", b"--", b"\xff", b'"\xff"', b"zebra \xff*",
                      b"a:b", b"'", b"*", b"\xe6\x97\xa5\xe6\x9c\xac", b"x" * 5000]


def test_search_real_process(search_root: Path) -> None:
    """The real command line, bytes that are not UTF-8 included: exit 0 or 2, never a traceback."""
    env = {**os.environ, "MEMSTORE_NOW": NOW}
    env.pop("MEMSTORE_ROOT", None)
    failures = []
    for query in SUBPROCESS_QUERIES:
        proc = subprocess.run([sys.executable, "-m", "memstore", "--root", str(search_root),
                               "search", query],
                              capture_output=True, timeout=60, env=env)
        wordless = not any(ch.isalnum() for ch in query.decode("utf-8", "surrogateescape"))
        too_long = len(query) > MAX_QUERY_CHARS
        # exit 2 is bad usage
        allowed = (0, 2) if query.startswith(b"-") else (2,) if wordless or too_long else (0,)
        if proc.returncode not in allowed or b"Traceback" in proc.stderr:
            failures.append((query, proc.returncode, proc.stderr.decode(errors="replace")[-300:]))
    assert not failures, failures

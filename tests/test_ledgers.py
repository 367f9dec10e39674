"""The ledgers: `new` (a T2 memory), the open-bug ledger (`bug add/list/close`)
and what the bundle carries."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memstore.api.store import Store
from memstore.core.config import Config
from memstore.core.kinds import MEMORY_TYPES
from memstore.hook.bundle import bundle
from memstore.mirror.parsing import parse_bytes
from tests.helpers import NOW, write

PINNED = dt.datetime(2026, 7, 30, 12, 0, tzinfo=dt.UTC)


def num(ident: str) -> str:
    """A bug id's number part: ids filed here carry a clone mark (0001-3f9), hand-made files
    none."""
    return ident.split("-")[0]


def bugs_json(run, root: Path, *extra: str) -> list[dict]:
    result = run(root, "bug", "list", "--json", *extra)
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)


def context(root: Path, now: dt.datetime = PINNED) -> str:
    return bundle(root, now, Config())


# ---------------------------------------------------------------- new


def test_new_writes_a_well_formed_memory_that_search_finds_at_once(run, root: Path) -> None:
    """Fails if new leaves out a frontmatter field, writes one the parser flags, or skips the
    sync."""
    # a mirror exists, so only new's own sync can take the file in
    assert run(root, "sync").exit_code == 0
    result = run(root, "new", "feedback", "export format", "--summary",
                 "Exports go out as CSV zebrafish", "--importance", "7", "--pin", "--body",
                 "Why: the importer chokes on XLSX.")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "wrote memory/feedback_export-format.md"
    raw = (root / "memory/feedback_export-format.md").read_bytes()
    parsed = parse_bytes(raw, "feedback_export-format", Config(), is_t2=True)
    assert parsed.problems == []
    assert parsed.meta["name"] == "feedback_export-format" and parsed.type == "feedback"
    assert parsed.created == PINNED.date() and parsed.last_updated == PINNED.date()
    assert parsed.access_count == 0 and parsed.last_accessed == PINNED and \
        parsed.last_reinforced is None
    assert "last_reinforced" in parsed.meta
    assert parsed.stability == Config().initial_stability
    assert parsed.importance == 7 and parsed.pin is True
    assert parsed.body.lstrip("\n") == \
        "# feedback_export-format\n\nWhy: the importer chokes on XLSX.\n"
    # --no-sync: only what new itself took into the mirror can be found
    hits = json.loads(run(root, "search", "zebrafish", "--json", "--no-sync").stdout)
    assert [hit["path"] for hit in hits] == ["memory/feedback_export-format.md"]


def test_new_body_defaults_to_the_summary_and_pin_is_left_out(run, root: Path) -> None:
    """Fails if new writes pin: false / importance when not given, or an empty body."""
    assert run(root, "new", "user", "tabs", "--summary", "Prefers tabs").exit_code == 0
    text = (root / "memory/user_tabs.md").read_text()
    assert "pin:" not in text and "importance:" not in text
    assert text.endswith("---\n\n# user_tabs\n\nPrefers tabs\n")


@pytest.mark.parametrize(("topic", "stem"), [
    ("Release checklist", "release-checklist"),
    ("  Export: CSV / XLSX (v2)!!  ", "export-csv-xlsx-v2"),
    ("café--über__Straße", "cafe-uber-strae"),
    ("already-kebab-case", "already-kebab-case"),
])
def test_new_kebab_cases_the_topic(run, root: Path, topic: str, stem: str) -> None:
    """Fails if the topic is not lowercased, its separators not collapsed to single hyphens, or not
    trimmed."""
    result = run(root, "new", "project", topic, "--summary", "s")
    assert result.exit_code == 0, result.stderr
    assert (root / f"memory/project_{stem}.md").is_file()


def test_new_refuses_a_topic_with_nothing_to_name(run, root: Path) -> None:
    """Fails if a topic of punctuation only makes memory/project_.md."""
    result = run(root, "new", "project", " !!! ", "--summary", "s")
    assert result.exit_code == 2
    assert result.stderr.startswith("memstore: error: topic")
    assert list((root / "memory").glob("*.md")) == []


def test_new_refuses_an_unknown_type_listing_the_valid_ones(run, root: Path) -> None:
    """Fails if an unknown type writes a file, crashes, or leaves the user guessing which types
    exist."""
    result = run(root, "new", "lesson", "x", "--summary", "s")
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "memstore: error: unknown memory type 'lesson'"
    assert all(kind in lines[1] for kind in MEMORY_TYPES)
    assert "Traceback" not in result.output
    assert list((root / "memory").glob("*.md")) == []


def test_new_refuses_an_existing_name_and_keeps_the_file(run, root: Path) -> None:
    """Fails if new overwrites a memory that already has the name."""
    before = write(root, "memory/feedback_export-format.md",
                   "---\nname: feedback_export-format\n---\nMINE\n")
    result = run(root, "new", "feedback", "Export format", "--summary", "other")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0].startswith(
        "memstore: error: a memory named feedback_export-format")
    assert before.read_text() == "---\nname: feedback_export-format\n---\nMINE\n"


@pytest.mark.parametrize("importance", ["-1", "10.5", "nan"])
def test_new_refuses_importance_outside_0_to_10(run, root: Path, importance: str) -> None:
    """Fails if an importance the ranking does not expect is written."""
    result = run(root, "new", "user", "x", "--summary", "s", "--importance", importance)
    assert result.exit_code == 2
    assert "importance" in result.stderr
    assert not (root / "memory/user_x.md").exists()


@pytest.mark.parametrize("summary", [
    'Deploy: run "make ship" first',
    "it's 'quoted' # not a comment",
    "- starts like a list item",
    "yes",
    "0001",
    "2026-07-30",
    "{braces}: [brackets] & *star @at `tick` |pipe >gt %pct !bang",
    "ünïcødé — dash “curly” 😀",
    "ends with colon:",
])
def test_new_round_trips_a_tricky_summary(run, root: Path, summary: str) -> None:
    """Fails if a summary is written unquoted where YAML would read something else (or nothing)."""
    assert run(root, "new", "reference", "tricky", "--summary", summary).exit_code == 0
    parsed = parse_bytes((root / "memory/reference_tricky.md").read_bytes(), "reference_tricky",
                         Config(), is_t2=True)
    assert parsed.summary == summary
    assert parsed.problems == []


# ---------------------------------------------------------------- bug add / list / close


def test_a_bug_filed_in_one_run_is_listed_in_the_next_with_filer_and_date(
        run, root: Path, monkeypatch) -> None:
    """Fails if the list is scoped to the run (or process) that filed, or loses who filed it and
    when."""
    monkeypatch.delenv("MEMSTORE_FILED_BY", raising=False)
    added = run(root, "bug", "add", "Flush: skips 'quoted' files", "--body", "Seen on a CRLF file.")
    assert added.exit_code == 0, added.stderr
    shape = r"filed bug (0001-[0-9a-f]{3}): memory/bugs/\1-flush-skips-quoted-files\.md"
    assert re.fullmatch(shape, added.stdout.strip())
    # the next run: a new process clock, a new Store
    later = Store(root, now=PINNED + dt.timedelta(days=40))
    [bug] = later.bug_list()
    import getpass
    import socket
    assert bug.filed_by == f"{getpass.getuser()}@{socket.gethostname()}"
    assert (num(bug.id), bug.title, bug.status, bug.filed_at) == \
        ("0001", "Flush: skips 'quoted' files", "open", NOW)
    assert bug.body == "Seen on a CRLF file." and bug.problems == []
    text = run(root, "bug", "list", "--now", "2027-01-01T00:00:00Z").stdout
    assert "0001" in text and "2026-07-30" in text and getpass.getuser() in text


def test_filed_by_comes_from_by_else_the_environment(run, root: Path, monkeypatch) -> None:
    """Fails if --by or $MEMSTORE_FILED_BY is ignored."""
    monkeypatch.setenv("MEMSTORE_FILED_BY", "plan-7")
    run(root, "bug", "add", "one")
    run(root, "bug", "add", "two", "--by", "session abc")
    listed = [(num(b["id"]), b["filed_by"]) for b in bugs_json(run, root)]
    assert listed == [("0001", "plan-7"), ("0002", "session abc")]


def test_an_old_bug_filed_by_someone_else_is_listed(run, root: Path) -> None:
    """Fails if the list filters by filer, age or run: a bug from another plan two years ago stays
    listed."""
    write(root, "memory/bugs/0007-old.md",
          "---\nid: '0007'\ntitle: OLDBUG render drops pins\nstatus: open\n"
          "filed_at: 2024-03-01T09:00:00Z\nfiled_by: plan-3 (someone else)\n---\nStill there.\n")
    run(root, "bug", "add", "new one", "--by", "me")
    listed = bugs_json(run, root)
    assert [(num(b["id"]), b["filed_by"], b["filed_at"]) for b in listed] == [
        ("0007", "plan-3 (someone else)", "2024-03-01T09:00:00Z"), ("0008", "me", NOW)]
    assert "OLDBUG" in context(root)


def test_closed_bugs_are_listed_only_with_all(run, root: Path) -> None:
    """Fails if a closed bug shows in the default list, or --all hides it."""
    for title in ("first", "second", "third"):
        run(root, "bug", "add", title, "--by", "me")
    assert run(root, "bug", "close", "2", "--why", "fixed").exit_code == 0
    assert [num(b["id"]) for b in bugs_json(run, root)] == ["0001", "0003"]
    assert [(num(b["id"]), b["status"]) for b in bugs_json(run, root, "--all")] == [
        ("0001", "open"), ("0002", "closed"), ("0003", "open")]
    assert "second" not in context(root)
    run(root, "bug", "close", "1")
    run(root, "bug", "close", "3")
    assert run(root, "bug", "list").stdout.startswith("no open bugs")


def test_close_edits_only_status_closed_at_and_why(run, root: Path) -> None:
    """Fails if closing rewrites the file: reorders keys, drops a comment, or touches the body."""
    original = ("---\nid: '0004'   # kept\ntitle: \"Render: drops pins\"\nstatus: open\n"
                "filed_at: 2026-01-02T03:04:05Z\nfiled_by: plan-2\nextra: [a, b]\n---\n\n"
                "Body line one.\n\n  indented, trailing spaces   \n")
    path = write(root, "memory/bugs/0004-render-drops-pins.md", original)
    result = run(root, "bug", "close", "0004-render-drops-pins.md", "--why", "fixed: in abc123")
    assert result.exit_code == 0, result.stderr
    expected = original.replace("status: open\n", "status: closed\n").replace(
        "extra: [a, b]\n", f'extra: [a, b]\nclosed_at: {NOW}\nwhy: "fixed: in abc123"\n')
    assert path.read_text() == expected


@pytest.mark.parametrize("key", ["3", "0003", "#3", "ID", "NAME.md", "NAME", "memory/bugs/NAME.md"])
def test_close_accepts_the_id_in_any_form(run, root: Path, key: str) -> None:
    """Fails if 1, 0001, the whole id (0003-3f9) or the file name does not name the bug."""
    for title in ("first", "second", "third"):
        run(root, "bug", "add", title, "--by", "me")
    third = next((root / "memory/bugs").glob("0003-*-third.md"))
    key = key.replace("NAME", third.stem).replace("ID", third.stem.rsplit("-", 1)[0])
    assert run(root, "bug", "close", key).exit_code == 0
    assert [num(b["id"]) for b in bugs_json(run, root)] == ["0001", "0002"]


def test_closing_a_closed_or_unknown_bug_is_a_clear_error(run, root: Path) -> None:
    """Fails if a second close silently rewrites closed_at, or an unknown id exits 0 or
    tracebacks."""
    run(root, "bug", "add", "only", "--by", "me")
    assert run(root, "bug", "close", "1", "--why", "first").exit_code == 0
    path = next((root / "memory/bugs").glob("0001-*-only.md"))
    before = path.read_bytes()
    again = run(root, "bug", "close", "1", "--why", "second", "--now", "2027-01-01T00:00:00Z")
    assert again.exit_code == 1 and again.stderr.startswith("memstore: error: bug 0001-")
    assert "is already closed" in again.stderr
    assert path.read_bytes() == before
    unknown = run(root, "bug", "close", "42")
    assert unknown.exit_code == 1 and unknown.stderr.startswith("memstore: error: no bug '42'")


def _add_many(root: str, who: str, count: int, tight: bool) -> None:
    import time

    if tight:  # adds back to back: no mirror sync between them, so the id-picking windows overlap
        Store._sync_written = lambda self, rel: None  # type: ignore[method-assign]
    store = Store(root)
    go = Path(root) / "go"
    while not go.exists():  # both processes start adding at the same moment
        time.sleep(0.001)
    for i in range(count):
        store.bug_add(f"{who} bug {i}", by=who)


@pytest.mark.parametrize("tight", [True, False], ids=["back-to-back", "with-sync"])
def test_concurrent_adds_never_collide(root: Path, tight: bool) -> None:
    """Fails if the next id is picked outside the lock: two processes would take the same id."""
    code = ("import sys; from tests.test_ledgers import _add_many; "
            "_add_many(sys.argv[1], sys.argv[2], 10, sys.argv[3] == '1')")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(root), who, "1" if tight else "0"],
                              env=env, stderr=subprocess.PIPE) for who in ("alpha", "beta")]
    import time
    time.sleep(1.0)  # let both import and wait at the gate
    (root / "go").touch()
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    bugs = Store(root).bug_list()
    assert len(bugs) == 20
    assert sorted(num(b.id) for b in bugs) == [f"{n:04d}" for n in range(1, 21)]
    assert len({b.path for b in bugs}) == 20
    assert sum(b.filed_by == "alpha" for b in bugs) == 10


def test_a_malformed_bug_file_is_listed_with_a_problem_note(run, root: Path) -> None:
    """Fails if one bad file crashes the list or vanishes from it (a vanished bug reads as
    fixed)."""
    write(root, "memory/bugs/0001-no-front.md", "Just a line about flaky sync\n")
    write(root, "memory/bugs/0002-bad-yaml.md", "---\ntitle: [unclosed\nstatus: open\n---\nbody\n")
    write(root, "memory/bugs/0003-binary.md", b"---\ntitle: caf\xe9 \xff\nstatus: open\n---\n")
    write(root, "memory/bugs/0004-odd-status.md", "---\ntitle: odd\nstatus: wontfix\n---\n")
    result = run(root, "bug", "list")
    assert result.exit_code == 0, result.stderr
    listed = bugs_json(run, root)
    assert [num(b["id"]) for b in listed] == ["0001", "0002", "0003", "0004"]
    assert all(b["problems"] for b in listed)
    assert listed[0]["title"] == "Just a line about flaky sync"
    assert "not valid UTF-8" in " ".join(listed[2]["problems"])
    assert "0003-binary.md" in result.stderr


def test_an_unreadable_ledger_folder_is_an_error_not_an_empty_list(run, root: Path) -> None:
    """Fails if bug list answers 'no open bugs' when it could not look."""
    write(root, "memory/bugs", "not a folder")  # cannot be listed, even by root
    result = run(root, "bug", "list")
    assert result.exit_code == 1
    assert "could not be read" in result.stderr and "no open bugs" not in result.stdout


# ---------------------------------------------------------------- the bundle


def test_the_bundle_carries_every_open_bug_with_filer_and_date(root: Path) -> None:
    """Fails if the bundle shows only the latest bugs, or one filer's, or loses who filed and
    when."""
    for n in range(1, 31):
        status = "closed" if n % 10 == 0 else "open"
        write(root, f"memory/bugs/{n:04d}-b.md",
              f"---\nid: '{n:04d}'\ntitle: \"BUG{n}X: thing\"\nstatus: {status}\n"
              f"filed_at: 20{20 + n % 6}-0{1 + n % 9}-01T00:00:00Z\nfiled_by: plan-{n}\n---\n")
    text = context(root)
    for n in range(1, 31):
        shown = f"BUG{n}X" in text
        assert shown == (n % 10 != 0), n
    assert (f"- 0017 BUG17X: thing (filed 20{20 + 17 % 6}-0{1 + 17 % 9}-01 by plan-17; "
            "bugs/0017-b.md)") in text


def test_an_empty_ledger_says_nothing_and_a_broken_one_says_so(root: Path) -> None:
    """Fails if an undecodable bug file silently disappears from the bundle (an empty-looking
    ledger)."""
    (root / "memory/bugs").mkdir()
    assert "could not be read" not in context(root)
    write(root, "memory/bugs/0001-fine.md", "---\ntitle: FINEBUG\nstatus: open\n---\n")
    write(root, "memory/bugs/0002-broken.md", b"---\ntitle: \xff\xfe broken\n---\n")
    text = context(root)
    assert "FINEBUG" in text
    assert ("(the bug ledger could not be read: 0002-broken.md: not valid UTF-8; run memstore "
            "bug list)") in text


def test_the_unreadable_ledger_note_survives_a_full_budget(root: Path) -> None:
    """Fails if the budget drops the ledger's failure note like any other entry."""
    lines = "".join(f"- [project_{i}](project_{i}.md): " + "w " * 200 + "\n" for i in range(80))
    write(root, "memory/current-state.md", "# In flight\n\n" + lines)
    write(root, "memory/bugs", "not a folder")
    text = context(root)
    assert len(text) <= Config().context_budget
    assert "(the bug ledger could not be read:" in text


def test_a_bug_folder_that_cannot_be_listed_says_so(root: Path, run) -> None:
    """Fails if an error listing memory/bugs yields an empty-looking bundle or list.

    The folder is made unlistable by a file in its place (NotADirectoryError): chmod 000
    would not stop root, which is who CI runs as; the same OSError branch handles both.
    """
    write(root, "memory/bugs", "not a folder")
    text = context(root)
    assert "the bug ledger could not be read" in text and "run memstore bug list" in text
    result = run(root, "bug", "list")
    assert result.exit_code == 1 and "Traceback" not in result.output


def test_too_many_bugs_for_the_budget_says_how_many_are_not_shown(root: Path) -> None:
    """Fails if bugs cut by the budget are dropped without a word."""
    for n in range(1, 301):
        write(root, f"memory/bugs/{n:04d}-b.md",
              f"---\ntitle: bug {n} " + "long " * 20 + "\nstatus: open\n---\n")
    text = context(root)
    assert len(text) <= Config().context_budget
    assert "open bugs not shown for space: run memstore bug list" in text


def test_the_bundle_labels_lessons_and_leaves_out_bookkeeping(root: Path) -> None:
    """Fails if a lesson is not marked as one (an unreviewed one until the person accepts it), or
    the engine's own bookkeeping is echoed back as knowledge."""
    write(root, "memory/short-term/260729-rule.md",
          "---\nkind: lesson\n---\nLESSONMARK never retry flock\n")
    write(root, "memory/short-term/260729-fact.md",
          "---\ncreated: 2026-07-29\n---\nFACTMARK plain\n")
    write(root, "memory/short-term/260729-wake-proposals.md",
          "---\nkind: wake-proposals\n---\nPROPOSALMARK\n")
    write(root, "memory/short-term/260729-tick.md",
          "---\nkind: bookkeeping\n---\nTICKMARK synced 40 files\n")
    write(root, "runtime/state/tick-status.json", '{"sync": "RUNTIMEMARK"}')
    write(root, "runtime/journal/2026-07-29.jsonl", '{"path": "JOURNALMARK"}\n')
    text = context(root)
    assert "### 260729-rule.md (unreviewed lesson" in text and "LESSONMARK" in text
    assert "### 260729-fact.md\nFACTMARK" in text
    assert "PROPOSALMARK" in text
    for marker in ("TICKMARK", "RUNTIMEMARK", "JOURNALMARK"):
        assert marker not in text, marker


def test_an_undecodable_bug_file_still_counts_for_the_next_id(run, root: Path) -> None:
    """Fails if one unreadable bug file blocks every add, or its number is handed out again."""
    write(root, "memory/bugs/0005-broken.md", b"---\ntitle: \xff\n---\n")
    result = run(root, "bug", "add", "next", "--by", "me")
    assert result.exit_code == 0, result.stderr
    assert re.fullmatch(r"filed bug (0006-[0-9a-f]{3}): memory/bugs/\1-next\.md",
                        result.stdout.strip())

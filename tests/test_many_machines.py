"""One agent root in git on several machines: journals that never collide, late events that count,
one flusher.

Real git: a bare repository and two clones, pushed and pulled in the unlucky order; the
CLI as a person runs it, each clone with its own MEMSTORE_HOST (and once with the same
one, as two containers or two cloud images would have). Then a hypothesis test shuffles
the arrival of events from three machines across flushes and holds the result to a
replay of every event from scratch.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstore import Store
from tests.clones import DAY0, DAY1, DAY2, DAY3, MEMORY, ms, ok, shared_root
from tests.helpers import git, memory, write


def this_machine(root: Path, host: str) -> str:
    return json.loads(ok(ms(root, host, DAY0, "status", "--json")))["journal"]["this_machine"]


@pytest.mark.parametrize("hosts", [("laptop", "desktop"), ("localhost", "localhost")],
                         ids=["own-names", "one-name"])
def test_two_clones_converge_with_every_spaced_read_counted_and_no_conflict(
    tmp_path: Path, hosts: tuple[str, str]
) -> None:
    # Failures caught: two clones writing the same journal file (a merge of two versions
    # of one file on the first pull), and a read made before a flush but arriving after it
    # ignored (access_count 1 instead of 2 on both machines, with nothing said).
    host_a, host_b = hosts
    _, a, b = shared_root(tmp_path)
    ok(ms(b, host_b, DAY0, "touch", MEMORY))  # the desktop reads it on day 0, and does not push yet
    ok(ms(a, host_a, DAY1, "touch", MEMORY))  # the laptop reads it on day 1
    identity_a, identity_b = this_machine(a, host_a), this_machine(b, host_b)
    assert identity_a != identity_b
    (a / "memstore.toml").write_text(f'flush_host = "{identity_a}"\n')
    # the laptop is the flushing machine: it folds its read in
    ok(ms(a, host_a, DAY2, "flush", "--force"))
    assert "access_count: 1" in (a / MEMORY).read_text()
    git(a, "add", "-A")
    git(a, "commit", "-m", "laptop: flush")
    git(a, "push")

    # The desktop commits its journal (the day-0 read, older than the laptop's flush) and
    # pulls: a real merge of two histories, which must need no hand.
    git(b, "add", "-A")
    git(b, "commit", "-m", "desktop: journal")
    merged = git(b, "pull", "--no-rebase")  # a failed merge fails here, saying git's words
    assert "CONFLICT" not in merged, merged
    # It is not the flushing machine: its flush is refused, naming the one that is.
    refused = ms(b, host_b, DAY2, "flush", "--force")
    assert (refused.returncode == 1 and identity_a in refused.stderr
            and "Traceback" not in refused.stderr)
    git(b, "push")
    git(a, "pull", "--no-rebase")
    journals = sorted(p.name for p in (a / "runtime" / "journal").glob("*.jsonl"))
    assert (len(journals) == 2
            and journals == sorted(p.name for p in (b / "runtime" / "journal").glob("*.jsonl")))

    for root, host in ((a, host_a), (b, host_b)):
        ok(ms(root, host, DAY3, "sync"))
    lists = [json.loads(ok(ms(root, host, DAY3, "list", "--json")))
             for root, host in ((a, host_a), (b, host_b))]
    assert lists[0] == lists[1]
    shared = next(row for row in lists[0] if row["path"] == MEMORY)
    assert shared["access_count"] == 2  # day 0 (desktop) and day 1 (laptop): both spaced reads

    for root, host in ((a, host_a), (b, host_b)):
        ok(ms(root, host, DAY3, "render"))
    assert (a / "memory" / "MEMORY.md").read_bytes() == (b / "memory" / "MEMORY.md").read_bytes()

    # The next flush writes the late read into the file, and both machines still agree.
    ok(ms(a, host_a, DAY3, "flush", "--force"))
    assert "access_count: 2" in (a / MEMORY).read_text()
    git(a, "add", "-A")
    git(a, "commit", "-m", "laptop: flush again")
    git(a, "push")
    git(b, "pull", "--no-rebase")
    after = [json.loads(ok(ms(root, host, DAY3, "list", "--json")))
             for root, host in ((a, host_a), (b, host_b))]
    assert after[0] == after[1] == lists[0]


def test_status_names_each_machine_and_its_newest_event(tmp_path: Path) -> None:
    # Failure caught: a machine that stopped syncing goes unnoticed (its reads never arrive).
    _, a, b = shared_root(tmp_path)
    ok(ms(b, "desktop", DAY0, "touch", MEMORY))
    ok(ms(a, "laptop", DAY0, "touch", MEMORY))
    ok(ms(a, "laptop", DAY1, "touch", MEMORY))
    git(b, "add", "-A")
    git(b, "commit", "-m", "desktop: journal")
    git(b, "push")
    git(a, "pull", "--no-rebase")
    view = json.loads(ok(ms(a, "laptop", DAY2, "status", "--json")))["journal"]
    machines = {m["host"]: m for m in view["machines"]}
    assert set(machines) == {"laptop", "desktop"}
    assert machines["desktop"]["newest"] == DAY0 and machines["laptop"]["newest"] == DAY1
    assert (machines["desktop"]["events"], machines["laptop"]["events"]) == (1, 2)
    assert machines["laptop"]["identity"] == view["this_machine"] and machines["laptop"]["this"]
    text = ok(ms(a, "laptop", DAY2, "status"))
    assert "desktop" in text and DAY0 in text


def test_the_clone_identity_is_made_once_and_kept_out_of_git(tmp_path: Path) -> None:
    # Failure caught: an identity that changes between commands (a new journal file each
    # time) or that travels in git (the second machine would inherit the first's).
    _, a, _ = shared_root(tmp_path)
    first = this_machine(a, "laptop")
    assert this_machine(a, "laptop") == first and first.startswith("laptop-")
    ok(ms(a, "laptop", DAY1, "touch", MEMORY))
    assert [p.name for p in (a / "runtime" / "journal").glob("*.jsonl")] == [
        f"{first}-20260711.jsonl"]
    tracked = git(a, "status", "--porcelain", "--ignored")
    # ignored, never offered to commit
    assert "runtime/state" not in tracked.replace("!! runtime/", "")


# ---------------------------------------------------------------- hypothesis: any arrival order

HOSTS = ("h1-aaaaaa", "h2-bbbbbb", "h3-cccccc")
PATHS = ("memory/project_alpha.md", "memory/feedback_beta.md", "memory/reference_gamma.md")
START = dt.datetime(2026, 6, 1, 8, 0, tzinfo=dt.UTC)
END = dt.datetime(2026, 7, 15, 9, 0, tzinfo=dt.UTC)


def lay_out(root: Path) -> None:
    write(root, PATHS[0], memory("project_alpha", "Alpha", "A."))
    write(root, PATHS[1], memory("feedback_beta", "Beta", "B.", access_count=3, stability=20.0))
    # Flushed by a version before policy_base: its fields hold every event up to last_accessed.
    write(root, PATHS[2], memory("reference_gamma", "Gamma", "C.", access_count=2, stability=30.0,
                                 last_accessed="2026-06-11T08:00:00Z",
                                 last_reinforced="2026-06-11T08:00:00Z"))


def arrive(root: Path, event: dict[str, Any]) -> None:
    folder = root / "runtime" / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{event['host']}-{event['ts'][:10].replace('-', '')}.jsonl"
    with open(folder / name, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(event, sort_keys=True) + "\n")


def state(store: Store) -> dict[str, tuple[Any, ...]]:
    return {r.path: (r.access_count, r.stability, r.last_accessed, r.last_reinforced)
            for r in store.list()}


events_strategy = st.lists(
    st.tuples(st.sampled_from(HOSTS), st.sampled_from(PATHS), st.integers(0, 60 * 24 * 40)),
    min_size=1, max_size=12
)


@given(drawn=events_strategy, data=st.data())
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_arrival_order_across_flushes_gives_the_state_of_a_replay_from_scratch(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[tuple[str, str, int]], data: st.DataObject
) -> None:
    # Failure caught: a checkpoint that cannot absorb an event older than the last flush
    # (or applies one twice), so the state depends on the order journals arrived in.
    events = [
        {"id": f"{host}-{i:03}",
         "ts": (START + dt.timedelta(minutes=minute)).strftime("%Y-%m-%dT%H:%M:%SZ"),
         "path": path, "tool": "Read", "session": None, "host": host}
        for i, (host, path, minute) in enumerate(drawn)
    ]
    order = data.draw(st.permutations(events), label="arrival order")
    flush_after = data.draw(st.lists(st.booleans(), min_size=len(events), max_size=len(events)),
                            label="flushes")
    base = tmp_path_factory.mktemp("arrivals")
    root = base / "agent"
    lay_out(root)
    store = Store(root, now=END)
    store.sync()
    for event, flush in zip(order, flush_after, strict=True):
        arrive(root, event)
        if flush:
            store.flush(force=True)
    store.sync()

    scratch = base / "scratch"
    lay_out(scratch)
    for event in events:
        arrive(scratch, event)
    expected = Store(scratch, now=END)
    expected.rebuild()
    assert state(store) == state(expected)
    # And once both are flushed, the files say the same.
    store.flush(force=True)
    expected.flush(force=True)
    for path in PATHS:
        mine = Store(root, now=END).show(path)
        theirs = Store(scratch, now=END).show(path)
        assert (mine.access_count, mine.stability, mine.last_accessed) == (
            theirs.access_count, theirs.stability, theirs.last_accessed)
    shutil.rmtree(base, ignore_errors=True)


def test_a_file_flushed_before_policy_base_keeps_its_cut_through_its_first_new_flush(
    tmp_path: Path,
) -> None:
    # Failure caught: the first flush of this version writing a policy_base that forgets the
    # old checkpoint: reads already folded into the file's fields would then count twice.
    root = tmp_path / "agent"
    lay_out(root)
    # either side of gamma's last_accessed
    before, after = "2026-06-05T08:00:00Z", "2026-06-20T08:00:00Z"
    for i, ts in enumerate((before, after)):
        arrive(root,
               {"id": f"h1-aaaaaa-{i}", "ts": ts, "path": PATHS[2], "tool": "Read", "session": None,
                "host": "h1-aaaaaa"})
    store = Store(root, now=END)
    replayed = state(store)[PATHS[2]]
    # the day-5 read is inside the file's count already; the day-20 one adds one
    assert replayed[0] == 3
    store.flush(force=True)
    text = (root / PATHS[2]).read_text()
    assert ('policy_base: "2 30.0 2026-06-11T08:00:00Z 2026-06-11T08:00:00Z '
            '2026-06-11T08:00:00Z"' in text)
    assert state(Store(root, now=END))[PATHS[2]] == replayed
    for leftover in (root / "runtime").glob("memstore.db*"):
        leftover.unlink()
    assert state(Store(root, now=END))[PATHS[2]] == replayed  # and from the files and journal alone


def test_the_nightly_tick_on_a_clone_that_does_not_flush_skips_the_flush_and_says_why(
        tmp_path: Path) -> None:
    # Failure caught: every machine's nightly tick flushing, so two clones rewrite the same
    # policy lines with different values and the next pull stops on a merge conflict.
    import time

    root = tmp_path / "agent"
    lay_out(root)
    (root / "memstore.toml").write_text('flush_host = "elsewhere-0badc0de"\n')
    arrive(root, {"id": "h1-x", "ts": "2026-07-01T08:00:00Z", "path": PATHS[0], "tool": "Read",
                  "session": None, "host": "h1-aaaaaa"})
    quiet = time.time() - 86400  # nobody is mid-session: only flush_host can stop the flush
    for path in (root / "memory").glob("*.md"):
        os.utime(path, (quiet, quiet))
    before = {p: (root / p).read_bytes() for p in PATHS}
    status = Store(root, now=dt.datetime.now(dt.UTC)).tick()
    assert not status.live_session
    assert status.flush.startswith("skipped: flush_host is 'elsewhere-0badc0de' in memstore.toml")
    assert {p: (root / p).read_bytes() for p in PATHS} == before
    cue = json.loads((root / "runtime" / "state" / "cue.json").read_text())
    assert cue["did"]["flush"] == status.flush
    # the read still counts, in the mirror
    assert Store(root, now=END).show(PATHS[0]).access_count == 1


def journal_root(tmp_path: Path, toml: str = "") -> Path:
    """A root whose journal holds reads from two machines that share the host name "vm"."""
    root = tmp_path / "agent"
    lay_out(root)
    if toml:
        (root / "memstore.toml").write_text(toml)
    for i, ident in enumerate(("vm-11111111", "vm-22222222")):
        arrive(root, {"id": f"e{i}", "ts": f"2026-07-0{i + 1}T08:00:00Z", "path": PATHS[0],
                      "tool": "Read", "session": None, "host": ident})
    return root


@pytest.mark.parametrize(("toml", "expected"), [
    ("", "journals from 3 machines and no flush_host"),
    ('flush_host = "vm-1111111"\n',
     "flush_host 'vm-1111111' names none of the machines whose journals"),
    ('flush_host = "vm"\n', "flush_host 'vm' names 2 machines (vm-11111111, vm-22222222)"),
])
def test_status_and_tick_say_when_nobody_or_more_than_one_machine_flushes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, expected: str
) -> None:
    # Failures caught (each seen in a walkthrough): two machines flushing in silence until
    # git stops on a conflict; a one-character typo in flush_host that stops every flush;
    # a host name shared by containers that lets all of them flush.
    monkeypatch.setenv("MEMSTORE_HOST", "laptop")
    root = journal_root(tmp_path, toml)
    notes: list[str] = []
    store = Store(root, now=END, notify=notes.append)
    warnings = store.status().journal["warnings"]
    assert any(w.startswith(expected) for w in warnings), warnings
    if "vm-1111111'" in expected:
        assert any("did you mean 'vm-11111111'?" in w for w in warnings)
    store.tick()
    assert any(n.startswith(expected) for n in notes), notes
    assert json.loads((root / "runtime" / "state" / "cue.json").read_text())["did"]["warnings"] == [
        w for w in warnings if "journal file" not in w]


def test_status_lists_this_machine_before_it_has_read_anything(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMSTORE_HOST", "laptop")
    root = journal_root(tmp_path, 'flush_host = "vm-11111111"\n')
    view = Store(root, now=END).status().journal
    mine = [m for m in view["machines"] if m["this"]]
    assert len(mine) == 1 and mine[0]["events"] == 0 and mine[0]["identity"] == view["this_machine"]
    assert view["flush_host"] == "vm-11111111" and view["this_machine_flushes"] is False
    assert {m["identity"]: m["days_since"] for m in view["machines"] if not m["this"]} == {
        "vm-22222222": 13.0, "vm-11111111": 14.0}


def test_a_merge_conflict_in_a_memory_is_named_as_one_by_lint(root: Path) -> None:
    # Failure caught: lint saying only "frontmatter is not valid YAML", which does not
    # tell a person that a pull left conflict markers to resolve.
    write(root, "memory/project_x.md",
          "---\nname: project_x\n<<<<<<< HEAD\naccess_count: 2\n=======\n"
          "access_count: 3\n>>>>>>> origin/main\n---\nBody.\n")
    problems = [p.message for p in Store(root).lint() if p.path == "memory/project_x.md"]
    assert problems and problems[0].startswith("unresolved git merge conflict")


def test_deleting_runtime_whole_is_caught_before_the_next_commit(tmp_path: Path) -> None:
    # Failures caught: `rm -rf runtime` in a clone, then `git add -A`: the mirror and the
    # clone id committed for every machine, and the journal's deletion pushed to all.
    _, a, _ = shared_root(tmp_path)
    ok(ms(a, "laptop", DAY1, "touch", MEMORY))
    git(a, "add", "-A")
    git(a, "commit", "-m", "journal")
    shutil.rmtree(a / "runtime")
    done = ms(a, "laptop", DAY2, "status")
    assert done.returncode == 0
    assert "journal file(s) git tracks are missing here" in done.stderr
    assert "git checkout -- runtime/journal" in done.stderr
    # put back by the rebuild the missing mirror caused
    assert (a / "runtime" / ".gitignore").exists()
    staged = git(a, "add", "-A", "--dry-run")
    assert "memstore.db" not in staged and "clone-id" not in staged

"""Issue 31: a memory the agent makes with Write has a birth and a project; a broken frontmatter
keeps the file's last good values and is said every time until mended; an expired memory is not
"Superseded"; search shows the score its order comes from."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import sqlite3
from pathlib import Path

from memstore import Store
from memstore.hook.handler import main as hook_main
from memstore.mirror.search import rank_scores
from tests.helpers import git_project, memory, write

NOW = "2026-07-30T12:00:00Z"
PINNED = dt.datetime(2026, 7, 30, 12, 0, tzinfo=dt.UTC)
# older than flush's quiet minutes
EARLIER = dt.datetime(2026, 7, 30, 10, 0, tzinfo=dt.UTC).timestamp()


def post_write(root: Path, file: Path, cwd: Path, kind: str | None) -> None:
    """The PostToolUse Claude Code sends after a Write; its tool_response says create or update."""
    payload: dict[str, object] = {"hook_event_name": "PostToolUse", "session_id": "s1",
                                  "cwd": str(cwd), "tool_name": "Write",
                                  "tool_input": {"file_path": str(file), "content": "x"}}
    if kind is not None:
        payload["tool_response"] = {"type": kind, "filePath": str(file)}
    assert hook_main(["--root", str(root), "--now", NOW],
                     stdin=io.BytesIO(json.dumps(payload).encode()), stdout=io.StringIO()) == 0


def mirror_row(root: Path, rel: str) -> tuple[object, ...]:
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    try:
        return conn.execute("SELECT created, json_extract(meta, '$.project'), adopted, importance "
                            "FROM files WHERE path = ?", (rel,)).fetchone()
    finally:
        conn.close()


def band_of(store: Store, rel: str) -> str:
    return next(row.band for row in store.list() if row.path == rel)


WRITTEN = ("---\nname: project_deploy-steps\ntype: project\nsummary: how we deploy\n---\n\n"
           "# Deploy\n\nSteps.\n")


def test_a_memory_made_with_write_is_born_in_its_project_and_flush_writes_that_in(
        root: Path) -> None:
    """Failure caught (issue 31 item 3): a memory the agent wrote with Write had no birth and no
    project: person-wide, never in New, "Created: never" in the inspector; and a rebuild or a flush
    lost what the hook saw. Also: a flush that wrote over what the agent wrote, or changed any other
    byte."""
    project = git_project(Path(os.environ["HOME"]) / "code" / "projA",
                          "git@example.com:me/proja.git")
    # Hot holds nothing: a newborn goes to New, or to Cold
    write(root, "memstore.toml", "hot_budget = 10\n")
    store = Store(root, now=PINNED)
    store.sync()
    file = write(root, "memory/project_deploy-steps.md", WRITTEN)
    os.utime(file, (EARLIER, EARLIER))
    post_write(root, file, project, "create")
    rel = "memory/project_deploy-steps.md"
    assert band_of(store, rel) == "new"  # a quick sync (list's) sees the new file and its birth
    assert mirror_row(root, rel)[:2] == ("2026-07-30", "example.com/me/proja")
    assert store.show(rel).created == "2026-07-30"  # what the inspector's "Created" reads
    store.rebuild()  # the birth is in the journal, not only in the mirror
    assert mirror_row(root, rel)[:3] == ("2026-07-30", "example.com/me/proja",
                                         '{"created": "2026-07-30", "project": '
                                         '"example.com/me/proja"}')
    flushed = store.flush()
    assert flushed.written == [rel]
    text = file.read_text()
    assert text.startswith(WRITTEN.split("\n---\n")[0] + "\n")  # the agent's lines first, untouched
    assert "\ncreated: 2026-07-30\n" in text and '\nproject: "example.com/me/proja"\n' in text
    assert text.endswith("---\n\n# Deploy\n\nSteps.\n")
    store.sync()
    # the file says it now
    assert mirror_row(root, rel)[:3] == ("2026-07-30", "example.com/me/proja", None)
    before = file.read_bytes()
    os.utime(file, (EARLIER, EARLIER))
    store.sync()
    assert store.flush().written == [] and file.read_bytes() == before


def test_a_write_over_an_existing_memory_is_no_birth_and_what_the_agent_wrote_wins(
        root: Path) -> None:
    """Failure caught: a Write that replaces a memory (tool_response "update") counted as a new
    birth and moved it into New; a birth's project written over the `project:` the agent gave."""
    project = git_project(Path(os.environ["HOME"]) / "code" / "projA",
                          "git@example.com:me/proja.git")
    old = write(root, "memory/feedback_old.md", memory("feedback_old", "an old rule",
                                                       created="2026-01-02"))
    os.utime(old, (EARLIER, EARLIER))
    store = Store(root, now=PINNED)
    store.sync()
    post_write(root, old, project, "update")
    assert mirror_row(root, "memory/feedback_old.md")[:3] == ("2026-01-02", None, None)
    assert band_of(store, "memory/feedback_old.md") != "new"
    theirs = write(root, "memory/feedback_theirs.md", memory("feedback_theirs", "a rule",
                                                             project="elsewhere"))
    os.utime(theirs, (EARLIER, EARLIER))
    post_write(root, theirs, project, "create")
    store.sync()
    assert mirror_row(root, "memory/feedback_theirs.md")[:3] == ("2026-07-30", "elsewhere",
                                                                 '{"created": "2026-07-30"}')
    store.flush()
    text = theirs.read_text()
    assert "project: elsewhere\n" in text and "proja" not in text and \
        "created: 2026-07-30\n" in text


def test_broken_frontmatter_keeps_its_last_good_values_and_is_said_until_mended(
        root: Path, run) -> None:
    """Failure caught (issue 31 item 8): a frontmatter broken by hand was not seen by `lint` until a
    full sync, and the file silently lost its project and importance (person-wide, importance 0);
    nothing said it needed mending at the tick. Also: a flush or a sync that changed a byte of the
    broken file."""
    good = memory("project_export", "how the export runs", importance=7,
                  project="example.com/me/proja")
    file = write(root, "memory/project_export.md", good)
    os.utime(file, (EARLIER, EARLIER))  # not "racily clean": the quick sync trusts this stamp later
    store = Store(root, now=PINNED)
    store.sync()
    # broken in place (no folder changes, so only a full walk can see it): an unclosed flow sequence
    broken = good.replace("importance: 7", "importance: [7").replace(
        "Body text.", "Body text, now with NEWWORD.")
    file.write_text(broken)
    os.utime(file, (EARLIER + 60, EARLIER + 60))
    # the edit is not seen yet
    assert "NEWWORD" not in json.dumps([h.to_json() for h in store.search("NEWWORD", mode="fts")])
    linted = run(root, "lint")
    assert linted.exit_code == 1
    assert "needs mending" in linted.stdout and \
        "project example.com/me/proja" in linted.stdout, linted.stdout
    assert mirror_row(root, "memory/project_export.md")[1:] == ("example.com/me/proja", None, 7.0)
    hits = store.search("NEWWORD", mode="fts")
    assert [hit.path for hit in hits] == ["memory/project_export.md"]  # the new body is indexed
    assert hits[0].summary == "how the export runs"
    for _night in range(2):
        ticked = run(root, "tick")
        assert "memory/project_export.md: needs mending" in ticked.stderr, ticked.stderr
    assert file.read_text() == broken  # nothing of the file's text is lost, nor rewritten
    file.write_text(good)
    assert run(root, "lint").exit_code == 0
    assert "needs mending" not in run(root, "tick").stderr


def test_an_expired_memory_is_listed_as_expired_not_superseded(root: Path) -> None:
    """Failure caught (issue 31 item 8): a memory whose valid_until had passed was listed under
    "Superseded" in MEMORY-archive.md, as if another memory had replaced it."""
    write(root, "memory/project_sprint.md", memory("project_sprint", "this sprint's goal",
                                                   valid_until="2026-07-01"))
    write(root, "memory/project_plan.md", memory("project_plan", "the old plan",
                                                 status="superseded"))
    write(root, "memory/project_now.md", memory("project_now", "the current plan"))
    Store(root, now=PINNED).render()
    archive = (root / "memory" / "MEMORY-archive.md").read_text()
    superseded = archive.split("## Superseded\n", 1)[1].split("##", 1)[0]
    expired = archive.split("## Expired\n", 1)[1].split("##", 1)[0]
    assert "project_plan" in superseded and "project_sprint" not in superseded
    assert "project_sprint" in expired and "project_plan" not in expired


def test_search_scores_never_rise_down_the_list_and_the_order_stays(root: Path) -> None:
    """Failure caught (issue 31 item 8): search put this project's hits first but showed their own
    lower scores, so the score printed (and in --json) rose down the list."""
    project = git_project(Path(os.environ["HOME"]) / "code" / "projA",
                          "git@example.com:me/proja.git")
    write(root, "memory/project_theirs.md",
          memory("project_theirs", "deploy staging deploy staging deploy",
                 project="example.com/me/projb", body="deploy staging " * 5))
    write(root, "memory/project_mine.md", memory("project_mine", "a note that mentions deploy once",
                                                 project="example.com/me/proja",
                                                 body="Nothing else here at all."))
    write(root, "memory/project_other.md", memory("project_other", "deploy to staging",
                                                  project="example.com/me/projb"))
    store = Store(root, now=PINNED)
    store.sync()
    plain = store.search("deploy staging", mode="fts")
    assert plain[0].path != "memory/project_mine.md"  # on words alone it ranks below the others
    here = store.search("deploy staging", mode="fts", cwd=project)
    assert here[0].path == "memory/project_mine.md"  # this project's first, as before
    assert {hit.path for hit in here} == {hit.path for hit in plain}
    scores = [hit.score for hit in here]
    assert scores == sorted(scores, reverse=True), scores
    # the hits below keep the scores they had
    assert [h.score for h in here[1:]] == \
        [h.score for h in plain if h.path != "memory/project_mine.md"]


def test_rank_scores_lifts_each_stretch_by_one_constant() -> None:
    """Failure caught: a lift that flattened the differences inside a group, or reordered the
    list."""
    hits = [{"path": p, "score": s} for p, s in (("a", 2.0), ("b", 1.0), ("c", 5.0), ("d", 4.0),
                                                 ("e", 3.0))]
    lifted = rank_scores(hits)
    assert [h["path"] for h in lifted] == list("abcde")
    # just above 5.0, 1.0 apart as before
    assert [h["score"] for h in lifted] == [6.05, 5.05, 5.0, 4.0, 3.0]
    assert rank_scores(lifted) == lifted

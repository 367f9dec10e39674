"""Rows in the derived files are clean text, whatever bytes the memory files hold.

MEMORY.md is loaded into every session: a binary or garbled memory must not put control
bytes, U+FFFD, lone surrogates or bidi overrides there, and a file with nothing readable
still gets a row that says so.
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

from memstore.mirror.index_rows import NO_SUMMARY, make_row
from memstore.mirror.render import clean_text
from tests.helpers import memory, write

DERIVED = ("MEMORY.md", "MEMORY-archive.md", "current-state.md")
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
NORMAL_ROW = "- [feedback_normal](feedback_normal.md): Always run the tests before pushing."


def _unclean(text: str) -> list[str]:
    """Every character of `text` a derived file must not hold (the newline ending a row aside)."""
    bad = []
    for ch in text:
        if ch == "\n":
            continue
        if (unicodedata.category(ch) in ("Cc", "Cs") or ch in BIDI
            or ch in "\ufffd\ufffe\uffff\ufeff\u2028\u2029"):
            bad.append(ch)
    return bad


def _garbled_root(root: Path) -> None:
    blob = random.Random(7).randbytes(4000) + b"\x00\x00\xff\xfe\x1b[2J\x85\x9b"
    write(root, "memory/project_blob.md", blob)
    write(root, "memory/project_nul-front.md",
          b"---\nname: project_nul-front\n---\n\x00\x01\x02\x03\xef\xbf\xbd\x00\n")
    write(root, "memory/project_garbled-summary.md",
          '---\nname: project_garbled-summary\n'
          'summary: "\\x01\\x02\\ufffd\\ufffd\\x7f\\x9b\\u202e\\x00\\x1bok"\n'
          "---\nbody\n")
    write(root, "memory/feedback_dirty.md",
          '---\nname: feedback_dirty\n'
          'summary: "keep \\x07 this \\u202e text \\ufffd clean\\u2028and\\x85 tidy, '
          '\\x1b[31mplease and thank you very much"\nin_flight: true\n'
          'state: "migrating \\x00 the \\u2066db\\u2069\\x9b now"\n---\nbody\n')
    write(root, "memory/project_garbage-state.md",
          '---\nname: project_garbage-state\nsummary: fine\nin_flight: true\n'
          'state: "\\x01\\x02\\x03\\ufffd"\n---\n')
    write(root, "memory/reference_bad-utf8.md",
          b"# Invoice \xff notes for the quarterly close review\r\nmore\n")
    write(root, "memory/project_old-blob.md",
          '---\nname: project_old-blob\nstatus: superseded\n'
          'summary: "\\x00\\x01\\ufffd\\ufffd\\ufffd\\x02"\n---\n')
    write(root, "memory/project_empty.md", b"")
    write(root, "memory/feedback_sneaky\u202eevil\x07name.md", memory("feedback_x", "a summary"))
    write(root, "memory/feedback_normal.md",
          memory("feedback_normal", "Always run the tests before pushing."))


def test_derived_files_hold_only_clean_rows(run, root: Path) -> None:
    _garbled_root(root)
    result = run(root, "render")
    assert result.exit_code == 0, result.output + result.stderr

    texts = {}
    for name in DERIVED:
        raw = (root / "memory" / name).read_bytes()
        assert b"\x00" not in raw, name
        text = raw.decode("utf-8")  # strict: no lone surrogates can be in valid UTF-8
        assert not _unclean(text), (name, sorted(set(_unclean(text))))
        for line in text.split("\n"):
            if line.startswith("- ["):
                assert "  " not in line and line == line.strip(), (name, line)
        texts[name] = text
    index, archive, state = (texts["MEMORY.md"], texts["MEMORY-archive.md"],
                             texts["current-state.md"])
    rows = [line for text in (index, archive) for line in text.split("\n")
            if line.startswith("- [")]

    def row(filename: str) -> str:
        found = [r for r in rows if r.startswith(f"- [{filename[:-3]}]({filename})")]
        assert len(found) == 1, (filename, rows)
        return found[0]

    # Nothing readable: a row still shows the file exists, and says why it has no summary.
    for garbled in ("project_blob.md", "project_nul-front.md", "project_garbled-summary.md",
                    "project_old-blob.md", "project_empty.md"):
        assert row(garbled).endswith(f": {NO_SUMMARY}"), row(garbled)
    assert "project_old-blob" in archive.split("## Superseded")[1]
    # Readable text with some garbage in it: the garbage goes, the words stay.
    assert row("feedback_dirty.md").endswith(
        ": keep this text clean and tidy, [31mplease and thank you very much"), (
        row("feedback_dirty.md"))
    assert row("reference_bad-utf8.md").endswith(": Invoice notes for the quarterly close review")
    # A file name with a control and a bidi override is spelled out, not passed through.
    assert row("feedback_sneaky\\u202eevil\\x07name.md").endswith(": a summary")
    # current-state.md: the in-flight states, cleaned the same way.
    assert "- [feedback_dirty](feedback_dirty.md): migrating the db now\n" in state
    assert ("- [project_garbage-state](project_garbage-state.md): (no readable state: run "
            "memstore lint)\n" in state)
    # A normal file's row is exactly what it always was.
    assert NORMAL_ROW + "\n" in index


def test_clean_text_and_rows() -> None:
    assert clean_text("Always run the tests before pushing.") == (
        "Always run the tests before pushing.")
    assert clean_text("  spaced \t out\n text ") == "spaced out text"
    assert clean_text("lone \ud800 surrogate and \udcff one") == "lone surrogate and one"
    assert clean_text("\ufffd\ufffd\x00\x01 ab") == ""  # mostly garbage
    assert clean_text("") == "" and clean_text("\u202e\u2066") == ""
    assert make_row("feedback_normal", "feedback_normal.md",
                    "Always run the tests before pushing.") == NORMAL_ROW
    assert make_row("feedback_a", "feedback_a.md", "") == (
        f"- [feedback_a](feedback_a.md): {NO_SUMMARY}")
    assert make_row("project_\udcff", "project_\udcff.md", "x\ud800 y z w") == \
        "- [project_\\udcff](project_\\udcff.md): x y z w"
    row = make_row("feedback_a\nb", "feedback_a\nb.md", "s")
    assert "\n" not in row and row == "- [feedback_a\\nb](feedback_a\\nb.md): s"


def _row_samples() -> list[tuple[str, str, str]]:
    rng = random.Random(4)
    pieces = ["plain", " ", "  ", "\t", "\n", "\r\n", "\x00", "\x07", "\x9b", "\u202e", "\u2066",
              "\ufeff", "\ufffd", "\ud800", "\u2028", "é", "数据", "\uffff", "-", "[x](y)"]
    names = ["feedback_normal", "project_\udcff", "feedback_a\nb", "user_\u202ex",
             "reference_t\tab"]
    samples = [(name, f"{name}.md", "") for name in names]
    for i in range(300):
        summary = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        name = names[i % len(names)]
        samples.append((name, f"{name}.md", summary))
    return samples


def test_make_row_output_is_frozen_with_the_rows_sync_stored() -> None:
    """Fails if make_row's output changes without a migration: every mirror keeps the rows sync
    built with it (files.index_row, migration m004), so render would show old and new rows mixed.
    Changing it needs a migration that recomputes files.index_row; then update the digest here."""
    import hashlib

    rows = "\n".join(make_row(*sample) for sample in _row_samples())
    digest = hashlib.sha256(rows.encode("utf-8", "surrogatepass")).hexdigest()
    assert digest == "fed134f2e55daa07d7adc6fc28738bcb0c4f8b3e3579006428c9cfd8d4ff4a35"

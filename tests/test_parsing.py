"""Malformed files degrade to defaults, are still indexed, and are reported by lint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstore.core.config import Config
from memstore.mirror.parsing import parse_bytes
from tests.helpers import memory, write

CFG = Config()

MALFORMED: dict[str, bytes] = {
    "broken_yaml": b'---\nname: "unclosed\nsummary: x\n---\nbroken yaml body zebra\n',
    "bom": b"\xef\xbb\xbf---\nname: feedback_bom\nsummary: starts with a bom\n---\n"
           b"bom body zebra\n",
    "crlf": b"---\r\nname: feedback_crlf\r\nsummary: windows endings\r\n---\r\ncrlf body zebra\r\n",
    "list_frontmatter": b"---\n- a\n- b\n---\nlist body zebra\n",
    "scalar_frontmatter": b"---\njust a string\n---\nscalar body zebra\n",
    "wrong_types": (
        b"---\nname: feedback_wrong-types\naccess_count: many\nstability: -3\n"
        b"last_accessed: not-a-date\nimportance: 99\npin: maybe\n---\nwrong types body zebra\n"
    ),
    "content_key": b"---\nname: feedback_content-key\ncontent: shadowing\n"
                   b"summary: has content key\n---\nzebra\n",
    "yaml_dates": b"---\nname: feedback_dates\ncreated: 2026-05-02\n"
                  b"last_accessed: 2026-07-01\n---\nzebra\n",
    "unclosed": b"---\nname: feedback_unclosed\nsummary: never closed\nzebra body\n",
    "binary": b"\x00\x01\x02\xff\xfe zebra",
    "empty": b"",
    "non_utf8": b"---\nsummary: caf\xe9\n---\nzebra latin-1\n",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_parse_never_raises_and_falls_back_to_defaults(case: str) -> None:
    parsed = parse_bytes(MALFORMED[case], "feedback_" + case.replace("_", "-"), CFG, is_t2=True)
    # Defaults hold wherever the value was missing or invalid.
    assert parsed.access_count in (None, 0)
    assert parsed.stability is None
    assert 0 <= parsed.importance <= 10
    assert parsed.name


def test_specific_degradations() -> None:
    wrong = parse_bytes(MALFORMED["wrong_types"], "feedback_wrong-types", CFG, is_t2=True)
    messages = " | ".join(p.message for p in wrong.problems)
    assert wrong.access_count is None and "access_count" in messages
    assert wrong.stability is None and "stability" in messages
    assert wrong.last_accessed is None and "last_accessed" in messages
    assert wrong.importance == 10 and "importance" in messages  # clamped into 0-10
    assert wrong.pin is False and "pin" in messages

    bom = parse_bytes(MALFORMED["bom"], "feedback_bom", CFG, is_t2=True)
    assert bom.summary == "starts with a bom" and bom.has_frontmatter

    crlf = parse_bytes(MALFORMED["crlf"], "feedback_crlf", CFG, is_t2=True)
    assert crlf.summary == "windows endings" and "\r" not in crlf.body

    dates = parse_bytes(MALFORMED["yaml_dates"], "feedback_dates", CFG, is_t2=True)
    assert dates.created is not None and dates.created.isoformat() == "2026-05-02"
    assert (dates.last_accessed is not None
            and dates.last_accessed.isoformat() == "2026-07-01T00:00:00+00:00")

    content = parse_bytes(MALFORMED["content_key"], "feedback_content-key", CFG, is_t2=True)
    assert content.meta["content"] == "shadowing" and content.body.strip() == "zebra"

    listy = parse_bytes(MALFORMED["list_frontmatter"], "feedback_list", CFG, is_t2=True)
    assert any("not a mapping" in p.message for p in listy.problems)
    assert listy.body.strip() == "list body zebra"


def test_every_malformed_file_is_indexed_and_linted(root: Path, run) -> None:
    for index, (_case, raw) in enumerate(sorted(MALFORMED.items())):
        write(root, f"memory/feedback_case-{index}.md", raw)
    write(root, "memory/feedback_fine.md", memory("feedback_fine", "a healthy memory about zebras"))
    result = run(root, "sync")
    assert result.exit_code == 0, result.output
    # The first command finds no mirror, builds one, and says so in one line.
    assert "mirror missing; rebuilding it from the files" in result.stderr

    lint = run(root, "lint", "--json")
    assert lint.exit_code == 1  # errors present
    flagged = {item["path"] for item in json.loads(lint.stdout)}
    for index, case in enumerate(sorted(MALFORMED)):
        if case in ("yaml_dates",):
            continue  # YAML dates are legal; nothing to report beyond missing fields
        assert f"memory/feedback_case-{index}.md" in flagged, case
    assert "memory/feedback_fine.md" not in {
        item["path"] for item in json.loads(lint.stdout) if item["level"] == "error"
    }

    # Still searchable: the body text of malformed files reached the index.
    hits = json.loads(run(root, "search", "zebra", "--json", "--limit", "50").stdout)
    paths = {hit["path"] for hit in hits}
    for index, case in enumerate(sorted(MALFORMED)):
        if case not in ("empty",):
            assert f"memory/feedback_case-{index}.md" in paths, case


def test_name_mismatch_is_an_error(root: Path, run) -> None:
    write(root, "memory/feedback_real-name.md", memory("feedback_other-name", "mismatch"))
    write(root, "memory/feedback_ok.md", memory("feedback_ok", "fine"))
    lint = run(root, "lint", "--json")
    items = json.loads(lint.stdout)
    assert lint.exit_code == 1
    assert any(i["path"] == "memory/feedback_real-name.md" and "does not match" in i["message"]
               for i in items)


def test_clean_corpus_lints_clean(root: Path, run) -> None:
    fields = {"access_count": 0, "stability": 14, "last_accessed": "2026-07-01T00:00:00Z",
              "last_reinforced": ""}
    write(root, "memory/feedback_ok.md", memory("feedback_ok", "fine", **fields))
    lint = run(root, "lint")
    assert lint.exit_code == 0, lint.output

"""fmedit changes only the values of the named keys; every other byte stays."""

from __future__ import annotations

import datetime as dt

import pytest
import yaml

from memstore.mirror.fmedit import CannotEdit, set_fields

UTC = dt.UTC

ORIGINAL = (
    "---\n"
    "name: feedback_verify   # must match the stem\n"
    "type: feedback\n"
    "summary: 'Quoted: keep my quotes'\n"
    "# a comment line the person wrote\n"
    "access_count: 3          # spaced reinforcements\n"
    "tags: [a, b]\n"
    "stability: 57.3\n"
    "---\n"
    "\n"
    "# Body\n"
    "---\n"
    "a horizontal rule above must survive\n"
)


def test_values_change_and_everything_else_stays() -> None:
    updated = set_fields(
        ORIGINAL.encode(),
        {"access_count": 4, "stability": 91.68,
         "last_accessed": dt.datetime(2026, 7, 30, 6, 12, tzinfo=UTC)},
    ).decode()
    assert "access_count: 4          # spaced reinforcements\n" in updated
    assert "stability: 91.68\n" in updated
    assert updated.count("last_accessed: 2026-07-30T06:12:00Z\n") == 1
    # Every line that was not a policy line is byte-identical and in the same order.
    kept = [line for line in ORIGINAL.splitlines()
            if not line.startswith(("access_count", "stability"))]
    remaining = [
        line for line in updated.splitlines()
        if not line.startswith(("access_count", "stability", "last_accessed"))
    ]
    assert kept == remaining
    meta = yaml.safe_load(updated.split("---\n")[1])
    assert meta["summary"] == "Quoted: keep my quotes" and meta["tags"] == ["a", "b"]


def test_crlf_and_bom_are_kept() -> None:
    raw = "\ufeff---\r\nname: x\r\naccess_count: 1\r\n---\r\nbody\r\n".encode()
    out = set_fields(raw, {"access_count": 2, "stability": 22.4})
    assert out.startswith("\ufeff".encode())
    assert out == \
        "\ufeff---\r\nname: x\r\naccess_count: 2\r\nstability: 22.4\r\n---\r\nbody\r\n".encode()


def test_no_frontmatter_gets_a_block() -> None:
    out = set_fields(b"# Title\n\ntext\n", {"name": "feedback_x", "access_count": 0})
    assert out == b"---\nname: feedback_x\naccess_count: 0\n---\n# Title\n\ntext\n"


@pytest.mark.parametrize(
    "raw",
    [
        b'---\nname: "broken\n---\nbody\n',  # invalid YAML
        b"---\n- a list\n---\nbody\n",  # not a mapping
        b"---\nname: x\nbody never closed\n",  # unclosed
        b"---\naccess_count:\n  - 1\n  - 2\n---\nbody\n",  # value spans lines
    ],
)
def test_unsafe_shapes_are_refused(raw: bytes) -> None:
    with pytest.raises(CannotEdit):
        set_fields(raw, {"access_count": 1})

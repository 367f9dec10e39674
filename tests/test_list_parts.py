"""A short memory that lists separate facts gets a vector for each item (meaning.chunking.
line_parts): one item's meaning is otherwise diluted by its neighbours and a vague summary. Each
test names the failure it catches; the model is the real one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memstore import Store
from memstore.meaning.chunking import EMBED_MAX_CHARS, line_parts, plan, tail_parts
from tests.helpers import embedded, memory, write

LOG = "memory/reference_household-log.md"
ITEMS = ["Sourdough starter gets fed at 8am and 8pm; discard half before feeding.",
         "The garage door remote takes a CR2032 battery.",
         "To bounce the pre-production Postgres, run systemctl restart postgresql on host db2.",
         "Tomato seedlings need a week of hardening off before planting out.",
         "The bike's rear derailleur needs a quarter turn on the barrel adjuster after each wash."]
OTHERS = {
    "vet": ("pet care", "Biscuit the dog gets her rabies vaccine every March at the clinic."),
    "deploy": ("release steps", "Production deploys go out on Tuesdays after the smoke suite "
               "passes on staging."),
    "coffee": ("office notes", "The espresso machine on floor three is descaled monthly."),
    "tax": ("paperwork", "Quarterly VAT returns are filed through the accountant portal."),
    "db": ("infra", "The reporting replica lags up to ten minutes; dashboards must not read from "
           "it for billing."),
    "railway": ("model railway", "The points motor on the back loop sticks in cold weather; warm "
                "the shed before a running session."),
}
# shares no content word with the item that answers it
ASKED = "how do I fix the gear shifting on my bicycle after cleaning it"


def _log_body() -> str:
    return "".join(f"- {item}\n" for item in ITEMS)


def test_each_item_of_a_short_list_is_a_part_and_prose_is_not() -> None:
    """Catches: list items left inside the one head vector (the short file had no tail), or every
    short file cut into lines, prose too (its sentences are one subject; the cost would double)."""
    parts = line_parts("Household and hobby log", _log_body())
    assert parts == [f"Household and hobby log\n\n{item}" for item in ITEMS]
    assert plan("Household and hobby log", None, _log_body())[0] == 1 + len(ITEMS)
    prose = "The bike is waxed every 300 km.\nThe spare tube is in the blue bag by the door."
    assert line_parts("commute", prose) == []
    assert line_parts("one item", "- only this one item is long enough here\n- short") == []
    numbered = "1. Export the ledger to CSV first.\n2. [x] Re-run the tie-out until it is zero."
    assert line_parts("month end", numbered) == ["month end\n\nExport the ledger to CSV first.",
                                                 "month end\n\nRe-run the tie-out until it is "
                                                 "zero."]
    long_body = _log_body() * 8  # past the head's length: windows, as before
    assert len(long_body) > EMBED_MAX_CHARS
    assert all(len(part) > 300 for part in tail_parts("log", None, long_body))


@pytest.fixture
def household(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMSTORE_SEMANTIC", "auto")
    root = tmp_path / "agent"
    write(root, LOG, memory("reference_household-log", "Household and hobby log",
                            body=_log_body(), created="2026-11-01"))
    embedded(root, OTHERS)
    return root


@pytest.mark.parametrize(("asked", "item"), [
    (ASKED, "barrel adjuster"),
    # the issue's own: the summary is vague, and the railway note "comes back up" by its words
    ("How do I bring the staging database back up?", "pre-production Postgres")])
def test_a_paraphrase_of_one_item_finds_the_list(household: Path, asked: str, item: str) -> None:
    """Catches: a line of a log under a vague summary missed by search when the question shares
    none of its words (the whole log's one vector was too far from it), or found by meaning but
    not by the latent terms' second opinion (the summary in the item's paragraph)."""
    hits = Store(household).search(asked, limit=5)
    found = [hit for hit in hits if hit.path == LOG]
    assert found, [hit.path for hit in hits]
    assert item in found[0].snippet  # the item itself, not the log's first line


def test_a_mirror_from_before_m016_gets_the_list_parts(household: Path) -> None:
    """Catches: an upgraded mirror keeping the old plan (one part) for a list file until the file
    changes: m016 must plan it again from the text the mirror holds."""
    db = household / "runtime" / "memstore.db"
    conn = sqlite3.connect(db)
    wanted = conn.execute("SELECT parts, tail_digest FROM files WHERE path = ?", (LOG,)).fetchone()
    assert wanted[0] == 1 + len(ITEMS) and wanted[1]
    with conn:  # as the version before m016 left it
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm016_list_items'")
        conn.execute("UPDATE files SET parts = 1, tail_digest = NULL WHERE path = ?", (LOG,))
    conn.close()
    Store(household).list()  # opens the mirror: the migration runs in place
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT parts, tail_digest FROM files WHERE path = ?",
                            (LOG,)).fetchone() == wanted
    finally:
        conn.close()

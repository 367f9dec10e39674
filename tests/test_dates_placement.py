"""Where a date goes, and which words get none (issue 42, item 5): a duration or a distance counted
from an event is never dated, a date is written only after a whole phrase, and a "yesterday" that
dateparser runs into such words is dated all the same, in a summary and a body line alike."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memstore.life.date_stamping import annotate
from tests.helpers import TICK_AT, agent_wrote

Run = Callable[..., Result]
DAY = dt.date(2027, 1, 25)  # the day of writing in the report: "in 3 days" is 01-28


@pytest.mark.parametrize("sentence", [
    "We keep the old API for 6 months after it ships.",
    "Support stays on call for 2 weeks after.",
    "Two weeks after the launch we review it.",
    "3 days later it broke.",
    "It was 2 days before the release.",
    "A month later the bill came.",
    "One week into the launch the queue filled.",
    "We were on call for the past week.",
    "For the next 3 weeks we freeze merges.",
    "Over the last month the cache grew.",
    "The freeze starts the day before next Friday.",
    "We ship 3 days after next Monday.",
])
def test_a_duration_or_a_distance_from_an_event_is_never_dated(sentence: str) -> None:
    """Catches: a duration or a count from an event dated from the day of writing ("for 6 months
    after (2027-07) it": broken, the _HEAD check in date_phrases._whole removed, so "6 months after"
    is a date), a span ("for the past week") read as the week it names (_SPAN removed), or the day a
    distance counts from dated as if it were the day meant ("3 days after next Monday (2027-02-01)":
    _ANCHOR_OF removed)."""
    assert annotate(sentence, DAY) == sentence


def test_the_report_launch_gets_its_date_and_the_weeks_after_it_none() -> None:
    """Catches: "for 2 weeks after" on a launch "in 3 days" dated as a week counted from the writing
    (the report's "week of 2027-01-25"): only the launch has a date, 01-28."""
    assert annotate("The launch is in 3 days; support stays on call for 2 weeks after.", DAY) == \
        "The launch is in 3 days (2027-01-28); support stays on call for 2 weeks after."


@pytest.mark.parametrize(("sentence", "dated"), [
    ("Rolled back yesterday and today.", "Rolled back yesterday (2027-01-24) and today."),
    ("Yesterday morning the cache died.", "Yesterday morning (2027-01-24) the cache died."),
    ("We rolled back yesterday morning", "We rolled back yesterday morning (2027-01-24)"),
    ("The fix lands in 3 days' time.", "The fix lands in 3 days' time (2027-01-28)."),
    ("Met Anna last night.", "Met Anna last night (2027-01-24)."),
    ("The next week's release is frozen.", "The next week's release is frozen."),
    ("Booked for us tomorrow from 14:00 to 16:00.",
     "Booked for us tomorrow (2027-01-26) from 14:00 to 16:00."),
])
def test_a_date_goes_only_after_a_whole_phrase(sentence: str, dated: str) -> None:
    """Catches: a date written between the words of one phrase: "yesterday and (2027-01-24) today"
    (broken: the _HEAD check in date_phrases._whole removed, so a run may end on "and"), "yesterday
    (2027-01-24) morning" or "in 3 days (2027-01-28)' time" (_JOINED not joined)."""
    assert annotate(sentence, DAY) == dated


@pytest.mark.parametrize(("sentence", "dated"), [
    ("It shipped 2 weeks ago.", "It shipped 2 weeks ago (week of 2027-01-11)."),
    ("The cutover is in 3 days.", "The cutover is in 3 days (2027-01-28)."),
    ("The review is a week from tomorrow.", "The review is a week from tomorrow (2027-02-02)."),
    ("The demo is the day after tomorrow.", "The demo is the day after tomorrow (2027-01-27)."),
    ("Booked for next Friday.", "Booked for next Friday (2027-01-29)."),
    ("It landed earlier this month.", "It landed earlier this month (2027-01)."),
    # dateparser: 2 weeks *ago*; better none
    ("Ship 2 weeks from today.", "Ship 2 weeks from today."),
])
def test_a_distance_from_now_is_still_dated(sentence: str, dated: str) -> None:
    """Catches: the duration rule dropping real dates ("in 3 days", "2 weeks ago", "for next
    Friday", "the day after tomorrow"): broken, _FROM_NOW or the "after tomorrow" exception in
    _FROM_AN_EVENT."""
    assert annotate(sentence, DAY) == dated


@pytest.mark.parametrize("rest", [", 2 weeks after the launch.", " 2 hours after the deploy.",
                                  ", a day later than planned.", " in 2 minutes.",
                                  ", one week into the launch."])
def test_yesterday_run_into_other_words_is_dated_all_the_same(rest: str) -> None:
    """Catches: "yesterday" left bare because dateparser ran it into the words after it ("yesterday,
    2 weeks after" read as one date, dated after "after", so the "yesterday" in it had none: broken,
    the _HEAD check in date_phrases._whole removed, or its rule for a count beside a named day)."""
    assert annotate(f"Rolled back yesterday{rest}", DAY) == \
        f"Rolled back yesterday (2027-01-24){rest}"


def test_the_body_line_is_dated_like_its_summary(root: Path, run: Run) -> None:
    """Catches: the report's memory, whose summary got its date while the body line "rolled back
    yesterday, 2 weeks after the launch" stayed bare (dateparser read "yesterday, 2 weeks after" as
    one date; broken: the _HEAD check in date_phrases._whole removed): the tick dates both, from the
    moment of writing (2026-07-30), and `new` dates both from its clock."""
    rel = "memory/project_rollback.md"
    text = ("---\nname: project_rollback\ntype: project\ncreated: 2026-07-01\n"
            "summary: Checkout rolled back yesterday\n---\n\n# project_rollback\n\n"
            "We rolled back yesterday, 2 weeks after the launch; the old API stays for 6 months "
            "after it.\n")
    agent_wrote(root, rel, text)
    assert run(root, "--now", TICK_AT, "tick").exit_code == 0
    after = (root / rel).read_text(encoding="utf-8")
    assert "summary: Checkout rolled back yesterday (2026-07-29)\n" in after
    assert ("We rolled back yesterday (2026-07-29), 2 weeks after the launch; the old API stays "
            "for 6 months after it.\n") in after
    made = run(root, "--now", "2027-01-25T12:00:00Z", "new", "project", "checkout", "--summary",
               "Checkout rolled back yesterday", "--body",
               "We rolled back yesterday, 2 weeks after the launch.")
    assert made.exit_code == 0, made.stderr
    written = (root / "memory" / "project_checkout.md").read_text(encoding="utf-8")
    assert "Checkout rolled back yesterday (2027-01-24)" in written
    assert "We rolled back yesterday (2027-01-24), 2 weeks after the launch." in written

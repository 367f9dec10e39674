"""Dates in prose, read by dateparser (English only): the relative ones a memory's writer meant
("yesterday", "next Friday"), resolved from a base instant, and the absolute ones a question asks
about ("on November 30, 2026"), spelled in ISO so full-text search meets the memory's annotation.

dateparser finds too much: "may", "march", "We" (Wednesday), "a second", "The sun". A phrase it
finds is kept as relative only when, re-parsed alone, it passes three checks measured to drop those:
- it depends on the base: parsed from a base 53 weeks later, it names another date (an absolute
  date does not move);
- it carries its own direction: preferring past and future dates gives the same answer (a bare
  "Friday", "may", "3 years" or "a day" flips, so a duration or a lone name is left out);
- it leaves the base's day ("now", "today", "2 hours ago" are the file's `created` day already);
- it holds a letter ("0001" parses as a year).
The phrase is trimmed to its shortest run of words that parses to the same date ("yesterday about
the" -> "yesterday"), and that run must be a whole date counted from the writing (_whole): it ends
on the word a date ends on, never mid-phrase ("6 months after", "yesterday and"), so the date
written after it never splits a phrase; a count of time is a date only from now ("in 3 days", "2
weeks ago"), never a duration ("for 6 months", "for the next week") nor a distance from an event the
words name ("2 weeks after the launch", "3 days later"): those are left alone. When dateparser runs
a date into such words ("yesterday, 2 weeks after"), the whole dates inside are kept. dateparser is
imported on first use: it costs about 0.2 s.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass
from typing import Any

_LATER = dt.timedelta(weeks=53)  # whole weeks, so a weekday stays that weekday


@dataclass(frozen=True)
class Meant:
    phrase: str  # as written
    start: int  # offsets of the phrase in the text searched
    end: int
    iso: str  # what it means: 2026-11-30, "week of 2026-11-23", 2026-11 or 2025


@functools.lru_cache(maxsize=64)
def _parser(base: dt.datetime, prefer: str) -> Any:
    # lazy: 0.2 s to import
    from dateparser.date import DateDataParser  # type: ignore[import-untyped]

    return DateDataParser(languages=["en"], settings={
        "RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer, "PREFER_DAY_OF_MONTH": "first"})


def _parse(phrase: str, base: dt.datetime, prefer: str = "current_period"
           ) -> tuple[dt.datetime, str] | None:
    try:
        data = _parser(base, prefer).get_date_data(phrase)
    except (OverflowError, ValueError):  # "tomorrow" from 9999-12-31: a date no calendar holds
        return None
    return (data.date_obj.replace(tzinfo=None), data.period) if data.date_obj else None


def _spelled(when: dt.datetime, period: str) -> str:
    if period == "year":
        return f"{when:%Y}"
    if period == "month":
        return f"{when:%Y-%m}"
    if period == "week":
        return f"week of {(when - dt.timedelta(days=when.weekday())).date().isoformat()}"
    return when.date().isoformat()


# A relative date names its distance or its day in words: dateparser also reads "came in 15% off" as
# the 15th and "about 30 minutes" as the 30th, which hold none of these.
_DATEWORD = re.compile(
    r"\b(?:ago|yesterday|tomorrow|today|tonight|last|next|coming|past|previous|this|days?|weeks?|"
    r"weekend|fortnight|months?|years?|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|"
    r"aug|sep|sept|oct|nov|dec|(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|"
    r"april|june|july|august|september|october|november|december|\d{1,2}(?:st|nd|rd|th))\b", re.I)


def _same(a: tuple[dt.datetime, str], b: tuple[dt.datetime, str]) -> bool:
    """The same day and period: "tomorrow" and "tomorrow from 14:00" mean one date."""
    return a[0].date() == b[0].date() and a[1] == b[1]


def _relative(phrase: str, base: dt.datetime) -> tuple[dt.datetime, str] | None:
    """(date, period) when `phrase` alone is a relative date with a direction (checks above)."""
    if not _DATEWORD.search(phrase):  # "0001", "in 15", "about 30": no word of a date
        return None
    got = _parse(phrase, base)
    if got is None or got[0].date() == base.date():
        return None
    if base.year >= dt.MAXYEAR - 1 or _parse(phrase, base + _LATER) in (None, got):
        return None
    if _parse(phrase, base, "past") != got or _parse(phrase, base, "future") != got:
        return None
    return got


# What makes a run of words one whole relative date, beyond what dateparser says of it:
_COUNT = (r"(?:a\s+couple\s+of|a\s+few|couple\s+of|few|several|half\s+an?|an?|\d+|one|two|three|"
          r"four|five|six|seven|eight|nine|ten|eleven|twelve)")
_UNIT = r"(?:seconds?|minutes?|hours?|days?|weeks?|fortnights?|months?|years?|decades?)"
# a distance counted from the moment of writing ("in 3 days", "2 weeks ago"); any other count ("for
# 6 months", "2 weeks after the launch", "3 days later") is a duration or counts from an event the
# words name, not from the writing. (Not "from today": dateparser reads "2 weeks from today" as 2
# weeks ago.)
_COUNTED = re.compile(rf"\b{_COUNT}\s+{_UNIT}\b", re.I)
_FROM_NOW = re.compile(rf"\bin\s+{_COUNT}\s+{_UNIT}\b"
                       rf"|\b{_UNIT}\s+(?:ago|hence|from\s+(?:now|tomorrow|yesterday))\b", re.I)
# with a count, a day is two dates ("yesterday in 2 minutes"), unless the count is from it
_DAY = re.compile(r"\b(?:yesterday|today|tomorrow|tonight)\b", re.I)
_FROM_DAY = re.compile(rf"\b{_UNIT}\s+from\s+(?:yesterday|tomorrow)\b", re.I)
# a date a distance is counted from ("3 days after next Monday", "the day before next Friday", "a
# week from tomorrow"): the date meant is not that one, so it gets none of its own
_ANCHOR_OF = re.compile(rf"\b{_UNIT}\s+(?:after|before|prior\s+to|following|from)\s+\Z", re.I)
# a span of time ("for the next week", "over the past month"), not a day in it
_SPAN = re.compile(rf"\b(?:for|during|over|within|throughout|across)\s+the\s+"
                   rf"(?:next|past|last|coming|following|previous)\s+{_UNIT}\Z", re.I)
# the word a whole relative date ends on: "yesterday and", "6 months after", "next" end mid-phrase
_HEAD = re.compile(r"\b(?:yesterday|tomorrow|today|tonight|ago|now|hence|weekend|fortnight|morning|"
                   rf"afternoon|evening|night|{_UNIT}|(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
                   r"mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|"
                   r"dec|january|february|march|april|june|july|august|september|october|november|"
                   r"december|\d{1,2}(?:st|nd|rd|th))\Z", re.I)
# words ending the phrase a date ends ("yesterday morning", "in 3 days' time"): its date goes after
_JOINED = re.compile(r"(?: (?:morning|afternoon|evening|night)\b|['\u2019] time\b)", re.I)
_INSIDE = re.compile(r"['\u2019]\w|-\w|\w")  # "next week's", "next-week": a date there splits words


def _whole(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is a whole date meant from the writing."""
    run, before = text[start:end], text[max(0, start - 40):start]
    if not _HEAD.search(run) or _ANCHOR_OF.search(before) or _SPAN.search(before + run):
        return False
    # a count of time is a date only from now, and beside a named day it is a second date
    return not _COUNTED.search(run) or bool(
        _FROM_NOW.search(run) and (not _DAY.search(run) or _FROM_DAY.search(run)))


def _trimmed(text: str, phrase: str, start: int, base: dt.datetime) -> list[Meant]:
    """The dates in one phrase dateparser found at `start` of `text`: the shortest run of its words
    that is a whole date (above) meaning what the phrase means; failing that ("yesterday, 2 weeks
    after", "next week, on a Tuesday"), the longest runs that are whole dates, without overlap. A
    time of day or "' time" right after one joins it: its date follows the whole phrase
    ("yesterday morning (...)")."""
    words = list(re.finditer(r"[\w-]+", phrase))
    runs = [(start + words[i].start(), start + words[i + n - 1].end())
            for n in range(1, len(words) + 1) for i in range(len(words) - n + 1)]

    def meant(at: int, end: int) -> tuple[int, tuple[dt.datetime, str]] | None:
        """(where its date goes, what it means) for the run text[at:end], if it is a whole date."""
        placed = joined.end() if (joined := _JOINED.match(text, end)) is not None else end
        if not _whole(text, at, end) or _INSIDE.match(text, placed):
            return None
        got = _relative(text[at:end], base)
        return (placed, got) if got is not None else None

    whole = meant(*runs[-1]) if runs else None
    if whole is not None:
        for at, end in runs:  # shortest first
            if (mine := meant(at, end)) is not None and _same(mine[1], whole[1]):
                return [Meant(text[at:mine[0]], at, mine[0], _spelled(*mine[1]))]
    out: list[Meant] = []
    for at, end in reversed(runs):  # longest first
        if (not any(at < taken.end and taken.start < end for taken in out)
                and (mine := meant(at, end)) is not None):
            out.append(Meant(text[at:mine[0]], at, mine[0], _spelled(*mine[1])))
    return sorted(out, key=lambda m: m.start)


_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def relative_dates(text: str, base: dt.datetime) -> list[Meant]:
    """The relative dates in `text` as meant from `base` (naive UTC), in order; not in code."""
    from dateparser.search import search_dates  # type: ignore[import-untyped]

    base = base.replace(tzinfo=None)
    if not dt.MINYEAR + 1 < base.year < dt.MAXYEAR - 1:
        return []  # a `created` of 0001 or 9999: no relative date from there is a date
    masked = _CODE.sub(lambda m: " " * len(m.group()), text)  # same offsets, no dates read in code
    try:
        found = search_dates(masked, languages=["en"], settings={
            "RELATIVE_BASE": base, "PREFER_DAY_OF_MONTH": "first"}) or []
    except (OverflowError, ValueError):  # "in 99999999 days": past the calendar, so not a date
        return []
    out: list[Meant] = []
    cursor = 0
    # not its own date: dateparser reads "the day before yesterday" as yesterday
    for phrase, _when in found:
        at = masked.find(phrase, cursor)
        if at < 0:
            continue
        cursor = at + len(phrase)
        out += _trimmed(masked, phrase, at, base)
    return out


_MONTHS = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d", re.I)


def iso_in_query(query: str) -> list[str]:
    """ISO forms of the absolute dates a question names in words ("November 30, 2026" -> 2026-11-30;
    without a year, 11-30): what an annotated memory holds. Only a question with a month name next
    to a number pays for dateparser; a date moving with the base year keeps month and day only."""
    if not _MONTHS.search(query):
        return []
    from dateparser.search import search_dates

    first, second = dt.datetime(2001, 6, 15), dt.datetime(2005, 6, 15)
    out: list[str] = []
    try:
        found = search_dates(query, languages=["en"], settings={"RELATIVE_BASE": first}) or []
    except (OverflowError, ValueError):
        return []
    for phrase, _when in found:
        a, b = _parse(phrase, first), _parse(phrase, second)
        if (a is None or b is None or a[1] != "day"
                or (a[0].month, a[0].day) != (b[0].month, b[0].day)):
            continue
        out.append(a[0].date().isoformat() if a == b else f"{a[0]:%m-%d}")
    return out

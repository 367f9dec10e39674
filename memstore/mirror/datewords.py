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
the" -> "yesterday"). dateparser is imported on first use: it costs about 0.2 s.
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
    from dateparser.date import DateDataParser  # type: ignore[import-untyped]  # (lazy: 0.2 s to import)

    return DateDataParser(languages=["en"], settings={
        "RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer, "PREFER_DAY_OF_MONTH": "first"})


def _parse(phrase: str, base: dt.datetime, prefer: str = "current_period") -> tuple[dt.datetime, str] | None:
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
    r"\b(?:ago|yesterday|tomorrow|today|tonight|last|next|coming|past|previous|this|days?|weeks?|weekend|"
    r"fortnight|months?|years?|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|june|july|august|september|"
    r"october|november|december|\d{1,2}(?:st|nd|rd|th))\b", re.I)


def _same(a: tuple[dt.datetime, str], b: tuple[dt.datetime, str]) -> bool:
    """The same day and period: "tomorrow" and "tomorrow from 14:00" mean one date."""
    return a[0].date() == b[0].date() and a[1] == b[1]


def _relative(phrase: str, base: dt.datetime) -> tuple[dt.datetime, str] | None:
    """(date, period) when `phrase` alone is a relative date with its own direction (the checks above)."""
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


def _trimmed(phrase: str, start: int, base: dt.datetime) -> Meant | None:
    """The shortest run of the phrase's words meaning what it means; when the whole phrase fails the
    checks ("next week, on a Tuesday"), the longest run that passes them."""
    words = list(re.finditer(r"[\w-]+", phrase))
    runs = [(phrase[words[i].start():words[i + n - 1].end()], words[i].start())
            for n in range(1, len(words) + 1) for i in range(len(words) - n + 1)]
    got = _relative(phrase, base)
    for run, at in (runs if got else reversed(runs)):
        if (mine := _relative(run, base)) is not None and (got is None or _same(mine, got)):
            return Meant(run, start + at, start + at + len(run), _spelled(*mine))
    return None


_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def relative_dates(text: str, base: dt.datetime) -> list[Meant]:
    """The relative dates in `text` as meant from `base` (naive UTC), in order; code spans are skipped."""
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
    for phrase, _when in found:  # its own date is not used: it reads "the day before yesterday" as yesterday
        at = masked.find(phrase, cursor)
        if at < 0:
            continue
        cursor = at + len(phrase)
        if (meant := _trimmed(phrase, at, base)) is not None:
            out.append(meant)
    return out


_MONTHS = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d", re.I)


def iso_in_query(query: str) -> list[str]:
    """ISO forms of the absolute dates a question names in words ("November 30, 2026" -> 2026-11-30;
    without a year, 11-30): what an annotated memory holds. Only a question with a month name next to
    a number pays for dateparser; a date that moves with the base year keeps only its month and day."""
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
        if a is None or b is None or a[1] != "day" or (a[0].month, a[0].day) != (b[0].month, b[0].day):
            continue
        out.append(a[0].date().isoformat() if a == b else f"{a[0]:%m-%d}")
    return out

"""Time as a value: parsing and formatting UTC timestamps. Standard library only.

Timestamps are stored at one-second precision in the form 2026-07-30T06:12:00Z, in
the mirror, the journal and frontmatter alike, so comparisons are exact string or
datetime comparisons and two machines format the same instant the same way.
"""

from __future__ import annotations

import datetime as dt

UTC = dt.UTC


def to_utc(value: dt.datetime) -> dt.datetime:
    """Aware UTC datetime, seconds precision; a naive value is taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0)


def parse_when(value: object) -> dt.datetime | None:
    """A datetime from a YAML date/datetime or an ISO 8601 string; None if it is neither.

    None also for instants UTC cannot hold (year 9999 at -05:00, year 1 at +01:00).
    """
    try:
        if isinstance(value, dt.datetime):
            return to_utc(value)
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=UTC)
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return None
            if text.endswith(("Z", "z")):
                text = text[:-1] + "+00:00"
            return to_utc(dt.datetime.fromisoformat(text))
    except (ValueError, OverflowError):
        return None
    return None


def parse_date(value: object) -> dt.date | None:
    """A calendar date from a YAML date, a datetime or an ISO string."""
    if isinstance(value, dt.datetime):
        when = parse_when(value)
        return when.date() if when else None
    if isinstance(value, dt.date):
        return value
    when = parse_when(value)
    return when.date() if when else None


def fmt(value: dt.datetime) -> str:
    """The one textual form of an instant: 2026-07-30T06:12:00Z."""
    # isoformat, not strftime: %Y is not zero-padded below year 1000
    return to_utc(value).isoformat().replace("+00:00", "Z")


def parse_now(value: str | None) -> dt.datetime:
    """Resolve --now / $MEMSTORE_NOW; the wall clock only when neither is given.

    Raises ValueError on text that is not ISO 8601, or names a year outside NOW_YEARS (the policy
    adds days and years to now: year 1 or 9999 overflows a datetime), so the caller can report it.
    """
    if value is None or not value.strip():
        return to_utc(dt.datetime.now(UTC))
    when = parse_when(value)
    if when is None:
        raise ValueError(f"not an ISO 8601 time: {value!r}")
    if not NOW_YEARS[0] <= when.year <= NOW_YEARS[1]:
        raise ValueError(f"{value!r} is outside the years {NOW_YEARS[0]} to {NOW_YEARS[1]}, "
                         "the clock memstore can keep")
    return when


NOW_YEARS = (1970, 9000)  # the years a pinned clock may name


def days_between(earlier: dt.datetime, later: dt.datetime) -> float:
    return (later - earlier).total_seconds() / 86400.0

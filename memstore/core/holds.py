"""A short-term fact that still holds: its text names an end date that is not past.

Standard library only.

"The freeze lasts until the 26th (2026-12-26)" stays in front of the agent until the 26th, however
long ago it was written: the tick leaves such a file in short-term/ and the bundle shows it. Only an
absolute date counts (the one `note` and the tick write after a relative phrase, or one written so),
and only after a word that ends a span, so a date the fact merely mentions keeps nothing.
"""

from __future__ import annotations

import datetime as dt
import re

# a word that ends a span, then within a few words on the same line an ISO date
_UNTIL = re.compile(r"\b(?:until|till|til|through|thru|ends?|ending|expires?|lasts?)\b"
                    r"[^\n.;]{0,48}?"
                    r"\b(\d{4})-(\d{2})-(\d{2})\b", re.IGNORECASE)
HOLD_DAYS = 92  # no fact is held longer than this after it was written, whatever date it names


def holds_until(text: str, today: dt.date) -> dt.date | None:
    """The latest end date in `text` that is today or later, or None."""
    latest = None
    for match in _UNTIL.finditer(text):
        try:
            day = dt.date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            continue
        if day >= today and (latest is None or day > latest):
            latest = day
    return latest

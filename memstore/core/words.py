"""The content words of a question: what search and the prompt's pointers look for. Standard
library only (the hook's path)."""

from __future__ import annotations

import math
import re

# Function words that carry no topic; removing them keeps bm25 from rewarding
# documents for sharing "the" and "did" with the question.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    else ever few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just let me more most much must my
    myself no nor not now of off on once only or other ought our ours ourselves out over
    own same shall she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up upon us very was we
    were what when where which while who whom whose why will with would you your yours
    yourself yourselves s t d ll m re ve
    """.split()
)

TOKEN = re.compile(r"\w+", re.UNICODE)


def terms(text: str) -> list[str]:
    """Content words of a query, lowercased, first occurrence order, no duplicates."""
    seen: dict[str, None] = {}
    words = [w.lower() for w in TOKEN.findall(text)]
    content = [w for w in words if w not in STOP_WORDS]
    for word in content or words:
        seen.setdefault(word, None)
    return list(seen)


def idf(total: int, df: int) -> float:
    """bm25's idf with 1 added inside the log, so never negative."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))

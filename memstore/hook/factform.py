"""The form two facts are compared in: the review queue's ids, the rule cue's and capture's
deduplication. Standard library only, and nothing else: review.py stays light on the hook's path
without the rule cue's patterns.
"""

from __future__ import annotations


def normalise(text: str) -> str:
    """The form two facts are compared in: whitespace collapsed, case folded, a trailing . or !
    dropped."""
    return " ".join(text.replace("\u2019", "'").split()).casefold().rstrip(".!").rstrip()

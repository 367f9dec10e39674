"""Scripts written without spaces between words (CJK, Thai, ...): what counts, how a query splits.

FTS5's unicode61 tokenizer ends a token only at a character that is not a letter or a
number. In the scripts below words are not separated by spaces, so a "token" is a whole
clause (数据库迁移的计划, ภาษาไทย), or, in Korean, a word with its particles attached
(데이터베이스를); a word inside it can never be found as a token. (unicode61 also treats
combining vowel signs, category M, as separators, which chops Thai, Lao, Khmer, Myanmar
and Tibetan words at every vowel sign.) Text in these scripts is therefore also indexed
by trigrams (the files_cjk table, migration m003) and searched as substrings.

The ranges are Unicode blocks, not the Unicode Script property (which Python's standard
library does not expose): a block is one range in a regex class, cheap to test on every
file a sync reads and easy to review. The blocks are the scripts' letters, syllables and
ideographs (all CJK extensions, B to H included), never their
punctuation blocks (CJK Symbols and Punctuation, full-width forms), so 。and ， stay
separators; only 々 〆 〇, which are letters and numbers inside that block, are taken.
Within the blocks, a query is split into runs at anything that is not a letter, mark
or number (Thai ๚, Khmer ។, Tibetan tsheg), so a run is what a reader would call a
phrase. Space-separated scripts (Latin, Cyrillic, Greek, Arabic, Devanagari, ...) are
not in the list: their queries keep exactly the word search they always had.

Which files hold such text is decided here, at sync time (indexing.build_row sets
files.unspaced). Migration m003 keeps a frozen copy to flag the rows of an existing
mirror; a test holds the two equal, so changing the list means a new migration that
flags the rows again.
"""

from __future__ import annotations

import functools
import re
import unicodedata

RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x3005, 0x3007),  # 々 〆 〇 (the letters and numbers of CJK Symbols and Punctuation)
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul Compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana Phonetic Extensions
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xA960, 0xA97F),  # Hangul Jamo Extended-A
    (0xAC00, 0xD7FF),  # Hangul Syllables, Hangul Jamo Extended-B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x323AF),  # CJK Extensions B to H, CJK Compatibility Ideographs Supplement
)


@functools.cache
def _stretch() -> re.Pattern[str]:
    # Compiled on first use: a class reaching past U+FFFF takes a millisecond or two to
    # compile, which a search in plain English should not pay.
    return re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in RANGES) + "]+")


def _wordlike(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LMN"


def runs(text: str) -> list[str]:
    """The runs of unspaced-script letters in `text`, first occurrence order, no duplicates."""
    if text.isascii():
        return []
    seen: dict[str, None] = {}
    for stretch in _stretch().findall(text):
        for run in "".join(ch if _wordlike(ch) else " " for ch in stretch).split():
            seen.setdefault(run, None)
    return list(seen)


def strip_runs(text: str) -> str:
    """`text` with every stretch of unspaced-script characters replaced by a space."""
    return text if text.isascii() else _stretch().sub(" ", text)


def has_unspaced(text: str) -> bool:
    return not text.isascii() and _stretch().search(text) is not None

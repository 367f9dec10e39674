"""Memory text made inert for the files and context the client loads. Standard library only.

Memory text is data, never instructions. What a memory says reaches Claude Code in
MEMORY.md (an `@` import of user memory, expanded in every session), current-state.md,
the SessionStart bundle and the import parts; none of it may turn into something the
client acts on. The four ways text acts, and how each is stopped:

- an `@` import: Claude Code scans the markdown's text tokens (not code, not escapes)
  for `@path` at the start of a token or after whitespace. Every `@` is written `\\@`
  (a CommonMark escape, so a viewer still shows `@`), with any backslashes before it
  doubled so the escape cannot be cancelled by the memory's own backslash;
- a tag: the client wraps context in `<system-reminder>` and the like; a `<` that could open
  or close one (before a letter, `/`, `!` or `?`) is written as the fullwidth `＜`, which
  reads as written (`kv/acme/＜service>`) and opens nothing; other `<` (`a < b`, `<=`) stay;
- a heading, in multi-line text: a line starting with `#`, or a setext underline, is
  escaped with a backslash;
- control, bidi and other invisible characters: replaced or dropped (`clean_text`).

The person's own files (identity.md, lenses) are the person's words: only tags and
controls are neutralised there (`inert_block(..., markdown=False)`).
"""

from __future__ import annotations

import functools
import re

# What never reaches a derived file:
# - garbage: C0 and C1 controls (tab, CR and LF aside), lone surrogates, U+FFFD and the
#   noncharacters U+FFFE/U+FFFF; each becomes a space, and counts towards "mostly garbage";
# - invisible: bidi marks, embeddings, overrides and isolates, U+FEFF, and what a person never sees
#   but a model reads: the tag characters (U+E0000-E007F, which spell ASCII invisibly), variation
#   selectors, the soft hyphen, fillers and invisible operators; dropped. Some of these count as
#   printable (variation selectors, fillers), so the fast path looks for them too (_SHOWN_BLANK);
# - line breaks of any kind (tab, CR, LF, U+2028, U+2029, ...): whitespace, collapsed.
_GARBAGE = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffd\ufffe\uffff"
_SHOWN_BLANK = ("\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
                "\U000e0100-\U000e01ef")
# every format character (category Cf, Unicode 15), as ranges: no unicodedata on the hook's path
_INVISIBLE = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
              "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
              "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f"
              + _SHOWN_BLANK)
GARBAGE_SHARE = 0.3  # above this share of garbage characters, a text is not readable
_HEADING = r"^( {0,3})(#|=+\s*$|-{2,}\s*$)"
_LINE_BREAKS = "\r\n|[\r\u2028\u2029\x85\x0b\x0c]"  # they split lines for the model as "\n" does
TAG_OPEN = "<(?=[A-Za-z/!?])"  # a `<` that opens or closes a tag, a comment or a directive
TAG_SAFE = "\uff1c"  # FULLWIDTH LESS-THAN SIGN: a person and a model read `<`; no tag opens with it


# what never reaches the client at all (core.loaded's guard)
UNSEEN = f"[{_GARBAGE}{_INVISIBLE}\u2028\u2029]"


# A link destination's characters that would end or open markup, percent-encoded (index rows, and
# the prompt's pointers that read them back)
LINK_CODES = ((" ", "%20"), ("(", "%28"), (")", "%29"), ("<", "%3C"), (">", "%3E"))


@functools.cache
def pattern(text: str, flags: int = 0) -> re.Pattern[str]:
    """Compiled on first use: the hook is a fresh process each call, and most calls need none of
    these."""
    return re.compile(text, flags)



def _plain(text: str) -> bool:
    """No control, format (bidi, zero-width), surrogate or separator character but tab and
    newline."""
    return ("\ufffd" not in text and text.replace("\n", "").replace("\t", "").isprintable()
            and (text.isascii() or pattern(f"[{_SHOWN_BLANK}]").search(text) is None))


def for_terminal(text: str) -> str:
    """`text` with every control character but newline and tab shown as an escape (\\x1b), not sent.

    Memory text printed by `search` and `show` goes to a person's terminal, where an escape
    sequence in a memory could retitle the window, hide lines or rewrite what is shown.
    """
    if _plain(text):
        return text
    return "".join(
        ch if ch in "\n\t" or (ch.isprintable() and ch != "\ufffd") or ch == " "
        else f"\\x{ord(ch):02x}"
        if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
        for ch in text
    )


def clean_text(text: str) -> str:
    """`text` as one clean line, or "" when nothing readable is left (empty, or mostly garbage)."""
    if _plain(text) or pattern(f"[{_GARBAGE}{_INVISIBLE}]").search(text) is None:
        return " ".join(text.split())
    garbage = len(pattern(f"[{_GARBAGE}]").findall(text))
    text = pattern(f"[{_INVISIBLE}]").sub("", pattern(f"[{_GARBAGE}]").sub(" ", text))
    cleaned = " ".join(text.split())
    kept = len(cleaned) - cleaned.count(" ")
    if garbage > GARBAGE_SHARE * (kept + garbage):
        return ""
    return cleaned


def safe_name(text: str) -> str:
    """A file name shown in a row: any unsafe character spelled out as an escape (\\x07,
    \\u202e)."""
    if not _plain(text) or "\n" in text or "\t" in text:
        unsafe = pattern(f"[{_GARBAGE}{_INVISIBLE}\\t\\n\\r\\u2028\\u2029]")
        text = unsafe.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return defuse(text)


def defuse(text: str) -> str:
    """No import, no tag: every `@` escaped (its backslashes doubled), every tag's `<` made
    fullwidth."""
    if "@" in text:
        text = pattern(r"(\\*)@").sub(lambda m: m.group(1) * 2 + "\\@", text)
    if "<" in text:
        text = pattern(TAG_OPEN).sub(TAG_SAFE, text)
    return text


def inert_line(text: str) -> str:
    """Memory text as one inert line ("" when nothing readable is left)."""
    return defuse(clean_text(text))


def inert_block(text: str, *, markdown: bool = True) -> str:
    """Multi-line memory text, inert: lines kept, controls gone, no import, tag or heading.

    With markdown=False (a person's own file) only tags and controls are neutralised.
    """
    if not _plain(text):
        text = pattern(_LINE_BREAKS).sub("\n", text)
        text = pattern(f"[{_INVISIBLE}]").sub("", pattern(f"[{_GARBAGE}]").sub(" ", text))
    if not markdown:
        return pattern(TAG_OPEN).sub(TAG_SAFE, text) if "<" in text else text
    return pattern(_HEADING, re.M).sub(lambda m: m.group(1) + "\\" + m.group(2), defuse(text))

"""What a file's vectors are made of: its head, the parts of the rest, whether it has text at all.

A file is embedded as parts. Part 0, the head, is indexing.embed_text: the summary,
description and the body's opening, cut at EMBED_MAX_CHARS. It is exactly the text the
single vector of earlier versions was made from, under the same files.text_digest, so a
vector made before parts existed is still the head's vector and nothing is embedded
again on upgrade. The rest of the text, when there is any, is cut into tail parts of
about PART_CHARS with OVERLAP characters shared between neighbours (so a sentence cut
at one edge is whole in the next part), each led by the summary so that it is read as
part of that memory. All tail parts of a file share one digest, files.tail_digest:
editing the tail re-embeds the tail, editing the head re-embeds the head, and a change
of frontmatter alone (a flush) neither.

A short file that is a list of separate facts (a log, a checklist: two or more list items of
LINE_MIN characters or more) has a tail too: each item a part of its own, led by the summary a
paragraph apart (line_parts). One line of a household log ("to bounce the pre-production
Postgres, run ...") otherwise shares its one vector with four unrelated lines and a vague
summary, and a question about it alone finds an unrelated note first.

A file with no readable text (empty, or bytes that are not text) gets no parts at all:
its vector would be the model's idea of nothing, which sits close to every question.
Such a file is found by its words, when it has any.

A memory that is an excerpt (a lesson from a session's last answer, a quoted reply) may
say what it replied to in a `context:` line. That makes one more part, CONTEXT_PART (-1):
the context, then the head, kept under files.context_digest (migration m014). It is never
the file's own text: search counts it down-weighted (memstore.meaning.vectors), and no
index, snippet or bundle shows it. Mixed into the head itself it would move every such
file's own meaning towards its neighbour's.

This is pure text in, text out; sync stores `parts` and `tail_digest` beside each row
(migration m010), and memstore.meaning.vectors embeds what is missing.
"""

from __future__ import annotations

import hashlib
import re

# The head is cut at this many characters: the text every file's single vector was made
# from before files had parts (see above), kept so those vectors stay current.
EMBED_MAX_CHARS = 600
PART_CHARS = 600
OVERLAP = 100
# A file's parts past this many are not embedded (about 60 KB of text): its words still
# find it, but one pasted log must not take minutes of embedding or crowd every search.
MAX_PARTS = 100
SUMMARY_LEAD = 160
CONTEXT_PART = -1  # the chunk number of the context part in `vectors` and `latents`
CONTEXT_EMBED_CHARS = 400  # of a context line, before the head: what it replied to, not a memory
LINE_MIN = 24  # characters of a list item made a part of its own: shorter ones say too little
LINES_MAX = 16  # list items of a short file made parts
_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?(\S.*?)\s*$")
_LETTERS = re.compile(r"[^\W\d_]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def embed_text(summary: str | None, description: str | None, body: str | None) -> str:
    """The head's text: summary, description and body, in that order, cut at EMBED_MAX_CHARS."""
    return full_text(summary, description, body)[:EMBED_MAX_CHARS]


def text_digest(summary: str | None, description: str | None, body: str | None) -> str:
    """files.text_digest: what the head's vector is kept under."""
    return digest(embed_text(summary, description, body).encode("utf-8", "surrogatepass"))


def one_line(text: str) -> str:
    """A context as one line: whitespace runs one space, no control, format or line separators."""
    return " ".join("".join(ch for ch in text if ch.isprintable() or ch.isspace()).split())


def context_text(context: str | None, summary: str | None, description: str | None,
                 body: str | None) -> str | None:
    """The context part's text: the context (cut at CONTEXT_EMBED_CHARS), then the head; or None."""
    line = one_line(context or "")[:CONTEXT_EMBED_CHARS].strip()
    if not line:
        return None
    return f"{line}\n{embed_text(summary, description, body)}"


def context_digest(context: str | None, summary: str | None, description: str | None,
                   body: str | None) -> str | None:
    """files.context_digest: the context part's vector is kept under it (None without a context)."""
    text = context_text(context, summary, description, body)
    return None if text is None else digest(text.encode("utf-8", "surrogatepass"))


def full_text(summary: str | None, description: str | None, body: str | None) -> str:
    return "\n".join(part for part in (summary, description, body) if part)


def readable(text: str) -> bool:
    """Whether a text has letters enough to mean something: not empty, not mostly symbols."""
    solid = _SPACE.sub("", text)
    if not solid:
        return False
    letters = len(_LETTERS.findall(solid))
    return letters >= 3 and letters / len(solid) >= 0.4


def _cut(text: str, start: int, size: int) -> int:
    """Where a part beginning at `start` ends: at a space near `size` characters on, if any."""
    end = start + size
    if end >= len(text):
        return len(text)
    space = text.rfind(" ", start + size // 2, end)
    newline = text.rfind("\n", start + size // 2, end)
    edge = max(space, newline)
    return edge if edge > start else end


def tail_parts(summary: str | None, description: str | None, body: str | None) -> list[str]:
    """The texts of parts 1.. of a file: everything after the head, in overlapping windows."""
    text = full_text(summary, description, body)
    if len(text) <= EMBED_MAX_CHARS:
        return line_parts(summary, body)
    lead = " ".join((summary or "").split())[:SUMMARY_LEAD]
    parts: list[str] = []
    start = EMBED_MAX_CHARS - OVERLAP
    while start < len(text) and len(parts) < MAX_PARTS - 1:
        # Begin at a word: step past the partial one the overlap landed in.
        if start > 0 and not text[start - 1].isspace():
            nxt = _SPACE.search(text, start, min(len(text), start + 40))
            if nxt:
                start = nxt.end()
        end = _cut(text, start, PART_CHARS)
        window = text[start:end].strip()
        if window:
            parts.append(f"{lead}\n{window}" if lead else window)
        if end >= len(text):
            break
        start = max(end - OVERLAP, start + 1)
    return parts


def line_parts(summary: str | None, body: str | None) -> list[str]:
    """The tail of a short file that lists separate facts: each list item, led by the summary;
    [] when fewer than two items are long enough to say something on their own."""
    items = [m.group(1) for line in (body or "").splitlines() if (m := _ITEM.match(line))]
    items = [item for item in items if len(item) >= LINE_MIN and readable(item)]
    if len(items) < 2:
        return []
    lead = " ".join((summary or "").split())[:SUMMARY_LEAD]
    # a paragraph apart: the latent terms score a part by its best paragraph (meaning.latents),
    # and a vague summary in the item's paragraph crowded out its concepts (7.0 fell to 4.8)
    return [f"{lead}\n\n{item}" if lead else item for item in items[:LINES_MAX]]


def excerpt(summary: str | None, description: str | None, body: str | None, part: int
            ) -> str | None:
    """The text a search shows for a file found by its tail part `part`, the summary that leads
    it left out; None for the head or a part the file does not have."""
    tails = tail_parts(summary, description, body) if part > 0 else []
    if not 0 < part <= len(tails):
        return None
    text = (tails[part - 1].split("\n", 1)[-1] if (summary or "").strip()
            else tails[part - 1]).strip()
    if len(full_text(summary, description, body)) > EMBED_MAX_CHARS and len(text) > 2 * OVERLAP:
        text = text[max(text.find(" ", OVERLAP), 0):]  # after what it shares with the part before
    return text


def plan(summary: str | None, description: str | None, body: str | None) -> tuple[int, str | None]:
    """(parts, tail_digest) of a file: 0 parts without readable text; a digest only with a tail."""
    if not readable(full_text(summary, description, body)):
        return 0, None
    tails = tail_parts(summary, description, body)
    if not tails:
        return 1, None
    return 1 + len(tails), digest("\x1e".join(tails).encode("utf-8", "surrogatepass"))

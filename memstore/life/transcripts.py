"""A session's transcript as the debrief reads it: the final answer and the prompt it answered.

Standard library only.

The final answer is the last assistant message with text (its text blocks joined; an
earlier message is never read). The prompt is the last person's message with text before
it: what the answer replied to, which a lesson keeps as its `context:` (memstore.life.capture).
Claude Code's transcripts, Codex's rollouts and Gemini CLI's chat files are told apart by
their lines' shapes. A user line that is a tool's result, or text a client puts in the
person's turn itself (Claude Code's `<command-name>`, Codex's `<environment_context>`, a
`<system-reminder>`: it opens with `<`), is no prompt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from memstore.core.errors import NotFound

TRANSCRIPT_MAX_BYTES = 200_000_000  # a transcript larger than this is read from its last part only
ASSISTANT = "assistant"
USER = "user"
# A Gemini CLI transcript rewrites a message under its id (the same text, then with its tool
# calls): the last record of an id is the message, never the join of its records.
WHOLE = "whole:"


class Exchange(NamedTuple):
    answer: str | None  # the final answer, None when the transcript has none
    prompt: str | None  # the last prompt before it, None when there is none to read


def _text_of(content: Any, kind: str = "text") -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [block["text"] for block in content
             if isinstance(block, dict) and block.get("type") == kind
             and isinstance(block.get("text"), str)]
    return "\n\n".join(p for p in parts if p.strip())


def _other_client_text(entry: dict[str, Any]) -> tuple[str, str | None, str] | None:
    """(role, id, text) of a Codex rollout's or Gemini CLI transcript's message line, or None."""
    if entry.get("type") == "response_item":  # Codex: {"type": "response_item", "payload": {...}}
        item = entry.get("payload")
        if (not isinstance(item, dict) or item.get("type") != "message"
                or item.get("role") not in (ASSISTANT, USER)):
            return None
        content = item.get("content")
        text = _text_of(content, "output_text" if item["role"] == ASSISTANT else "input_text") \
            if isinstance(content, list) else ""
        ident = item.get("id")
        return item["role"], (ident if isinstance(ident, str) else None), text
    if entry.get("type") == "gemini" and isinstance(entry.get("content"), str):  # Gemini CLI
        ident = entry.get("id")
        return ASSISTANT, (WHOLE + ident if isinstance(ident, str) else None), entry["content"]
    if entry.get("type") == USER and "message" not in entry:  # Gemini CLI's person: [{"text": ..}]
        content = entry.get("content")
        blocks = content if isinstance(content, list) else [{"text": content}]
        texts = [b["text"] for b in blocks
                 if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return USER, None, "\n\n".join(texts)
    return None


def _messages(lines: Iterable[bytes]) -> Iterator[tuple[str, str | None, str]]:
    """(role, message id, text) of each transcript line of assistant or person text, in order."""
    for raw in lines:
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict):
            continue
        other = _other_client_text(entry)
        if other is not None:
            if other[2].strip():
                yield other
            continue
        role = entry.get("type")
        if (role not in (ASSISTANT, USER) or entry.get("isSidechain") is True
                or entry.get("isMeta") is True):
            continue
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role", role) != role:
            continue
        if message.get("model") == "<synthetic>" or entry.get("isApiErrorMessage") is True:
            continue  # Claude Code's stand-ins ("No response requested.", API errors): no answer
        text = _text_of(message.get("content"))
        if text.strip():
            ident = message.get("id")
            yield role, (ident if isinstance(ident, str) else None), text


def final_exchange(transcript: Path) -> Exchange:
    """The session's last assistant message with text (text blocks joined) and the prompt before it.

    Claude Code writes one API message as several lines (one per content block) that
    share message.id, so the text lines of the last message id are joined.
    """
    try:
        with open(transcript, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > TRANSCRIPT_MAX_BYTES:
                handle.seek(size - TRANSCRIPT_MAX_BYTES)
                handle.readline()  # a partial line
            found = list(_messages(handle))
    except FileNotFoundError:
        raise NotFound(f"no such transcript: {transcript}") from None
    except IsADirectoryError:
        raise NotFound(f"not a file: {transcript}") from None
    answers = [i for i, (role, _, _) in enumerate(found) if role == ASSISTANT]
    if not answers:
        return Exchange(None, None)
    first = last = answers[-1]
    last_id = found[last][1]
    if last_id is not None and not last_id.startswith(WHOLE):
        while first > 0 and found[first - 1][0] == ASSISTANT and found[first - 1][1] == last_id:
            first -= 1
    texts = [text for role, ident, text in found[first : last + 1]
             if role == ASSISTANT and ident == last_id]
    prompts = [text for role, _, text in found[:first]
               if role == USER and not text.lstrip().startswith("<")]
    return Exchange("\n\n".join(texts), prompts[-1] if prompts else None)


def final_answer(transcript: Path) -> str | None:
    """The session's last assistant message with text, or None (final_exchange's answer)."""
    return final_exchange(transcript).answer

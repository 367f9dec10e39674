"""The cold-start bundle: what SessionStart injects and `memstore context` prints. Standard library only.

It is read straight from the files (they are the truth, and always fresh): the
in-flight list (current-state.md), T1 facts inside their visibility window, the
latest dream-journal entries and the open bugs. Each part is trimmed by priority so
the whole stays within the budget: Claude Code moves a longer SessionStart output
into a file and shows the model only a short preview. Identity and MEMORY.md arrive
through CLAUDE.md imports instead, which are loaded whole.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from memstore.config import Config

_DATED = re.compile(r"^(\d{2})(\d{2})(\d{2})-.+\.md$")
_SUFFIX = re.compile(r"-(\d{1,9})$")
_STATUS = re.compile(r"^status:\s*['\"]?([A-Za-z-]+)", re.M)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").lstrip("\ufeff")
    except OSError:
        return ""


def split_front(text: str) -> tuple[str, str]:
    """(frontmatter text, body) by the --- fences; no YAML parsing on this path."""
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            after = text.find("\n", end + 4)
            return text[4:end], text[after + 1 :] if after != -1 else ""
    return "", text


def _dated(folder: Path) -> list[tuple[dt.date, Path]]:
    found = []
    if folder.is_dir():
        for path in folder.glob("*.md"):
            match = _DATED.match(path.name)
            if match:
                try:
                    day = dt.date(2000 + int(match.group(1)), int(match.group(2)), int(match.group(3)))
                except ValueError:
                    continue
                found.append((day, path))
    # By day, then stem with its numeric suffix as a number: "261204-dream" < "-2" < "-10"
    # (by name, "-10" and "-2" would sort before the first entry of the day).
    found.sort(key=lambda pair: (pair[0], _SUFFIX.sub(lambda m: f"-{int(m[1]):09d}", pair[1].stem)), reverse=True)
    return found


def _entry(path: Path, limit: int) -> str:
    body = split_front(_read(path))[1].strip()
    if len(body) > limit:
        body = body[: limit - 1].rstrip() + "…"
    return f"### {path.name}\n{body}\n"


def sections(root: Path, now: dt.datetime, config: Config) -> list[tuple[str, list[str]]]:
    """The parts of the bundle in priority order, each a heading and its entries (newest first)."""
    memory = root / "memory"
    parts: list[tuple[str, list[str]]] = []

    state = split_front(_read(memory / "current-state.md"))[1]
    flying = [line for line in state.splitlines() if line.startswith("- ")]
    parts.append(("In flight", [line + "\n" for line in flying]))

    bugs = []
    for path in sorted((memory / "bugs").glob("*.md")) if (memory / "bugs").is_dir() else []:
        front, body = split_front(_read(path))
        match = _STATUS.search(front)
        if match and match.group(1).lower() != "open":
            continue
        title = re.search(r"^title:\s*(.+)$", front, re.M)
        line = title.group(1).strip().strip("'\"") if title else (body.strip().splitlines() or [path.stem])[0]
        bugs.append(f"- {path.name}: {line}\n")
    parts.append(("Open bugs", bugs))

    today = now.date()
    facts = [
        _entry(path, 1200)
        for day, path in _dated(memory / "short-term")
        if 0 <= (today - day).days <= config.short_term_days
    ]
    parts.append((f"Short-term facts (last {config.short_term_days} days)", facts))

    dreams = [_entry(path, 1500) for day, path in _dated(memory / "dream-journal") if day <= today]
    parts.append(("Dream journal (latest)", dreams[: config.dream_entries]))
    return parts


def bundle(root: Path, now: dt.datetime, config: Config) -> str:
    """The whole bundle within config.context_budget characters; lower-priority entries go first."""
    budget = config.context_budget
    header = "# memstore: where things stand\n"
    out = [header]
    used = len(header)
    dropped = 0
    for title, entries in sections(root, now, config):
        if not entries:
            continue
        heading = f"\n## {title}\n"
        if used + len(heading) + len(entries[0]) > budget:
            dropped += len(entries)
            continue
        out.append(heading)
        used += len(heading)
        for entry in entries:
            if used + len(entry) > budget - 120:  # keep room for the note below
                dropped += 1
                continue
            out.append(entry)
            used += len(entry)
    if dropped:
        out.append(f"\n({dropped} older entries left out to stay within {budget} characters; see memory/)\n")
    if len(out) == 1:
        return ""  # nothing in flight, no facts, dreams or bugs: a bare heading would only cost tokens
    return "".join(out)


# Claude Code keeps a SessionStart output whole only below this size (per handler).
PART_CHARS = 9_500
IMPORT_PARTS = 3  # handlers registered for identity + MEMORY.md: room for about 28,000 characters


def imports_text(root: Path) -> str:
    """Identity and MEMORY.md as one text, for a root Claude Code will not `@`-import.

    A project's CLAUDE.md cannot import files outside the project until the person has
    approved that once in an interactive session; SessionStart context needs no
    approval, so the same two files travel that way instead.
    """
    out = [f"# memstore: the agent's identity and memory index (agent root {root})\n"]
    for rel in ("identity.md", "memory/MEMORY.md"):
        text = _read(root / rel)
        if text.strip():
            out.append(f"\n## {root / rel}\n\n{text.rstrip()}\n")
    return "".join(out)


def parts(text: str, size: int = PART_CHARS, count: int = IMPORT_PARTS) -> list[str]:
    """`text` cut at line ends into at most `count` pieces of at most `size` characters.

    What does not fit ends with a line saying where the rest is, never silently.
    """
    pieces: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while len(line) > size:  # a single huge line: cut it hard
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:size])
            line = line[size:]
        if len(current) + len(line) > size:
            pieces.append(current)
            current = ""
        current += line
    if current:
        pieces.append(current)
    if len(pieces) > count:
        note = "\n(cut here to stay within Claude Code's SessionStart limit; Read the files named above for the rest)\n"
        last = pieces[count - 1]
        pieces = [*pieces[: count - 1], last[: size - len(note)] + note]
    return pieces


def import_part(root: Path, index: int) -> str:
    """Part `index` (1-based) of imports_text, or '' when there is no such part."""
    pieces = parts(imports_text(root))
    return pieces[index - 1] if 1 <= index <= len(pieces) else ""

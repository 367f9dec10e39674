"""The progress line every long command shows on stderr; standard library only, so the console
script's fast path (memstore.frontends.entry) shows it without loading click."""

from __future__ import annotations

import sys
from collections.abc import Callable


def progress_reporter(label: str, min_total: int = 2000, unit: str = "files"
                      ) -> Callable[[int, int], None]:
    """A live line on a terminal, quarter marks otherwise; silent for fewer than min_total items,
    which finish too soon to need it."""
    tty = sys.stderr.isatty()
    marks: set[int] = set()

    def report(done: int, total: int) -> None:
        if total < min_total:
            return
        if tty:
            _stderr(f"\r{label}: {done}/{total} {unit}", done == total)
            return
        quarter = done * 4 // total
        if quarter not in marks:
            marks.add(quarter)
            _stderr(f"{label}: {done}/{total} {unit}", True)

    return report


def _stderr(text: str, newline: bool) -> None:
    sys.stderr.write(text + ("\n" if newline else ""))
    sys.stderr.flush()

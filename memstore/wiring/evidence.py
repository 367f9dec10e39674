"""The wiring's tamper evidence (memstore.core.tamper) as install records it, `trust` accepts it
and verify judges it: memstore's part of each wiring file as the person accepted it, and the
person's files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memstore.core import tamper, tamper_lines, tamper_state
from memstore.core.errors import NotFound
from memstore.core.results import Check


def record(root: Path, files: list[Path] | tuple[Path, ...], client: str, fix: str, *,
           forget: bool = False) -> None:
    """Store.record_wiring: after install --apply, these files as accepted (and the person's files
    not recorded yet); forget: after --uninstall, these files carry no wiring any more."""
    paths = [os.path.abspath(os.path.expanduser(os.fspath(f))) for f in files]
    if forget:
        tamper.forget_wiring(str(root), paths)
        return
    tamper.record_wiring(str(root), paths, "install", client, fix)
    tamper.record_person(str(root), "install")


def trust(root: Path, files: list[str]) -> list[str]:
    """Store.trust: accept these files as they are now (none: every one that differs); what was
    accepted."""
    try:
        return tamper.trust(str(root), files)
    except ValueError as exc:
        raise NotFound(str(exc), hint="memstore status lists what is held") from None


def untrusted(root: Path, now: float) -> list[Any]:
    """What `trust` with no FILE would accept: the tracked files that differ at `now` (a
    time.time(): the files' own clock, not a pinned one), read only."""
    state = tamper_state.load(str(root))
    if state is None:
        return []
    return [f for f in tamper.compare(state, str(root), now)
            if f.state in ("held", "gone", "hand")]


def tamper_verdict(root: Path) -> Check:
    """verify's check of the person's files and the wiring: fails while anything is held or
    gone."""
    found = tamper.check(str(root))
    bad = [f for f in found if f.state in ("held", "gone")]
    said = "; ".join(tamper_lines.describe(str(root), item) for item in (bad or found))
    if bad:
        # wiring gone is put back by install; a held change is accepted by the person, or restored
        fixes = dict.fromkeys(f.fix for f in bad if f.state == "gone" and f.fix)
        held = [f.key for f in bad if f.state == "held"]
        if held:
            fixes[f"memstore trust {' '.join(held)} (at your own terminal) once you have looked, "
                  f"or restore {'it' if len(held) == 1 else 'them'}"] = None
        return Check("person's files and wiring", False, said,
                     "; ".join(fixes) or "memstore install --apply")
    return Check("person's files and wiring", True, said or "as the person last accepted them")

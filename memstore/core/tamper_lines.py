"""Tamper evidence, said: one plain line for each finding of memstore.core.tamper.

Standard library only.

status and verify show the lines as they are; the bundle puts them at its top (bundle_lines),
inert.
"""

from __future__ import annotations

import os
import time

from memstore.core.tamper import Finding, held_now, when_text


def _git_root(root: str) -> bool:
    from memstore.core.projects import work_tree

    return work_tree(root) is not None


def describe(root: str, item: Finding) -> str:
    """One plain line for a finding (the bundle makes it inert; the terminal shows it as it is)."""
    name = item.key if item.kind == "person" else item.key.replace(os.path.expanduser("~"), "~", 1)
    when = when_text(item.when, minutes=True) or "at an unknown time"
    if item.state == "baseline":
        return (f"tamper evidence: recorded {item.key} as they are now (the person's files and "
                "memstore's wiring)")
    if item.state == "hand":
        return f"{name} changed by hand on {when_text(item.when) or 'an unknown day'}; accepted"
    if item.state == "restored":
        return f"{name} is back as the person accepted it; no longer held"
    if item.state == "gone":
        fix = (f"`{item.fix}`" if item.fix
               else "`memstore install --apply` (with the scope you installed)")
        noticed = when_text(time.time(), minutes=True)
        return (f"memstore's wiring is gone from {name} (noticed {noticed}): the client starts "
                f"without memstore's hooks and deny rules there. Put it back with {fix}, or accept "
                f"it with `memstore trust {name}`")
    if item.kind == "wiring":
        return (f"memstore's wiring in {name} changed during an agent session ({when}); not "
                f"accepted: check it, then `memstore trust {name}`, or put it back with "
                f"{'`' + item.fix + '`' if item.fix else '`memstore install --apply`'}")
    restore = (f"`git -C {root} checkout -- {name}` if git has it" if _git_root(root)
               else "your own backup (memstore keeps digests, not copies)")
    effect = {"identity.md": "treat what it says now as unverified",
               "memstore.toml": "its overrides are ignored (defaults apply) until you accept it"
               }.get(name)
    if effect is None:
        effect = ("this lens is not injected until you accept it" if name.startswith("lenses/")
                  else "the nightly sit does not use it until you accept it"
                  if name.startswith("meditations/") else "not accepted")
    return (f"{name} changed during an agent session ({when}); {effect}. Accept it with "
            f"`memstore trust {name}` at your own terminal, or restore it from {restore}")


def bundle_lines(root: str, found: list[Finding] | None = None) -> list[str]:
    """The lines at the top of the bundle: what SessionStart's own check said (hand edits once), or,
    for `memstore context`, what is held or gone now. Plain text: the bundle makes them inert."""
    items = held_now(root) if found is None else found
    order = {"gone": 0, "held": 1, "hand": 2, "restored": 3, "baseline": 4}
    items = sorted(items, key=lambda f: (order.get(f.state, 9), f.key != "identity.md", f.key))
    return [describe(root, item) for item in items if item.state != "baseline"]

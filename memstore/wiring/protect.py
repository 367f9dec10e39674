"""The person's files stay the person's: what install writes so the agent cannot change them.

identity.md, lenses/, meditations/ and memstore.toml are placed by a person. The read
grant makes the whole root a working directory, and under `acceptEdits` (or with no
prompts at all) Claude Code would let the agent write anywhere in it. Two layers,
measured with the real binary (2.1.332):

1. `permissions.deny` rules `Edit(//ROOT/identity.md)` and the like, beside the hooks.
   Claude Code honours deny rules in every mode, in a project's settings.json even
   before its trust dialog, and applies Edit rules to Write, Edit and NotebookEdit and
   to the shell: a redirection, `tee`, `sed -i`, `cp`, `mv` or `rm` aimed at such a
   path (also after a `cd`) is refused.
2. PreToolUse handlers that deny the same writes by real path (a symlink elsewhere that
   leads into the root), and shell commands that name those files and do more than read
   (shellcmd.py), which is what stops `python3 -c "open(...)"` in bypassPermissions.

Both are written for every spelling of the root (its real path, and the path through a
symlink the person used), since Claude Code matches rules against the path as given.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstore.core.access import AGENT_DENIED, SHELL_VERBS, WIRING_WORDS, watch_words
from memstore.core.kinds import EDIT_TOOLS
from memstore.hook.shellcmd import root_forms
from memstore.wiring.install_base import permission_list


def rule_paths(form: Path) -> list[str]:
    """Permission-rule paths (`//` marks an absolute path) for what the agent may not change under
    one spelling of the root: the person's files, runtime/ and the derived files
    (access.AGENT_DENIED, the access table)."""
    base = "/" + form.as_posix()
    return [f"{base}/{owned}**" if owned.endswith("/") else f"{base}/{owned}"
            for owned in AGENT_DENIED]


def deny_rules(forms: Sequence[Path], wiring: Sequence[Path] = ()) -> list[str]:
    """Edit rules for the person's files under each spelling of the root, and for the files that
    hold memstore's wiring (an agent that rewrote settings.json would drop these very rules)."""
    person = [f"Edit({path})" for form in forms for path in rule_paths(form)]
    return person + [f"Edit(/{f.as_posix()})" for f in wiring]


def registrations(forms: Sequence[Path], handler: Any,
                  wiring: Sequence[Path] = ()) -> list[dict[str, Any]]:
    """PreToolUse groups whose handlers run only for a write to a person-owned file, or a shell
    command that names one (the hook decides; most commands never start it)."""
    guarded = [*(p for form in forms for p in rule_paths(form)),
               *(f"/{f.as_posix()}" for f in wiring)]
    groups = [
        {"matcher": tool, "hooks": [handler({"if": f"{tool}({path})"}) for path in guarded]}
        for tool in EDIT_TOOLS
    ]
    # the hook starts for a command that mentions one of the person's words or the root by any
    # spelling (shellcmd decides); other commands never start it
    spellings = dict.fromkeys(s for form in forms for s in root_forms(str(form))
                              if not s.startswith("$"))
    words = dict.fromkeys([*(w for form in forms for w in watch_words(str(form))), *SHELL_VERBS])
    names = (*words, *WIRING_WORDS, "memstore/config.toml", *spellings)
    groups.append({"matcher": "Bash",
                   "hooks": [handler({"if": f"Bash(*{name}*)"}) for name in names]})
    return groups


def merge_deny(existing: dict[str, Any], forms: Sequence[Path],
               wiring: Sequence[Path] = ()) -> dict[str, Any]:
    """existing with our deny rules in permissions.deny (a copy; idempotent; other rules kept)."""
    merged = json.loads(json.dumps(existing))
    deny = permission_list(merged, "deny")
    deny.extend(rule for rule in deny_rules(forms, wiring) if rule not in deny)
    return merged


def remove_deny(existing: dict[str, Any], forms: Sequence[Path],
                wiring: Sequence[Path] = ()) -> dict[str, Any]:
    """existing without our deny rules for these spellings of the root (a copy)."""
    merged = json.loads(json.dumps(existing))
    permissions = merged.get("permissions")
    if not isinstance(permissions, dict) or not isinstance(permissions.get("deny"), list):
        return merged
    ours = set(deny_rules(forms, wiring))
    permissions["deny"] = [rule for rule in permissions["deny"] if rule not in ours]
    if not permissions["deny"]:
        del permissions["deny"]
    if not permissions:
        del merged["permissions"]
    return merged


def missing_rules(settings: dict[str, Any], forms: Sequence[Path],
                  wiring: Sequence[Path] = ()) -> list[str]:
    permissions = settings.get("permissions")
    deny = permissions.get("deny") if isinstance(permissions, dict) else None
    have = set(deny) if isinstance(deny, list) else set()
    return [rule for rule in deny_rules(forms, wiring) if rule not in have]

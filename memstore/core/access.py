"""What the agent may touch: the one table. Standard library only.

Every reader of "may the agent change this?" reads these rows, so a path protected here is
protected everywhere at once (tests/test_access_table.py walks the table through all three
readers):

- wiring/protect.py turns AGENT_DENIED into the client's own `permissions.deny` Edit rules (for
  every spelling of the root), and SHELL_VERBS, WIRING_WORDS and watch_words into the `if` filters
  that start the hook for a Bash command at all;
- hook/paths.py refuses an agent's Write/Edit/NotebookEdit by real path: person_owned for the
  person's files (person_file), machine_owned for memstore's own (machine_file);
- hook/shellcmd.py flags a shell command that names a row and does more than read (a redirect, rm,
  mv, an interpreter), with the same person_owned/machine_owned, PERSON_OWNED's folders, and the
  clients' wiring (WIRING_WORDS, CLIENT_WIRING_WORDS, CLIENT_DIRS);
- hook/gate.py and hook/handler.py take their word list for the cheap first look at a command from
  here (watch_words, SHELL_VERBS, the wiring words): a command with none of them never pays for
  shellcmd;
- core/tamper.py accepts (`memstore trust`) only what person_owned names or it recorded.

The rows:
- PERSON_OWNED: what a person places (identity.md, memstore.toml, lenses/, meditations/, review/,
  teams/): who the agent is, its settings, the rules injected into it, what it sits with, the
  person's answers, the teams they joined;
- MACHINE_OWNED: what memstore alone writes (runtime/: the journal, the mirror, state; the derived
  files the client loads; the archives, out of which a file only memstore takes);
- AGENT_DENIED: both, the deny rules' list;
- PERSON_WORDS, SHELL_WORDS, SHELL_VERBS, watch_words: the words that make the shell check look;
- WIRING_WORDS, CLIENT_WIRING_WORDS, CLIENT_DIRS: the clients' files that carry memstore's wiring
  (with them rewritten, the deny rules and the refusing hook would be gone next session).
"""

from __future__ import annotations

import os

# Files a person places and the agent never changes (root-relative; a folder ends in "/");
# review/ holds the person's answers to what the memory proposes (memstore.hook.review).
# install denies Edit/Write on them in the client's own permission rules, and the hook
# denies writes to them (Write/Edit tools by real path; shell commands that name them).
# teams/ holds the clones of the teams the person joined (memstore.core.teams): they change by
# `memstore team pull` and by pull requests on the team's repository, never by the agent.
PERSON_OWNED = ("identity.md", "memstore.toml", "lenses/", "meditations/", "review/", "teams/")
# Files and folders memstore alone writes (root-relative, as above): the mirror, the journal and
# state under runtime/ (the journal cannot be rebuilt: a forged line there fakes reinforcement), and
# the derived files the client loads (an agent that wrote MEMORY.md itself would skip the inert
# render). The agent may read them; install denies writes to them, and so does the hook.
MACHINE_OWNED = ("runtime/", "memory/MEMORY.md", "memory/MEMORY-archive.md",
                 "memory/current-state.md",
                 # where forget, the nightly roll and deleted memories' copies go: taking a file
                 # out of an archive is the one real deletion, so only memstore moves them
                 "memory/archive/", "memory/short-term/archive/", "memory/dream-journal/archive/")
# The deny rules' list: everything above (wiring/protect.py).
AGENT_DENIED = (*PERSON_OWNED, *MACHINE_OWNED)
# Words a shell command must hold before the hook's shell check looks at it (the hook's cheap
# first look, and install's `if` filters for Bash): the person-owned names, undecorated.
PERSON_WORDS = ("identity", "memstore.toml", "lenses", "meditations", "review", "teams")
# The files that hold memstore's wiring in Claude Code, which the agent's shell may not rewrite
# either (with them gone, the deny rules and the refusing hook would be gone next session).
WIRING_WORDS = ("settings.json", "settings.local.json", "rules/memstore.md", "plugins/",
                ".local/bin/memstore")
# The same for Codex ($CODEX_HOME/hooks.json, config.toml) and Gemini CLI (.gemini/settings.json).
CLIENT_WIRING_WORDS = ("hooks.json", "config.toml")
CLIENT_DIRS = (".claude", ".codex", ".gemini")
# Words that make the shell check look at a command at all (the hook's cheap first look, and
# install's `if` filters for Bash): the person's names, memstore's own, the clients' folders, and
# the spellings that reach the root from elsewhere (a home, a climb); watch_words adds the root's.
SHELL_WORDS = (*PERSON_WORDS, "trust", "share", "team", "runtime", "MEMORY", "current-state",
               *CLIENT_DIRS, "~", "HOME", "..")
# Commands that move, delete, copy over or lock away whatever they name: each starts the shell
# check whatever it names, since quoting (`ag''ents`) or a plain absolute path above the root hides
# every word above (chmod, chown, truncate: `chmod -R 000 <a folder above the root>` locks the
# whole memory away).
SHELL_VERBS = ("mv ", "rm ", "rmdir ", "rsync ", "cp ", "tar ", "ln ", "find ", "unlink ", "shred ",
               "chmod ", "chown ", "chgrp ", "truncate ", "dd ")


def watch_words(root: str) -> tuple[str, ...]:
    """SHELL_WORDS, and the names of the folders between the home and the root (`agents` for
    ~/agents/me): a command that moves one of them moves the root. Plain os.path: the hook's
    path."""
    home = os.path.expanduser("~")
    words: dict[str, None] = dict.fromkeys(SHELL_WORDS)
    for form in dict.fromkeys((os.path.normpath(root), os.path.realpath(root))):
        inner = (form[len(home):] if home not in ("", "/") and form.startswith(home + os.sep)
                 else form)
        for part in inner.split(os.sep)[:-1]:
            if len(part) >= 3:  # shorter names would start the hook for most commands
                words[part] = None
    return tuple(words)


def person_owned(rel: str) -> bool:
    """Is this root-relative posix path one the person owns (case-insensitively: macOS)?"""
    folded = rel.casefold()
    return any(folded == owned.rstrip("/") or folded.startswith(owned) if owned.endswith("/")
               else folded == owned for owned in PERSON_OWNED)


def machine_owned(rel: str) -> bool:
    """Is this root-relative posix path one memstore alone writes (runtime/, the derived files)?"""
    folded = rel.casefold()
    return any(folded == owned.rstrip("/") or folded.startswith(owned) if owned.endswith("/")
               else folded == owned.casefold() for owned in MACHINE_OWNED)

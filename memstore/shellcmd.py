"""What a shell command may do to an agent root's files. Standard library only (the hook's path).

A person's files (identity.md, lenses/, meditations/, memstore.toml) must not change
through the agent's shell either. Claude Code's own deny rules (install writes them)
already stop redirections, `tee`, `sed -i`, `cp`, `mv` and `rm` aimed at those paths in
every mode; what they do not stop is a program that opens the file itself (`python3 -c
"open(...)"`, `perl -pi`) when the person runs without permission prompts. So: a command
that names one of those files of this root and is not plainly a read is refused.

This is a tripwire, not a sandbox: a command that builds the path at run time (a
variable, a glob such as `len*`, base64) is not seen. README says so.
"""

from __future__ import annotations

import os
import re
import shlex

# Commands that only read (with no output redirection anywhere in the command line).
READERS = frozenset({
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "wc", "ls", "stat", "file",
    "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "bat", "nl", "sort", "uniq", "cut", "column", "cd",
    "pwd", "echo", "printf", "true", "test", "[", "realpath", "readlink", "basename", "dirname", "tree", "find",
})
READ_ONLY_GIT = frozenset({"log", "diff", "show", "status", "blame", "grep", "ls-files", "rev-parse"})
_SPLIT = re.compile(r"\|\|?|&&|;|&|\(|\)|`|\$\(|\n")
_NAMES = r"identity\.md|memstore\.toml|lenses(?:/|\b)|meditations(?:/|\b)"


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment, comments=False)
    except ValueError:  # unbalanced quotes: judge the raw words
        return segment.split()


def _git_subcommand(words: list[str]) -> str | None:
    items = iter(words)
    for word in items:
        if word in ("-C", "-c", "--git-dir", "--work-tree", "--namespace"):
            next(items, None)
        elif not word.startswith("-"):
            return word
    return None


def _reads_only(command: str) -> bool:
    """Every simple command in it is a known reader, and nothing is redirected into a file."""
    if re.search(r"(?<![0-9&])>(?!&)|>>|\d>[^&]", command.replace("2>&1", "").replace(">/dev/null", "")
                 .replace("> /dev/null", "")):
        return False
    for segment in _SPLIT.split(command):
        words = [w for w in _words(segment) if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        if not words:
            continue
        head = os.path.basename(words[0])
        if head == "find" and any(w in ("-delete", "-exec", "-execdir", "-ok", "-fprint") for w in words):
            return False
        if head == "git" and _git_subcommand(words[1:]) in READ_ONLY_GIT:
            continue
        if head == "sed" and not any(w.startswith("-i") or w == "--in-place" for w in words[1:]):
            continue
        if head not in READERS:
            return False
    return True


def root_forms(root: str) -> list[str]:
    """The spellings of the root a command may use: as given, real, and ~-relative."""
    forms = {os.path.normpath(root), os.path.realpath(root)}
    home = os.path.expanduser("~")
    for form in list(forms):
        if home and home != "/" and (form == home or form.startswith(home + os.sep)):
            forms.add("~" + form[len(home):])
            forms.add("$HOME" + form[len(home):])
    return sorted(forms, key=len, reverse=True)


def names_person_file(command: str, root: str, cwd: str | None) -> str | None:
    """The person-owned name a command may write (identity.md, lenses/...), or None.

    It counts when the command names a person-owned file of this root: by one of the
    root's spellings followed by that name, or by the bare name while the shell stands
    in the root (its cwd, or a `cd` to it in the command) - and does not only read.
    """
    if not command or not re.search(_NAMES, command):
        return None
    forms = root_forms(root)
    named = None
    for form in forms:
        found = re.search(re.escape(form.rstrip("/")) + r"/+(" + _NAMES + ")", command)
        if found:
            named = found.group(1)
            break
    if named is None:
        inside = False
        if cwd:
            real = os.path.realpath(cwd)
            inside = any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in forms)
        inside = inside or any(form in command for form in forms)
        bare = re.search(r"(?:^|[\s'\"=<>/])(" + _NAMES + ")", command)
        if inside and bare:
            named = bare.group(1)
    if named is None or _reads_only(command):
        return None
    return named.rstrip("/")

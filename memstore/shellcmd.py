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

from memstore.kinds import CLIENT_DIRS, CLIENT_WIRING_WORDS, PERSON_OWNED, WIRING_WORDS

# Commands that only read (with no output redirection anywhere in the command line).
READERS = frozenset({
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "wc", "ls", "stat", "file",
    "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "bat", "nl", "sort", "uniq", "cut", "column", "cd",
    "pwd", "echo", "printf", "true", "test", "[", "realpath", "readlink", "basename", "dirname", "tree", "find",
})
# git subcommands that change no file of the work tree (a pull merges what the person pushed).
READ_ONLY_GIT = frozenset({"log", "diff", "show", "status", "blame", "grep", "ls-files", "rev-parse", "add", "commit",
                           "push", "fetch", "pull", "remote", "branch", "describe", "shortlog"})
_SPLIT = re.compile(r"\|\|?|&&|;|&|\(|\)|`|\$\(|\n")
_NAMES = "|".join(re.escape(name[:-1]) + r"(?:/|\b)" if name.endswith("/") else re.escape(name)
                  for name in PERSON_OWNED)  # identity\.md|memstore\.toml|lenses(?:/|\b)|...
# Answering what waits for review is the person's: the agent's shell may not run it.
_REVIEW_ANSWER = re.compile(r"\bmemstore\b.*\breview\s+(?:--?\S+\s+)*(accept|reject)\b", re.S)


def _words(segment: str) -> list[str]:
    import shlex

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


_QUIET = re.compile(r"\d?>&\d|\d?>\s*/dev/null")  # 2>&1, >/dev/null: no file written


def _reads_only(command: str) -> bool:
    """Every simple command in it is a known reader, and nothing is redirected into a file."""
    if re.search(r"(?<![0-9&])>(?!&)|>>|\d>[^&]", command.replace("2>&1", "").replace(">/dev/null", "")
                 .replace("> /dev/null", "")):
        return False
    for segment in _SPLIT.split(_QUIET.sub(" ", command)):
        words = [w for w in _words(segment) if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        if not words:
            continue
        head = os.path.basename(words[0])
        if head == "find" and any(w in ("-delete", "-exec", "-execdir", "-ok", "-fprint") for w in words):
            return False
        if head == "git" and _git_subcommand(words[1:]) in READ_ONLY_GIT:
            continue
        if head == "memstore" and not _REVIEW_ANSWER.search(" ".join(words)):
            continue  # memstore writes only derived files and memory/, by its own rules
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


def _places(command: str, cwd: str | None) -> list[str]:
    """Where the shell stands while the command runs: its cwd and every `cd` target, resolved."""
    here = cwd or os.getcwd()
    places = [here]
    for match in re.finditer(r"(?:^|[;&|(]\s*)(?:cd|pushd)\s+([^;&|)\s]+)", command):
        target = _words(match.group(1))[:1]
        if target:
            places.append(os.path.normpath(os.path.join(here, os.path.expanduser(target[0]))))
    return places


def _near(place: str, forms: list[str]) -> bool:
    """Is `place` the root, inside it, or a folder above it (from where `me/lenses` reaches in)?"""
    real = os.path.realpath(place)
    for form in forms:
        # "$HOME/..." is a spelling for the shell, not a path: expanded here, or it would resolve against
        # the hook's own folder (the project), which would then always count as above the root
        base = os.path.realpath(os.path.expanduser(form.replace("$HOME", "~", 1)))
        if real == base or real.startswith(base + os.sep) or (real != os.sep and base.startswith(real + os.sep)
                                                               and real != os.path.expanduser("~")):
            return True
    return False


def names_wiring(command: str, cwd: str | None) -> str | None:
    """A client's settings (Claude Code's, Codex's hooks.json and config.toml, Gemini CLI's) or memstore's
    rules file, when a command that does more than read names them under the client's folder: the agent
    rewriting them would drop memstore's protections."""
    if not command or not any(word in command for word in (*WIRING_WORDS, *CLIENT_WIRING_WORDS)):
        return None
    here = os.path.basename(os.path.realpath(cwd)) if cwd is not None else ""
    under = any(folder in command or here == folder for folder in CLIENT_DIRS) or (
        "CODEX_HOME" in command and any(word in command for word in CLIENT_WIRING_WORDS))
    if not under or _reads_only(command):
        return None
    return "the client's settings (they hold memstore's wiring)"


def _owned_folder(place: str, root: str) -> str | None:
    """The person's folder (lenses/, meditations/, review/) that `place` is in, if any."""
    real, base = os.path.realpath(place), os.path.realpath(root)
    if not (real == base or real.startswith(base + os.sep)):
        return None
    rel = os.path.relpath(real, base).replace(os.sep, "/") + "/"
    return next((owned.rstrip("/") for owned in PERSON_OWNED if owned.endswith("/") and rel.startswith(owned)), None)


def names_person_file(command: str, root: str, cwd: str | None) -> str | None:
    """What a command may write of the person's (identity.md, lenses/, the root itself ...), or None.

    It counts when the command does more than read (`_reads_only`) and names:
    - a person-owned file or folder of this root, by one of the root's spellings
      (`~/agents/me/lenses`), or by the bare name while the shell stands in the root
      (its cwd, or a `cd` in the command);
    - the root itself, other than its memory/ and runtime/ (`tar -C ~/agents/me`,
      `cp -r x/. ~/agents/me/`, `cd ~/agents/me && cp -r x/. .`): anything could land there.
    Writes into memory/ by the shell (`echo x >> ~/agents/me/memory/short-term/...`) stay allowed.
    """
    if command and _REVIEW_ANSWER.search(command):
        return "memstore review (answering it is the person's)"
    if not command:
        return None
    forms = root_forms(root)
    spelled = [form.rstrip("/") for form in forms if form.rstrip("/") and form.rstrip("/") in command]
    places = _places(command, cwd)
    # a shell standing in lenses/ (its folder, or a `cd` there) writes the person's files by bare name
    folder = next((owned for place in places if (owned := _owned_folder(place, root))), None)
    if folder is not None and not _reads_only(command):
        return folder
    inside = any(_near(place, forms) for place in places)
    named = re.search(r"(?:^|[\s'\"=<>/:(])(" + _NAMES + ")", command)
    if named is None and not spelled:
        return None
    if _reads_only(command):
        return None
    for form in spelled:
        owned = re.search(re.escape(form) + r"/+(" + _NAMES + ")", command)
        if owned:
            return owned.group(1).rstrip("/")
    if named is not None and (inside or spelled):
        return named.group(1).rstrip("/")
    for form in spelled:  # the root named, not (only) its memory/ or runtime/
        for match in re.finditer(re.escape(form) + r"(?![\w.-])(/+[^\s'\";|&)]*)?", command):
            rest = (match.group(1) or "").strip("/")
            if not rest.startswith(("memory/", "runtime/")) and rest not in ("memory", "runtime"):
                return "the agent root"
    return None

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

from memstore.core.access import CLIENT_DIRS, CLIENT_WIRING_WORDS, PERSON_OWNED, WIRING_WORDS

TYPE_CHECKING = False  # not typing's: importing typing costs the hook milliseconds
if TYPE_CHECKING:
    from memstore.hook import shellpaths

# Commands that only read (with no output redirection anywhere in the command line).
READERS = frozenset({
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "wc", "ls", "stat",
    "file", "diff", "cmp", "md5sum", "sha1sum", "sha256sum", "bat", "nl", "sort", "uniq", "cut",
    "column", "cd", "pwd", "echo", "printf", "true", "test", "[", "realpath", "readlink",
    "basename", "dirname", "tree", "find",
})
# git subcommands that change no file of the work tree (a pull merges what the person pushed).
READ_ONLY_GIT = frozenset({"log", "diff", "show", "status", "blame", "grep", "ls-files",
                           "rev-parse", "add", "commit", "push", "fetch", "pull", "remote",
                           "branch", "describe", "shortlog"})
_SPLIT = re.compile(r"\|\|?|&&|;|&|\(|\)|`|\$\(|\n")
_NAMES = "|".join(re.escape(name[:-1]) + r"(?:/|\b)" if name.endswith("/") else re.escape(name)
                  for name in PERSON_OWNED)  # identity\.md|memstore\.toml|lenses(?:/|\b)|...
# Answering what waits for review is the person's: the agent's shell may not run it.
_REVIEW_ANSWER = re.compile(r"\bmemstore\b.*\breview\s+(?:--?\S+\s+)*(accept|reject|done)\b", re.S)
_ANSWERS = frozenset({"accept", "reject", "done"})  # done: takes the person's accepted order away
_VALUED = frozenset({"--root", "--now"})  # memstore's options that take the next word
# `memstore team add|remove`: list, pull and init change no membership
_TEAM_CHANGES = frozenset({"add", "remove"})


def answers_review(command: str) -> bool:
    """Does `command` run `memstore review accept|reject` (or `memstore trust`, `memstore share`,
    `memstore team add|remove`), however it is spelled?

    Judged on the words as the shell splits them (shellpaths: quotes joined, so `acc''ept` and
    `"review"` count; wrappers such as `env -u X` looked through; `bash -c` and `eval` strings read
    as commands), not on the raw text: the words `review` then `accept` or `reject`, with only
    options between, in any simple command, whatever runs it (`memstore`, `python -m memstore`,
    `$(which memstore)`, a path to the script). A tripwire only: a word built at run time (`$r`)
    is not seen. What stops the answer is the command line's own rule
    (memstore.frontends.terminal): the person at their terminal, typing `y`.
    """
    if not command:
        return False
    if _REVIEW_ANSWER.search(command):
        return True
    from memstore.hook import shellpaths

    for segment in shellpaths.segments(command, None):
        for words in (segment.raw, segment.words):
            for at, word in enumerate(words):
                if word in ("trust", "share") and any("memstore" in w for w in words[:at]):
                    # `memstore trust` accepts a held change, `memstore share` proposes a memory
                    # to a team: the person's, as review is
                    return True
                if word == "team" and any("memstore" in w for w in words[:at]) \
                        and any(w in _TEAM_CHANGES for w in words[at + 1:]):
                    # joining or leaving a team is the person's (its lenses fire in every session)
                    return True
                if word != "review":
                    continue
                rest = iter(words[at + 1:])
                for nxt in rest:
                    if nxt in _ANSWERS:
                        return True
                    if not nxt.startswith("-"):
                        break
                    if nxt in _VALUED:
                        next(rest, None)
    return False


def _words(segment: str) -> list[str]:
    import shlex

    if len(segment) > 16_384:  # shlex is pure Python; a huge word would cost the hook seconds
        return segment.split()
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
    if re.search(r"(?<![0-9&])>(?!&)|>>|\d>[^&]",
                 command.replace("2>&1", "").replace(">/dev/null", "").replace("> /dev/null", "")):
        return False
    for segment in _SPLIT.split(_QUIET.sub(" ", command)):
        words = [w for w in _words(segment) if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        if not words:
            continue
        head = os.path.basename(words[0])
        if head == "find" and any(w in ("-delete", "-exec", "-execdir", "-ok", "-fprint")
                                  for w in words):
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


def _real(path: str) -> str:
    """realpath of a path a system can hold; a longer one as it stands (realpath's cost grows with
    the square of a path's depth: one 300 KB word took seconds, and no call can open such a
    path)."""
    return os.path.realpath(path) if len(path) <= 4096 else path


def _near(place: str, forms: list[str]) -> bool:
    """Is `place` the root, inside it, or a folder above it (from where `me/lenses` reaches in)?"""
    real = _real(place)
    for form in forms:
        # "$HOME/..." is a spelling for the shell, not a path: expanded here, or it would resolve
        # against the hook's own folder (the project), which would always count as above the root
        base = os.path.realpath(os.path.expanduser(form.replace("$HOME", "~", 1)))
        if real == base or real.startswith(base + os.sep) or (
                real != os.sep and base.startswith(real + os.sep)
                and real != os.path.expanduser("~")):
            return True
    return False


def names_wiring(command: str, cwd: str | None) -> str | None:
    """A client's settings (Claude Code's, Codex's hooks.json and config.toml, Gemini CLI's) or
    memstore's rules file, when a command that does more than read names them under the client's
    folder: the agent rewriting them would drop memstore's protections."""
    if not command or not any(word in command for word in (*WIRING_WORDS, *CLIENT_WIRING_WORDS)):
        return None
    if "memstore/config.toml" in command and not _reads_only(command):
        return "memstore's own config (the root it acts on)"
    if (".local/bin/memstore" in command
            or ("plugins/" in command and any(d in command for d in CLIENT_DIRS))) \
            and not _reads_only(command):
        return ("Claude Code's plugins and memstore's command "
                "(the code memstore's hooks and jobs run)")
    here = os.path.basename(os.path.realpath(cwd)) if cwd is not None else ""
    under = any(folder in command or here == folder for folder in CLIENT_DIRS) or (
        "CODEX_HOME" in command and any(word in command for word in CLIENT_WIRING_WORDS))
    if not under or _reads_only(command):
        return None
    return "the client's settings (they hold memstore's wiring)"


def _owned_folder(place: str, root: str) -> str | None:
    """The person's folder (lenses/, meditations/, review/) that `place` is in, if any."""
    real, base = _real(place), os.path.realpath(root)
    if not (real == base or real.startswith(base + os.sep)):
        return None
    rel = os.path.relpath(real, base).replace(os.sep, "/") + "/"
    return next((owned.rstrip("/") for owned in PERSON_OWNED
                 if owned.endswith("/") and rel.startswith(owned)), None)


def names_person_file(command: str, root: str, cwd: str | None) -> str | None:
    """What a command may write of the person's (identity.md, lenses/, the root itself ...), or
    None.

    It counts when the command does more than read (`_reads_only`) and names:
    - a person-owned file or folder of this root, by one of the root's spellings
      (`~/agents/me/lenses`), or by the bare name while the shell stands in the root
      (its cwd, or a `cd` in the command);
    - the root itself, other than its memory/ (`tar -C ~/agents/me`, `cp -r x/. ~/agents/me/`,
      `cd ~/agents/me && cp -r x/. .`): anything could land there;
    - anything else `refusal` finds by resolving the command's words (runtime/, the rendered
      index, a folder above the root, the clients' settings folders).
    Writes into memory/ by the shell (`echo x >> ~/agents/me/memory/short-term/...`) stay allowed.
    """
    if command and answers_review(command):
        return "memstore review and memstore trust (answering them is the person's)"
    if not command:
        return None
    return (_team_git(command, root, cwd) or _spelled(command, root, cwd)
            or refusal(command, root, cwd))


# git subcommands that change nothing, not even a ref: all the agent may run in a team's clone.
# (READ_ONLY_GIT is wider for the person's own root, where a pull merges what the person pushed; a
# team clone's refs, remote and work tree change only by `memstore team pull`: with `git remote
# set-url` and a pull, the agent's text would arrive as the team's.)
TEAM_READ_GIT = frozenset({"log", "diff", "show", "status", "blame", "grep", "ls-files", "ls-tree",
                           "rev-parse", "describe", "shortlog", "cat-file", "rev-list"})


def _team_git(command: str, root: str, cwd: str | None) -> str | None:
    """A git command that is not a pure read, run on a team clone: named (`teams`), or from a shell
    standing in one (its cwd, or a `cd` there)."""
    if "git" not in command:
        return None
    teams = [os.path.join(form, "teams") for form in {os.path.normpath(root), _real(root)}]
    standing = any(_real(place) == t or _real(place).startswith(t + os.sep)
                   for place in _places(command, cwd) for t in teams)
    if not standing and "teams" not in command:
        return None
    for segment in _SPLIT.split(command):
        words = [w for w in _words(segment) if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        at = next((i for i, w in enumerate(words) if os.path.basename(w) == "git"), None)
        if at is not None and _git_subcommand(words[at + 1:]) not in TEAM_READ_GIT:
            return "teams/ (a team's clone changes only by memstore team pull)"
    return None


def _spelled(command: str, root: str, cwd: str | None) -> str | None:
    """names_person_file by the root's spellings and the person's names in the text."""
    forms = root_forms(root)
    spelled = [form.rstrip("/") for form in forms
               if form.rstrip("/") and form.rstrip("/") in command]
    places = _places(command, cwd)
    # a shell standing in lenses/ (its folder, or a `cd` there) writes the person's files by name
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
        hit = re.search(re.escape(form) + r"/+(" + _NAMES + ")", command)
        if hit:
            return hit.group(1).rstrip("/")
    if named is not None and (inside or spelled):
        return named.group(1).rstrip("/")
    for form in spelled:  # the root named, not (only) its memory/ or runtime/
        for match in re.finditer(re.escape(form) + r"(?![\w.-])(/+[^\s'\";|&)]*)?", command):
            rest = (match.group(1) or "").strip("/")
            if not rest.startswith(("memory/", "runtime/")) and rest not in ("memory", "runtime"):
                return "the agent root"
    return None


# ---------------------------------------------------------------- by resolved path (shellpaths)

# Commands that move or delete what they name, wherever it stands among their words.
MOVERS = frozenset({"mv", "rm", "rmdir", "unlink", "shred", "trash", "trash-put", "gio", "rename",
                    "srm", "wipe", "chmod", "chown", "chgrp", "chattr", "setfacl", "mount",
                    "umount"})
# Commands that write into their last word (or the folder after -t, -C, -d): a copy over a folder.
COPIERS = frozenset({"cp", "rsync", "ln", "install", "tar", "unzip", "ditto", "cpio", "scp",
                     "bsdtar", "7z", "git"})
# Programs that can do anything with a path their text names.
INTERPRETERS = frozenset({"python", "python3", "perl", "ruby", "node", "php", "lua", "tclsh", "awk",
                          "gawk", "deno", "bun", "osascript", "powershell", "pwsh"})

def client_folders(cwd: str | None) -> list[str]:
    """The clients' settings folders (they hold memstore's hooks and deny rules), real paths."""
    home = os.path.expanduser("~")
    found = [os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"),
             os.environ.get("CODEX_HOME") or os.path.join(home, ".codex"),
             os.path.join(home, ".gemini")]
    if cwd:
        found += [os.path.join(cwd, folder) for folder in CLIENT_DIRS]
    return sorted({os.path.realpath(path) for path in found})


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _above(path: str, folder: str) -> bool:
    """Is `path` a folder strictly above `folder` (moving it moves `folder`)? The filesystem root
    aside."""
    return path != os.sep and folder.startswith(path.rstrip(os.sep) + os.sep)


def _what(path: str, bases: list[str], clients: list[str]) -> tuple[str, str] | None:
    """(kind, name) of a resolved path: one the agent may not change, the root, or a folder above
    them."""
    from memstore.core.access import machine_owned, person_owned

    for base in bases:
        if _inside(path, base):
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            if rel == ".":
                return "root", "the agent root"
            if person_owned(rel) or person_owned(rel + "/"):
                return "owned", rel.split("/")[0] if "/" in rel else rel
            if machine_owned(rel) or machine_owned(rel + "/"):
                return "owned", rel
            if rel == "memory" or rel.startswith("memory/"):
                return None  # the agent's own: memory writes are approved
            return "root", "the agent root"
        if _above(path, base):
            return "above", "a folder that holds the agent root"
    for folder in clients:  # the files inside are names_wiring's; here, the folder as a whole
        if path == folder:
            return "client", "the client's settings (they hold memstore's wiring)"
        if _above(path, folder):
            return "above", "a folder that holds the client's settings"
    return None


def _destinations(segment: shellpaths.Segment) -> list[str]:
    """The words a copier writes into: its last operand, or the folder after
    -t/-C/-d/--target-directory."""
    words = segment.words[1:]
    if segment.head == "git":  # git writes a work tree only through -C DIR / --work-tree, clone DIR
        out = [words[i + 1] for i, w in enumerate(words[:-1])
               if w in ("-C", "--work-tree", "--git-dir")]
        return out + [w.split("=", 1)[1] for w in words
                      if w.startswith(("--work-tree=", "--git-dir="))]
    out = [words[i + 1] for i, w in enumerate(words[:-1])
           if w in ("-t", "-C", "-d", "--target-directory", "--directory")]
    out += [w.split("=", 1)[1] for w in words
            if w.startswith(("--target-directory=", "--directory="))]
    operands = [w for w in words if not w.startswith("-")]
    return out + operands[-1:]


def _recursive(words: list[str]) -> bool:
    """A cp that copies folders (-r, -R, -a, --recursive, --archive): only that can land over the
    root."""
    return any(w in ("--recursive", "--archive")
               or (w.startswith("-") and not w.startswith("--") and any(c in w for c in "rRa"))
               for w in words[1:])


def refusal(command: str, root: str, cwd: str | None) -> str | None:
    """What a command would change that the agent may not, judged by where its words resolve; None
    if nothing. Plain reads (`_reads_only`) are always allowed.

    - a person's file or memstore's own (access.AGENT_DENIED), or the root other than memory/, named
      by any word of a command that does more than read, however it is spelled: relative to the
      project (`../../agents/me/identity.md`), after any chain of `cd`s, through `~` or `$HOME`;
    - the root, a folder above it, a client's settings folder or a folder above that (the home),
      moved or deleted (`mv ~/agents ~/a2`, `mv ~/.claude ~/.claude.bak`, `rm -rf ~`), copied over
      (`cp -r x/. ~/`, `tar -C ~ -x`), or named by an interpreter's program;
    - the same inside a string given to a shell (`bash -c "..."`, `eval`).
    """
    if not command or _reads_only(command):
        return None
    from memstore.hook import shellpaths

    bases = sorted({os.path.normpath(os.path.expanduser(form.replace("$HOME", "~", 1)))
                    for form in root_forms(root)} | {os.path.realpath(root)}, key=len, reverse=True)
    clients = client_folders(cwd)
    for segment in shellpaths.segments(command, cwd):
        head = segment.head
        mover = head in MOVERS or (head == "find" and any(
            w in ("-delete", "-exec", "-execdir", "-ok", "-okdir") for w in segment.words))
        dests = {shellpaths.resolve(word, segment.place)
                 for word in _destinations(segment)} if head in COPIERS else set()
        for _word, path in shellpaths.paths(segment):
            for form in dict.fromkeys((path, _real(path))):
                found = _what(form, bases, clients)
                if found is None:
                    continue
                kind, name = found
                if kind in ("owned", "root") and not (
                        kind == "root" and head in ("cd", "pushd", "chdir")):
                    return name
                into = (path in dests or form in dests) and (
                    head != "cp" or _recursive(segment.words))
                if kind in ("client", "above") and (mover or head in INTERPRETERS or into):
                    return name
    return None

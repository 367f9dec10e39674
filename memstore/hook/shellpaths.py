"""Where a shell command's words land on disk. Standard library only (the hook's path).

The hook's shell check (shellcmd.py) decides whether a command may change what the agent must
not change. Matching raw text misses most spellings of a path, so this module reads a command
the way the shell would, closely enough to say which paths it names:

- words are split as the shell splits them (quotes joined: `acc''ept` is `accept`), with the
  control operators (`;`, `&&`, `|`, `(` ...) and redirections (`>`, `>>` ...) apart;
- every `cd`, `pushd` and `popd` moves the place the following words are resolved against, so
  `cd ~; cd agents; echo x > me/identity.md` names `~/agents/me/identity.md`;
- each word is resolved against that place (`~`, `$HOME`, `..` and relative paths alike), and
  so is the value of `--opt=VALUE` and `of=VALUE`;
- wrappers (`env -u X`, `sudo`, `nice`, `timeout 5`, `xargs` ...) are looked through, and a
  string handed to a shell (`bash -c "..."`, `eval`) is read as a command of its own;
- inside any other word (a `python3 -c` program, say) absolute and home-relative paths are
  picked out by pattern.

It stays a tripwire, not a parser: a path built at run time (a variable, a glob, base64) is not
seen. Tamper evidence (tamper.py) is what catches what this misses.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator

CONTROL = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&", ";&"})
REDIRECT = frozenset({">", ">>", "<", "<<", "<<<", ">&", "&>", "&>>", ">|", "<>", "<&"})
# Commands that run the next words as a command: looked through to the real command.
WRAPPERS = frozenset({"env", "sudo", "doas", "command", "builtin", "exec", "nice", "nohup", "time",
                      "timeout", "stdbuf", "ionice", "xargs", "busybox", "setsid", "chronic",
                      "unbuffer", "flock", "caffeinate"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh"})
_EMBEDDED = re.compile(r"(?:~|\$\{?HOME\}?)(?=/|$|[\s'\",;)\]])[^\s'\",;)\]]*"
                       r"|(?<![\w.~$/])/[^\s'\",;)\]*?]+")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
MAX_LEXED = 16_384  # longer commands are split on whitespace and operators alone (quotes dropped)
_MAX_DEPTH = 3  # bash -c "bash -c '...'": deeper nesting is judged as plain words


class Segment:
    """One simple command: its words after wrappers, where it stood, and what it redirects into."""

    __slots__ = ("place", "raw", "targets", "words")

    def __init__(self, words: list[str], raw: list[str], targets: list[str], place: str) -> None:
        self.words = words  # the command itself, wrappers and leading assignments taken off
        self.raw = raw  # every word as written, wrappers included
        self.targets = targets  # redirection targets that write (`> f`, `>> f`, `&> f`)
        self.place = place

    @property
    def head(self) -> str:
        return os.path.basename(self.words[0]) if self.words else ""


def tokens(command: str) -> list[str]:
    """The command's words and operators as the shell splits them (quotes joined); never raises."""
    text = command.replace("\n", " ; ").replace("`", " ; ")
    if len(text) > MAX_LEXED:  # shlex is pure Python: a 300 KB command would cost the hook seconds
        return re.findall(r"[;&|()<>]+|[^\s;&|()<>]+", text.replace("'", " ").replace('"', " "))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: the shell would refuse it too; judge the plain words
        return re.findall(r"[;&|()<>]+|[^\s;&|()<>]+", text)


def _unwrap(words: list[str]) -> list[str]:
    """The command a wrapper runs: `env -u X FOO=1 memstore ...` is `memstore ...`."""
    while words:
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words or os.path.basename(words[0]) not in WRAPPERS:
            return words
        head, words = os.path.basename(words[0]), words[1:]
        while words and words[0].startswith("-"):
            flag, words = words[0], words[1:]
            # the options of env, sudo, timeout, nice and xargs that take a value
            if flag in ("-u", "-C", "-g", "-n", "-s", "-k", "-I", "-L", "-P", "-d", "-E", "-a",
                        "-S", "-D", "-c", "--unset", "--chdir", "--signal", "--kill-after",
                        "--user", "--group") and words:
                words = words[1:]
        if head == "timeout" and words and re.match(r"^\d", words[0]):
            words = words[1:]
    return words


def segments(command: str, cwd: str | None, *, depth: int = 0) -> Iterator[Segment]:
    """Each simple command of `command` with the place it runs in, following `cd` as the shell
    would."""
    home = os.path.expanduser("~")
    here = os.path.normpath(cwd or os.getcwd())
    before = here  # for `cd -`
    stack: list[str] = []
    words: list[str] = []
    targets: list[str] = []
    pending: str | None = None
    for token in [*tokens(command), ";"]:
        if pending is not None:
            if token not in CONTROL and token not in REDIRECT:
                if ">" in pending:
                    targets.append(token)
                else:
                    words.append(token)  # a file read from: still a word that names a path
            pending = None
            if token not in CONTROL:
                continue
        if token in REDIRECT:
            pending = token
            continue
        if token not in CONTROL:
            words.append(token)
            continue
        if not words and not targets:
            continue
        real = _unwrap(words)
        head = os.path.basename(real[0]) if real else ""
        if head in ("cd", "pushd", "chdir"):
            args = [w for w in real[1:] if not w.startswith("-") or w == "-"]
            target = args[0] if args else "~"
            if head == "pushd":
                stack.append(here)
            if target == "-":
                here, before = before, here
            else:
                here, before = resolve(target, here, home), here
        elif head == "popd" and stack:
            here, before = stack.pop(), here
        yield Segment(real, words, targets, here)
        if head in SHELLS and depth < _MAX_DEPTH:
            script = next((real[i + 1] for i, w in enumerate(real[:-1])
                           if re.match(r"^-\w*c\w*$", w)), None)
            if script is not None:
                yield from segments(script, here, depth=depth + 1)
        elif head == "eval" and depth < _MAX_DEPTH:
            yield from segments(" ".join(real[1:]), here, depth=depth + 1)
        words, targets = [], []


def resolve(word: str, place: str, home: str | None = None) -> str:
    """An absolute, normalised path for `word` as the shell would see it standing in `place`."""
    home = home or os.path.expanduser("~")
    for spelling in ("${HOME}", "$HOME"):
        if word == spelling or word.startswith(spelling + "/"):
            word = home + word[len(spelling):]
    if word == "~" or word.startswith("~/"):
        word = home + word[1:]
    elif word.startswith("~"):
        word = os.path.expanduser(word)
    return os.path.normpath(os.path.join(place, word))


def paths(segment: Segment) -> Iterator[tuple[str, str]]:
    """(word, absolute path) for every word of a segment that could name a path, targets included.

    A word's `--opt=VALUE` or `of=VALUE` value counts too, and inside a word that is a program (a
    `python3 -c` string) every absolute or home-relative path the pattern finds.
    """
    home = os.path.expanduser("~")
    at = len(segment.raw) - len(segment.words)  # where the command's own name stands (not a path)
    named = [w for i, w in enumerate(segment.raw) if i != at or not segment.words]
    for word in [*named, *segment.targets]:
        if not word or "\x00" in word or len(word) > 4096:
            continue
        candidates = [word]
        if "=" in word:
            candidates.append(word.split("=", 1)[1])
        if any(c in word for c in " ;()'\"\n,"):
            candidates += _EMBEDDED.findall(word)
        for candidate in candidates:
            if candidate and not candidate.startswith("-"):
                yield word, resolve(candidate, segment.place, home)

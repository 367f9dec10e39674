"""Which files a shell command shows the model. Standard library only (the hook's path).

Codex has no Read tool, and Gemini's agent may read through its shell too: a memory is
read by `cat`, `sed -n`, `head`, `rg` ... So reinforcement there means recognising, in
a command line, the files whose text the command prints. Deliberately narrow, as a miss
costs one reinforcement while a false read would rank a memory nobody read:

- only programs that print a file's text: cat, tac, nl, head, tail, less, more, bat,
  sed without -i, and grep/rg/ag with a file named (their matching lines are the text);
  grep's -l/-L/-c/-q print no text and are not reads;
- only files named in the command (a folder, `grep -r` over one, or a glob is not a read
  of any one memory; a glob would count every file it matches as read);
- not when that command's output goes into a file (`cat x > y`): the model sees none of it;
- relative paths against the shell's folder, `cd DIR` within the command followed, `~`
  and `$HOME` expanded, quotes removed (shlex).

It returns absolute paths; whether each is a memory of this root is the caller's question.
"""

from __future__ import annotations

import os
import re
import shlex

PRINTERS = frozenset({"cat", "tac", "nl", "head", "tail", "less", "more", "bat", "batcat", "sed"})
SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag"})
# Options that take the next word as their value, per program (the value is not a file).
_VALUED = {
    "head": {"-n", "-c", "--lines", "--bytes"},
    "tail": {"-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid"},
    "sed": {"-e", "-f", "--expression", "--file", "-l", "--line-length"},
    "bat": {"-l", "--language", "-r", "--line-range", "--style", "--theme", "-m", "--map-syntax",
            "--tabs", "--wrap", "--color", "--paging", "-H", "--highlight-line"},
    "nl": {"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"},
    "grep": {"-e", "-f", "-m", "-A", "-B", "-C", "--regexp", "--file", "--max-count",
             "--after-context", "--before-context", "--context", "--include", "--exclude",
             "--exclude-dir", "--label", "--color", "--colour", "-d", "-D", "--devices",
             "--directories", "--binary-files"},
    "rg": {"-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "-T", "--regexp", "--file",
           "--max-count", "--glob", "--type", "--type-not", "--context", "--after-context",
           "--before-context", "-M", "--max-columns", "--color", "--colors", "-E", "--encoding",
           "-j", "--threads", "--sort", "--sortr", "-r", "--replace", "--context-separator",
           "--field-match-separator", "--max-depth", "--iglob", "--pre", "--pre-glob"},
    "ag": {"-A", "-B", "-C", "-G", "-m", "--file-search-regex", "--ignore", "--max-count",
           "--depth"},
}
_VALUED["egrep"] = _VALUED["fgrep"] = _VALUED["grep"]
_VALUED["batcat"] = _VALUED["bat"]
# grep/rg switches after which no line of text is printed.
_NO_TEXT = {"-l", "-L", "-c", "-q", "--files-with-matches", "--files-without-match", "--count",
            "--quiet", "--silent", "--files", "--count-matches"}
_LISTS = re.compile(r"\|\||&&|;|(?<![>&])&(?![>&\d])|\n")  # between pipelines; a lone | is in one
# stdout into a file (stderr redirections are stripped first)
_WRITES = re.compile(r"(?<![0-9&<])>(?!&)|1>|&>")
_STDERR = re.compile(r"\b2>>?\s*(?:&1|\S+)")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_GLOB = re.compile(r"[*?\[]")


def _words(segment: str) -> list[str] | None:
    try:
        return shlex.split(segment, comments=True)
    except ValueError:
        return None  # unbalanced quotes: no judgement


def _expand(word: str, here: str) -> str:
    home = os.path.expanduser("~")
    if word.startswith("$HOME") and (len(word) == 5 or word[5] == "/"):
        word = home + word[5:]
    elif word.startswith("${HOME}"):
        word = home + word[7:]
    return os.path.normpath(os.path.join(here, os.path.expanduser(word)))


def _files(program: str, args: list[str]) -> list[str]:
    """The file operands of one printing or searching command (empty when it prints no file's
    text)."""
    valued = _VALUED.get(program, set())
    operands: list[str] = []
    pattern_given = False
    items = iter(args)
    ended = False
    for word in items:
        if not ended and word == "--":
            ended = True
            continue
        if not ended and word.startswith("-") and word != "-":
            name = word.split("=", 1)[0]
            if program in SEARCHERS and (name in _NO_TEXT or (
                    len(word) > 1 and word[1] != "-" and set(word[1:]) & {"l", "L", "c", "q"}
                    and name not in valued)):
                return []
            if program == "sed" and (name in ("-i", "--in-place") or (
                    word[1] != "-" and "i" in word[1:] and name not in valued)):
                return []  # sed -i edits, it does not show
            if name in valued and "=" not in word:
                if program in SEARCHERS and name in ("-e", "--regexp", "-f", "--file"):
                    pattern_given = True
                if program == "sed" and name in ("-e", "--expression", "-f", "--file"):
                    pattern_given = True
                next(items, None)
            continue
        operands.append(word)
    if program in SEARCHERS or program == "sed":
        # the first operand is the pattern or script
        operands = operands if pattern_given else operands[1:]
    return [w for w in operands if w != "-"]


def files_read(command: str, cwd: str | None) -> list[str]:
    """Absolute paths of the files whose text `command` prints, in order, each once."""
    if not command or len(command) > 100_000:
        return []
    here = cwd or os.getcwd()
    found: list[str] = []
    for pipeline in _LISTS.split(command):
        stages = [_STDERR.sub(" ", stage) for stage in pipeline.split("|")]
        if stages and _WRITES.search(stages[-1]):
            continue  # the pipeline's output goes into a file: the model sees none of it
        for stage in stages:
            if _WRITES.search(stage):
                continue
            words = _words(stage.replace("<", " "))  # `cat < file` reads file too
            if not words:
                continue
            while words and (_ASSIGN.match(words[0])
                             or words[0] in ("command", "builtin", "nice", "time", "sudo")):
                words = words[1:]
            if not words:
                continue
            program = os.path.basename(words[0])
            if program in ("cd", "pushd") and len(words) > 1:
                here = _expand(words[1], here)
                continue
            if program not in PRINTERS and program not in SEARCHERS:
                continue
            for word in _files(program, words[1:]):
                if _GLOB.search(word) or "$" in word.replace("$HOME", "") or "`" in word:
                    continue
                path = _expand(word, here)
                if path not in found and not os.path.isdir(path):
                    found.append(path)
    return found

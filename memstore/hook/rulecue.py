"""The rule cue: which sentences of a session's final answer are rules worth keeping as lessons,
and which are never kept because they remove a safeguard. Standard library only: the bundle
(on the hook's path) uses the same refusal for lessons written by hand or by the agent.

The shapes and rejections are described in memstore/life/capture.py's docstring, which uses them.
"""

from __future__ import annotations

import re
import unicodedata

from memstore.hook.factform import normalise

RULE_MAX_CHARS = 200
RULE_MIN_WORDS = 4

IMPERATIVES = ("run", "check", "use", "read", "call", "make", "ensure", "confirm", "verify",
               "rebuild", "commit", "stage", "ask", "add", "write", "test", "re-run", "rerun",
               "pass", "keep", "set", "stop", "wait", "look", "search", "grep", "sync", "render",
               "restart", "pin", "quote", "escape", "lock", "take", "clear", "close", "open",
               "install", "update", "delete", "remove", "drop", "fix", "pin", "store", "log",
               "validate", "treat", "document", "put", "name", "give", "leave", "return", "split",
               "limit", "guard", "handle", "wrap", "measure", "record", "prefix", "reuse", "mark",
               "label", "sign", "squash", "rebase", "merge", "push", "pull", "deploy", "release",
               "tag", "back", "show", "print", "raise", "catch", "retry", "review")

_STARTS = re.compile(r"^(Always|Never|Do not|Don't|Must|Avoid) ")
# Rule-shaped openings that are idioms or narrative ("Never mind the flaky test", "Must have been
# the cache").
_IDIOM = re.compile(r"^(Never (mind|again|seen|ever|before|once|heard)|Must(n't)? (have|be|'ve)|"
                    r"(Always|Never) (a|an|the|one|so|too|been|was|were)|"
                    r"(Don't|Do not) (worry|mind|panic|bother)|Avoided)\b")
_MODAL = re.compile(r"^(You|We|One|Everyone|Agents?) (should|must|need to|have to|ought to)\b"
                    r"(?! (have|be)\b)")
_IMPORTANT = re.compile(r"^It is (important|essential|vital|best|safer|wise) to \w")
# After an imperative at the start, these words make an idiom or a noun, not a command.
_IMPERATIVE_IDIOM = frozenset({"yourself", "me", "us", "him", "her", "them", "you", "it's", "what",
                               "if", "whether"})
_IDIOM_PAIRS = frozenset({("check", "out"), ("keep", "in"), ("use", "case"), ("use", "cases"),
                          ("use", "of"), ("remember", "when"), ("make", "sense"), ("back", "in"),
                          ("back", "then"), ("log", "out")})
_PREFER = re.compile(r"^Prefer \S.*\s(over|to|rather than)\s\S")
_CONDITION = re.compile(r"^(When|Whenever|If|Before|After) [^,]+,\s*(?P<rest>.+)$")
_RULE_HEAD = re.compile(r"^(always|never|do not|don't|must|avoid|prefer)\b|^(" + "|".join(
    re.escape(v) for v in IMPERATIVES) + r")\b", re.I)
_MUST = re.compile(r"\bmust (never|not|always)\b", re.I)

_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
_DATE = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{6}-[a-z]|"
    rf"\b({_MONTHS})[a-z]*\.? \d{{1,2}}\b|\b\d{{1,2}} ({_MONTHS})[a-z]*\b|"
    r"\b(yesterday|today|tonight|tomorrow)\b",
    re.I)
_HASH = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_FILE_LINE = re.compile(r"\S\.\w{1,8}:\d+|\bline \d+|\blines \d+")
_DIGIT_TOKEN = re.compile(r"\S*\d\S*")
_FIRST_PERSON = re.compile(
    r"\b(I|I'm|I've|I'd|I'll|me|my|mine|myself)\b|"
    r"\b[Ww]e('ve)? (\w+ed|ran|did|found|made|saw|got|wrote|took|had|were|went|spent|tried|built|"
    r"kept|left)\b")

# Rules that take away a safeguard or destroy work: never captured, whatever their shape.
# Two kinds, told apart by polarity: prohibiting a destructive act is a good rule ("Never
# force-push to main"), enjoining it is not; dropping a safeguard is bad however it is
# said ("Never ask before pushing", "Skip the review"), unless a prohibition cancels it
# ("Never push without asking").
_DESTRUCTIVE = re.compile(
    r"\b(delet|remov|skip|disabl|comment\w* out|ignor|mute|xfail|bypass|turn\w* off|switch\w* off)"
    r"\w*\s+(\S+\s+){0,3}?(tests?|specs?|checks?|checkers?|hooks?|lint\w*|ci|guards?|safeguards?|"
    r"assertions?|validation|type.?check\w*|warnings?|errors?|failures?|protections?|pre-commit)\b"
    r"|--no-verify|\bforce[- ]push|\bpush\s+(\S+\s+){0,3}?(--force|-f)\b|--force-with-lease"
    r"|\breset\s+--hard|\|\s*(sudo\s+)?(ba|z|da)?sh\b"
    r"|\bpip\w*\s+(\S+\s+){0,3}?(into|to)\s+(a\s+|the\s+)?(shell|bash|sh)\b"
    r"|\brm\s+-\w*[rf]|\b(delete|remove|wipe|erase|truncate|overwrite)\s+(\S+\s+){0,3}?"
    r"(files?|folders?|director\w+|branch\w*|history|data|databases?|backups?|repo\w*)\b"
    r"|\bchmod\s+(-R\s+)?777"
    r"|\bcommit\w*\s+(\S+\s+){0,3}?(secrets?|credentials?|keys?|tokens?|passwords?)\b"
    r"|\b(disabl\w*|turn\w* off)\s+(\S+\s+){0,2}?"
    r"(sandbox\w*|security|auth\w*|ssl|tls|certificates?)",
    re.I)
_SAFEGUARD = re.compile(r"^(ask|confirm|check|review|verif|approv|prompt|permission|tests?$|"
                        r"testing|lint|ci$|hooks?$|validat|backups?$|type-?check)", re.I)
# Safeguards named by a noun (tests, the linter): dropped only when the rule drops them wholesale,
# the noun ending the sentence or followed by a word of time ("Do not run the tests before
# committing").
_CHECKS = re.compile(r"^(tests?|testing|lint\w*|ci|hooks?|validat\w*|backups?|type-?check\w*)$",
                     re.I)
_WHOLESALE = frozenset({None, "", "before", "after", "when", "until", "again", "anymore", "first",
                        "at", "for"})
_NEGATORS = frozenset({"never", "not", "don't", "avoid", "stop", "without", "need", "skip",
                       "skipping", "skips", "disable", "disabling", "bypass", "bypassing", "ignore",
                       "ignoring", "remove", "removing"})
# Ways around a safeguard or out of the person's reach that need no negation to be harmful.
_ALWAYS_UNSAFE = re.compile(
    r"\bcommit\w*\b[^.]*\s-n\b|\bHUSKY=0|\bSKIP=|--no-gpg-sign|core\.hooksPath|--no-hooks?\b"
    r"|\b(avoid|never|don't|do not|stop|no need to)\s+(\S+\s+){0,2}?"
    r"(bother\w*|interrupt\w*|disturb\w*|pester\w*)"
    r"|\bgit\s+clean\b|\bpush\b[^.]*\s\+\S"
    r"|\b(drop|truncate|wipe|purge|nuke|destroy)\w*\s+(\S+\s+){0,3}?"
    r"(databases?|tables?|schemas?|collections?|volumes?|buckets?)\b",
    re.I)
# Secret material: a rule that does anything with it but forbid it is no rule to keep.
_SECRETS = re.compile(r"~/\.ssh|\bid_(rsa|ed25519|ecdsa)\b|\.aws/|(^|\s)\.env\b|\.pem\b|"
                      r"private keys?|api keys?|secret keys?|passwords?|credentials?|\bsecrets?\b|"
                      r"\btokens?\b|\bsudo\b", re.I)
_PROHIBITS = re.compile(r"^(Never|Do not|Don't|Avoid)\b|\b(must|should) (never|not)\b"
                        r"|^(When|Whenever|If|Before|After) [^,]+,\s*(never|do not|don't|avoid)\b",
                        re.I)


_DISGUISED = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")


def _mixed_script(word: str) -> bool:
    """A word whose letters come from Latin and another script at once (a homoglyph in disguise)."""
    scripts = set()
    for char in word:
        if char.isalpha():
            name = unicodedata.name(char, "")
            scripts.add("LATIN" if name.startswith("LATIN") else name.split(" ", 1)[0])
    return "LATIN" in scripts and len(scripts) > 1


def unsafe(sentence: str) -> bool:
    """Does the rule take away a safeguard or destroy work (see _DESTRUCTIVE and _SAFEGUARD)?"""
    prohibits = _PROHIBITS.search(sentence) is not None
    if _ALWAYS_UNSAFE.search(sentence):
        return True
    if (_DESTRUCTIVE.search(sentence) or _SECRETS.search(sentence)) and not prohibits:
        return True
    words = [w.strip(".,;:!()\"'`").lower() for w in sentence.split()]
    lead = 1 if words[:2] == ["do", "not"] else 0
    for i, word in enumerate(words):
        if not _SAFEGUARD.match(word):
            continue
        after = words[i + 1] if i + 1 < len(words) else None
        if _CHECKS.match(word) and after not in _WHOLESALE:
            continue  # "Never run the watcher tests in parallel ...": how to run them, not whether
        near = next((j for j in range(i - 1, max(i - 5, -1), -1) if words[j] in _NEGATORS), None)
        if near is None:
            continue
        if near == lead and prohibits:  # the prohibition falls on the safeguard: "Never ask ..."
            return True
        if not prohibits:  # "Skip the review", "without asking", "no need to check"
            return True
    return False


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+>]\s+|\d+[.)]\s+|#+\s+)+")


def sentences(text: str) -> list[str]:
    """The prose sentences of a markdown answer: no code blocks, tables, list marks or emphasis."""
    out: list[str] = []
    fenced = False
    for line in text.replace("\u2019", "'").splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith("|"):
            continue
        line = _LIST_MARK.sub("", line).replace("**", "").replace("__", "").strip()
        if line:
            out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def rejected(sentence: str) -> str | None:
    """Why a sentence cannot be a lesson even when it is rule-shaped, or None."""
    if "?" in sentence:
        return "question"
    if sentence.endswith(":"):
        return "lead-in"
    if len(sentence) > RULE_MAX_CHARS:
        return "too long"
    if len(sentence.split()) < RULE_MIN_WORDS:
        return "too short"
    if _DATE.search(sentence):
        return "date"
    if _HASH.search(sentence):
        return "commit hash"
    if _FILE_LINE.search(sentence):
        return "file:line reference"
    if len(_DIGIT_TOKEN.findall(sentence)) >= 3:
        return "numbers"
    if _FIRST_PERSON.search(sentence):
        return "first person"
    if _DISGUISED.search(sentence) or any(_mixed_script(word) for word in sentence.split()):
        return "disguised characters"  # "Never a\u200bsk", or a Cyrillic "а" in "ask"
    if unsafe(sentence):
        return "removes a safeguard"
    return None


def _imperative(sentence: str) -> bool:
    """Does the sentence open with a command ("Use UTC ...", "Make sure ...", "Remember to ...")?"""
    words = sentence.split()
    if len(words) < 2 or not words[0][:1].isupper():
        return False
    head, after = words[0].lower(), words[1].lower().strip(",.:;")
    if (head in ("make", "be") and after == "sure") or (head == "remember" and after == "to"):
        return True
    return (head in IMPERATIVES and after not in _IMPERATIVE_IDIOM
            and (head, after) not in _IDIOM_PAIRS)


def rule_shaped(sentence: str) -> bool:
    """Does the sentence match the cue (the module docstring) and pass every rejection?"""
    return rejected(sentence) is None and shaped(sentence)


UNSAFE_REASONS = ("removes a safeguard", "disguised characters")


def refused(answer: str) -> list[str]:
    """The answer's rule-shaped sentences that are never kept for safety (UNSAFE_REASONS)."""
    return [s for s in sentences(answer) if rejected(s) in UNSAFE_REASONS and shaped(s)]


def shaped(sentence: str) -> bool:
    """Does the sentence have a rule's shape (rejections aside)?"""
    if _IDIOM.match(sentence):
        return False
    if (_STARTS.match(sentence) or _PREFER.match(sentence) or _MUST.search(sentence)
            or _MODAL.match(sentence)
            or _IMPORTANT.match(sentence) or _imperative(sentence)):
        return True
    condition = _CONDITION.match(sentence)
    return bool(condition and _RULE_HEAD.match(condition.group("rest")))


def rules(answer: str) -> list[str]:
    """The rule-shaped sentences of an answer, in order, each once."""
    seen: set[str] = set()
    kept = []
    for sentence in sentences(answer):
        key = normalise(sentence)
        if rule_shaped(sentence) and key not in seen:
            seen.add(key)
            kept.append(sentence)
    return kept

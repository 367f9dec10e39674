"""What looks like a secret in memory text (keys, tokens, passwords, private keys, connection
strings).

A thin wrapper over detect-secrets: its plugins find, its filters drop the usual false positives;
this module only picks the plugin set and the file type, and says a finding in human words with
the value masked. `note`, `new` and the debrief refuse such text, `lint` warns about it in the
person's own files, `share` refuses it (a memory's root, and a team's, travel to a git remote).

The choice, measured (tests/test_secrets.py holds the figures):
- every plugin of detect-secrets but HexHighEntropyString and IPPublicDetector. Memories quote git
  SHAs, sha256 digests and model revisions all the time; hex is what they look like, and a hex
  credential comes with a keyword (KeywordDetector's case) or a prefix. A public IP address is not a
  secret. UUIDs are dropped by detect-secrets' own filter.
- KeywordDetector reads the text as a config file (FILENAME), so the unquoted `password=...`,
  `DB_PASSWORD=...` and `api_key: ...` people write in notes are found, not only quoted values; in
  prose that also matches a sentence ("Secret: the key rotates monthly"), which `reads_as_prose`,
  a filter registered with detect-secrets, drops.
- Nothing here reaches the network: detect-secrets verifies a finding only when its verification
  filter is configured, and it never is here. Its settings are process-wide, so they are set inside
  `transient_settings` under a lock and put back after every scan.

A line holding `pragma: allowlist secret` is skipped (detect-secrets' own allowlist), for a line
that only looks like a secret.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstore.core.agent_root import state_dir
from memstore.core.errors import MemstoreError
from memstore.core.inert import UNSEEN, for_terminal, pattern
from memstore.core.locks import atomic_write
from memstore.mirror.queries import own_file_digests

if TYPE_CHECKING:
    import sqlite3

    from detect_secrets.core.potential_secret import PotentialSecret

# detect-secrets' plugin class names; the order is the order a line's findings are named in (the
# specific before the generic).
PLUGINS: tuple[str, ...] = (
    "PrivateKeyDetector", "AWSKeyDetector", "GitHubTokenDetector", "GitLabTokenDetector",
    "SlackDetector", "StripeDetector", "OpenAIDetector", "JwtTokenDetector", "BasicAuthDetector",
    "ArtifactoryDetector", "AzureStorageKeyDetector", "CloudantDetector", "DiscordBotTokenDetector",
    "IbmCloudIamDetector", "IbmCosHmacDetector", "MailchimpDetector", "NpmDetector",
    "PypiTokenDetector", "SendGridDetector", "SoftlayerDetector", "SquareOAuthDetector",
    "TelegramBotTokenDetector", "TwilioKeyDetector", "KeywordDetector", "Base64HighEntropyString",
)
# The file name detect-secrets is told it scans: KeywordDetector picks its patterns by extension,
# and .ini's do not require quotes around the value.
FILENAME = "memory.ini"
_PROSE_FILTER = f"{__name__}.reads_as_prose"
# detect-secrets' secret_type, in words a person reads in a terminal line
KINDS = {
    "Private Key": "private key", "AWS Access Key": "AWS access key",
    "GitHub Token": "GitHub token",
    "GitLab Token": "GitLab token", "Slack Token": "Slack token", "Stripe Access Key": "Stripe key",
    "OpenAI Token": "OpenAI key", "JSON Web Token": "JSON web token",
    "Basic Auth Credentials": "password in a URL", "Secret Keyword": "password or secret",
    "Base64 High Entropy String": "random-looking key or token",
}
SHOWN_MAX = 160  # characters of the masked line shown
_LOCK = threading.Lock()  # detect-secrets' settings are one global: one scan at a time


@dataclass(frozen=True)
class Secret:
    """One finding: its line (1-based in the text scanned), what it looks like, and the line
    masked."""

    line: int
    kind: str
    shown: str


class SecretFound(MemstoreError):
    """Text that was to be written (or shared) holds what looks like a secret."""


def find(text: str) -> list[Secret]:
    """What looks like a secret in `text`, by line, the most specific kind first on each line."""
    return find_all([text])[0]


def find_all(texts: Sequence[str]) -> list[list[Secret]]:
    """find() for many texts under one settings context (lint's way: setting up costs ~1 ms)."""
    if not texts:
        return []
    from detect_secrets.settings import get_plugins, transient_settings

    unseen = pattern(UNSEEN)
    with _LOCK, transient_settings(_config()):
        plugins = get_plugins()
        # scanned as it will be shown: without the invisible characters the render drops (a
        # zero-width space inside a token hid it from every detector, and MEMORY.md then showed it)
        return [_scan(unseen.sub("", text) if unseen.search(text) else text, plugins)
                for text in texts]


def refuse(text: str, what: str) -> None:
    """Raise SecretFound, naming the first finding, when `text` holds anything that looks like a
    secret."""
    found = find(text)
    if found:
        first, lines = found[0], len({item.line for item in found})
        more = f" (and {lines - 1} more line{'s' * (lines > 2)})" if lines > 1 else ""
        raise SecretFound(f"{what} refused: line {first.line} looks like {a(first.kind)}{more}: "
                          f"{first.shown}", hint=HINT)


HINT = ("take the secret out of the text (keep it in a password manager or an environment "
        "variable) and try again")


def a(kind: str) -> str:
    """'an AWS access key', 'a GitHub token'."""
    return f"{'an' if kind[:1].lower() in 'aeio' else 'a'} {kind}"


def lint_findings(conn: sqlite3.Connection, root: Path, *, fresh_max: int | None = None,
                  skipped: list[str] | None = None) -> list[dict[str, str]]:
    """lint's warnings: a line of the person's own mirrored files that looks like a secret (their
    root travels to a git remote too). Derived files repeat their memories' lines; team files are
    the team's. `fresh_max` and `skipped` as scan_files takes them."""
    files = own_file_digests(conn)
    if fresh_max is not None:
        files = _within(root, files, fresh_max, skipped)
    return [{"path": rel, "level": "warning",
             "message": f"line {item.line} looks like {a(item.kind)}: {item.shown}; "
                        "take the secret out of the file "
                        "(keep it in a password manager or an environment variable)"}
            for rel, found in scan_files(root, files).items() for item in _first_per_line(found)]


def _within(root: Path, files: list[tuple[str, str]], fresh_max: int, skipped: list[str] | None
            ) -> list[tuple[str, str]]:
    """`files` less those past the first `fresh_max` whose digest the cache does not hold (named
    in `skipped`)."""
    cached = _cached(root)
    kept = []
    for rel, digest in files:
        if digest not in cached:
            if fresh_max <= 0:
                if skipped is not None:
                    skipped.append(rel)
                continue
            fresh_max -= 1
        kept.append((rel, digest))
    return kept


def _cached(root: Path) -> dict[str, list[list[Any]]]:
    """The findings runtime/state/secrets.json holds by digest, for this detector; {} when none."""
    try:
        held = json.loads((Path(state_dir(root)) / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if (isinstance(held, dict) and held.get("detector") == _signature()
            and isinstance(held.get("files"), dict)):
        return {digest: found for digest, found in held["files"].items() if _well_formed(found)}
    return {}


def _first_per_line(found: list[Secret]) -> list[Secret]:
    first: dict[int, Secret] = {}
    for item in found:
        first.setdefault(item.line, item)
    return list(first.values())


def scan_files(root: Path, files: Sequence[tuple[str, str]]) -> dict[str, list[Secret]]:
    """The findings of each (path, digest) of `root`'s files that has any, for lint.

    A file's findings are kept by its digest in runtime/state/secrets.json, so a lint scans only
    what changed since the last one (detect-secrets takes ~1.6 ms a file: 3 s for 2,000 files).
    The cache is written only when it changed; a root this process may not write is scanned, not
    cached. A file that cannot be read is skipped (lint names unreadable files elsewhere)."""
    cache_file = Path(state_dir(root)) / CACHE_FILE
    signature = _signature()
    cached = _cached(root)
    wanted = {digest for _, digest in files}
    kept = {digest: found for digest, found in cached.items() if digest in wanted}
    todo: dict[str, str] = {}
    for rel, digest in files:
        if digest not in kept and digest not in todo:
            try:
                todo[digest] = (root / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
    for digest, found in zip(todo, find_all(list(todo.values())), strict=True):
        kept[digest] = [[item.line, item.kind, item.shown] for item in found]
    if kept != cached:
        data = json.dumps({"detector": signature, "files": kept}, sort_keys=True,
                          separators=(",", ":"))
        try:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(cache_file, data.encode("utf-8"))
        except OSError:
            pass
    return {rel: [Secret(*item) for item in kept[digest]]
            for rel, digest in files if kept.get(digest)}


def _well_formed(found: Any) -> bool:
    """A cached entry as scan_files writes it: a list of [line, kind, shown] (a hand-edited one is
    scanned anew)."""
    return isinstance(found, list) and all(
        isinstance(item, list) and len(item) == 3 and isinstance(item[0], int)
        and isinstance(item[1], str) and isinstance(item[2], str) for item in found)


CACHE_FILE = "secrets.json"  # under runtime/state/: each scanned digest's findings
SCAN_VERSION = 3  # one more when the filter or the masking here changes: the cached findings go


def _signature() -> str:
    """What the cached findings were made with: a new detect-secrets or a new choice here scans
    anew."""
    from detect_secrets.__version__ import VERSION

    return f"detect-secrets {VERSION}; memstore {SCAN_VERSION}; {FILENAME}; {','.join(PLUGINS)}"


def reads_as_prose(secret: str, line: str, plugin: Any = None) -> bool:
    """detect-secrets filter: a keyword's unquoted value that starts with a plain word or a number
    is a sentence ("Secret: the key rotates", "secrets==1.5.0 pinned"), not a credential. A quoted
    value is always kept; so is one whose first word mixes letters with digits or symbols (hunter2,
    Tr0ub4dor&3)."""
    if (type(plugin).__name__ != "KeywordDetector"
            or any(f"{q}{secret}{q}" in line for q in "\"'")):
        return False
    words = secret.split()
    word = words[0].strip(".,;:!?()[]{}`*_") if words else ""
    if len(words) > 1:  # the value runs on in words: a sentence about a secret
        return word.isalpha() or not any(ch.isalpha() for ch in word)
    # one plain word alone is prose ("password: required", "token: none"); a long, mixed-case or
    # all-digit word is a credential (SuperSecretPassword, 12345678901234)
    return word.isalpha() and word.islower() and len(word) <= 10


def _config() -> dict[str, Any]:
    from detect_secrets.settings import Settings

    defaults = [{"path": path} for path in Settings().filters
                if path not in Settings.DEFAULT_FILTERS]
    return {"plugins_used": [{"name": name} for name in PLUGINS],
            "filters_used": [*defaults, {"path": _PROSE_FILTER}]}


def _scan(text: str, plugins: list[Any]) -> list[Secret]:
    # The plugins' own regexes over the whole text first: most texts match none, and then neither
    # the per-line calls nor detect-secrets' filters (one a slow regex over every line) run. A match
    # in a line is a match in the text (no plugin pattern anchors on a line's ends but through \s,
    # which a line break is), so nothing is missed; a text that matches gets the whole line scan.
    from detect_secrets.core.scan import _process_line_based_plugins

    if not any(plugin.analyze_line(filename=FILENAME, line=text, line_number=0)
               for plugin in plugins):
        return []
    lines = text.splitlines()
    by_line: dict[int, list[PotentialSecret]] = {}
    for found in _process_line_based_plugins(list(enumerate(lines, 1)), FILENAME):
        by_line.setdefault(found.line_number, []).append(found)
    rank = {name: n for n, name in enumerate(PLUGINS)}
    order = {type_: rank.get(_plugin_of(type_), len(rank))
             for type_ in {f.type for fs in by_line.values() for f in fs}}
    out = []
    for number in sorted(by_line):
        # a private key's finding is its BEGIN marker, not the key (the lines after it): shown as is
        shown = _masked(lines[number - 1], [f.secret_value or "" for f in by_line[number]
                                            if f.type != "Private Key"])
        kinds = sorted({f.type for f in by_line[number]}, key=lambda type_: order[type_])
        out += [Secret(number, KINDS.get(type_, type_), shown) for type_ in kinds]
    return out


def _plugin_of(secret_type: str) -> str:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    plugin: type | None = get_mapping_from_secret_type_to_class().get(secret_type)
    return plugin.__name__ if plugin is not None else ""


# a run of 16 or more characters of the kinds tokens are made of (display only: what find() reports
# is detect-secrets' decision, this only keeps the shown line from carrying one)
_TOKENISH = re.compile(r"(?<![A-Za-z0-9/+_.-])[A-Za-z0-9/+_.-]{16,}=*")


def _masked(line: str, values: list[str]) -> str:
    """`line` with each secret cut to its first few characters and ****; never the secret itself.

    A plugin's value can be a part of the secret (GitHubTokenDetector yields only `ghp`, the JWT
    detector may leave the signature out), so each value is widened to the run of characters it
    sits in (to a blank, a quote or a separator) before it is masked."""
    text = line.strip()
    spans: list[tuple[int, int]] = []
    for value in {value for value in values if value}:
        at = text.find(value)
        while at != -1:
            start, end = at, at + len(value)
            while start > 0 and text[start - 1] not in _LEFT_STOPS:
                start -= 1
            while end < len(text) and text[end] not in _RIGHT_STOPS:
                end += 1
            spans.append((start, end))
            at = text.find(value, at + 1)
    shown, last = [], 0
    for start, end in sorted(spans):
        if end <= last:
            continue
        start = max(start, last)
        keep = min(4, (end - start) // 4)  # a short secret shows less of itself
        shown += [text[last:start], text[start:start + keep], "****"]
        last = end
    shown.append(text[last:])
    # Whatever else on the line reads like a token is masked too: detectors name one secret of a
    # pair (an AWS key id, not its unquoted secret key beside it); this line lands in transcripts.
    masked = for_terminal(_TOKENISH.sub(lambda m: m.group()[:4] + "****"
                                        if any(c.isdigit() for c in m.group())
                                        and any(c.isalpha() for c in m.group())
                                        else m.group(), "".join(shown)))
    if len(masked) > SHOWN_MAX:
        masked = masked[:SHOWN_MAX - 1] + "…"
    if (values and not spans) or any(len(value) >= 4 and value in masked for value in values):
        return "(the line is not shown: it holds the secret)"
    return masked


_RIGHT_STOPS = frozenset(" \t\"'`,;<>()[]{}@")  # where a secret's run of characters ends
_LEFT_STOPS = _RIGHT_STOPS | frozenset("=:/")

"""Policy constants and their overrides from <root>/memstore.toml. Standard library only.

Every number the ranking, rendering and hook use lives here, so a person can tune
one agent's memory without touching code. Unknown keys are reported, not ignored
silently, because a misspelt override that does nothing is worse than an error.

Config is a plain class rather than a dataclass: this module is on the hook's path,
and importing dataclasses (with inspect behind it) costs more than the rest of the
hook's own work.
"""

from __future__ import annotations

import os

from memstore.core.errors import MemstoreError
from memstore.core.teams import Team, parse


class Config:
    # ranking (seed section 08)
    initial_stability: float = 14.0
    stability_growth: float = 1.6
    stability_cap: float = 365.0
    spacing_hours: float = 20.0
    importance_weight: float = 0.6
    # rendering budgets, in characters of rendered rows
    hot_budget: int = 12_000
    new_budget: int = 2_500
    cold_budget: int = 4_000
    new_days: int = 14
    new_row_chars: int = 160
    # a guard on the whole auto-loaded index: harnesses drop what is past their limit
    index_max_lines: int = 200
    index_max_bytes: int = 25_000
    # the cold-start bundle
    short_term_days: int = 7
    dream_entries: int = 3
    context_budget: int = 10_000
    # flush skips files a person may be editing right now
    flush_quiet_minutes: int = 10
    # hygiene
    lint_max_bytes: int = 16_384
    # the hook waits for SQLite at most this long before giving up (its journal line still lands)
    hook_lock_budget_ms: int = 250
    # a command waits at most this long for another process's sync, rebuild or flush to finish
    lock_timeout_s: float = 600.0
    # search: bm25 weights for (name, summary, description, body)
    search_weights: tuple[float, float, float, float] = (1.5, 2.0, 1.0, 1.0)
    # how strongly the share of query words a document covers scales its bm25 score
    search_coverage: float = 1.0
    # semantic search (the `semantic` extra): "auto" fuses vectors in when the extra is
    # installed, "off" keeps search to FTS5 alone
    semantic: str = "auto"
    # the vector side's share of a hybrid score (the FTS side has the rest); 0.5 measured best
    # on the LoCoMo dev split, with 0.45-0.6 within a point of it
    semantic_weight: float = 0.5
    # how long one `sync` or `rebuild` may spend embedding; the rest waits for `embed`, the
    # nightly tick or the next sync (a first sync of 10,000 files would otherwise take minutes)
    embed_budget_s: float = 8.0
    # a search embeds files changed since the last pass first, when there are at most this many
    search_embed_max: int = 16
    # pointers to up to three memories when a prompt arrives (memstore.core.pointers)
    prompt_pointers: bool = True
    # many machines: the one clone that flushes policy state into the files (its journal
    # identity, clone id or host name, as `memstore status` shows them); "" = any clone.
    # Two clones flushing the same file would write different values into the same lines.
    flush_host: str = ""
    # the teams' share of MEMORY.md's bands: New and Cold keep up to this share for team rows; in
    # Hot a team row only gets what the person's own rows leave (at most this share too):
    # memstore.mirror.render
    team_share: float = 0.3
    # the teams joined ([teams.NAME] tables, written by `memstore team add`; memstore.core.teams)
    teams: tuple[Team, ...] = ()

    def __init__(self, **overrides: object) -> None:
        for key, value in overrides.items():
            if key not in FIELDS:
                raise TypeError(f"unknown setting {key!r}")
            setattr(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        if key not in FIELDS:
            raise AttributeError(f"unknown setting {key!r}")
        object.__setattr__(self, key, value)

    def __repr__(self) -> str:
        changed = {k: v for k, v in vars(self).items() if v != getattr(type(self), k)}
        return f"Config({', '.join(f'{k}={v!r}' for k, v in changed.items())})"


FIELDS: tuple[str, ...] = tuple(Config.__annotations__)


class ConfigError(MemstoreError):
    """memstore.toml is unreadable or holds a key or value we do not know."""


CONFIG_FILE = "memstore.toml"


def load_config(root: str | os.PathLike[str] | None) -> Config:
    """Defaults overlaid with <root>/memstore.toml (flat keys, or under [memstore]), then
    $MEMSTORE_SEMANTIC."""
    config = _load_file(root)
    # One switch a person (or a test run) can flip without editing the root's file.
    semantic = os.environ.get("MEMSTORE_SEMANTIC", "").strip().lower()
    if semantic:
        if semantic not in ("auto", "off"):
            raise ConfigError(f"MEMSTORE_SEMANTIC={semantic!r}: unknown value",
                              hint='use "auto" or "off"')
        config.semantic = semantic
    return config


def semantic_source() -> str:
    """Where the semantic switch was set, for messages: the environment wins over the file."""
    return "$MEMSTORE_SEMANTIC" if os.environ.get("MEMSTORE_SEMANTIC", "").strip() else CONFIG_FILE


def _load_file(root: str | os.PathLike[str] | None) -> Config:
    if root is None:
        return Config()
    path = os.path.join(root, CONFIG_FILE)
    if not os.path.isfile(path):
        return Config()
    from memstore.core.tamper import is_held

    if is_held(os.fspath(root), CONFIG_FILE):
        # changed during an agent session: its overrides wait for `memstore trust memstore.toml`
        return Config()
    import tomllib  # only when there is a file to read: keeps the hook's common path lean

    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}",
                          hint="fix or remove memstore.toml") from exc
    teams = data.pop("teams", None)
    if isinstance(data.get("memstore"), dict):
        data = data["memstore"]
        teams = data.pop("teams", teams)
    changes: dict[str, object] = {}
    if teams is not None:
        changes["teams"], problem = parse(teams, path)
        if problem:
            raise ConfigError(problem, hint="memstore team list shows the teams; "
                                            "memstore team add writes one")
    for key, value in data.items():
        if key not in FIELDS:
            raise ConfigError(f"{path}: unknown setting {key!r}",
                              hint=f"known: {', '.join(FIELDS)}")
        default = getattr(Config, key)
        # semantic = false / true, as a person may write it
        if key == "semantic" and isinstance(value, bool):
            value = "auto" if value else "off"
        try:
            if isinstance(default, bool):
                if not isinstance(value, bool):  # bool("false") is True: only true/false
                    raise ValueError("not true or false")
            elif isinstance(default, tuple):
                value = tuple(float(v) for v in value)
                if len(value) != len(default):
                    raise ValueError("wrong length")
            else:
                value = type(default)(value)
        except (TypeError, ValueError) as exc:
            kind = ("true or false" if isinstance(default, bool)
                    else f"a list of {len(default)} numbers" if isinstance(default, tuple)
                    else {int: "a whole number", float: "a number"}.get(type(default), "a word"))
            example = str(default).lower() if isinstance(default, bool) else repr(default)
            raise ConfigError(f"{path}: bad value for {key}: {value!r}",
                              hint=f"{key} takes {kind}, e.g. {key} = {example}") from exc
        changes[key] = value
    if isinstance(changes.get("semantic"), str):
        changes["semantic"] = str(changes["semantic"]).strip().lower()
    share = changes.get("team_share", Config.team_share)
    if not isinstance(share, float) or not 0.0 <= share <= 1.0:  # nan and inf fail this too
        raise ConfigError(f"{path}: bad value for team_share: {share!r}",
                          hint="a share from 0 to 1, e.g. 0.3")
    if changes.get("semantic", "auto") not in ("auto", "off"):
        raise ConfigError(f"{path}: bad value for semantic: {changes['semantic']!r}",
                          hint='use "auto" or "off"')
    return Config(**changes)

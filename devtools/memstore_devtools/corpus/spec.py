"""What a corpus is made of: `CorpusSpec`, the T2 types and the malformed-file table.

Everything here is data or a pure function of it, so the planner, the renderers and the
tests can agree on names (`MALFORMED_NAMES`, `malformed_names`) without generating.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

T2_TYPES: tuple[str, ...] = ("feedback", "project", "reference", "user", "process", "handoff")

# Relative frequency of each type among generated T2 files (anchors aside).
_TYPE_WEIGHTS: tuple[int, ...] = (28, 18, 22, 8, 14, 10)

MALFORMED_KINDS: tuple[str, ...] = (
    "broken_yaml",  # unclosed quote (first instance) / bad indentation (later ones)
    "bom",  # UTF-8 byte-order mark before the opening ---
    "crlf",  # CRLF line endings throughout
    "not_mapping",  # frontmatter is a YAML list
    "wrong_types",  # access_count "many", stability -3, last_accessed not a date, importance 99
    "content_key",  # a key named `content` (collides with python-frontmatter's Post.content)
    "name_mismatch",  # name: differs from the file stem
    "no_frontmatter",  # plain markdown, no --- block at all
    "empty",  # zero bytes (only when malformed >= 9)
    "scalar_frontmatter",  # frontmatter is a bare YAML string (only when malformed >= 10)
)

# Fixed names for the first file of each malformed kind, so tests can point at them.
MALFORMED_NAMES: dict[str, str] = {
    "broken_yaml": "reference_orrin-tax-filing-calendar",
    "bom": "feedback_round-fx-after-summing-lines",
    "crlf": "process_month-end-accruals-checklist",
    "not_mapping": "project_saltmarsh-billing-migration",
    "wrong_types": "reference_kestrel-ads-spend-export",
    "content_key": "user_weekly-update-format",
    "name_mismatch": "handoff_heron-payouts-backfill-paused",
    "no_frontmatter": "feedback_label-currency-on-every-figure",
    "empty": "process_vendor-bank-details-change-check",
    "scalar_frontmatter": "feedback_quote-the-source-query",
}

_UTC = UTC


@dataclass
class CorpusSpec:
    """What to generate. Counts are targets; categories are clipped when `t2` is small."""

    t2: int = 300  # number of T2 topic files
    seed: int = 7
    now: datetime = datetime(2026, 7, 30, 12, 0, tzinfo=_UTC)
    reinforced_frac: float = 0.2  # fraction with access_count>0 and policy fields set
    pinned: int = 3
    superseded: int = 6
    malformed: int = 8  # spread over MALFORMED_KINDS, one of each of the first 8 when >= 8
    newborn: int = 12  # created within the last 14 days before `now`
    short_term: int = 10
    dream: int = 5
    bugs: int = 4
    lenses: int = 2
    meditations: int = 4  # both shelves represented
    in_flight: int = 3  # project files with in_flight: true and a one-line state


def malformed_names(count: int) -> dict[str, str]:
    """Stem -> kind of the first `count` malformed T2 files, in the order they are made.

    Kinds cycle through MALFORMED_KINDS; the first file of each kind has the fixed name in
    MALFORMED_NAMES, later rounds append -2, -3, ... to it. A corpus generated with
    `malformed=count` (and enough `t2`) holds exactly these files.
    """
    out: dict[str, str] = {}
    for i in range(count):
        kind = MALFORMED_KINDS[i % len(MALFORMED_KINDS)]
        rnd = i // len(MALFORMED_KINDS)
        out[MALFORMED_NAMES[kind] + (f"-{rnd + 1}" if rnd else "")] = kind
    return out


def _check_spec(spec: CorpusSpec) -> None:
    for field_name in (
        "t2",
        "pinned",
        "superseded",
        "malformed",
        "newborn",
        "short_term",
        "dream",
        "bugs",
        "lenses",
        "meditations",
        "in_flight",
    ):
        if getattr(spec, field_name) < 0:
            raise ValueError(f"CorpusSpec.{field_name} must be >= 0")
    if not 0.0 <= spec.reinforced_frac <= 1.0:
        raise ValueError("CorpusSpec.reinforced_frac must be between 0 and 1")

"""The policy arithmetic: spaced reinforcement, decay, and the retrieval score.

Standard library only: the hook applies the spacing gate on its path.

    score = (access_count + 1) * exp(-days_since(last_accessed) / stability) + w * importance

Two timestamps, never one: every touch refreshes last_accessed (recency), while
access_count and stability move only when the last reinforcement is at least
`spacing_hours` old (storage strength). Massed re-reads therefore move a memory to
the front without pretending it became durable.
"""

from __future__ import annotations

import datetime as dt
import math

from memstore.config import Config
from memstore.timeutil import days_between


class PolicyState:
    """Policy state of one memory. A plain class: dataclasses are too slow to import on the hook's path."""

    __slots__ = ("access_count", "last_accessed", "last_reinforced", "stability")

    def __init__(
        self,
        access_count: int,
        stability: float,
        last_accessed: dt.datetime | None,
        last_reinforced: dt.datetime | None,
    ) -> None:
        self.access_count = access_count
        self.stability = stability
        self.last_accessed = last_accessed
        self.last_reinforced = last_reinforced

    def _key(self) -> tuple[object, ...]:
        return (self.access_count, self.stability, self.last_accessed, self.last_reinforced)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PolicyState) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "PolicyState(access_count={!r}, stability={!r}, last_accessed={!r}, last_reinforced={!r})".format(
            *self._key()
        )


def baseline(
    access_count: int | None,
    stability: float | None,
    last_accessed: dt.datetime | None,
    last_reinforced: dt.datetime | None,
    config: Config,
) -> PolicyState:
    """The state written in a file's frontmatter, with defaults for what is missing."""
    return PolicyState(
        access_count=access_count if access_count is not None else 0,
        stability=stability if stability is not None else config.initial_stability,
        last_accessed=last_accessed,
        last_reinforced=last_reinforced,
    )


def apply_touch(state: PolicyState, when: dt.datetime, config: Config) -> PolicyState:
    """One Read/Edit/Write/MultiEdit at `when`, through the spacing gate."""
    last_accessed = when if state.last_accessed is None else max(state.last_accessed, when)
    gate_open = state.last_reinforced is None or (
        (when - state.last_reinforced).total_seconds() >= config.spacing_hours * 3600
    )
    if not gate_open:
        return PolicyState(state.access_count, state.stability, last_accessed, state.last_reinforced)
    return PolicyState(
        access_count=state.access_count + 1,
        # Rounded so the value a flush writes into the file reads back as exactly this state.
        stability=round(min(state.stability * config.stability_growth, config.stability_cap), 4),
        last_accessed=last_accessed,
        last_reinforced=when,
    )


def score(
    access_count: int,
    stability: float,
    last_accessed: dt.datetime,
    importance: float,
    now: dt.datetime,
    config: Config,
) -> float:
    """The retrieval score. Time before last_accessed (a future stamp) counts as zero days."""
    return score_days(access_count, stability, days_between(last_accessed, now), importance, config)


def score_days(access_count: int, stability: float, days: float, importance: float, config: Config) -> float:
    """The score from the days since last access (render computes those in SQL, for speed)."""
    days = max(days, 0.0)
    stability = stability if stability > 0 else config.initial_stability
    return (access_count + 1) * math.exp(-days / stability) + config.importance_weight * importance

"""A memory's score and stability over time, replayed from the journal, and drawn as SVG.

The replay is the policy's own (memstore.core.policy: the starting state the file carries, then
every journal event after its cut through the spacing gate), so the picture is the very
history that produced the number `list` shows. Between reads the score decays as
(access_count + 1)·exp(-days/stability); the curve is sampled so that decay is visible.

The SVG is drawn on the server: the page needs no script, the chart is part of the DOM a
browser renders, and nothing is fetched from elsewhere.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
import sqlite3
from dataclasses import dataclass, field
from html import escape

from memstore.core.config import Config
from memstore.core.policy import PolicyState, apply_touch, score_days, starting_state
from memstore.core.timeutil import days_between, fmt, parse_when
from memstore.mirror.queries import newest_reads, policy_source

MAX_EVENTS = 5000  # the newest this many reads are drawn; older ones are summed into the start
SAMPLES_PER_GAP = 24  # points on the decay curve between two reads
MIN_SPAN_DAYS = 7  # the shortest time a chart spans


@dataclass(slots=True)
class Read:
    when: dt.datetime
    tool: str
    host: str | None
    reinforced: bool  # False: inside the spacing gate, the read moved only last_accessed
    folded: bool  # True: before the file's own checkpoint, already inside its starting state


@dataclass
class History:
    start: dt.datetime | None
    now: dt.datetime
    reads: list[Read] = field(default_factory=list)
    score: list[tuple[dt.datetime, float]] = field(default_factory=list)
    stability: list[tuple[dt.datetime, float]] = field(default_factory=list)
    skipped: int = 0  # reads older than the MAX_EVENTS newest

    @property
    def reinforcements(self) -> int:
        return sum(1 for r in self.reads if r.reinforced)


def replay(conn: sqlite3.Connection, path: str, importance: float, now: dt.datetime,
           config: Config) -> History:
    """The history of one T2 memory (an empty one for a file the policy does not cover)."""
    row = policy_source(conn, path)
    if row is None:
        return History(start=None, now=now)
    state, cut = starting_state(row[1], row[2], row[3], row[4], row[5], config)
    total, events = newest_reads(conn, path, MAX_EVENTS)
    # The picture starts where the starting state stands (its last read), else at creation: what
    # came before is summed up in the file's own fields and cannot be drawn again.
    first = parse_when(events[0][0]) if events else None
    start = state.last_accessed or parse_when(row[0]) or first or now
    history = History(start=start, now=now, skipped=max(total - len(events), 0))

    def point(at: dt.datetime, s: PolicyState) -> None:
        days = days_between(s.last_accessed, at) if s.last_accessed else days_between(start, at)
        history.score.append((at, score_days(s.access_count, s.stability, days, importance,
                                             config)))

    def decay_until(until: dt.datetime, s: PolicyState) -> None:
        since = history.score[-1][0] if history.score else start
        span = (until - since).total_seconds()
        if span <= 0:
            return
        for k in range(1, SAMPLES_PER_GAP + 1):
            point(since + dt.timedelta(seconds=span * k / SAMPLES_PER_GAP), s)

    point(start, state)
    history.stability.append((start, state.stability))
    for ts, tool, host in events:
        when = parse_when(ts)
        if when is None:
            continue
        if cut is not None and ts <= cut:
            history.reads.append(Read(when, tool, host, reinforced=False, folded=True))
            continue
        decay_until(when, state)
        after = apply_touch(state, when, config)
        history.reads.append(Read(when, tool, host,
                                  reinforced=after.access_count > state.access_count, folded=False))
        state = after
        point(when, state)
        history.stability.append((when, state.stability))
    if now > (history.score[-1][0] if history.score else start):
        decay_until(now, state)
        history.stability.append((now, state.stability))
    return history


# ------------------------------------------------------------------------ drawing

WIDTH, HEIGHT = 720, 180
PAD_L, PAD_R, PAD_T, PAD_B = 48, 12, 14, 26


def _ticks(high: float, count: int = 4) -> tuple[list[float], float]:
    """Round tick values from 0 (steps of 1, 2 or 5 times a power of ten) and the axis top they
    need."""
    raw = max(high, 1e-9) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    n = math.ceil(high / step - 1e-9)
    return [step * i for i in range(n + 1)], step * n


_DAY_STEPS = (1, 2, 7, 14, 30, 61, 91, 182, 365, 730)


def _time_ticks(t0: float, t1: float, most: int = 6) -> list[tuple[dt.datetime, str]]:
    """Ticks on whole days (UTC midnights), labelled with the day they mark."""
    span = t1 - t0
    step = next((d for d in _DAY_STEPS if span / (d * 86400) <= most), _DAY_STEPS[-1])
    first = math.ceil(t0 / 86400) * 86400  # the first midnight (UTC) in the span
    return [(dt.datetime.fromtimestamp(t, dt.UTC),
             dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%d"))
            for t in range(int(first), int(t1) + 1, step * 86400)]


def chart(history: History, series: str, label: str, css_class: str) -> str:
    """One SVG line chart of `series` ("score" or "stability") with the reads marked on it."""
    points = getattr(history, series)
    if history.start is None or not points:
        return '<p class="muted">No history: this file is not a ranked memory.</p>'
    t1 = max(history.now.timestamp(), points[-1][0].timestamp())
    # a new memory: its first days, not a dot
    t0 = min(history.start.timestamp(), t1 - MIN_SPAN_DAYS * 86400)
    ticks, high = _ticks(max(v for _, v in points) * 1.05)
    low = 0.0
    inner_w, inner_h = WIDTH - PAD_L - PAD_R, HEIGHT - PAD_T - PAD_B

    def x(when: dt.datetime) -> float:
        return PAD_L + inner_w * (when.timestamp() - t0) / (t1 - t0)

    def y(value: float) -> float:
        return PAD_T + inner_h * (1 - (value - low) / (high - low))

    if series == "stability":  # a step: stability changes only at a reinforcing read
        coords: list[tuple[float, float]] = []
        for i, (when, value) in enumerate(points):
            if i:
                coords.append((x(when), coords[-1][1]))
            coords.append((x(when), y(value)))
    else:
        coords = [(x(when), y(value)) for when, value in points]
    path = " ".join(f"{'M' if i == 0 else 'L'}{cx:.1f},{cy:.1f}"
                    for i, (cx, cy) in enumerate(coords))
    parts = [
        f'<svg class="chart {css_class}" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" '
        f'xmlns="http://www.w3.org/2000/svg" data-series="{series}" data-points="{len(points)}">',
        f"<title>{escape(label)} of this memory over time</title>",
    ]
    for tick in ticks:
        ty = y(tick)
        parts.append(f'<line class="grid" x1="{PAD_L}" x2="{WIDTH - PAD_R}" y1="{ty:.1f}" '
                     f'y2="{ty:.1f}"/>')
        parts.append(f'<text class="axis" x="{PAD_L - 6}" y="{ty + 4:.1f}" '
                     f'text-anchor="end">{tick:g}</text>')
    for when, text in _time_ticks(t0, t1):
        tx = x(when)
        anchor = "start" if tx < PAD_L + 30 else "end" if tx > WIDTH - PAD_R - 30 else "middle"
        parts.append(f'<line class="grid" x1="{tx:.1f}" x2="{tx:.1f}" y1="{PAD_T}" '
                     f'y2="{HEIGHT - PAD_B}"/>')
        parts.append(f'<text class="axis" x="{tx:.1f}" y="{HEIGHT - 8}" '
                     f'text-anchor="{anchor}">{text}</text>')
    parts.append(f'<path class="line" d="{path}"/>')
    stamps = [when.timestamp() for when, _ in points]
    # hollow marks first: a reinforcing read an hour before them stays visible on top
    for read in sorted(history.reads, key=lambda r: r.reinforced):
        if read.when.timestamp() < t0:
            continue
        kind = "folded" if read.folded else "reinforced" if read.reinforced else "gated"
        value = _value_at(points, stamps, read.when)
        what = {"reinforced": "reinforced (the spacing gate was open)",
                "gated": "read inside the spacing gate: no reinforcement",
                "folded": "already counted in the file's own policy fields"}[kind]
        parts.append(
            f'<circle class="read {kind}" cx="{x(read.when):.1f}" cy="{y(value):.1f}" r="3.5">'
            f"<title>{escape(fmt(read.when))} {escape(read.tool)}"
            f"{' on ' + escape(read.host) if read.host else ''}: {what}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


def _value_at(points: list[tuple[dt.datetime, float]], stamps: list[float],
              when: dt.datetime) -> float:
    """The series' value at `when` (the last point at or before it)."""
    at = max(bisect.bisect_right(stamps, when.timestamp()) - 1, 0)
    value = points[at][1]
    return value if math.isfinite(value) else 0.0

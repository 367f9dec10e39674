"""T2 topic files: plan every name and role first, then render each file's bytes.

Planning decides names, types and roles (anchor, malformed, pinned, superseded,
in-flight, newborn, plain) and which files get the reinforced, long-summary, long-body
and summary-fallback treatments. Rendering then writes dates, frontmatter and body, and
`_malform` breaks the malformed ones in their assigned way.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memstore_devtools.corpus.fixed import _ANCHORS, ANCHOR_NAMES, _Anchor, _malformed_slots
from memstore_devtools.corpus.generator import _Gen, _title
from memstore_devtools.corpus.output import _cap, _frontmatter, _num, _stability, _ts, _yaml_str
from memstore_devtools.corpus.spec import _TYPE_WEIGHTS, MALFORMED_NAMES, T2_TYPES, malformed_names
from memstore_devtools.corpus.templates import _DESCRIPTIONS, _STATE_TEMPLATES

_UTC = UTC


@dataclass
class _T2Plan:
    name: str
    t2type: str
    role: str  # anchor | malformed | pinned | superseded | in_flight | newborn | plain
    slots: dict[str, str]
    malformed_kind: str | None = None
    reinforced: bool = False
    long_summary: bool = False
    long_body: bool = False
    summary_mode: str = "summary"  # summary | description_only | neither
    anchor: _Anchor | None = None


def _plan_t2(g: _Gen) -> list[_T2Plan]:
    """Decide every T2 file's name, type and role before writing any of them."""
    spec, rng = g.spec, g.rng
    n = spec.t2
    used: set[str] = set(MALFORMED_NAMES.values()) | set(ANCHOR_NAMES)
    plans: list[_T2Plan] = []

    def fresh(t2type: str) -> tuple[str, dict[str, str]]:
        for _ in range(12):
            topic, s = g.topic(t2type)
            name = f"{t2type}_{topic}"
            if name not in used:
                used.add(name)
                return name, s
        # Space is crowded: a numeric suffix keeps names unique at any scale.
        i = 2
        while f"{name}-{i}" in used:
            i += 1
        used.add(f"{name}-{i}")
        return f"{name}-{i}", s

    def take(k: int) -> int:
        return max(0, min(k, n - len(plans)))

    for a in _ANCHORS[: take(len(_ANCHORS))]:
        plans.append(_T2Plan(a.name, a.name.split("_", 1)[0], "anchor", {}, anchor=a))

    for name, kind in malformed_names(take(spec.malformed)).items():
        used.add(name)
        base = MALFORMED_NAMES[kind]
        t2type = name.split("_", 1)[0]
        plans.append(_T2Plan(name, t2type, "malformed", _malformed_slots(base),
                             malformed_kind=kind))

    for _ in range(take(spec.pinned)):
        t2type = rng.choice(("feedback", "user", "process"))
        name, s = fresh(t2type)
        plans.append(_T2Plan(name, t2type, "pinned", s))
    for _ in range(take(spec.superseded)):
        t2type = rng.choices(T2_TYPES, _TYPE_WEIGHTS)[0]
        name, s = fresh(t2type)
        plans.append(_T2Plan(name, t2type, "superseded", s))
    for _ in range(take(spec.in_flight)):
        name, s = fresh("project")
        plans.append(_T2Plan(name, "project", "in_flight", s))
    for _ in range(take(spec.newborn)):
        t2type = rng.choices(T2_TYPES, _TYPE_WEIGHTS)[0]
        name, s = fresh(t2type)
        plans.append(_T2Plan(name, t2type, "newborn", s))
    types = rng.choices(T2_TYPES, _TYPE_WEIGHTS, k=n - len(plans))
    for t2type in types:
        name, s = fresh(t2type)
        plans.append(_T2Plan(name, t2type, "plain", s))

    # Reinforced quota: anchors first, then a sample of the other eligible files.
    well = [p for p in plans if p.role != "malformed"]
    quota = round(spec.reinforced_frac * n)
    anchors = [p for p in well if p.role == "anchor"]
    for p in anchors[:quota]:
        p.reinforced = True
    eligible = [p for p in well if p.role not in ("anchor", "newborn")]
    for p in rng.sample(eligible, max(0, min(quota - len(anchors), len(eligible)))):
        p.reinforced = True

    # Summary-length and fallback cases, placed where renderers will meet them.
    generated = [p for p in well if p.role != "anchor"]
    newborns = [p for p in generated if p.role == "newborn"]
    n_long = max(3, n // 40) if n >= 20 else 0
    chosen = newborns[:2] + rng.sample(generated, min(len(generated), n_long))
    seen_ids: set[int] = set()
    for p in chosen:
        if len(seen_ids) >= n_long:
            break
        if id(p) not in seen_ids:
            seen_ids.add(id(p))
            p.long_summary = True
    plain = [p for p in generated if p.role == "plain" and not p.long_summary]
    n_desc_only = max(1, n // 100) if n >= 50 else 0
    n_neither = max(1, n // 300) if n >= 100 else 0
    n_long_body = max(2, n // 150) if n >= 50 else 0
    picks = rng.sample(plain, min(len(plain), n_desc_only + n_neither + n_long_body))
    for p in picks[:n_desc_only]:
        p.summary_mode = "description_only"
    for p in picks[n_desc_only : n_desc_only + n_neither]:
        p.summary_mode = "neither"
    for p in picks[n_desc_only + n_neither :]:
        p.long_body = True

    plans.sort(key=lambda p: p.name)
    return plans


def _render_t2(g: _Gen, p: _T2Plan, plans: list[_T2Plan]) -> tuple[bytes, float, list[str]]:
    """Bytes of one T2 file, its mtime, and the count categories it belongs to."""
    rng, now, today = g.rng, g.now, g.today
    cats: list[str] = []
    a = p.anchor

    # Dates: newborns are created 0-12 days ago (inside the 14-day window whatever the
    # hour); everything else at least 20 days ago, so the New band has a clean edge.
    if a is not None:
        created = today - timedelta(days=a.created_days_ago)
        updated = today - timedelta(days=a.updated_days_ago)
    elif p.role == "newborn":
        created = today - timedelta(days=rng.randrange(0, 13))
        updated = created + timedelta(days=rng.randrange(0, (today - created).days + 1))
    else:
        created = today - timedelta(days=rng.randrange(20, 420))
        span = min((today - created).days, 90)
        updated = created + timedelta(days=rng.randrange(0, span + 1))
        if p.role == "in_flight":
            updated = today - timedelta(days=rng.randrange(0, 10))  # live work is fresh

    if a is not None:
        s = g.fill(g.slots())
        summary, description, title, body = a.summary, a.description, a.title, a.body + "\n"
        body = f"# {title}\n\n{body}"
    else:
        s = g.slots()
        s.update(p.slots)
        g.fill(s)
        summary = g.summary(p.t2type, s, p.long_summary)
        description = _cap(rng.choice(_DESCRIPTIONS[p.t2type]).format(**s))
        title = _title(p.t2type, s)
        related = None
        if len(plans) > 1 and rng.random() < 0.3:
            other = plans[rng.randrange(len(plans))]
            if other.name != p.name and other.role != "malformed":
                related = other.name
        body = g.body(p.t2type, s, title, p.long_body, related)

    meta: list[tuple[str, str]] = [("name", p.name), ("type", p.t2type)]
    has_desc = a is not None or rng.random() < 0.8
    if p.summary_mode == "summary":
        meta.append(("summary", _yaml_str(summary)))
        if has_desc:
            meta.append(("description", _yaml_str(description)))
    elif p.summary_mode == "description_only":
        meta.append(("description", _yaml_str(description)))
        cats.append("no_summary")
    else:
        cats.append("no_summary_no_description")
    meta.append(("created", created.isoformat()))
    meta.append(("last_updated", updated.isoformat()))

    if p.role == "superseded":
        targets = [q for q in plans if q.role == "plain" and q.t2type == p.t2type]
        targets = targets or [q for q in plans if q.role == "plain"]
        # One bare "superseded" (no successor named) in every corpus with a few of them.
        bare = p is next(q for q in plans if q.role == "superseded")
        if targets and not (bare and g.spec.superseded >= 3):
            meta.append(("status", f"superseded by {targets[rng.randrange(len(targets))].name}"))
        else:
            meta.append(("status", "superseded"))
        cats.append("superseded")
    if p.role == "in_flight":
        meta.append(("in_flight", "true"))
        meta.append(("state", _yaml_str(_cap(rng.choice(_STATE_TEMPLATES).format(**s)))))
        cats.append("in_flight")

    # Policy fields: the reinforced set carries a consistent history; of the rest, some
    # carry the zero state written by `memstore new`, most carry none at all.
    if p.reinforced:
        if a is not None:
            k = a.access_count
            accessed = now - timedelta(hours=a.accessed_hours_ago)
            reinforced = now - timedelta(hours=a.reinforced_hours_ago)
        else:
            k = rng.choices(range(1, 10), (30, 22, 16, 11, 8, 6, 4, 2, 1))[0]
            born = datetime(created.year, created.month, created.day, tzinfo=_UTC)
            age_h = max(1, int((now - born).total_seconds() // 3600))
            r = rng.random()
            # Recency mixture: some hot, many lukewarm, a long cold tail.
            hours_ago = (
                rng.randrange(1, 72)
                if r < 0.3
                else rng.randrange(72, 45 * 24)
                if r < 0.7
                else rng.randrange(45 * 24, 300 * 24)
            )
            hours_ago = min(hours_ago, age_h - 1) if age_h > 1 else 0
            accessed = (now - timedelta(hours=hours_ago)).replace(minute=rng.randrange(60),
                                                                  second=0, microsecond=0)
            if accessed > now:
                accessed = now
            gap = 0 if rng.random() < 0.5 else rng.randrange(1, 20 * 60)
            reinforced = max(accessed - timedelta(minutes=gap), born)
            # k spaced reinforcements need (k-1) * 20 h between birth and the last one.
            k = max(1, min(k, 1 + int((reinforced - born).total_seconds() // (20 * 3600))))
        if rng.random() < 0.1:
            meta.append(("# policy fields: kept up to date by memstore, not by hand", ""))
        meta.append(("access_count", str(k)))
        meta.append(("last_accessed", _ts(accessed)))
        meta.append(("last_reinforced", _ts(reinforced)))
        meta.append(("stability", _num(_stability(k))))
        cats.append("reinforced")
    elif a is None and rng.random() < 0.35:
        meta.append(("access_count", "0"))
        meta.append(("stability", "14"))
        cats.append("zero_policy")
    else:
        cats.append("no_policy")

    if p.role == "pinned" or (a is not None and a.importance is not None) or rng.random() < 0.06:
        imp = a.importance if a is not None and a.importance is not None else rng.randrange(1, 10)
        meta.append(("importance", str(imp)))
        cats.append("importance")
    if p.role == "pinned":
        meta.append(("pin", "true"))
        cats.append("pinned")

    if p.role == "newborn":
        cats.append("newborn")
    if p.role == "anchor":
        cats.append("anchors")
    if p.long_summary and p.summary_mode == "summary":
        cats.append("long_summary")
    if p.long_body:
        cats.append("long_body")

    mtime = g.epoch(updated)

    if p.malformed_kind is None:
        cats.append("well_formed")
        return (_frontmatter(meta) + "\n" + body).encode(), mtime, cats

    # Malformed files count only as malformed: drop the well-formed categories.
    cats = ["malformed"]
    return _malform(p, meta, body, rng).encode("utf-8"), mtime, cats


def _malform(p: _T2Plan, meta: list[tuple[str, str]], body: str, rng: random.Random) -> str:
    kind = p.malformed_kind
    first = p.name == MALFORMED_NAMES.get(kind or "")  # later rounds get variants
    if kind == "broken_yaml":
        if first:
            # An unclosed double quote swallows the rest of the block: a scanner error.
            meta = [(k, '"' + v.strip('"') if k == "summary" else v) for k, v in meta]
        else:
            # A key indented under a plain scalar: "mapping values are not allowed here".
            meta = [*meta[:3], ("  description", "indented by mistake"), *meta[3:]]
        return _frontmatter(meta) + "\n" + body
    if kind == "bom":
        return "\ufeff" + _frontmatter(meta) + "\n" + body
    if kind == "crlf":
        return (_frontmatter(meta) + "\n" + body).replace("\n", "\r\n")
    if kind == "not_mapping":
        items = "".join(f"- {k}: {v}\n" for k, v in meta if not k.startswith("#"))
        return "---\n" + items + "---\n\n" + body
    if kind == "scalar_frontmatter":
        return "---\nJust a note about where the forecast figures come from\n---\n\n" + body
    if kind == "wrong_types":
        drop = {"access_count", "stability", "last_accessed", "last_reinforced", "importance"}
        meta = [(k, v) for k, v in meta if k not in drop]
        meta += [
            ("access_count", '"many"'),
            ("last_accessed", "not-a-date"),
            ("last_reinforced", "yesterday"),
            ("stability", "-3"),
            ("importance", "99"),
        ]
        return _frontmatter(meta) + "\n" + body
    if kind == "content_key":
        meta = [*meta, ("content", _yaml_str("Body text pasted into the frontmatter by mistake"))]
        return _frontmatter(meta) + "\n" + body
    if kind == "name_mismatch":
        # The stem gained a suffix; name: still holds the old one.
        stem = p.name
        old = stem.rsplit("-", 1)[0] if first else stem + "-old"
        meta = [("name", old) if k == "name" else (k, v) for k, v in meta]
        return _frontmatter(meta) + "\n" + body
    if kind == "no_frontmatter":
        return body
    if kind == "empty":
        return ""
    raise AssertionError(kind)

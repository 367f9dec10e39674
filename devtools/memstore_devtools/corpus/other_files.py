"""The non-T2 files: meditation objects, dream journal, short-term notes, bugs, lenses.

Their RNG calls come after every T2 file's, in the order `generate_corpus` calls these
writers, so adding a file here never changes a T2 file.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from memstore_devtools.corpus.fixed import _LENSES, _MEDITATIONS
from memstore_devtools.corpus.generator import _Gen
from memstore_devtools.corpus.output import (
    _cap,
    _frontmatter,
    _human_date,
    _num,
    _ts,
    _write,
    _yaml_str,
)
from memstore_devtools.corpus.templates import _BUG_TITLES, _GENERIC, _T1_FACTS, _T1_TOPICS
from memstore_devtools.corpus.vocabulary import _slug

_UTC = UTC


def _plan_sits(g: _Gen) -> tuple[list[tuple[str, str, str]], list[str], dict[str, date]]:
    """Meditation objects, the object each dream night sat with, and each object's last use.

    Dream nights rotate over every object but the last one, so `last_used` agrees with the
    journal and at least one object (when there are two or more) has never come up.
    """
    spec, today = g.spec, g.today
    objects: list[tuple[str, str, str]] = []
    for i in range(spec.meditations):
        base, shelf, prompt = _MEDITATIONS[i % len(_MEDITATIONS)]
        name = base if i < len(_MEDITATIONS) else f"{base}-{i // len(_MEDITATIONS) + 1}"
        objects.append((name, shelf, prompt))
    pool = [o[0] for o in objects[:-1]] if len(objects) > 1 else [o[0] for o in objects]
    pool = pool or ["the-gap-between-sessions"]
    dream_objects = [pool[j % len(pool)] for j in range(spec.dream)]
    last_used: dict[str, date] = {}
    for j, name in enumerate(dream_objects):
        last_used.setdefault(name, today - timedelta(days=1 + j))  # j=0 is the latest night
    return objects, dream_objects, last_used


def _write_meditations(
    g: _Gen,
    folder: Path,
    objects: list[tuple[str, str, str]],
    last_used: dict[str, date],
    tick: Callable[[], None],
) -> None:
    rng, today = g.rng, g.today
    for name, shelf, prompt in objects:
        weight = round(0.9 + rng.randrange(0, 11) / 100, 2)
        meta = [
            ("name", name),
            ("type", "meditation"),
            ("shelf", shelf),
            ("cadence_weight", _num(weight)),
        ]
        used_on = last_used.get(name)
        if used_on is not None:
            meta.append(("last_used", used_on.isoformat()))
        text = _frontmatter(meta) + f"\n# {_cap(name.replace('-', ' '))}\n\n{prompt}\n"
        _write(folder / f"{name}.md", text.encode(), g.epoch(used_on or today - timedelta(60)))
        tick()


def _write_dreams(g: _Gen, folder: Path, objects: list[str], tick: Callable[[], None]) -> None:
    rng, today = g.rng, g.today
    for i, obj in enumerate(objects):
        night = today - timedelta(days=1 + i)
        s = g.fill(g.slots())
        created = datetime(night.year, night.month, night.day, 2, 5 + rng.randrange(20),
                           tzinfo=_UTC)
        meta = [("created", _ts(created)), ("object", obj)]
        text = _frontmatter(meta) + (
            f"\n# Night of {_human_date(night)}\n\n"
            f"## What shifted\n\n"
            f"Sitting with {obj.replace('-', ' ')}, the {s['Code']} work looked less like a "
            f"data problem and more like a question of who trusts which number. "
            f"{g.sentences(_GENERIC, 1, s)}\n\n"
            f"## Still open\n\n"
            f"Whether the {s['obj']} rule is really about {s['vendor']} or about every "
            f"vendor that exports late.\n\n"
            f"## Carry forward\n\n"
            f"Start tomorrow by reading the {s['Code']} handoff before touching {s['table']}.\n"
        )
        _write(folder / f"{night:%y%m%d}-{obj}.md", text.encode(), g.epoch(created))
        tick()


def _write_short_term(g: _Gen, folder: Path, tick: Callable[[], None]) -> None:
    spec, rng, now = g.spec, g.rng, g.now
    seen: set[str] = set()
    for i in range(spec.short_term):
        # First half inside the 7-day visibility window, the rest just outside it.
        days = rng.randrange(0, 7) if i < (spec.short_term + 1) // 2 else rng.randrange(8, 30)
        created = (now - timedelta(days=days)).replace(hour=rng.randrange(8, 19),
                                                       minute=rng.randrange(60))
        if created > now:
            created = now - timedelta(minutes=5)
        s = g.fill(g.slots())
        slug = _slug(rng.choice(_T1_TOPICS).format(**s))
        fname = f"{created:%y%m%d}-{slug}"
        j = 2
        while fname in seen:
            fname = f"{created:%y%m%d}-{slug}-{j}"
            j += 1
        seen.add(fname)
        facts = rng.sample(_T1_FACTS, rng.randrange(2, 5))
        meta = [("created", _ts(created)), ("source", rng.choice(("debrief", "note")))]
        text = _frontmatter(meta) + "\n" + "".join(f"- {f.format(**s)}\n" for f in facts)
        _write(folder / f"{fname}.md", text.encode(), g.epoch(created))
        tick()


def _write_bugs(g: _Gen, folder: Path, tick: Callable[[], None]) -> None:
    spec, rng, today = g.spec, g.rng, g.today
    for i in range(spec.bugs):
        s = g.fill(g.slots())
        title = _BUG_TITLES[i % len(_BUG_TITLES)].format(**s)
        bug_id = f"{i + 1:04d}"
        opened = today - timedelta(days=rng.randrange(5, 120))
        # Alternate open/closed, open first, so any two bugs cover both states.
        closed = (opened + timedelta(days=rng.randrange(1, (today - opened).days + 1))
                  if i % 2 == 1 else None)
        meta = [
            ("id", f'"{bug_id}"'),
            ("title", _yaml_str(title)),
            ("status", "closed" if closed else "open"),
            ("opened", opened.isoformat()),
        ]
        if closed is not None:
            meta.append(("closed", closed.isoformat()))
        body = (
            f"# {title}\n\n"
            f"Found while working on {s['Code']} ({s['ticket']}). "
            f"{g.sentences(_GENERIC, 2, s)}\n\n"
            f"Repro: load the {s['month']} {s['obj']} into {s['table']} and compare the row "
            f"count with the source file.\n"
        )
        if closed is not None:
            body += f"\nClosed: fixed in {s['branch']}; the counts now agree.\n"
        slug = "-".join(_slug(title).split("-")[:7])
        text = _frontmatter(meta) + "\n" + body
        _write(folder / f"{bug_id}-{slug}.md", text.encode(), g.epoch(closed or opened))
        tick()


def _write_lenses(g: _Gen, folder: Path, tick: Callable[[], None]) -> None:
    spec, today = g.spec, g.today
    for i in range(spec.lenses):
        base, tool_match, path_pattern, cap, title, body = _LENSES[i % len(_LENSES)]
        name = base if i < len(_LENSES) else f"{base}-{i // len(_LENSES) + 1}"
        lines = [
            "---",
            f"name: {name}",
            "type: lens",
            "trigger:",
            f"  tool_match: '{tool_match}'",
        ]
        if path_pattern is not None:
            lines.append(f"  path_pattern: '{path_pattern}'")
        lines += [f"body_token_cap: {cap}", "---", "", f"# {title}", "", body, ""]
        _write(
            folder / f"{name}.md",
            "\n".join(lines).encode(),
            g.epoch(today - timedelta(days=30 + i)),
        )
        tick()

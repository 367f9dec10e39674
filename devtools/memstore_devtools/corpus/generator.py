"""`_Gen`: one generation run's seeded RNG, its slot fillers and its text builders.

Every random choice in a corpus goes through `_Gen.rng`, one `random.Random(spec.seed)`,
called in a fixed order; that is what makes the output a pure function of the spec.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

from memstore_devtools.corpus.output import _cap, _epoch, _human_date
from memstore_devtools.corpus.spec import CorpusSpec
from memstore_devtools.corpus.templates import (
    _CAP_KEYS,
    _FB_BODY,
    _FB_HOW,
    _FB_WHY,
    _FB_WHY_LONG,
    _GENERIC,
    _HO_BODY,
    _PC_BODY,
    _PC_STEP_LINES,
    _PR_BODY,
    _PREF_DETAIL,
    _QUIRKS,
    _RF_BODY,
    _RF_CODE,
    _SUMMARIES,
    _US_BODY,
)
from memstore_devtools.corpus.vocabulary import (
    _ACTIONS,
    _ARTIFACTS,
    _ASPECTS,
    _AUDIENCES,
    _CODENAMES,
    _CURRENCIES,
    _ENVS,
    _FB_CONTEXTS,
    _FIELDS,
    _HANDOFF_STATES,
    _MONTHS,
    _OBJECTS,
    _PEOPLE,
    _PREF_ASPECTS,
    _PROCESSES,
    _STEPS,
    _TABLES,
    _TEAMS,
    _TICKET_PREFIXES,
    _TOOLS,
    _TZS,
    _VENDORS,
    _WEEKDAYS,
    _WORKSTREAMS,
    _slug,
)

_UTC = UTC


class _Gen:
    """One generation run: holds the seeded RNG and the per-run state."""

    def __init__(self, spec: CorpusSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        now = spec.now
        # A naive `now` is read as UTC; an aware one is converted, so output is stable.
        self.now = now.replace(tzinfo=_UTC) if now.tzinfo is None else now.astimezone(_UTC)
        self.today = self.now.date()
        # mtimes come from each file's own dates (deterministic), and stay at least an hour
        # before `now` so a fresh corpus never looks like a live session to flush or tick.
        self.mtime_cap = (self.now - timedelta(hours=1)).timestamp()
        # Per-file sentence decks (keyed by pool identity), so a file never repeats itself.
        self.decks: dict[int, list[str]] = {}

    # ------------------------------------------------------------------ random helpers

    def epoch(self, d: date | datetime) -> float:
        return min(_epoch(d), self.mtime_cap)

    def money(self) -> str:
        rng = self.rng
        _code, sym = rng.choice(_CURRENCIES)
        whole = rng.randrange(12, 48000)
        return f"{sym}{whole:,}.{rng.randrange(100):02d}"

    def slots(self, new_file: bool = True) -> dict[str, str]:
        """Fresh random fillers for every placeholder a template may use."""
        if new_file:
            self.decks.clear()
        rng = self.rng
        ch = rng.choice
        code = ch(_CODENAMES)
        person = ch(_PEOPLE)
        slots = {
            "vendor": ch(_VENDORS),
            "vendor2": ch(_VENDORS),
            "tool": ch(_TOOLS),
            "tool2": ch(_TOOLS),
            "person": person,
            "person2": ch(_PEOPLE),
            "obj": ch(_OBJECTS),
            "obj2": ch(_OBJECTS),
            "field": ch(_FIELDS),
            "field2": ch(_FIELDS),
            "n": str(rng.randrange(2, 60)),
            "big": f"{rng.randrange(120, 98000):,}",
            "pct": str(rng.randrange(1, 35)),
            "hours": str(rng.randrange(2, 48)),
            "amt": self.money(),
            "tz": ch(_TZS),
            "weekday": ch(_WEEKDAYS),
            "month": ch(_MONTHS),
            "code": code,
            "table": ch(_TABLES),
            "env": ch(_ENVS),
            "team": ch(_TEAMS),
            "ticket": f"{ch(_TICKET_PREFIXES)}-{rng.randrange(100, 9999)}",
            "day": _human_date(self.today - timedelta(days=rng.randrange(3, 400))),
            "repo": f"{code}-{ch(('sync', 'etl', 'reports', 'tools', 'recon', 'api'))}",
            "branch": f"{ch(('fix', 'feat', 'chore', 'wip'))}/{code}-{rng.randrange(1, 400)}",
            "ctx2": ch(_FB_CONTEXTS),
        }
        slots["pslug"] = _slug(person)
        return slots

    def sentences(self, pool: tuple[str, ...], k: int, s: dict[str, str]) -> str:
        """`k` sentences from `pool`, dealt without repeats until the file's deck runs out."""
        deck = self.decks.get(id(pool))
        out: list[str] = []
        for _ in range(k):
            if not deck:
                deck = list(pool)
                self.rng.shuffle(deck)
                self.decks[id(pool)] = deck
            out.append(deck.pop().format(**s))
        return " ".join(out)

    # ------------------------------------------------------------------ topics

    def topic(self, t2type: str) -> tuple[str, dict[str, str]]:
        """A kebab topic for `t2type` and the slots it fixes (so body text matches it)."""
        ch = self.rng.choice
        if t2type == "feedback":
            a, o, c = ch(_ACTIONS), ch(_OBJECTS), ch(_FB_CONTEXTS)
            return _slug(f"{a} {o} {c}"), {"action": a, "obj": o, "ctx": c}
        if t2type == "project":
            c, o, w = ch(_CODENAMES), ch(_OBJECTS), ch(_WORKSTREAMS)
            return _slug(f"{c} {o} {w}"), {"code": c, "obj": o, "ws": w}
        if t2type == "reference":
            i = self.rng.randrange(len(_VENDORS))
            o, a = ch(_OBJECTS), ch(_ASPECTS)
            return _slug(f"{_VENDORS[i]} {o} {a}"), {"vendor": _VENDORS[i], "obj": o, "aspect": a}
        if t2type == "user":
            a, p, d = ch(_ARTIFACTS), ch(_PREF_ASPECTS), ch(_AUDIENCES)
            return _slug(f"{a} {p} {d}"), {"artifact": a, "pref": p, "aud": d}
        if t2type == "process":
            p, st, v = ch(_PROCESSES), ch(_STEPS), ch(_VENDORS)
            return _slug(f"{p} {st} {v}"), {"process": p, "step": st, "vendor": v}
        c, o, st = ch(_CODENAMES), ch(_OBJECTS), ch(_HANDOFF_STATES)
        return _slug(f"{c} {o} {st}"), {"code": c, "obj": o, "state": st}

    def fill(self, s: dict[str, str]) -> dict[str, str]:
        """Derived slots (capitalised forms, the vendor quirk) once topic slots are set."""
        rng = self.rng
        for key in _CAP_KEYS:
            if key in s:
                s[_cap(key)] = _cap(s[key])
        s["vslug"] = _slug(s["vendor"])
        s["oslug"] = _slug(s["obj"])
        aspect = s.get("aspect") or rng.choice(_ASPECTS)
        s["quirk"] = rng.choice(_QUIRKS[aspect]).format(**s)
        s["why"] = rng.choice(_FB_WHY).format(**s)
        s["Why"] = _cap(s["why"])
        s["pref_detail"] = rng.choice(_PREF_DETAIL).format(**s)
        s.setdefault("ctx", rng.choice(_FB_CONTEXTS))
        s.setdefault("state", rng.choice(_HANDOFF_STATES))
        return s

    def summary(self, t2type: str, s: dict[str, str], long: bool) -> str:
        """Index-row text: 40-140 chars normally, over 160 when `long`."""
        rng = self.rng
        pool = _SUMMARIES[t2type]
        text = ""
        for _ in range(8):
            text = _cap(rng.choice(pool).format(**s))
            if 40 <= len(text) <= 140:
                break
        if len(text) > 140:
            text = text[:137].rsplit(" ", 1)[0].rstrip(",;:-") + "."
        if len(text) < 40:
            text = text.rstrip(".") + f", per {s['person']} in {s['month']}."
        if long:
            extra = (
                f" Applies to {s['obj2']} from {s['vendor2']} as well, and to anything "
                f"the {s['team']} team touches in {s['month']}; {s['person2']} agreed on "
                f"{s['day']} after the {s['ticket']} review"
            )
            text = text.rstrip(".") + "." + extra + "."
            if len(text) <= 160:  # short topic words: pad past the New band's 160-char cut
                text += f" Checked again with {s['person']} in {s['month']}."
        return text

    def body(self, t2type: str, s: dict[str, str], title: str, long: bool,
             related: str | None) -> str:
        rng = self.rng
        paras: list[str] = []
        if t2type == "feedback":
            paras.append(self.sentences(_FB_BODY, 2, s))
            paras.append(rng.choice(_FB_WHY_LONG).format(**s))
            paras.append(rng.choice(_FB_HOW).format(**s))
        elif t2type == "project":
            paras.append(self.sentences(_PR_BODY, 3, s))
            paras.append(self.sentences(_PR_BODY, 2, s))
        elif t2type == "reference":
            paras.append(self.sentences(_RF_BODY, 2, s))
            if rng.random() < 0.35:
                paras.append(rng.choice(_RF_CODE).format(**s))
            paras.append(self.sentences(_RF_BODY, 2, s))
        elif t2type == "user":
            paras.append(self.sentences(_US_BODY, 2, s))
            paras.append(self.sentences(_US_BODY, 1, s))
        elif t2type == "process":
            paras.append(self.sentences(_PC_BODY, 2, s))
            steps = rng.sample(_PC_STEP_LINES, rng.randrange(3, 7))
            paras.append("\n".join(f"{i}. {t.format(**s)}" for i, t in enumerate(steps, 1)))
        else:
            paras.append(self.sentences(_HO_BODY, 3, s))
            paras.append(self.sentences(_HO_BODY, 2, s))
        # A few more short paragraphs of shared vocabulary: 2-6 paragraphs in all.
        for _ in range(rng.randrange(0, 7 - len(paras))):
            paras.append(self.sentences(_GENERIC, rng.randrange(1, 4), s))
        if related and len(paras) < 6 and rng.random() < 0.5:
            paras.append(f"See also {related}.")
        if long:
            # A long file (~8 KB) for oversize lint and snippet tests: dated log entries.
            size = sum(len(p) for p in paras)
            entry = 0
            while size < 8000:
                entry += 1
                s2 = self.slots(new_file=False)
                s2.update({k: v for k, v in s.items() if k in ("vendor", "obj", "code")})
                p = f"## Log entry {entry} ({s2['day']})\n\n" + self.sentences(_GENERIC, 4, s2)
                paras.append(p)
                size += len(p)
        return f"# {title}\n\n" + "\n\n".join(paras) + "\n"


def _title(t2type: str, s: dict[str, str]) -> str:
    if t2type == "feedback":
        return _cap(f"{s['action']} {s['obj']} {s['ctx']}")
    if t2type == "project":
        return f"{_cap(s['code'])}: {s['ws']} of {s['obj']}"
    if t2type == "reference":
        return f"{s['vendor']} {s['obj']} - {s['aspect']}"
    if t2type == "user":
        return _cap(f"{s['artifact']} {s['aud']}: {s['pref']}")
    if t2type == "process":
        return _cap(f"{s['process']} {s['step']} ({s['vendor']})")
    return f"Handoff: {s['Code']} {s['obj']} ({s['state']})"

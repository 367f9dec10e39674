"""The meditation rotation: no immediate repeat, the awareness floor, score = weight x factor,
last use read from the dream journal (archive/ included), malformed objects skipped."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from pathlib import Path

import pytest

from memstore.api.store import Store
from memstore.core.starter_templates import MEDITATIONS
from memstore.life.meditation import MeditationObject, Sit, choose, factor, load_objects, load_sits
from tests.helpers import write

DAY0 = dt.datetime(2026, 7, 1, 3, 0, tzinfo=dt.UTC)


def obj(root: Path, stem: str, shelf: str, weight: object = None) -> None:
    lines = ["---", "type: meditation", f"shelf: {shelf}"]
    if weight is not None:
        lines.append(f"cadence_weight: {weight}")
    write(root, f"meditations/{stem}.md",
          "\n".join([*lines, "---", "", f"# {stem}", "", "Sit with it.", ""]))


def sit_entry(
        root: Path, day: dt.date, stem: str, shelf: str | None,
        folder: str = "memory/dream-journal") -> None:
    front = ["---", f"date: {day.isoformat()}", "kind: meditation", f"object: {stem}"]
    if shelf:
        front.append(f"shelf: {shelf}")
    write(root, f"{folder}/{day:%y%m%d}-meditation-{stem}.md",
          "\n".join([*front, "---", "", "What shifted.", ""]))


def simulate(root: Path, nights: int) -> list[tuple[str, str]]:
    """Choose, write the journal entry the sit would leave, advance a day; (object, shelf) per
    night."""
    sequence = []
    for n in range(nights):
        now = DAY0 + dt.timedelta(days=n)
        choice = Store(root, now=now).meditate_next()
        assert choice.object is not None and choice.shelf is not None
        sit_entry(root, now.date(), choice.object, choice.shelf)
        sequence.append((choice.object, choice.shelf))
    return sequence


def assert_rotation_rules(sequence: list[tuple[str, str]]) -> None:
    for before, after in itertools.pairwise(sequence):
        assert before[0] != after[0], f"immediate repeat of {after[0]} in {sequence}"
    # The floor: whenever three sits in a row were all instrumental, the next one is awareness.
    for start in range(len(sequence) - 3):
        window, following = sequence[start : start + 3], sequence[start + 3]
        if not any(shelf == "awareness" for _, shelf in window):
            assert following[1] == "awareness", (
                f"{following} followed three instrumental sits {window}")


@pytest.fixture
def library(root: Path) -> Path:
    """One awareness object of low weight against three instrumental ones of full weight."""
    obj(root, "breath", "awareness", 0.5)
    obj(root, "bugs", "instrumental", 1.0)
    obj(root, "index", "instrumental", 1.0)
    obj(root, "lessons", "instrumental", 1.0)
    return root


def test_rotation_follows_the_hand_computed_sequence(library: Path) -> None:
    # Night 0: no sits yet, so the floor leaves only breath. Night 1: the three instrumental
    # objects tie at 1.0 (never used): bugs by name. Night 2: index (1.0) over breath
    # (0.5 x 0.18). Night 3: lessons (never used). Night 4: the last three sits were all
    # instrumental, so the floor makes it breath although bugs scores higher (0.257 against
    # 0.5 x 0.327 = 0.164). Then the same four-night cycle again.
    expected = ["breath", "bugs", "index", "lessons", "breath", "bugs", "index", "lessons",
                "breath", "bugs"]
    sequence = simulate(library, len(expected))
    assert [name for name, _ in sequence] == expected
    assert_rotation_rules(sequence)


def test_the_awareness_floor_overrides_a_higher_score(library: Path) -> None:
    simulate(library, 4)  # breath, bugs, index, lessons
    choice = Store(library, now=DAY0 + dt.timedelta(days=4)).meditate_next()
    scores = {c.name: c for c in choice.candidates}
    assert scores["bugs"].score > scores["breath"].score  # without the floor, bugs would win
    assert choice.object == "breath"
    assert scores["bugs"].excluded_by == "awareness-floor"
    assert scores["lessons"].excluded_by == "last-sit"
    assert any(rule.startswith("awareness floor") for rule in choice.rules)
    assert [r["object"] for r in choice.recent] == ["bugs", "index", "lessons"]


def test_rotation_is_deterministic_and_holds_its_rules_over_the_starter_library(
        tmp_path: Path) -> None:
    runs = []
    for attempt in range(2):
        plan = Store.plan_init(tmp_path / f"agent{attempt}")
        from memstore.life.scaffold import apply_plan

        apply_plan(plan)
        runs.append(simulate(plan.root, 21))
    assert runs[0] == runs[1]
    assert_rotation_rules(runs[0])
    # every object comes up
    assert {name for name, _ in runs[0]} == {name[:-3] for name in MEDITATIONS}


def test_init_lays_out_two_objects_on_each_shelf(tmp_path: Path) -> None:
    from memstore.life.scaffold import apply_plan

    plan = Store.plan_init(tmp_path / "agent")
    apply_plan(plan)
    objects, skipped, notes = load_objects(plan.root)
    assert skipped == [] and notes == []
    shelves = sorted(o.shelf for o in objects)
    assert shelves == ["awareness", "awareness", "instrumental", "instrumental"]
    assert all(0.9 <= o.weight <= 1.0 for o in objects)


def test_factor_grows_with_days_and_a_never_used_object_scores_its_full_weight() -> None:
    assert factor(None) == 1.0
    assert factor(0) == 0.0
    assert factor(7) == pytest.approx(0.5)
    assert factor(14) == pytest.approx(0.75)
    objects = [MeditationObject("old", "meditations/old.md", "awareness", 1.0, ""),
               MeditationObject("fresh", "meditations/fresh.md", "awareness", 0.6, ""),
               MeditationObject("other", "meditations/other.md", "awareness", 1.0, "")]
    today = dt.date(2026, 7, 30)
    sits = [Sit(today - dt.timedelta(days=7), "old", "awareness", "memory/dream-journal/a.md"),
            Sit(today - dt.timedelta(days=1), "other", "awareness", "memory/dream-journal/b.md")]
    choice = choose(objects, sits, today)
    by_name = {c.name: c for c in choice.candidates}
    assert by_name["fresh"].score == pytest.approx(0.6)  # never used: full weight
    assert by_name["old"].score == pytest.approx(0.5)  # a week since: half its weight
    assert choice.object == "fresh"


def test_last_use_is_read_from_the_archive_too(library: Path) -> None:
    day = DAY0.date()
    sit_entry(library, day - dt.timedelta(days=2), "bugs", "instrumental",
              "memory/dream-journal/archive")
    sit_entry(library, day - dt.timedelta(days=1), "breath", "awareness",
              "memory/dream-journal/archive/2026")
    assert {s.object for s in load_sits(library)} == {"bugs", "breath"}
    choice = Store(library, now=DAY0).meditate_next()
    by_name = {c.name: c for c in choice.candidates}
    assert by_name["breath"].excluded_by == "last-sit"
    assert (by_name["bugs"].days == 2
            and by_name["bugs"].last_used == (day - dt.timedelta(days=2)).isoformat())
    assert choice.object in ("index", "lessons")


def test_sits_are_ordered_by_date_then_name_and_future_entries_do_not_count(library: Path) -> None:
    day = DAY0.date()
    sit_entry(library, day, "bugs", "instrumental")
    sit_entry(library, day, "index", "instrumental")  # same date: "…-index" sorts after "…-bugs"
    sit_entry(library, day + dt.timedelta(days=3), "lessons", "instrumental")  # not yet, as of now
    choice = Store(library, now=DAY0).meditate_next()
    by_name = {c.name: c for c in choice.candidates}
    assert by_name["index"].excluded_by == "last-sit"
    assert by_name["lessons"].last_used is None


def test_malformed_objects_are_skipped_with_a_reason(root: Path) -> None:
    obj(root, "good", "awareness", 1.0)
    obj(root, "lazy", "instrumental", "lots")  # a weight that is not a number: default 0.95
    obj(root, "plain", "instrumental")  # no weight: default 0.95
    write(root, "meditations/broken.md", "---\ntype: meditation\nshelf: [awareness\n---\nbody\n")
    write(root, "meditations/bare.md", "no frontmatter at all\n")
    write(root, "meditations/lens.md", "---\ntype: lens\nshelf: awareness\n---\n")
    write(root, "meditations/shelfless.md", "---\ntype: meditation\nshelf: kitchen\n---\n")
    write(root, "meditations/binary.md", b"\x00\xff\xfe---\n")
    write(root, "meditations/empty.md", "")
    objects, skipped, notes = load_objects(root)
    assert sorted(o.stem for o in objects) == ["good", "lazy", "plain"]
    assert {o.stem: o.weight for o in objects}["lazy"] == 0.95
    assert {o.stem: o.weight for o in objects}["plain"] == 0.95
    reasons = {item["path"]: item["reason"] for item in skipped}
    assert set(reasons) == {f"meditations/{n}.md"
                            for n in ("broken", "bare", "lens", "shelfless", "binary", "empty")}
    assert "YAML" in reasons["meditations/broken.md"]
    assert "kitchen" in reasons["meditations/shelfless.md"]
    assert any("lazy" in note for note in notes)
    choice = Store(root, now=DAY0).meditate_next()
    assert choice.object == "good" and len(choice.skipped) == 6


def test_floor_falls_back_to_every_object_when_no_awareness_object_exists(root: Path) -> None:
    obj(root, "bugs", "instrumental", 1.0)
    obj(root, "index", "instrumental", 0.9)
    sequence = [Store(root, now=DAY0).meditate_next()]
    assert sequence[0].object == "bugs"
    assert "none is eligible" in " ".join(sequence[0].rules)
    sit_entry(root, DAY0.date(), "bugs", "instrumental")
    assert Store(root, now=DAY0 + dt.timedelta(days=1)).meditate_next().object == "index"


def test_a_library_of_one_repeats_rather_than_stopping(root: Path) -> None:
    obj(root, "only", "awareness", 1.0)
    sit_entry(root, DAY0.date(), "only", "awareness")
    choice = Store(root, now=DAY0 + dt.timedelta(days=1)).meditate_next()
    assert choice.object == "only"
    assert "waived" in " ".join(choice.rules)


def test_no_objects_means_no_choice(root: Path) -> None:
    choice = Store(root, now=DAY0).meditate_next()
    assert choice.object is None and choice.candidates == []


def test_cli_meditate_next_says_why(library: Path, run) -> None:  # type: ignore[no-untyped-def]
    sit_entry(library, dt.date(2026, 7, 29), "breath", "awareness")
    result = run(library, "meditate", "--next", "--json")
    assert result.exit_code == 0, result.output
    view = json.loads(result.stdout)
    assert view["object"] == "bugs" and view["date"] == "2026-07-30"
    first = view["candidates"][0]
    assert set(first) == {"name", "shelf", "weight", "last_used", "days", "factor", "score",
                          "excluded_by"}
    assert {c["name"]: c["excluded_by"] for c in view["candidates"]}["breath"] == "last-sit"
    text = run(library, "meditate", "--next")
    assert text.exit_code == 0
    assert text.stdout.startswith("next: bugs (instrumental shelf")
    assert "rule: no repeat: breath was the last sit (2026-07-29)" in text.stdout
    assert "last-sit" in text.stdout and "never" in text.stdout
    bare = run(library, "meditate")  # --next is the default: `meditate` alone is no error
    assert bare.exit_code == 0 and bare.stdout == text.stdout


def test_the_rotation_never_writes_the_objects(library: Path) -> None:
    before = {p: p.read_bytes() for p in (library / "meditations").iterdir()}
    simulate(library, 5)
    assert {p: p.read_bytes() for p in (library / "meditations").iterdir()} == before

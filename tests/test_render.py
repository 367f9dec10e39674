"""The bounded index: bands, budgets, order, determinism, and nothing ever lost."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
from pathlib import Path

from memstore.core.config import Config
from memstore.mirror.render import Entry, compose_index, compute_bands
from memstore.mirror.sync import open_mirror, sync
from tests.helpers import NOW, NOW_DT, memory, write

CFG = Config()
LINK = re.compile(r"^- \[([^\]]+)\]\(", re.M)


def words(seed: int, count: int) -> str:
    rng = random.Random(seed)
    return " ".join(
        rng.choice(["ledger", "vendor", "invoice", "branch", "deploy", "schema", "audit"])
        for _ in range(count))


def old_memory(
        i: int, *, access_count: int = 0, days_ago: int = 30, created: str = "2026-01-01",
        **extra) -> str:
    last = (NOW_DT - dt.timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return memory(f"reference_item-{i:04d}", f"item {i:04d} " + words(i, 14),
                  access_count=access_count,
                  stability=14, last_accessed=last, created=created, **extra)


def build(root: Path, count: int = 300, order_seed: int = 0) -> None:
    indices = list(range(count))
    random.Random(order_seed).shuffle(indices)  # creation order must not matter
    for i in indices:
        # Every old file scores above 1.0 (a newborn's score), so Hot fills with old rows and
        # the newborn tests are not vacuous.
        write(root, f"memory/reference_item-{i:04d}.md",
              old_memory(i, access_count=2 + i % 5, days_ago=i % 10))


def rendered(root: Path, run) -> tuple[str, str]:
    result = run(root, "render")
    assert result.exit_code == 0, result.output
    return (root / "memory/MEMORY.md").read_text(), (root / "memory/MEMORY-archive.md").read_text()


def section(text: str, title: str) -> list[str]:
    match = re.search(rf"^## {title}\n\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return [line for line in match.group(1).splitlines() if line.startswith("- ")] if match else []


def test_nothing_lost_every_live_file_in_exactly_one_place(root: Path, run) -> None:
    build(root)
    write(root, "memory/reference_old-way.md",
          memory("reference_old-way", "replaced", status="superseded by x"))
    index, archive = rendered(root, run)
    in_index = LINK.findall(index)
    in_archive = LINK.findall(archive)
    files = {p.stem for p in (root / "memory").glob("*_*.md")}
    assert set(in_index) | set(in_archive) == files
    assert len(in_index) + len(in_archive) == len(files)  # exactly once
    assert "reference_old-way" in section(archive, "Superseded")[0]
    assert len(in_archive) > 50  # the corpus really overflows the index


def test_budgets_hold(root: Path, run) -> None:
    build(root, 400)
    for i in range(40):  # newborns, to fill New past its budget; some rows far over 160 chars
        write(root, f"memory/project_born-{i:02d}.md",
              memory(f"project_born-{i:02d}", "newborn " + words(100 + i, 12 + (i % 3) * 15),
                     created=f"2026-07-{10 + i % 19:02d}"))
    index, _ = rendered(root, run)
    for title, budget in (("Hot", CFG.hot_budget), ("New", CFG.new_budget),
                          ("Cold", CFG.cold_budget)):
        rows = section(index, title)
        used = sum(len(r) + 1 for r in rows)
        assert rows and used <= budget, title
        assert used > budget * 0.9, f"{title} should be nearly full: {used}/{budget}"
    assert all(len(r) <= CFG.new_row_chars for r in section(index, "New"))
    assert any(r.endswith("…") for r in section(index, "New"))  # long rows were cut, not dropped
    assert (len(index.splitlines()) <= CFG.index_max_lines
            and len(index.encode()) <= CFG.index_max_bytes)


def test_total_order_tie_break_is_filename(root: Path, tmp_path: Path, run) -> None:
    # Equal scores everywhere (same state, same summary length): order must be by filename,
    # whatever order the files were created in.
    outputs = []
    for seed in (1, 2):
        base = tmp_path / f"r{seed}"
        (base / "memory").mkdir(parents=True)
        names = [f"reference_tie-{i:03d}" for i in range(250)]
        random.Random(seed).shuffle(names)
        # Sync in shuffled chunks, so the mirror's row order is not filename order either:
        # only an explicit tie-break can give filename order.
        for start in range(0, len(names), 25):
            for name in names[start : start + 25]:
                write(base, f"memory/{name}.md",
                      memory(name, "same summary text for every file in this corpus",
                             access_count=0, stability=14,
                             last_accessed="2026-07-01T00:00:00Z", created="2026-01-01"))
            assert run(base, "sync").exit_code == 0
        outputs.append(rendered(base, run))
    assert outputs[0] == outputs[1]
    hot = LINK.findall("\n".join(section(outputs[0][0], "Hot")))
    assert hot == sorted(hot) and hot[0] == "reference_tie-000"


def test_render_is_deterministic_within_a_minute(root: Path, run) -> None:
    build(root)
    first = rendered(root, run)
    (root / "memory/MEMORY.md").unlink()
    again = run(root, "render", "--now", "2026-07-30T12:00:59Z")
    assert again.exit_code == 0
    assert ((root / "memory/MEMORY.md").read_text(),
            (root / "memory/MEMORY-archive.md").read_text()) == first
    assert "2026" not in first[0]  # no clock time in the header


def test_pins_always_enter_hot(root: Path, run) -> None:
    build(root)
    write(root, "memstore.toml", "hot_budget = 2000\n")
    # The pinned row is longer than any gap Hot's ~130-char rows can leave, and its score is
    # the lowest of all: only the pin can put it in Hot.
    write(root, "memory/feedback_pinned-rule.md",
          memory("feedback_pinned-rule", "pinned but cold " + words(3, 30), pin="true",
                 access_count=0, stability=14, last_accessed="2025-01-01T00:00:00Z",
                 created="2025-01-01"))
    index, _ = rendered(root, run)
    hot = section(index, "Hot")
    assert any("feedback_pinned-rule" in r for r in hot)
    assert len(next(r for r in hot if "feedback_pinned-rule" in r)) > 200
    # Hot was full all the same
    assert sum(len(r) + 1 for r in hot if "pinned" not in r) > 2000 - 200


def test_born_visible_even_when_hot_is_full(root: Path, run) -> None:
    build(root, 400)
    write(root, "memory/project_newborn.md",
          memory("project_newborn", "just written " + words(7, 10), created="2026-07-29"))
    index, _ = rendered(root, run)
    # not vacuous: Hot is full
    assert sum(len(r) + 1 for r in section(index, "Hot")) > CFG.hot_budget - 200
    assert not any("project_newborn" in r for r in section(index, "Hot"))
    assert any("project_newborn" in r for r in section(index, "New"))


def test_new_is_ordered_by_birth(root: Path, run) -> None:
    build(root, 400)
    births = {"project_b-one": "2026-07-20", "project_a-two": "2026-07-28",
              "project_c-three": "2026-07-24"}
    for name, created in births.items():
        # rows as long as the old ones, so none slips into the gap left at the end of Hot
        write(root, f"memory/{name}.md",
              memory(name, "newborn " + words(len(name), 16), created=created))
    index, _ = rendered(root, run)
    assert LINK.findall("\n".join(section(index, "New"))) == [
        "project_a-two", "project_c-three", "project_b-one"]


def test_curated_summaries_survive_regeneration_archive_included(root: Path, run) -> None:
    build(root)
    index, archive = rendered(root, run)
    archived = LINK.findall(archive)[5]
    hot_name = LINK.findall(index)[0]
    for name, new_summary in ((archived, "curated archive summary"),
                              (hot_name, "curated hot summary")):
        path = root / f"memory/{name}.md"
        text = path.read_text()
        path.write_text(
            re.sub(r'^summary: .*$', f"summary: {new_summary}", text, count=1, flags=re.M))
    (root / "memory/MEMORY.md").write_text("garbage the generator must not read\n")
    index, archive = rendered(root, run)
    assert f"[{archived}]({archived}.md): curated archive summary" in archive
    assert f"({hot_name}.md): curated hot summary" in index
    assert "garbage" not in index


def test_malformed_files_still_ranked_with_defaults(root: Path, run) -> None:
    build(root, 20)
    write(root, "memory/feedback_broken.md", b'---\nname: "oops\n---\nBroken but still here.\n')
    write(root, "memory/feedback_wrong-types.md",
          b"---\naccess_count: lots\nstability: -1\n---\nwrong types\n")
    index, archive = rendered(root, run)
    assert "feedback_broken" in index + archive and "feedback_wrong-types" in index + archive
    rows = {r["name"]: r for r in json.loads(run(root, "list", "--json").stdout)}
    assert (rows["feedback_wrong-types"]["access_count"] == 0
            and rows["feedback_wrong-types"]["stability"] == 14)
    assert rows["feedback_broken"]["band"] in ("hot", "new", "cold", "archive")


def test_index_guard_rolls_rows_to_archive(root: Path, run) -> None:
    build(root, 300)
    write(root, "memstore.toml", "index_max_lines = 40\n")
    index, archive = rendered(root, run)
    assert len(index.splitlines()) <= 40
    assert len(LINK.findall(index)) + len(LINK.findall(archive)) == 300
    status = json.loads(run(root, "status", "--json").stdout)
    assert status["rolled_by_guard"] > 0


def test_current_state_from_flags(root: Path, run) -> None:
    write(root, "memory/project_alpha.md",
          memory("project_alpha", "a", in_flight="true", state='"migrating the db"'))
    write(root, "memory/project_beta.md", memory("project_beta", "b"))
    rendered(root, run)
    state = (root / "memory/current-state.md").read_text()
    assert ("- [project_alpha](project_alpha.md): migrating the db" in state
            and "project_beta" not in state)


def test_list_band_filter_and_status_budgets(root: Path, run) -> None:
    build(root)
    rows = json.loads(run(root, "list", "--json", "--band", "hot").stdout)
    assert rows and {r["band"] for r in rows} == {"hot"}
    keys = {"path", "name", "type", "band", "score", "access_count", "stability", "last_accessed",
            "last_reinforced", "importance", "pin", "created"}
    assert keys <= set(rows[0])
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True)
    bands = {b["band"]: b for b in json.loads(run(root, "status", "--json").stdout)["bands"]}
    assert bands["hot"]["budget"] == 12000 and 0 < bands["hot"]["chars"] <= 12000


def test_same_bands_from_library(root: Path) -> None:
    build(root, 50)
    sync(root)
    conn = open_mirror(root)
    bands = compute_bands(conn, NOW_DT, CFG)
    conn.close()
    text = compose_index(bands.hot, bands.new, bands.cold)
    assert text.count("\n- [") == len(bands.hot) + len(bands.new) + len(bands.cold)
    assert NOW.startswith("2026-07-30")
    assert os.environ.get("MEMSTORE_NOW") in (None, NOW)


# ---------------------------------------------------------------- the fast band assignment


def _reference_assign(entries: list[Entry], now: dt.datetime, config: Config) -> list[tuple]:
    """The four passes exactly as first written (one look at every file per pass), for
    comparison."""
    from memstore.mirror.render import Bands, _guard, cut

    bands = Bands(entries)
    live = []
    for entry in entries:
        entry.row = entry.full_row
        entry.band = "archive"
        if entry.superseded:
            entry.band = "superseded"
            bands.superseded.append(entry)
        else:
            live.append(entry)
    used_hot, rest = 0, []
    for entry in live:
        size = len(entry.row) + 1
        if entry.pin or used_hot + size <= config.hot_budget:
            entry.band = "hot"
            bands.hot.append(entry)
            used_hot += size
        else:
            rest.append(entry)
    today = now.date()
    newborns = [e for e in rest
                if e.created is not None and 0 <= (today - e.created).days <= config.new_days]
    newborns.sort(key=lambda e: (-(e.created.toordinal() if e.created else 0), e.filename))
    used_new = 0
    for entry in newborns:
        row = cut(entry.row, config.new_row_chars)
        if used_new + len(row) + 1 <= config.new_budget:
            entry.row, entry.band = row, "new"
            bands.new.append(entry)
            used_new += len(row) + 1
    used_cold = 0
    for entry in rest:
        if entry.band == "new":
            continue
        entry.row = entry.full_row
        size = len(entry.row) + 1
        if used_cold + size <= config.cold_budget:
            entry.band = "cold"
            bands.cold.append(entry)
            used_cold += size
        else:
            entry.band = "archive"
    _guard(bands, config)
    bands.archive = [e for e in live if e.band == "archive"]
    return _placed(bands)


def _placed(bands) -> list[tuple]:
    groups = {name: [(e.path, e.row) for e in getattr(bands, name)] for name in BANDS_ORDER}
    return [groups, [(e.path, e.band, e.row, e.rolled) for e in bands.entries]]


BANDS_ORDER = ("hot", "new", "cold", "archive", "superseded")


def _random_entries(rng: random.Random, count: int) -> list[Entry]:
    from memstore.mirror.index_rows import make_row

    entries = []
    for i in range(count):
        name = f"project_x{i:04d}"
        summary = "w" * rng.choice([1, 5, 20, 60, 150, 300])
        row = make_row(name, f"{name}.md", summary)
        created = rng.choice(
            [None, dt.date(1, 1, 1), NOW_DT.date() - dt.timedelta(days=rng.randint(-3, 30))])
        entries.append(
            Entry(path=f"memory/{name}.md", name=name, filename=f"{name}.md", summary=summary,
                  score=rng.choice([1.0, 2.0, rng.random() * 5]), created=created,
                  pin=rng.random() < 0.04, superseded=rng.random() < 0.05, in_flight=False,
                  state=None, access_count=0, stability=14.0, last_accessed=None,
                  last_reinforced=None, importance=0.0, full_row=row, row=row))
    entries.sort(key=lambda e: (-e.score, e.filename))
    return entries


def test_fast_assign_places_every_file_as_the_plain_four_passes() -> None:
    """Fails if the band assignment's shortcuts (one loop for superseded, pins and newborns; Hot
    and Cold stopping once the shortest row cannot fit) place any file, or cut any row,
    differently from the plain four passes, for budgets from none to unlimited."""
    from dataclasses import replace

    from memstore.mirror.render import _assign, assign

    rng = random.Random(11)
    for _ in range(400):
        entries = _random_entries(rng, rng.choice([0, 1, 3, 40, 250]))
        config = Config(hot_budget=rng.choice([0, 60, 400, 3000, 12_000, 10**7]),
                        cold_budget=rng.choice([0, 100, 1000, 4000]),
                        new_budget=rng.choice([0, 300, 2500]),
                        new_days=rng.choice([-1, 0, 1, 14, 10**7]),
                        new_row_chars=rng.choice([30, 160]),
                        index_max_lines=rng.choice([12, 40, 200]),
                        index_max_bytes=rng.choice([900, 4000, 25_000]))
        expected = _reference_assign([replace(e) for e in entries], NOW_DT, config)
        assert _placed(assign([replace(e) for e in entries], NOW_DT, config)) == expected, config
        shortest = min((len(e.full_row) for e in entries), default=0)  # as load_entries reports it
        assert _placed(
            _assign([replace(e) for e in entries], NOW_DT, config, shortest)) == expected, config

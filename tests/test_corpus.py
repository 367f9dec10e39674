"""The synthetic corpus generator (memstore_devtools.corpus): deterministic, honest counts, and the
well-formed and malformed T2 files really are what they claim to be."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memstore_devtools.corpus
from memstore.core.config import Config
from memstore.mirror.parsing import Parsed, parse_bytes
from memstore_devtools.corpus import (
    ANCHOR_NAMES,
    MALFORMED_KINDS,
    MALFORMED_NAMES,
    T2_TYPES,
    CorpusSpec,
    generate_corpus,
    malformed_names,
)

REPO = Path(__file__).resolve().parents[1]
CFG = Config()

# Small but with every category present: t2=120 switches on the long-summary, long-body and
# summary-fallback cases, and malformed=20 makes two rounds of every malformed kind. `now`
# is not the default, so nothing can pass by matching the fixture's dates by accident.
SPEC = CorpusSpec(t2=120, seed=11, malformed=20, now=datetime(2025, 3, 10, 6, 0, tzinfo=UTC))

# What parse_bytes must report for each malformed kind: (level, words in the message).
EXPECTED_PROBLEMS: dict[str, list[tuple[str, str]]] = {
    "broken_yaml": [("error", "not valid YAML")],
    "bom": [("warning", "byte-order mark")],
    "crlf": [("warning", "CRLF")],
    "not_mapping": [("error", "not a mapping")],
    "wrong_types": [
        ("error", "access_count"),
        ("error", "last_accessed"),
        ("error", "last_reinforced"),
        ("error", "stability"),
        ("error", "importance"),
    ],
    "content_key": [("warning", "named 'content'")],
    "name_mismatch": [("error", "does not match the file name")],
    "no_frontmatter": [("warning", "no frontmatter")],
    "empty": [("warning", "empty file")],
    "scalar_frontmatter": [("error", "not a mapping")],
}


def snapshot(root: Path) -> dict[str, tuple[bytes, float]]:
    """Relative path -> (bytes, mtime) of every file under `root`."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime)
            for p in root.rglob("*") if p.is_file()}


def t2_files(root: Path) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in (root / "memory").glob("*.md")}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    root = tmp_path_factory.mktemp("corpus")
    return root, generate_corpus(root, SPEC)


@pytest.fixture(scope="module")
def parsed(corpus: tuple[Path, dict[str, int]]) -> dict[str, Parsed]:
    """Stem -> parse of every well-formed T2 file (the malformed ones left out)."""
    root, _ = corpus
    bad = malformed_names(SPEC.malformed)
    return {stem: parse_bytes(raw, stem, CFG, is_t2=True)
            for stem, raw in t2_files(root).items() if stem not in bad}


def test_public_api_survives_the_package_split() -> None:
    """Guards: a name callers import from `memstore_devtools.corpus` (scripts/make_corpus.py,
    scripts/bench.py, the fixture README) going missing when the module is reorganised."""
    assert sorted(memstore_devtools.corpus.__all__) == sorted(
        [
            "ANCHOR_NAMES",
            "MALFORMED_KINDS",
            "MALFORMED_NAMES",
            "T2_TYPES",
            "CorpusSpec",
            "generate_corpus",
            "malformed_names",
        ]
    )
    assert all(hasattr(memstore_devtools.corpus, name) for name in memstore_devtools.corpus.__all__)
    assert set(MALFORMED_NAMES) == set(MALFORMED_KINDS) == set(EXPECTED_PROBLEMS)


def test_same_spec_gives_same_bytes_across_processes(tmp_path: Path) -> None:
    """Guards: output that depends on anything but the spec - set or dict iteration order
    (differs with PYTHONHASHSEED), an unseeded or global RNG, the wall clock, the local time
    zone. Two fresh interpreters with different hash seeds and TZ must write identical
    bytes and mtimes for every file."""
    code = (
        "import datetime, sys; from pathlib import Path; "
        "from memstore_devtools.corpus import CorpusSpec, generate_corpus; "
        f"generate_corpus(Path(sys.argv[1]), {SPEC!r})"
    )
    outs = []
    for hash_seed, tz in (("1", "UTC"), ("2", "Pacific/Auckland")):
        out = tmp_path / f"run{hash_seed}"
        env = {
            **os.environ,
            "PYTHONHASHSEED": hash_seed,
            "TZ": tz,
        }
        subprocess.run([sys.executable, "-c", code, str(out)], env=env, check=True, timeout=60)
        outs.append(snapshot(out))
    first, second = outs
    assert len(first) == 1 + SPEC.t2 + SPEC.short_term + SPEC.dream + SPEC.bugs + SPEC.lenses + \
        SPEC.meditations
    assert sorted(first) == sorted(second)
    changed = [rel for rel in first if first[rel] != second[rel]]
    assert changed == []


def test_default_spec_reproduces_the_committed_fixture(tmp_path: Path) -> None:
    """Guards: the generator changing without `fixtures/corpus` being regenerated (or the
    fixture being edited by hand), which leaves every test and doc built on the fixture
    describing files the generator no longer writes. Bytes only: git does not keep mtimes."""
    fixture = REPO / "fixtures" / "corpus"
    generate_corpus(tmp_path, CorpusSpec())
    fresh = {rel: data for rel, (data, _) in snapshot(tmp_path).items()}
    committed = {rel: data for rel, (data, _) in snapshot(fixture).items()}
    assert sorted(fresh) == sorted(committed)
    assert [rel for rel in fresh if fresh[rel] != committed[rel]] == []


def test_counts_match_the_files_on_disk(corpus: tuple[Path, dict[str, int]],
                                        parsed: dict[str, Parsed]) -> None:
    """Guards: the returned counts drifting from what was written - a category counted but
    not written (or written and not counted), a type miscounted, a folder's count taken from
    the spec instead of the files. bench.py and make_corpus.py report these numbers."""
    root, counts = corpus
    mem = root / "memory"
    t2 = t2_files(root)
    bad = malformed_names(SPEC.malformed)

    assert counts["files"] == sum(1 for p in root.rglob("*") if p.is_file())
    assert counts["t2"] == len(t2) == SPEC.t2
    for t in T2_TYPES:
        assert counts[f"t2_{t}"] == sum(1 for stem in t2 if stem.split("_", 1)[0] == t), t
    assert counts["malformed"] == SPEC.malformed == len(bad)
    assert set(bad) <= set(t2)
    assert counts["well_formed"] == len(parsed) == SPEC.t2 - SPEC.malformed
    assert counts["identity"] == int((root / "identity.md").is_file())
    for key, folder in (
        ("short_term", mem / "short-term"),
        ("dream", mem / "dream-journal"),
        ("bugs", mem / "bugs"),
        ("lenses", root / "lenses"),
        ("meditations", root / "meditations"),
    ):
        assert counts[key] == len(list(folder.glob("*.md"))), key

    files = parsed.values()
    on_disk = {
        "anchors": sum(stem in ANCHOR_NAMES for stem in parsed),
        "reinforced": sum((p.access_count or 0) > 0 for p in files),
        "zero_policy": sum(p.access_count == 0 for p in files),
        "no_policy": sum("access_count" not in p.meta for p in files),
        "pinned": sum(p.pin for p in files),
        "importance": sum("importance" in p.meta for p in files),
        "superseded": sum((p.status or "").startswith("superseded") for p in files),
        "in_flight": sum(p.in_flight for p in files),
        "no_summary": sum(p.summary is None and p.description is not None for p in files),
        "no_summary_no_description": sum(p.summary is None and p.description is None
                                         for p in files),
        "long_summary": sum(len(p.summary or "") > 160 for p in files),
        "long_body": sum(len(p.body) > 7000 for p in files),
    }
    assert {key: counts[key] for key in on_disk} == on_disk
    # Every category is exercised by SPEC, so a zero here means a case silently vanished.
    assert all(on_disk.values()), on_disk


def test_well_formed_t2_files_parse_without_errors(parsed: dict[str, Parsed]) -> None:
    """Guards: a file meant to be well-formed that the parser rejects or misreads - a YAML
    scalar left unquoted (": " or " #" in a summary), a name that is not the file stem, a
    type that is not the name's prefix, a policy field of the wrong type."""
    assert len(parsed) == SPEC.t2 - SPEC.malformed
    for stem, p in parsed.items():
        errors = [pr.message for pr in p.problems if pr.level == "error"]
        assert errors == [], (stem, errors)
        assert p.has_frontmatter, stem
        assert p.meta.get("name") == stem  # written explicitly, not the parser's fallback
        assert p.meta.get("type") == stem.split("_", 1)[0]


@pytest.mark.parametrize("stem", sorted(malformed_names(SPEC.malformed)))
def test_each_malformed_file_raises_its_problem(corpus: tuple[Path, dict[str, int]],
                                                stem: str) -> None:
    """Guards: a malformed file that came out well-formed (or broken the wrong way), so the
    lint and degrade-to-defaults paths it exists to exercise are silently not exercised.
    Covers both rounds: the fixed names and their -2 variants."""
    root, _ = corpus
    kind = malformed_names(SPEC.malformed)[stem]
    raw = (root / "memory" / f"{stem}.md").read_bytes()
    problems = [(pr.level, pr.message) for pr in parse_bytes(raw, stem, CFG, is_t2=True).problems]
    for level, words in EXPECTED_PROBLEMS[kind]:
        assert any(lv == level and words in msg for lv, msg in problems), \
            (kind, level, words, problems)


def test_newborns_are_exactly_the_files_created_in_the_last_14_days(
    corpus: tuple[Path, dict[str, int]], parsed: dict[str, Parsed]
) -> None:
    """Guards: dates taken from the wall clock instead of `spec.now`, or newborns that fall
    outside the 14-day New window (or old files inside it), which breaks the New band's
    tests. Also holds the clean edge: nothing is created 13-19 days before `now`."""
    _, counts = corpus
    today = SPEC.now.date()
    ages = {stem: (today - p.created).days for stem, p in parsed.items() if p.created is not None}
    assert len(ages) == len(parsed)
    assert min(ages.values()) >= 0  # nothing created after `now`
    newborn = sorted(stem for stem, age in ages.items() if age < 14)
    assert counts["newborn"] == SPEC.newborn == len(newborn), newborn
    assert [stem for stem, age in ages.items() if 13 <= age < 20] == []

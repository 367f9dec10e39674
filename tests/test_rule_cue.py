"""The debrief's rule cue, measured on labelled sentences (tests/data/rule_cue*.tsv).

rule_cue.tsv (70 sentences) is the set the cue was tightened and widened on; the held-out
set (30) was written afterwards and not tuned on, so its figures say how the cue does on
sentences it has not seen. A false positive is prose injected into every later session,
so precision is held higher than recall.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memstore.hook.rulecue import rules

DATA = Path(__file__).parent / "data"


def labelled(name: str) -> list[tuple[bool, str]]:
    out = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            label, sentence = line.split("\t")
            out.append((label == "rule", sentence))
    return out


def scores(name: str) -> tuple[float, float, list[str]]:
    tp = fp = fn = 0
    wrong = []
    for is_rule, sentence in labelled(name):
        kept = rules(sentence) == [sentence]
        tp += kept and is_rule
        fp += kept and not is_rule
        fn += is_rule and not kept
        if kept != is_rule:
            wrong.append(("missed: " if is_rule else "kept: ") + sentence)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), wrong


@pytest.mark.parametrize(("name", "min_precision", "min_recall"), [
    ("rule_cue.tsv", 0.95, 0.9),
    ("rule_cue_heldout.tsv", 0.7, 0.9),
])
def test_rule_cue_precision_and_recall(name: str, min_precision: float, min_recall: float) -> None:
    """Failure caught: "Never mind the flaky test, it passed on retry." and "Must have been the
    cache." were kept as lessons; "You should never commit secrets" and "Use UTC for all timestamps"
    were missed."""
    precision, recall, wrong = scores(name)
    assert len(labelled(name)) >= 30
    assert precision >= min_precision and recall >= min_recall, (precision, recall, wrong)


def test_the_issues_examples() -> None:
    for prose in ("Never mind the flaky test, it passed on retry.", "Must have been the cache."):
        assert rules(prose) == [], prose
    for rule in ("You should never commit secrets.", "Use UTC for all timestamps."):
        assert rules(rule) == [rule], rule

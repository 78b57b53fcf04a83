"""Balanced accuracy per group of labelled claims: the one-label rule, order and the table."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.judges.groups import group_lines, group_scores


def test_a_one_label_group_is_measured_against_every_claim_of_the_other_label():
    # rows 0-1 "negation" (unsupported, judged no and yes), rows 2-4 "paraphrase" (supported,
    # judged yes, yes, no): negation = (1/2 + 2/3) / 2, paraphrase = (2/3 + 1/2) / 2, the same
    names = ["negation", "negation", "paraphrase", "paraphrase", "paraphrase"]
    labels = [False, False, True, True, True]
    said = [False, True, True, True, False]
    scores = group_scores("kind", names, labels, said)
    assert [(s.name, s.balanced_accuracy) for s in scores] == \
        [("negation", pytest.approx(7 / 12)), ("paraphrase", pytest.approx(7 / 12))]
    assert all(s.against_other_class for s in scores)


def test_a_judge_that_rejects_everything_scores_half_on_a_kind_it_gets_all_right():
    names = ["negation"] * 3 + ["paraphrase"] * 3
    labels = [False] * 3 + [True] * 3
    scores = {s.name: s.balanced_accuracy for s in group_scores("kind", names, labels, [False] * 6)}
    assert scores == {"negation": 0.5, "paraphrase": 0.5}


def test_with_no_claim_of_the_other_label_a_one_label_group_is_undefined_and_printed_last():
    scores = group_scores("kind", ["verbatim", "verbatim"], [True, True], [True, False])
    assert scores[0].balanced_accuracy is None
    assert group_lines(scores)[2].endswith("n/a (no claim of the other label)")


def test_the_table_is_aligned_worst_first_and_counts_the_claims_in_no_group():
    names = ["direction", "direction", "approximation", "approximation", None]
    labels = [False, False, True, False, True]
    said = [True, True, True, False, True]
    lines = group_lines(group_scores("kind", names, labels, said), unnamed=1)
    assert lines[0].startswith("balanced accuracy per kind, worst first")
    assert lines[2].split()[0] == "direction" and lines[3].split()[0] == "approximation"
    # the figures start under the heading's "balanced accuracy"
    assert lines[2].index("0.") == lines[3].index("1.") == lines[1].index("balanced")
    assert lines[-2].startswith("  * one label only: averaged with the recall on every claim")
    assert lines[-1] == "  (1 claim with no kind, in no row above)"


@given(st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.booleans(), st.booleans()),
                min_size=1, max_size=40))
def test_each_group_counts_its_claims_once_and_its_figure_is_a_proportion(rows):
    names, labels, said = (list(col) for col in zip(*rows))
    scores = group_scores("kind", names, labels, said)
    assert sum(s.n for s in scores) == sum(name is not None for name in names)
    figures = [s.balanced_accuracy for s in scores if s.balanced_accuracy is not None]
    assert all(0 <= f <= 1 for f in figures) and figures == sorted(figures)

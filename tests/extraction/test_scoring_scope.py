"""What a reviewed ground truth of one's own document relies on: blanks assertable, a scope
that keeps facts outside it from being "unexpected", an unreviewed draft said out loud, a
document with no facts said so, and a ground truth that aligns with nothing refused."""

from __future__ import annotations

import pytest

from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.alignment import check_aligned
from ragspine_eval.extraction.run import Target
from ragspine_eval.extraction.scoring import run_eval
from ragspine_eval.outputs.extraction_files import extraction_table, mismatch_examples


def fact(sheet: str, ref: str, value) -> dict:
    return {"sheet": sheet, "cell_ref": ref, "value": value}


@pytest.mark.parametrize("blank", [None, ""])
@pytest.mark.parametrize("facts", [[], [fact("S", "A1", None)], [fact("S", "A1", "")]],
                         ids=["no fact", "null fact", "empty fact"])
def test_a_blank_cell_passes_with_no_fact_or_an_empty_one(blank, facts):
    report = run_eval([*facts, fact("S", "B1", 2)],
                      [{"sheet": "S", "cell_ref": "A1", "value": blank},
                       {"sheet": "S", "cell_ref": "B1", "value": 2}])
    m = report.channels["cell_value"]
    assert (m.correct, m.total) == (2, 2) and report.coverage.missing == []


def test_a_blank_cell_fails_when_the_engine_reads_a_value_there():
    report = run_eval([fact("S", "A1", "x")], [{"sheet": "S", "cell_ref": "A1", "value": None}])
    assert report.channels["cell_value"].mismatches == [
        {"locator": "S!A1", "expected": None, "actual": "x"}]


def test_facts_outside_the_scope_are_not_unexpected():
    facts = [fact("S", "B2", 1), fact("S", "C3", 2), fact("S", "Z9", 3), fact("T", "A1", 4)]
    truth = {"scope": {"ranges": ["S!A1:C3"]}, "cells": [
        {"sheet": "S", "cell_ref": "B2", "value": 1}]}
    assert run_eval(facts, truth).coverage.unexpected == ["S!C3"]
    truth["scope"] = {"sheets": ["T"]}
    assert run_eval(facts, truth).coverage.unexpected == ["T!A1"]
    del truth["scope"]
    assert len(run_eval(facts, truth).coverage.unexpected) == 3


def test_unreviewed_cells_are_counted_and_stated_on_the_first_line():
    truth = {"document": "q.xlsx", "cells": [
        {"sheet": "S", "cell_ref": "A1", "value": 1, "reviewed": False},
        {"sheet": "S", "cell_ref": "A2", "value": 2, "reviewed": True}]}
    report = run_eval([fact("S", "A1", 1), fact("S", "A2", 2)], truth)
    assert report.unreviewed == 1
    assert extraction_table("q.xlsx", report)[0].startswith("WARNING: scored against 1 unreviewed")
    assert next(iter(report.to_dict())) == "warning"
    reviewed = run_eval([fact("S", "A1", 1)], {"cells": [{"sheet": "S", "cell_ref": "A1",
                                                          "value": 1}]})
    assert reviewed.unreviewed == 0 and extraction_table("k", reviewed)[0].startswith("extraction")


def test_a_document_with_no_facts_says_so_instead_of_a_perfect_score():
    report = run_eval([], [{"sheet": "page1_table1", "cell_ref": "R1C1", "value": "x"}])
    lines = extraction_table("scan.pdf", report)
    assert any(line.startswith("WARNING: the extractor yielded no facts") for line in lines)
    assert not any("1.0000" in line for line in lines)
    assert report.coverage.rate == 0.0 and "cell_value" not in report.metrics


@pytest.mark.parametrize(("sheet", "ref", "hint"), [
    ("Balance", "B2", "'balance'"), ("balance", "$B$2", "'B2'"), ("balance", "b2", "'B2'")])
def test_a_ground_truth_that_aligns_with_no_fact_is_refused_with_the_nearest_locator(
        tmp_path, sheet, ref, hint):
    truth = {"cells": [{"sheet": sheet, "cell_ref": ref, "value": 1}]}
    with pytest.raises(ExtractionInputError, match="no ground-truth cell aligns") as err:
        check_aligned(Target("q.xlsx", tmp_path / "q.xlsx", tmp_path / "gt.json"), truth,
                      [fact("balance", "B2", 1), fact("balance", "C2", 2)])
    assert hint in str(err.value)


def test_one_aligned_cell_is_enough_to_score(tmp_path):
    truth = {"cells": [{"sheet": "balance", "cell_ref": "B2", "value": 1},
                       {"sheet": "Balance", "cell_ref": "C2", "value": 2}]}
    check_aligned(Target("q", None, tmp_path / "gt.json"), truth, [fact("balance", "B2", 1)])


def test_the_first_ten_mismatches_show_expected_and_got_then_the_count_of_the_rest():
    truth = [{"sheet": "S", "cell_ref": f"A{i}", "value": i} for i in range(1, 14)]
    report = run_eval([fact("S", f"A{i}", i + 100) for i in range(1, 14)], truth)
    lines = mismatch_examples(report)
    assert len(lines) == 11
    assert lines[0] == "  S!A1 cell_value: expected 1, got 101"
    assert lines[-1] == "  … and 3 more mismatches (see the report)"
    assert mismatch_examples(run_eval([fact("S", "A1", 1)], truth[:1])) == []


@pytest.mark.parametrize(("compare", "expected", "actual", "correct"), [
    (None, "a  b", "a b", False),
    ({"whitespace": "collapse"}, "a  b ", "a b", True),
    ({"whitespace": "exact"}, "a  b", "a b", False),
    (None, "2010-03-21", "2010-03-21T00:00:00", False),
    ({"dates": "date"}, "2010-03-21", "2010-03-21T00:00:00", True),
    ({"dates": "date"}, "2010-03-21", "2010-03-21T13:20:01", False),
])
def test_a_ground_truth_states_how_its_values_are_compared_and_the_report_says_so(
        compare, expected, actual, correct):
    truth = {"cells": [{"sheet": "S", "cell_ref": "A1", "value": expected}]}
    if compare:
        truth["compare"] = compare
    report = run_eval([fact("S", "A1", actual)], truth)
    assert report.channels["cell_value"].correct == int(correct)
    stated = [n for n in report.normalization if "compare." in n]
    assert len(stated) == (1 if compare and "exact" not in compare.values() else 0)


def test_an_unknown_compare_option_is_refused():
    with pytest.raises(ExtractionInputError, match="whitespace: exact or collapse"):
        run_eval([], {"compare": {"whitespace": "loose"}, "cells": []})


def test_a_ground_truth_of_blanks_only_is_not_refused_as_unaligned(tmp_path):
    truth = {"cells": [{"sheet": "balance", "cell_ref": "Z9", "value": None}]}
    check_aligned(Target("q", None, tmp_path / "gt.json"), truth, [fact("balance", "B2", 1)])

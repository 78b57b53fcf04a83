"""Scoring (extraction_eval.py): channels, what is and is not scored, coverage, the report's
round trip and frame, and the baseline semantics through the shared ratchet."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.report import (
    COVERAGE,
    compare_to_baseline,
    make_baseline_entry,
)
from ragspine_eval.extraction.claims import fingerprint, same_value
from ragspine_eval.extraction.scoring import (
    CHANNELS,
    ChannelMetric,
    EvalReport,
    run_eval,
)
from ragspine_eval.ratchet import compare


def cell(ref: str, value, tags=None, span=None, sheet: str = "S", **extra) -> dict:
    return {"sheet": sheet, "cell_ref": ref, "value": value, "tags": tags or {},
            "merge_span": span, "is_merged_origin": span is not None, **extra}


SMALL_TRUTH = {"document": "small.xlsx", "cells": [
    cell("A1", "Product line", span=[3, 1]),
    cell("B1", "FY2025", span=[1, 6]),
    cell("A4", "Alpha", tags={"product_line": "new"}),
    cell("B4", 1234567.5),
    cell("C4", 12500),
    cell("D4", 0.125),
]}


def perfect_facts(truth: dict) -> list[dict]:
    return [{k: v for k, v in c.items() if k in ("sheet", "cell_ref", "value", "tags",
                                                 "merge_span", "is_merged_origin")}
            for c in truth["cells"]]


# the fixtures' ground truths, as the generator means them
TRUTHS = {key: d.build()[1] for key, d in DOCUMENT_SETS.items()}


# --- channels ----------------------------------------------------------------------------------


def test_perfect_facts_score_one_on_every_channel_of_every_fixture():
    for key, truth in TRUTHS.items():
        report = run_eval(perfect_facts(truth), truth)
        for name in CHANNELS:
            m = report.channels[name]
            assert (m.accuracy, m.total, m.mismatches) == (1.0, len(truth["cells"]), []), key
        assert report.coverage.rate == 1.0 and not report.coverage.unexpected


INJECTIONS = {
    "cell_value": ("value", lambda v: f"{v}x" if isinstance(v, str) else (v or 0) + 1),
    "color_mapping": ("tags", lambda t: {} if t else {"product_line": "new"}),
    "header_attribution": ("merge_span", lambda s: None if s else [1, 2]),
}


@settings(max_examples=60, deadline=None)
@given(data=st.data(), channel=st.sampled_from(CHANNELS),
       key=st.sampled_from(sorted(DOCUMENT_SETS)))
def test_one_injected_error_is_counted_exactly_once_on_its_own_channel(data, channel, key):
    truth = TRUTHS[key]
    facts = perfect_facts(truth)
    i = data.draw(st.integers(0, len(facts) - 1))
    field, change = INJECTIONS[channel]
    facts[i][field] = change(facts[i][field])
    if channel == "header_attribution":
        facts[i]["is_merged_origin"] = facts[i]["merge_span"] is not None
    report = run_eval(facts, truth)
    wrong = f"{facts[i]['sheet']}!{facts[i]['cell_ref']}"
    for name, m in report.channels.items():
        if name == channel:
            assert m.total - m.correct == 1 and [x["locator"] for x in m.mismatches] == [wrong]
        else:
            assert m.correct == m.total


def test_a_mismatch_names_locator_expected_and_actual():
    facts = perfect_facts(SMALL_TRUTH)
    facts[3]["value"] = 1234567.0
    m = run_eval(facts, SMALL_TRUTH).channels["cell_value"]
    assert m.mismatches == [{"locator": "S!B4", "expected": 1234567.5, "actual": 1234567.0}]
    assert (m.total, m.correct) == (6, 5) and m.accuracy == pytest.approx(5 / 6)


def test_header_attribution_compares_origin_and_span_together():
    facts = perfect_facts(SMALL_TRUTH)
    facts[1]["merge_span"] = [1, 5]
    m = run_eval(facts, SMALL_TRUTH).channels["header_attribution"]
    assert m.mismatches == [{"locator": "S!B1",
                             "expected": {"is_merged_origin": True, "merge_span": [1, 6]},
                             "actual": {"is_merged_origin": True, "merge_span": [1, 5]}}]


def test_only_cells_on_both_sides_are_scored():
    facts = perfect_facts(SMALL_TRUTH)[:4] + [cell("Z9", "extra")]
    report = run_eval(facts, SMALL_TRUTH)
    for m in report.channels.values():
        assert (m.total, m.correct) == (4, 4)
    assert report.coverage.missing == ["S!C4", "S!D4"]
    assert report.coverage.unexpected == ["S!Z9"]
    assert (report.coverage.matched, report.coverage.ground_truth_cells, report.n_facts) == (4, 6, 5)
    assert report.coverage.rate == pytest.approx(4 / 6)


def test_a_channel_scores_only_the_cells_whose_ground_truth_states_it():
    truth = [{"sheet": "S", "cell_ref": "A1", "value": 1},
             {"sheet": "S", "cell_ref": "A2", "value": 2, "tags": {"k": "v"}}]
    facts = [{"sheet": "S", "cell_ref": "A1", "value": 1, "tags": {"k": "v"}},
             {"sheet": "S", "cell_ref": "A2", "value": 2, "tags": {}}]
    report = run_eval(facts, truth)
    assert report.channels["cell_value"].total == 2
    assert (report.channels["color_mapping"].total, report.channels["color_mapping"].correct) == (1, 0)
    assert report.channels["header_attribution"].total == 0


def test_total_zero_means_accuracy_one():
    report = run_eval([], SMALL_TRUTH)
    assert all((m.total, m.accuracy) == (0, 1.0) for m in report.channels.values())
    assert report.coverage.rate == 0.0 and len(report.coverage.missing) == 6
    assert ChannelMetric.of("cell_value", []).accuracy == 1.0


def test_a_channel_the_extractor_cannot_do_is_not_scored_and_says_why():
    facts = [{k: v for k, v in f.items() if k not in ("merge_span", "is_merged_origin")}
             for f in perfect_facts(SMALL_TRUTH)]
    facts[0]["tags"] = {"product_line": "mature"}  # still scored: the colour channel is provided
    report = run_eval(facts, SMALL_TRUTH, unsupported={"cell_value": "no values here"})
    assert report.channels["cell_value"].not_scored == "no values here"
    assert report.channels["cell_value"].total == 0
    header = report.channels["header_attribution"]
    assert header.total == 0 and "no fact carries 'merge_span'" in header.not_scored
    assert report.channels["color_mapping"].correct == 5
    assert set(report.metrics) == {"color_mapping", COVERAGE}


def test_a_fact_without_tags_among_facts_with_tags_claims_no_tag():
    facts = perfect_facts(SMALL_TRUTH)
    del facts[2]["tags"]  # A4 is tagged in the ground truth
    m = run_eval(facts, SMALL_TRUTH).channels["color_mapping"]
    assert m.not_scored is None and [x["locator"] for x in m.mismatches] == ["S!A4"]


# --- values ------------------------------------------------------------------------------------


@pytest.mark.parametrize("a, b, equal", [
    (1, 1.0, True), (0.125, 0.125, True), ((3, 1), [3, 1], True), ([1, [2, 3]], (1, (2.0, 3)), True),
    (True, 1, False), (False, 0.0, False), ("1", 1, False), ("1,234", 1234, False),
    (None, "", False), (0.1 + 0.2, 0.3, False), ({"a": 1}, {"a": 1.0}, True), ({"a": 1}, {"b": 1}, False),
])
def test_values_compare_exactly_after_type_normalization_only(a, b, equal):
    assert same_value(a, b) is equal
    assert same_value(b, a) is equal


def test_the_report_names_its_normalization():
    report = run_eval(perfect_facts(SMALL_TRUTH), SMALL_TRUTH)
    assert report.normalization == ["an int equals the same float", "a tuple equals the same list",
                                    "a blank (null or \"\") equals a blank or no fact"]
    assert report.to_dict()["normalization"] == report.normalization


def test_an_int_fact_for_a_float_truth_and_a_tuple_span_are_correct():
    facts = perfect_facts(SMALL_TRUTH)
    facts[4]["value"] = 12500.0
    facts[0]["merge_span"] = (3, 1)
    report = run_eval(facts, SMALL_TRUTH)
    assert all(m.correct == m.total for m in report.channels.values())


# --- inputs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad, message", [
    ({"cell_ref": "A1", "value": 1}, "missing 'sheet'"),
    ({"sheet": "S", "value": 1}, "missing 'cell_ref'"),
    ({"sheet": "", "cell_ref": "A1"}, "'sheet' must be a non-empty string"),
    ({"sheet": "S", "cell_ref": "A1", "tags": ["new"]}, "'tags' must be an object"),
    ({"sheet": "S", "cell_ref": "A1", "merge_span": [0, 2]}, "'merge_span' must be null or"),
    ({"sheet": "S", "cell_ref": "A1", "is_merged_origin": "yes"}, "'is_merged_origin'"),
    ("A1", "a record must be a JSON object"),
])
def test_a_malformed_fact_is_named_by_its_index(bad, message):
    with pytest.raises(ExtractionInputError, match=r"facts\[1\]: " + message.replace("(", r"\(")):
        run_eval([cell("A1", 1), bad], SMALL_TRUTH)


def test_a_locator_twice_is_an_error_on_either_side():
    with pytest.raises(ExtractionInputError, match=r"S!A1 appears twice in the facts"):
        run_eval([cell("A1", 1), cell("A1", 2)], SMALL_TRUTH)
    with pytest.raises(ExtractionInputError, match=r"S!A1 appears twice in the ground truth"):
        run_eval([], [cell("A1", 1), cell("A1", 1)])


def test_ground_truth_may_be_a_list_of_cells_or_an_object_with_cells():
    as_list = run_eval(perfect_facts(SMALL_TRUTH), SMALL_TRUTH["cells"])
    as_dict = run_eval(perfect_facts(SMALL_TRUTH), SMALL_TRUTH)
    assert as_list.channels == as_dict.channels and as_dict.document == "small.xlsx"
    with pytest.raises(ExtractionInputError, match="\"cells\" array"):
        run_eval([], {"rows": []})


# --- the report --------------------------------------------------------------------------------


def test_the_report_round_trips_through_json():
    truth = TRUTHS["xlsx"]
    facts = perfect_facts(truth)
    facts[0]["merge_span"] = (2, 1)
    facts[5]["tags"] = {"product_line": "new"}
    del facts[7]
    report = run_eval(facts + [cell("Z1", None)], truth, unsupported={},
                      extraction={"legend": {"statement": "x"}})
    again = EvalReport.from_dict(json.loads(json.dumps(report.to_dict(), ensure_ascii=False)))
    assert again == report


def test_to_frame_has_one_row_per_scored_cell_and_channel():
    facts = perfect_facts(SMALL_TRUTH)
    facts[2]["tags"] = {}
    frame = run_eval(facts, SMALL_TRUTH).to_frame()
    assert len(frame) == 6 * 3
    assert list(frame.columns) == ["sheet", "locator", "cell_ref", "channel", "expected",
                                   "actual", "correct", "feature"]
    wrong = frame[~frame.correct]
    assert wrong[["locator", "channel"]].values.tolist() == [["S!A4", "color_mapping"]]
    assert frame.groupby("channel").correct.mean().to_dict() == pytest.approx(
        {"cell_value": 1.0, "color_mapping": 5 / 6, "header_attribution": 1.0})


# --- fingerprints and the baseline ---------------------------------------------------------------


def test_fingerprint_ignores_unscored_fields_and_int_versus_float_but_not_a_changed_claim():
    base = cell("A1", 1234, feature="x", fill={"rgb": "FFFF00"})
    assert fingerprint(base) == fingerprint({**base, "value": 1234.0, "feature": "y", "fill": None})
    assert fingerprint(base) != fingerprint({**base, "value": 1235})
    assert fingerprint(base) != fingerprint({**base, "tags": {"product_line": "new"}})
    assert fingerprint(base) != fingerprint({**base, "cell_ref": "A2"})


_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(),
                   st.text(max_size=8))
_CELL = st.fixed_dictionaries(
    {"sheet": st.sampled_from(["S", "区域明细", "a\"b"]), "cell_ref": st.sampled_from(["A1", "B7"])},
    optional={"value": st.one_of(_SCALAR, st.lists(_SCALAR, max_size=3)),
              "tags": st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3),
              "merge_span": st.one_of(st.none(), st.tuples(st.integers(1, 9), st.integers(1, 9))
                                      .map(list)),
              "is_merged_origin": st.one_of(st.none(), st.booleans())})


@settings(max_examples=300)
@given(_CELL)
@example({"sheet": "S", "cell_ref": "A1", "value": float("nan"), "merge_span": [2, 1]})
@example({"sheet": "S", "cell_ref": "A1", "value": float("-inf"), "tags": {"b": "2", "a": "1"}})
@example({"sheet": "S", "cell_ref": "A1", "value": -0.0, "is_merged_origin": True})
@example({"sheet": "S", "cell_ref": "A1", "value": 10**17 + 1, "tags": {}})
@example({"sheet": "S", "cell_ref": "A1", "value": [1, "x", None], "merge_span": None})
def test_the_fingerprint_written_directly_is_the_canonical_json_one(cell_):
    """Stored baselines hold fingerprints: the fast text must be json's, byte for byte."""
    from ragspine_eval.extraction.claims import canonical, canonical_by_json, stated_claims

    claims = stated_claims(cell_)
    loc = f"{cell_['sheet']}!{cell_['cell_ref']}"
    assert canonical(loc, claims) == canonical_by_json(loc, claims)


def test_the_baseline_entry_has_the_shape_the_ratchet_reads():
    facts = perfect_facts(SMALL_TRUTH)
    facts[3]["value"] = 0
    entry = make_baseline_entry(run_eval(facts[:5], SMALL_TRUTH))
    assert set(entry) == {"metrics", "n_cases", "passed_ids", "golden"}
    assert set(entry["metrics"]) == {*CHANNELS, COVERAGE} and entry["n_cases"] == 6
    assert "S!B4" not in entry["passed_ids"]["cell_value"]
    assert entry["passed_ids"][COVERAGE] == ["S!A1", "S!A4", "S!B1", "S!B4", "S!C4"]
    assert set(entry["golden"]) == {f"S!{c['cell_ref']}" for c in SMALL_TRUTH["cells"]}


def test_compare_listed_channel_below_fails_unlisted_ignored_equality_passes():
    stored = {"metrics": {"cell_value": 0.9}}
    assert compare_to_baseline({"cell_value": 0.9, "color_mapping": 0.1}, stored).passed
    assert compare_to_baseline({"cell_value": 0.95}, stored).passed
    cmp = compare_to_baseline({"cell_value": 0.89}, stored)
    assert not cmp.passed and cmp.regressions[0]["metric"] == "cell_value"


def test_a_report_compares_with_its_own_entry_as_a_pass_and_a_dropped_cell_as_a_regression():
    report = run_eval(perfect_facts(SMALL_TRUTH), SMALL_TRUTH)
    stored = make_baseline_entry(report)
    assert compare_to_baseline(report, stored).passed
    worse = run_eval(perfect_facts(SMALL_TRUTH)[1:], SMALL_TRUTH)
    cmp = compare_to_baseline(worse, stored)
    assert not cmp.passed
    assert {"metric": COVERAGE, "id": "S!A1"} in cmp.case_regressions


def test_dropping_a_wrong_cell_cannot_raise_accuracy_unseen():
    """The hole coverage closes. A values-only ground truth; the extractor stops emitting the
    one cell it got wrong. cell_value rises, no passing cell is lost and no ground-truth cell
    changed, so the channel rates with their case ids pass; coverage catches it."""
    truth = [{"sheet": "S", "cell_ref": f"A{i}", "value": i} for i in range(1, 5)]
    facts = [dict(c) for c in truth]
    facts[1]["value"] = 99
    stored = make_baseline_entry(run_eval(facts, truth))
    dropped = make_baseline_entry(run_eval(facts[:1] + facts[2:], truth))

    def without_coverage(entry: dict) -> dict:
        return {**entry, "metrics": {k: v for k, v in entry["metrics"].items() if k != COVERAGE},
                "passed_ids": {k: v for k, v in entry["passed_ids"].items() if k != COVERAGE}}

    assert compare(without_coverage(dropped), without_coverage(stored)).passed  # the hole
    cmp = compare(dropped, stored)
    assert not cmp.passed
    assert cmp.regressions == [{"metric": COVERAGE, "baseline": 1.0, "current": 0.75,
                                "delta": -0.25}]
    assert cmp.case_regressions == [{"metric": COVERAGE, "id": "S!A2"}]
    assert cmp.improvements[0]["metric"] == "cell_value"


def test_an_edited_ground_truth_cell_is_a_golden_change():
    report = run_eval(perfect_facts(SMALL_TRUTH), SMALL_TRUTH)
    stored = make_baseline_entry(report)
    edited = copy.deepcopy(SMALL_TRUTH)
    edited["cells"][3]["value"] = 1.0
    facts = perfect_facts(edited)
    cmp = compare_to_baseline(run_eval(facts, edited), stored)
    assert not cmp.passed and cmp.golden_changes == [{"id": "S!B4", "change": "changed"}]

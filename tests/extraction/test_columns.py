"""Issue 33: the columnar run_eval gives the cell-by-cell one's report, byte for byte, and
raises its errors, on generated records (hypothesis) and on the synthetic million-cell shape;
and the report's columns behave as the list and dict they replace."""

from __future__ import annotations

import json
import math
import pickle
from typing import Any

import pytest
from benchmarks.extraction import synthetic
from cell_by_cell import run_eval_by_cell
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragspine_eval.extraction import columns
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.report import EvalReport, make_baseline_entry
from ragspine_eval.extraction.scoring import run_eval


def _text(report: EvalReport) -> str:
    return json.dumps(report.to_dict(), sort_keys=True, ensure_ascii=False)


def _outcome(f: Any, facts: list, truth: Any) -> tuple[str, str]:
    try:
        report = f(facts, truth)
    except ExtractionInputError as exc:
        return "error", str(exc)
    return "report", _text(report) + json.dumps(make_baseline_entry(report), sort_keys=True)


def _same(facts: list, truth: Any) -> None:
    assert _outcome(run_eval, facts, truth) == _outcome(run_eval_by_cell, facts, truth)


# --- generated records -------------------------------------------------------------------------

_sheets = st.sampled_from(["S1", "S2", "Q3!", "s\"q", "S1 "])
_refs = st.sampled_from(["A1", "B2", "C3", "R1C1", "B2!", "a\\b", "A1\n"])
_values = st.one_of(
    st.none(), st.just(""), st.booleans(), st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True, width=32), st.sampled_from([1.0, 2.0, -0.0]),
    st.text(max_size=4), st.lists(st.integers(0, 2), max_size=2),
    st.tuples(st.integers(0, 2)), st.dictionaries(st.sampled_from("ab"), st.integers(0, 1),
                                                  max_size=1))
_tags = st.one_of(st.none(), st.just({}), st.dictionaries(
    st.sampled_from(["k", "z", "é"]), st.sampled_from(["v", "w\"", ""]), max_size=2))
_spans = st.one_of(st.none(), st.sampled_from([[1, 2], (1, 2), [2, 1], [1, 1]]))
_bad = st.sampled_from([{"sheet": "", "cell_ref": "A1"}, {"cell_ref": "A1"}, [1],
                        {"sheet": "S1", "cell_ref": "A9", "tags": {"k": 1}},
                        {"sheet": "S1", "cell_ref": "A9", "merge_span": [0, 1]},
                        {"sheet": "S1", "cell_ref": "A9", "is_merged_origin": 1}])


@st.composite
def _record(draw: Any, bad: bool = True) -> Any:
    if bad and draw(st.integers(0, 40)) == 0:
        record = draw(_bad)
        return dict(record) if isinstance(record, dict) else list(record)
    record: dict[str, Any] = {"sheet": draw(_sheets), "cell_ref": draw(_refs)}
    for name, values in (("value", _values), ("tags", _tags), ("merge_span", _spans),
                         ("is_merged_origin", st.one_of(st.none(), st.booleans())),
                         ("fill", st.sampled_from(["#ffc000", "", "D9D9D9", None, {"x": 1}])),
                         ("resolved_rgb", st.sampled_from(["FFC000", "d9d9d9"])),
                         ("reviewed", st.booleans()), ("feature", st.sampled_from(["a", None]))):
        if draw(st.integers(0, 3)):
            record[name] = draw(values)
    return record


def _unique(records: list) -> list:
    seen, out = set(), []
    for r in records:
        key = (r.get("sheet"), r.get("cell_ref")) if isinstance(r, dict) else id(r)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_record(), max_size=25), st.lists(_record(), max_size=25), st.booleans(),
       st.booleans(), st.sampled_from([None, {"sheets": ["S1"]}, {"ranges": ["S2!A1:B2"]}, {"sheets": "S1"}]),
       st.sampled_from([None, {"whitespace": "collapse"}, {"dates": "date"},
                        {"whitespace": "bogus"}]))
def test_the_columnar_pass_gives_the_cell_by_cell_report(cells, facts, dedupe_truth,
                                                          dedupe_facts, scope, compare):
    cells = _unique(cells) if dedupe_truth else cells
    facts = _unique(facts) if dedupe_facts else facts
    truth: dict[str, Any] = {"document": "d", "cells": cells}
    if scope is not None:
        truth["scope"] = scope
    if compare is not None:
        truth["compare"] = compare
    _same(facts, truth)


@settings(max_examples=60, deadline=None)
@given(st.lists(_record(bad=False), min_size=1, max_size=12))
def test_facts_equal_to_their_truth_score_alike(cells):
    cells = _unique(cells)
    facts = [dict(c) for c in cells][::-1]  # another order: found by locator, not position
    _same(facts, cells)


def test_the_synthetic_cells_across_chunks_score_alike():
    # more cells than a chunk: a sheet's cells run across chunks, facts come in another order
    facts, cells = synthetic(3 * columns.CHUNK + 17)
    _same(facts, {"document": "synthetic", "cells": cells})
    _same(facts[::-1], {"cells": cells, "scope": {"sheets": ["Sheet0"]}})


def test_a_locator_twice_far_apart_is_the_same_error():
    facts, cells = synthetic(2 * columns.CHUNK)
    _same(facts, {"cells": cells + [dict(cells[3])]})
    _same(facts + [dict(facts[5])], {"cells": cells})
    late_bad = cells[: columns.CHUNK + 5] + [{"sheet": "S", "cell_ref": 3}]
    _same(facts, {"cells": late_bad})


def test_sheets_that_come_back_and_bang_locators_score_alike():
    cells = [{"sheet": s, "cell_ref": r, "value": i}
             for i, (s, r) in enumerate([("A", "X1"), ("B", "X1"), ("A", "X2"), ("A!B", "C")])]
    facts = [{"sheet": "A", "cell_ref": "B!C", "value": 3}, {"sheet": "A", "cell_ref": "X2",
                                                            "value": 2}]
    _same(facts, cells)
    _same(facts, cells + [{"sheet": "A", "cell_ref": "B!C"}])  # one locator twice


def test_no_facts_and_no_cells():
    _same([], {"cells": []})
    _same([], {"cells": [{"sheet": "S", "cell_ref": "A1", "value": None}]})
    _same([{"sheet": "S", "cell_ref": "A1", "value": 1}], {"cells": []})
    _same([], "not a truth")


# --- the columns as the list and dict they replace ---------------------------------------------


def test_the_scored_cells_are_the_list_and_the_golden_the_dict():
    facts, cells = synthetic(500)
    truth = {"cells": cells}
    report, by_cell = run_eval(facts, truth), run_eval_by_cell(facts, truth)
    assert report.cells == by_cell.cells and by_cell.cells == list(report.cells)
    assert len(report.cells) == len(by_cell.cells)
    assert report.cells[7] == by_cell.cells[7] and report.cells[-1] == by_cell.cells[-1]
    assert report.cells[3:9] == by_cell.cells[3:9]
    assert report.golden == by_cell.golden and dict(report.golden) == by_cell.golden
    loc = next(iter(by_cell.golden))
    assert report.golden[loc] == by_cell.golden[loc] and loc in report.golden
    assert "nowhere!Z9" not in report.golden and report.golden.get("nowhere!Z9") is None
    assert report.passed_ids() == by_cell.passed_ids()
    assert report.to_frame().equals(by_cell.to_frame())
    assert EvalReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    again = pickle.loads(pickle.dumps(report))  # a document worker's report crosses processes
    assert again == report and _text(again) == _text(by_cell)


def test_the_fingerprints_are_hashed_when_first_read_and_once():
    facts, cells = synthetic(300)
    report = run_eval(facts, {"cells": cells})
    calls = []
    compute = report.golden._digests
    report.golden._digests = lambda: calls.append(1) or compute()
    assert calls == []
    first = dict(report.golden.items())
    assert dict(report.golden.items()) == first and calls == [1]


def test_a_nan_value_never_equals_itself_on_either_path():
    cells = [{"sheet": "S", "cell_ref": "A1", "value": math.nan}]
    report = run_eval([dict(cells[0])], cells)
    assert report.channels["cell_value"].correct == 0
    _same([dict(cells[0])], cells)


@pytest.mark.parametrize("n", [1, columns.CHUNK, columns.CHUNK + 1])
def test_chunk_edges(n):
    facts, cells = synthetic(n)
    _same(facts, {"cells": cells})

"""Repeats combined (qa/repeats.py): the rule that a case is flaky on a gate when its verdict
differs between repeats, counts as passing, and is kept with its verdict per repeat; an engine
error in any repeat is an error; stable verdicts are the first repeat's."""

from __future__ import annotations

import json

import pytest
from conftest import make_case, right_numeric_outcome
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.qa.repeats import combine_repeats
from ragspine_eval.qa.baseline_entry import make_baseline_entry
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.qa.report import QAEvalReport

CASES = [make_case("num-001"), make_case("num-002"), make_case("num-003")]
RIGHT, WRONG = right_numeric_outcome(), right_numeric_outcome(found_value=9.0)


def _repeat(*outcomes: CaseOutcome) -> QAEvalReport:
    return evaluate(CASES, list(outcomes), "tool", reference_texts={})


def test_a_verdict_that_differs_between_repeats_is_flaky_and_counts_as_passing():
    combined = combine_repeats([_repeat(RIGHT, RIGHT, WRONG), _repeat(RIGHT, WRONG, WRONG),
                                _repeat(RIGHT, RIGHT, WRONG)])
    numeric = combined.metrics["numeric_accuracy"]
    assert combined.repeats == 3
    assert numeric.flaky == {"num-002": [True, False, True]}
    assert numeric.passed_ids == ["num-001", "num-002"] and [f.id for f in numeric.failures] == [
        "num-003"]
    assert numeric.pass_rate == pytest.approx(2 / 3)
    flaky = next(r for r in numeric.results if r.id == "num-002")
    assert flaky.explanation.startswith("Flaky: passed in 2 of 3 repeats (pass, fail, pass)")
    assert "the engine found 9" in flaky.explanation  # how it fails when it does
    assert combined.flaky == {"numeric_accuracy": ["num-002"]}


def test_the_same_verdicts_in_every_repeat_are_one_runs_verdicts():
    one = _repeat(RIGHT, WRONG, RIGHT)
    combined = combine_repeats([one, _repeat(RIGHT, WRONG, RIGHT), _repeat(RIGHT, WRONG, RIGHT)])
    assert combined.flaky == {}
    for name, metric in one.gates().items():
        again = combined.gates()[name]
        assert again.passed_ids == metric.passed_ids
        assert again.to_dict()["failures"] == metric.to_dict()["failures"]
        assert again.by_tag == metric.by_tag


def test_an_engine_error_in_any_repeat_is_that_cases_error():
    down = CaseOutcome(error="TimeoutError: 30 s")
    combined = combine_repeats([_repeat(RIGHT, RIGHT, RIGHT), _repeat(RIGHT, down, RIGHT)])
    assert [c.id for c in combined.errors] == ["num-002"]
    assert [r.id for r in combined.metrics["numeric_accuracy"].errors] == ["num-002"]
    assert combined.metrics["numeric_accuracy"].total == 2 and combined.flaky == {}


def test_the_report_keeps_every_repeats_verdict_and_the_baseline_its_flaky_cases():
    combined = combine_repeats([_repeat(RIGHT, RIGHT, WRONG), _repeat(RIGHT, WRONG, WRONG)])
    data = json.loads(json.dumps(combined.to_dict()))
    assert data["repeats"] == 2
    assert data["metrics"]["numeric_accuracy"]["flaky"][0]["verdicts"] == [True, False]
    again = QAEvalReport.from_dict(data)
    assert again.repeats == 2 and again.flaky == combined.flaky
    entry = make_baseline_entry(combined)
    assert entry["repeats"] == 2 and entry["flaky"]["numeric_accuracy"] == ["num-002"]
    assert "flaky" not in make_baseline_entry(_repeat(RIGHT, RIGHT, RIGHT))


def test_repeats_of_different_cases_cannot_be_combined():
    other = evaluate(CASES[:2], [RIGHT, RIGHT], "tool", reference_texts={})
    with pytest.raises(ValueError, match="not runs of the same cases"):
        combine_repeats([_repeat(RIGHT, RIGHT, RIGHT), other])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=5))
def test_a_case_fails_the_combined_gate_only_when_it_fails_in_every_repeat(rows):
    combined = combine_repeats([_repeat(*(RIGHT if ok else WRONG for ok in row)) for row in rows])
    numeric = combined.metrics["numeric_accuracy"]
    for i, case in enumerate(CASES):
        verdicts = [row[i] for row in rows]
        assert (case.id in numeric.passed_ids) == any(verdicts)
        assert (case.id in numeric.flaky) == (any(verdicts) and not all(verdicts))
        if case.id in numeric.flaky:
            assert numeric.flaky[case.id] == verdicts
    assert sum(b["passed"] for b in numeric.by_tag["topic"].values()) == numeric.passed


def test_the_json_report_of_a_run_with_repeats_holds_pass_at_k_per_gate_and_one_run_none():
    """Three repeats: num-001 passes every time, num-002 twice (flaky), num-003 never. By hand:
    pass@3 = 2/3 (passed at least once), pass^3 = 1/3 (every time), pass@1 = (3 + 2 + 0) / 9."""
    combined = combine_repeats([_repeat(RIGHT, RIGHT, WRONG), _repeat(RIGHT, WRONG, WRONG),
                                _repeat(RIGHT, RIGHT, WRONG)])
    written = json.loads(json.dumps(combined.to_dict()))
    numeric = written["pass_at_k"]["numeric_accuracy"]
    assert (numeric["n"], numeric["cases"]) == (3, 3)
    assert (numeric["pass@k"], numeric["pass^k"]) == (round(2 / 3, 6), round(1 / 3, 6))
    assert numeric["pass@1"] == round(5 / 9, 6)
    lo, hi = numeric["pass^k_ci"]
    assert lo < 1 / 3 < hi
    assert set(written["pass_at_k"]) == set(combined.gates())
    # derived from the verdicts: a report read back writes the same figures
    assert QAEvalReport.from_dict(written).to_dict()["pass_at_k"] == written["pass_at_k"]
    assert "pass_at_k" not in _repeat(RIGHT, RIGHT, WRONG).to_dict()  # one run: as before


def test_pass_at_k_and_pass_hat_k_of_a_gate_with_a_flaky_case():
    """Three repeats: a case that always passed, one that always failed, one that passed once
    (flaky, counted as passing). Worked by hand: pass@3 = 2/3 (passed at least once), pass^3 =
    1/3 (every time), pass@1 = (1 + 0 + 1/3) / 3, pass@2 = (1 + 0 + (1 - C(2,2)/C(3,2))) / 3."""
    from ragspine_eval.qa.repeats import pass_at_k
    from ragspine_eval.qa.report import CaseResult, GateMetric

    metric = GateMetric("answer_accuracy", [CaseResult("a", True, None, None),
                                            CaseResult("b", False, None, None),
                                            CaseResult("c", True, None, None)],
                        flaky={"c": [True, False, False]})
    at3 = pass_at_k(metric, 3)
    assert (at3["pass@k"], at3["pass^k"]) == (round(2 / 3, 6), round(1 / 3, 6))
    lo, hi = at3["pass@k_ci"]
    assert lo < 2 / 3 < hi
    assert pass_at_k(metric, 3, 1)["pass@k"] == round(4 / 9, 6)
    assert pass_at_k(metric, 3, 2)["pass@k"] == round(5 / 9, 6)
    assert "pass@k_ci" not in pass_at_k(metric, 3, 2)
    with pytest.raises(ValueError, match="between 1 and the 3 repeats"):
        pass_at_k(metric, 3, 4)


def test_each_case_keeps_every_repeats_answer_and_verdicts_side_by_side():
    down = CaseOutcome(error="TimeoutError: 30 s")
    nine = right_numeric_outcome(found_value=9.0, answer="ACME_HK FY2025 REVENUE: 9 USD_M")
    reports = [_repeat(RIGHT, RIGHT, WRONG), _repeat(RIGHT, nine, down),
               _repeat(RIGHT, RIGHT, WRONG)]
    combined = combine_repeats(reports)
    flaky = next(c for c in combined.cases if c.id == "num-002")
    assert [r["repeat"] for r in flaky.repeats] == [0, 1, 2]
    assert [r["answer"] for r in flaky.repeats] == [RIGHT.answer, nine.answer, RIGHT.answer]
    assert [r["verdicts"]["numeric_accuracy"] for r in flaky.repeats] == ["pass", "fail", "pass"]
    assert "the engine found 9" in flaky.repeats[1]["failing"]["numeric_accuracy"]
    assert flaky.repeats[0]["failing"] == {}
    # the main row is the one every gate reads: the first repeat's (the first erroring
    # repeat's for a case with an error), as before
    assert flaky.answer == RIGHT.answer
    errored = next(c for c in combined.cases if c.id == "num-003")
    assert errored.error == "TimeoutError: 30 s"
    assert [r["error"] for r in errored.repeats] == [None, "TimeoutError: 30 s", None]
    assert set(errored.repeats[1]["verdicts"].values()) == {"error"}
    # each repeat's verdicts are that repeat's own report's, gate for gate
    for n, report in enumerate(reports):
        for gate, metric in report.gates().items():
            said = {c.id: c.repeats[n]["verdicts"].get(gate) for c in combined.cases}
            assert {r.id for r in metric.results if r.passed} == {
                i for i, v in said.items() if v == "pass"}
            assert {r.id for r in metric.errors} == {i for i, v in said.items() if v == "error"}


def test_the_repeats_read_back_from_the_json_and_one_run_keeps_none():
    combined = combine_repeats([_repeat(RIGHT, RIGHT, WRONG), _repeat(RIGHT, WRONG, WRONG)])
    data = json.loads(json.dumps(combined.to_dict()))
    assert [len(c["repeats"]) for c in data["cases"]] == [2, 2, 2]
    again = QAEvalReport.from_dict(data)
    assert [c.repeats for c in again.cases] == [c.repeats for c in combined.cases]
    one = _repeat(RIGHT, RIGHT, WRONG)
    assert combine_repeats([one]) is one
    assert not any("repeats" in c for c in one.to_dict()["cases"])  # its JSON as before

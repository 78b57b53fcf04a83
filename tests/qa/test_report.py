"""The report: metrics per gate with by-tag breakdowns and intervals, JSON, frames, errors."""

from __future__ import annotations

import json

from builders import HK_TEXT, narrative_outcome, sample_report
from conftest import HK_DOC, make_case
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.outputs.stats import wilson_interval
from ragspine_eval.qa.engines.base import CaseOutcome
from ragspine_eval.qa.gates import ALL_METRICS, Verdict
from ragspine_eval.qa.report import GateMetric, QAEvalReport, evaluate

# --- groundedness through evaluate -------------------------------------------------------------


def test_groundedness_metrics_pass_on_a_grounded_answer_and_fail_on_an_invented_one():
    case = make_case("nar-1", "narrative")
    refs = {HK_DOC: HK_TEXT}
    good = evaluate([case], [narrative_outcome()], "tool", reference_texts=refs)
    assert good.metrics["faithfulness"].passed == 1
    assert good.metrics["answer_accuracy"].passed == 1
    invented = narrative_outcome(narrative_answer="Profits tripled thanks to quantum underwriting.",
                                 answer="Profits tripled thanks to quantum underwriting.")
    bad = evaluate([case], [invented], "tool", reference_texts=refs)
    assert bad.metrics["faithfulness"].passed == 0
    assert bad.metrics["answer_accuracy"].passed == 0


# --- the report --------------------------------------------------------------------------------




def test_report_holds_six_metrics_and_fabrication_with_by_tag():
    report = sample_report()
    assert tuple(report.metrics) == ALL_METRICS
    data = report.to_dict()
    assert set(data) >= {"mode", "n_cases", "metrics", "fabrication", "fabrication_count"}
    assert data["fabrication_count"] == 1
    numeric = data["metrics"]["numeric_accuracy"]
    assert (numeric["total"], numeric["passed"], numeric["pass_rate"]) == (2, 1, 0.5)
    assert numeric["failures"] == [{"id": "num-002", "expected": "1702 USD_M", "actual": "1 USD_M"}]
    lo, hi = wilson_interval(1, 2)
    assert numeric["by_tag"]["qtype"] == {"must_not_clarify": {"total": 2, "passed": 1,
                                                               "ci_lo": lo, "ci_hi": hi}}
    assert (numeric["ci_lo"], numeric["ci_hi"]) == (lo, hi)
    external = data["metrics"]["refusal_appropriateness"]["by_tag"]["scope"]["EXTERNAL"]
    assert (external["total"], external["passed"], external["ci_hi"]) == (1, 1, 1.0)


def test_gate_no_case_reaches_has_pass_rate_one():
    report = sample_report()
    assert report.metrics["faithfulness"].total == 0
    assert report.metrics["faithfulness"].pass_rate == 1.0


def test_report_round_trips_through_json():
    report = sample_report()
    again = QAEvalReport.from_dict(report.to_dict())
    assert {n: (m.total, m.passed) for n, m in again.gates().items()} == \
           {n: (m.total, m.passed) for n, m in report.gates().items()}
    assert again.to_dict()["metrics"]["numeric_accuracy"]["failures"] == \
           report.to_dict()["metrics"]["numeric_accuracy"]["failures"]


def test_frame_has_one_row_per_case_and_gate():
    report = sample_report()
    frame = report.to_frame()
    assert len(frame) == sum(m.total for m in report.gates().values())
    row = frame[(frame.id == "num-002") & (frame.gate == "numeric_accuracy")].iloc[0]
    assert not row.passed and row.qtype == "must_not_clarify"


def test_an_engine_error_fails_every_gate_that_applies():
    case = make_case("ref-1", "refusal", refuse=True)
    report = evaluate([case], [CaseOutcome(error="TimeoutError: 30 s")], "tool", reference_texts={})
    applied = {n: m for n, m in report.gates().items() if m.total}
    assert set(applied) == {"refusal_appropriateness", "clarification_appropriateness", "fabrication"}
    assert all(m.passed == 0 for m in applied.values())
    assert report.errors[0].error == "TimeoutError: 30 s"


@given(st.lists(st.booleans(), max_size=50))
def test_pass_rate_is_always_in_unit_interval(verdicts):

    metric = GateMetric("g")
    for i, ok in enumerate(verdicts):
        metric.record(make_case(f"c{i}"), Verdict(ok, "e", "a"))
    assert 0.0 <= metric.pass_rate <= 1.0
    assert metric.passed + len(metric.failures) == metric.total == len(verdicts)


def test_intervals_inform_and_never_enter_the_baseline_entry():
    from ragspine_eval.qa.report import make_baseline_entry

    entry = make_baseline_entry(sample_report())
    assert "ci_lo" not in json.dumps(entry) and "ci_hi" not in json.dumps(entry)
    assert entry["metrics"]["numeric_accuracy"] == 0.5


def test_a_report_written_before_intervals_reads_and_gains_them():
    data = sample_report().to_dict()
    for metric in (*data["metrics"].values(), data["fabrication"]):
        del metric["ci_lo"], metric["ci_hi"]
        for values in metric["by_tag"].values():
            for bucket in values.values():
                del bucket["ci_lo"], bucket["ci_hi"]
    again = QAEvalReport.from_dict(data).to_dict()
    assert again == sample_report().to_dict()

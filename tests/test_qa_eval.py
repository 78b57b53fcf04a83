"""Every gate in both directions on hand-built outcomes, and the report's shape."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import HK_DOC, HK_SOURCE, make_case, right_numeric_outcome
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.qa_eval import (
    ALL_METRICS,
    GateMetric,
    QAEvalReport,
    citation_validity,
    clarification_appropriateness,
    evaluate,
    fabricated_numbers,
    fabrication,
    numeric_accuracy,
    refusal_appropriateness,
)
from ragspine_eval.stats import wilson_interval

HK_TEXT = "香港 REVENUE 同比走弱，主要原因是 MCV 客群萎缩，以及银保渠道的结构调整。"


def narrative_outcome(**changes) -> CaseOutcome:
    out = CaseOutcome(route="narrative", answer=f"{HK_TEXT}（来源：{HK_DOC} {HK_DOC}#para1）",
                      sources=[{"doc": HK_DOC, "locator": f"{HK_DOC}#para1"}],
                      narrative_answer=f"{HK_TEXT}（来源：{HK_DOC} {HK_DOC}#para1）",
                      retrieved_context=[HK_TEXT])
    for k, v in changes.items():
        setattr(out, k, v)
    return out


# --- numeric_accuracy --------------------------------------------------------------------------


def test_numeric_accuracy_passes_on_value_and_unit():
    assert numeric_accuracy(make_case(), right_numeric_outcome()).passed


@pytest.mark.parametrize("changes", [{"found_value": 1538.0}, {"found_unit": "HKD_M"},
                                     {"found_value": None}])
def test_numeric_accuracy_fails_on_wrong_or_missing_value_or_unit(changes):
    verdict = numeric_accuracy(make_case(), right_numeric_outcome(**changes))
    assert not verdict.passed and verdict.expected == "1702 USD_M"


def test_numeric_accuracy_does_not_apply_without_an_expected_value():
    assert numeric_accuracy(make_case("ref-1", "refusal", refuse=True), CaseOutcome()) is None


# --- citation_validity -------------------------------------------------------------------------


def test_citation_passes_when_source_matches_and_is_named():
    assert citation_validity(make_case(), right_numeric_outcome()).passed


def test_right_number_with_wrong_source_fails():
    wrong = {"doc": "ACME_FY2024_Results.pptx", "locator": HK_SOURCE["locator"]}
    verdict = citation_validity(make_case(), right_numeric_outcome(found_source=wrong))
    assert numeric_accuracy(make_case(), right_numeric_outcome(found_source=wrong)).passed
    assert not verdict.passed and "ACME_FY2024_Results.pptx" in verdict.actual


def test_citation_fails_when_the_doc_is_not_named_in_the_answer():
    verdict = citation_validity(make_case(), right_numeric_outcome(answer="1702 USD_M"))
    assert not verdict.passed and "not named in the answer" in verdict.actual


def test_narrative_citation_needs_the_doc_among_sources_and_in_the_answer():
    case = make_case("nar-1", "narrative")
    assert citation_validity(case, narrative_outcome()).passed
    assert not citation_validity(case, narrative_outcome(sources=[])).passed
    assert not citation_validity(case, narrative_outcome(answer=HK_TEXT)).passed


def test_composite_citation_needs_both_source_and_narrative_doc():
    case = make_case("comp-1", "composite")
    both = right_numeric_outcome(answer=right_numeric_outcome().answer + f"\n（来源：{HK_DOC}）",
                                 sources=[dict(HK_SOURCE), {"doc": HK_DOC, "locator": "p1"}])
    assert citation_validity(case, both).passed
    assert not citation_validity(case, right_numeric_outcome()).passed


# --- refusal_appropriateness -------------------------------------------------------------------


def test_expected_refusal_passes_only_when_refused_without_value():
    case = make_case("ref-1", "refusal", refuse=True)
    assert refusal_appropriateness(case, CaseOutcome(refused=True)).passed
    assert not refusal_appropriateness(case, CaseOutcome(refused=False)).passed
    assert not refusal_appropriateness(case, CaseOutcome(refused=True, found_value=1.0)).passed


def test_unexpected_refusal_fails():
    assert refusal_appropriateness(make_case(), right_numeric_outcome()).passed
    assert not refusal_appropriateness(make_case(), right_numeric_outcome(refused=True)).passed


# --- clarification_appropriateness -------------------------------------------------------------


def test_clarification_mode_must_match_both_ways():
    complete = make_case()
    assert clarification_appropriateness(complete, right_numeric_outcome()).passed
    asked = right_numeric_outcome(clarification_mode="ask_first")
    assert not clarification_appropriateness(complete, asked).passed
    vague = make_case("clar-1", "clarification", clarification="ask_first")
    assert clarification_appropriateness(vague, CaseOutcome(clarification_mode="ask_first")).passed
    assert not clarification_appropriateness(vague, CaseOutcome()).passed


# --- fabrication -------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [
    "查不到：REVENUE / ACME_HK / 2023（渠道 TOTAL）未在事实表中找到。",
    "FY2024 与 2025H1、2025Q1 都没有数据；2030年、2024年上半年也没有。",
    "系统不掌握「竞安(Jingan)」的数据。",
    "改查 FY2026（今年至今）／改查 2025H1/H2",
    "No figures were published for 2023.",
])
def test_period_tokens_are_not_fabricated_numbers(answer):
    assert fabricated_numbers(answer) == []


@pytest.mark.parametrize(("answer", "numbers"), [
    ("竞安 2025 年营收约 9999 USD_M", ["9999"]),
    ("大约 1,702.5 百万", ["1,702.5"]),
    ("FY2025 为 4500", ["4500"]),
    ("about 2023.5 million", ["2023.5"]),
    ("[1] 约 812 USD_M（来源：HK_QBR_2025Q4.pptx HK_QBR_2025Q4.pptx#para1）", ["812"]),
])
def test_other_numbers_are_fabricated(answer, numbers):
    assert fabricated_numbers(answer) == numbers


@pytest.mark.parametrize("answer", [
    "香港监管动态：……（来源：REG_WATCH_HK.pptx REG_WATCH_HK.pptx#para1）",
    "[1] 片段一 [2] 片段二",
    "查不到（来源：ACME_FY2025_Results.pptx · slide=5,table=1,row=2,col=3）",
])
def test_a_citations_locator_is_not_a_fabricated_number(answer):
    assert fabricated_numbers(answer) == []


def test_fabrication_scores_refusal_cases_only():
    refusal = make_case("ref-1", "refusal", refuse=True)
    assert fabrication(refusal, CaseOutcome(answer="查不到 FY2023")).passed
    assert not fabrication(refusal, CaseOutcome(answer="约 812 USD_M")).passed
    assert fabrication(make_case(), right_numeric_outcome()) is None


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


def sample_report() -> QAEvalReport:
    cases = [make_case(), make_case("num-002"), make_case("ref-1", "refusal", refuse=True,
                                                          tags={"topic": "COMPETITOR", "scope": "EXTERNAL", "qtype": "competitor"})]
    outcomes = [right_numeric_outcome(), right_numeric_outcome(found_value=1.0),
                CaseOutcome(refused=True, answer="约 77 USD_M")]
    return evaluate(cases, outcomes, "tool", reference_texts={HK_DOC: HK_TEXT})


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
    from ragspine_eval.qa_eval import Verdict

    metric = GateMetric("g")
    for i, ok in enumerate(verdicts):
        metric.record(make_case(f"c{i}"), Verdict(ok, "e", "a"))
    assert 0.0 <= metric.pass_rate <= 1.0
    assert metric.passed + len(metric.failures) == metric.total == len(verdicts)


def test_intervals_inform_and_never_enter_the_baseline_entry():
    from ragspine_eval.qa_eval import make_baseline_entry

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

"""The report: metrics per gate with by-tag breakdowns and intervals, JSON, frames, errors."""

from __future__ import annotations

import json

from builders import HK_TEXT, narrative_outcome, sample_report
from conftest import HK_DOC, make_case
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.stats import wilson_interval
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.qa.gates import ALL_METRICS, Verdict
from ragspine_eval.qa.baseline_entry import make_baseline_entry
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.qa.report import (
    GateMetric,
    QAEvalReport,
)

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




def test_report_holds_six_metrics_the_retrieval_gate_and_fabrication_with_by_tag():
    report = sample_report()
    assert tuple(report.metrics) == (*ALL_METRICS, "retrieval@5")
    data = report.to_dict()
    assert set(data) >= {"mode", "n_cases", "metrics", "fabrication", "fabrication_count"}
    assert data["fabrication_count"] == 1
    numeric = data["metrics"]["numeric_accuracy"]
    assert (numeric["total"], numeric["passed"], numeric["pass_rate"]) == (2, 1, 0.5)
    assert numeric["failures"] == [{
        "id": "num-002", "expected": "1702 USD_M", "actual": "1 USD_M",
        "explanation": "Expected 1702 USD_M, but the engine found 1 USD_M: the value differs.",
        "evidence": {"expected_value": 1702.0, "expected_unit": "USD_M", "found_value": 1.0,
                     "found_unit": "USD_M", "value_matches": False, "unit_matches": True},
        "stage": "answer"}]
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


def test_an_engine_error_is_neither_a_pass_nor_a_failure_on_every_gate_that_applies():
    case = make_case("ref-1", "refusal", refuse=True)
    report = evaluate([case], [CaseOutcome(error="TimeoutError: 30 s")], "tool", reference_texts={})
    errored = {n for n, m in report.gates().items() if m.errors}
    assert errored == {"refusal_appropriateness", "clarification_appropriateness", "fabrication"}
    assert all(m.total == 0 and m.pass_rate == 1.0 for m in report.gates().values())
    assert report.fabrication_count == 0
    assert [c.id for c in report.errors] == ["ref-1"]
    data = report.to_dict()
    assert data["fabrication_count"] == 0 and data["fabrication"]["failures"] == []
    assert data["metrics"]["refusal_appropriateness"]["engine_errors"] == [
        {"id": "ref-1", "error": "TimeoutError: 30 s"}]
    assert "ref-1" not in make_baseline_entry(report)["passed_ids"]["refusal_appropriateness"]
    again = QAEvalReport.from_dict(json.loads(json.dumps(data)))
    assert [r.error for r in again.metrics["refusal_appropriateness"].errors] == ["TimeoutError: 30 s"]
    assert again.fabrication.total == 0 and again.errors[0].id == "ref-1"


def test_answered_cases_keep_their_verdicts_beside_an_engine_error():
    cases = [make_case("ref-1", "refusal", refuse=True), make_case("ref-2", "refusal", refuse=True)]
    outcomes = [CaseOutcome(error="EngineError: 503"), CaseOutcome(refused=True, answer="它有 12 个")]
    report = evaluate(cases, outcomes, "tool", reference_texts={})
    assert report.fabrication_count == 1 and report.fabrication.total == 1
    assert [r.id for r in report.fabrication.errors] == ["ref-1"]
    assert "engine error" in report.errors_sentence() and "neither passes nor failures" in \
        report.errors_sentence()
    assert evaluate(cases[1:], outcomes[1:], "tool", reference_texts={}).errors_sentence() == ""


@given(st.lists(st.booleans(), max_size=50))
def test_pass_rate_is_always_in_unit_interval(verdicts):

    metric = GateMetric("g")
    for i, ok in enumerate(verdicts):
        metric.record(make_case(f"c{i}"), Verdict(ok, "e", "a"))
    assert 0.0 <= metric.pass_rate <= 1.0
    assert metric.passed + len(metric.failures) == metric.total == len(verdicts)


def test_intervals_inform_and_never_enter_the_baseline_entry():
    from ragspine_eval.qa.baseline_entry import make_baseline_entry

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


# --- evidence and case records in the JSON report -----------------------------------------------


def _real_report(mode: str = "tool") -> QAEvalReport:
    from builders import real_run

    cases, outcomes, refs = real_run(mode)
    return evaluate(cases, outcomes, mode, reference_texts=refs)


def test_failing_verdicts_carry_evidence_in_the_json_and_passing_ones_stay_ids():
    data = _real_report().to_dict()
    failures = [f for m in data["metrics"].values() for f in m["failures"]]
    assert failures and all(f["explanation"] and f["evidence"] for f in failures)
    faith = {f["id"]: f for f in data["metrics"]["faithfulness"]["failures"]}
    assert faith["comp-003"]["evidence"]["claims"] == []  # tool mode: no narrative answer
    assert "no claim" in faith["comp-003"]["explanation"]
    numeric = data["metrics"]["numeric_accuracy"]
    assert "num-001" in numeric["passed_ids"]
    assert all(f["id"] != "num-001" for f in numeric["failures"])


def test_case_records_keep_what_the_case_view_needs_and_round_trip():
    from builders import real_run

    cases, outcomes, _ = real_run("tool")
    report = _real_report()
    data = json.loads(json.dumps(report.to_dict()))
    by_id = {c["id"]: c for c in data["cases"]}
    i = next(i for i, c in enumerate(cases) if c.id == "nar-003")
    record = by_id["nar-003"]
    assert record["reference_date"] == cases[i].reference_date.isoformat()
    assert record["expected"] == cases[i].expected
    assert record["sources"] == outcomes[i].sources and record["sources"]
    assert record["retrieved_context"] == outcomes[i].retrieved_context
    assert record["narrative_answer"] == outcomes[i].narrative_answer
    j = next(j for j, c in enumerate(cases) if c.id == "num-001")
    assert by_id["num-001"]["tool_statuses"] == outcomes[j].tool_statuses == ["found"]
    # empty ones are left out of the JSON and read back empty
    assert "retrieved_context" not in by_id["num-001"] and "narrative_answer" not in by_id["num-001"]
    again = QAEvalReport.from_dict(data)
    assert again.cases == report.cases
    assert again.to_dict() == data


def test_a_report_written_before_evidence_and_case_fields_still_reads():
    data = json.loads(json.dumps(_real_report().to_dict()))
    for metric in (*data["metrics"].values(), data["fabrication"]):
        for failure in metric["failures"]:
            del failure["explanation"], failure["evidence"]
    new_fields = ("reference_date", "expected", "sources", "tool_statuses", "retrieved_context",
                  "narrative_answer")
    for case in data["cases"]:
        for name in new_fields:
            case.pop(name, None)
    old = QAEvalReport.from_dict(data)
    assert old.n_cases == 71 and old.metrics["numeric_accuracy"].failures[0].evidence is None
    record = next(c for c in old.cases if c.id == "nar-003")
    assert (record.reference_date, record.expected, record.retrieved_context) == (None, {}, [])
    assert old.to_dict()["metrics"]["numeric_accuracy"]["failures"][0]["explanation"] is None


def test_fabrication_is_one_sentence_with_its_rate_and_interval():
    report = sample_report()  # one refusal case, its answer holds 77
    assert (report.fabrication_count, report.fabrication.total) == (1, 1)
    assert report.fabrication_rate == 1.0
    assert report.fabrication_interval == wilson_interval(1, 1)
    lo, _ = wilson_interval(1, 1)
    assert report.fabrication_sentence() == (
        f"fabrication: 1 of 1 refusal answers held an invented number, rate 1.00 "
        f"[{lo:.2f}, 1.00] (lower is better)")
    data = report.to_dict()
    assert (data["fabrication_rate"], data["fabrication_interval"]) == (1.0, [lo, 1.0])
    real = _real_report()
    assert real.fabrication_sentence().startswith(
        "fabrication: 0 of 13 refusal answers held an invented number, rate 0.00 [0.00, 0.23]")


# --- the baseline entry ---------------------------------------------------------------------------


def test_the_entry_records_the_kb_its_files_and_the_engine_from_the_provenance():
    from ragspine_eval.provenance import InputRef, RunInputs, collect
    from ragspine_eval.qa.baseline_entry import make_baseline_entry

    report = sample_report()
    assert not {"kb", "engine", "judge"} & set(make_baseline_entry(report))  # no provenance
    files = {"facts.csv": "0123456789abcdef", "narratives.jsonl": "fedcba9876543210"}
    report.provenance = collect(RunInputs(harness="qa", mode="tool", golden=InputRef("g", "f00d", 3),
                                          kb=InputRef("data/kb", "aaaabbbbccccdddd"),
                                          kb_files=files, engine="rag-spine",
                                          engine_version="0.17.2"))
    entry = make_baseline_entry(report)
    assert entry["kb"] == {"fingerprint": "aaaabbbbccccdddd", "files": files}
    assert entry["engine"] == {"name": "rag-spine", "version": "0.17.2"}
    # a report read back from its JSON gives the same entry
    again = QAEvalReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert make_baseline_entry(again) == entry


def test_an_http_engine_is_recorded_with_an_unknown_version():
    from ragspine_eval.provenance import InputRef, RunInputs, collect
    from ragspine_eval.qa.baseline_entry import make_baseline_entry

    report = sample_report()
    report.provenance = collect(RunInputs(harness="qa", mode="agent",
                                          golden=InputRef("g", "f00d", 3),
                                          kb=InputRef("data/kb", "aaaabbbbccccdddd"),
                                          engine="http://127.0.0.1:8000"))
    entry = make_baseline_entry(report)
    assert entry["engine"] == {"name": "http://127.0.0.1:8000", "version": None}
    assert entry["kb"] == {"fingerprint": "aaaabbbbccccdddd"}  # a provenance without files


def test_a_real_run_records_the_default_kb_and_the_installed_engine(tiny_golden):
    from importlib.metadata import version

    from ragspine_eval.knowledge.kb import kb_file_fingerprints, kb_fingerprint
    from ragspine_eval.qa.baseline_entry import make_baseline_entry
    from ragspine_eval.qa.run import run_qa_eval

    entry = make_baseline_entry(run_qa_eval(tiny_golden, "tool"))
    assert entry["kb"] == {"fingerprint": kb_fingerprint(), "files": kb_file_fingerprints()}
    assert entry["engine"] == {"name": "rag-spine", "version": version("rag-spine")}

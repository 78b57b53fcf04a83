"""JUnit XML in the shape common CI readers accept, with counts that add up to the report's."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from builders import check_junit_shape, sample_report

from ragspine_eval.outputs.junit import JUnitCase, junit_xml
from ragspine_eval.outputs.qa_files import qa_junit_cases, write_qa_junit

# What each element may hold and carry; readers (Jenkins, GitLab, GitHub report actions) accept
# this subset of the Ant JUnit schema.


def test_one_testcase_per_case_and_gate_with_the_reports_counts(tmp_path):
    report = sample_report()
    path = tmp_path / "qa.xml"
    write_qa_junit(path, report)
    root = ET.parse(path).getroot()
    tests, failures = check_junit_shape(root)
    assert tests == sum(m.total for m in report.gates().values())
    assert failures == sum(len(m.failures) for m in report.gates().values())
    suites = [s.get("name") for s in root.findall("testsuite")]
    assert suites == [g for g, m in report.gates().items() if m.total]


def test_a_failure_carries_expected_actual_and_why():
    root = ET.fromstring(junit_xml(qa_junit_cases(sample_report()), "qa"))
    case = root.find("testsuite[@name='numeric_accuracy']/testcase[@name='num-002']")
    assert case.get("classname") == "qa.tool.numeric_accuracy"
    failure = case.find("failure")
    assert failure.get("message") == "expected 1702 USD_M, got 1 USD_M [stage: answer]"
    assert failure.text == ("expected: 1702 USD_M\nactual: 1 USD_M\nwhy: Expected 1702 USD_M, "
                            "but the engine found 1 USD_M: the value differs.\nstage: answer "
                            "(what it needed was retrieved or looked up)")
    assert root.find("testsuite/testcase[@name='num-001']/failure") is None


def test_a_case_that_passed_at_baseline_time_fails_as_a_regression_not_a_known_failure():
    from ragspine_eval.qa.baseline_entry import compare_to_baseline, make_baseline_entry

    report = sample_report()  # num-002 fails numeric_accuracy
    stored = make_baseline_entry(report)
    stored["passed_ids"]["numeric_accuracy"].append("num-002")  # as if it passed then
    root = ET.fromstring(junit_xml(qa_junit_cases(report, compare_to_baseline(report, stored)),
                                   "qa"))
    failures = {c.get("name") + " " + c.get("classname"): c.find("failure")
                for c in root.iter("testcase") if c.find("failure") is not None}
    regressed = failures.pop("num-002 qa.tool.numeric_accuracy")
    assert regressed.get("type") == "Regression"
    assert regressed.get("message").startswith("regression (passed at baseline time): expected")
    assert failures and {f.get("type") for f in failures.values()} == {"AssertionError"}
    assert check_junit_shape(root) == check_junit_shape(
        ET.fromstring(junit_xml(qa_junit_cases(report), "qa")))  # the counts do not move


def test_answers_with_markup_and_control_characters_stay_well_formed():
    nasty = 'a <b> & "c" \x00\x1b ' + "x" * 500
    rows = [JUnitCase("channel.value", "cell-1", "extraction.xlsx", False, "<1,702>", nasty),
            JUnitCase("channel.value", "cell-2", "extraction.xlsx", True)]
    root = ET.fromstring(junit_xml(rows, "extraction", {"golden.path": "a&b"}))
    assert check_junit_shape(root) == (2, 1)
    failure = root.find(".//failure")
    assert "<1,702>" in failure.get("message") and len(failure.get("message")) <= 200
    assert 'a <b> & "c"' in failure.text and "\x00" not in failure.text
    assert root.find(".//property").get("value") == "a&b"


def test_provenance_travels_as_properties_when_the_report_has_one(tmp_path):
    from ragspine_eval.provenance import Clock, InputRef, RunInputs, collect

    report = sample_report()
    report.provenance = collect(RunInputs(harness="qa", mode="tool",
                                          golden=InputRef("g", "f00d", 3)), Clock())
    path = tmp_path / "qa.xml"
    write_qa_junit(path, report)
    root = ET.parse(path).getroot()
    props = {p.get("name"): p.get("value") for p in root.find("testsuite/properties")}
    assert props["golden.fingerprint"] == "f00d" and props["mode"] == "tool"
    assert root.find("testsuite").get("timestamp") == report.provenance.times.started_at[:19]


def test_extraction_junit_has_a_testcase_per_cell_and_channel_grouped_per_channel(tmp_path):
    from builders import TRUTHS, fact_of, write_jsonl

    from ragspine_eval.extraction.run import fixture_targets, score_facts_file
    from ragspine_eval.outputs.extraction_files import write_extraction_junit

    facts = [fact_of(c) for c in TRUTHS["pptx"]["cells"]]
    facts[0]["value"] = "WRONG"
    del facts[1]  # a ground-truth cell with no fact: a coverage failure
    run = score_facts_file(write_jsonl(tmp_path / "f.jsonl", facts), fixture_targets("pptx"))
    path = tmp_path / "extraction.xml"
    write_extraction_junit(path, run)
    root = ET.parse(path).getroot()
    tests, failures = check_junit_shape(root)
    report = run.reports["pptx"]
    assert tests == sum(m.total for m in report.channels.values()) + report.coverage.ground_truth_cells
    assert failures == sum(len(m.mismatches) for m in report.channels.values()) + len(report.coverage.missing)
    assert failures == 2
    suites = [s.get("name") for s in root.findall("testsuite")]
    assert suites == [c for c in ("cell_value", "color_mapping", "header_attribution")
                      if report.channels[c].total] + ["coverage"]
    failed = root.find("testsuite[@name='cell_value']/testcase/failure")
    assert "'WRONG'" in failed.get("message")


def test_an_extraction_cell_that_was_right_at_baseline_time_fails_as_a_regression(tmp_path):
    from builders import TRUTHS, fact_of, write_jsonl

    from ragspine_eval.extraction.report import compare_to_baseline, make_baseline_entry
    from ragspine_eval.extraction.run import fixture_targets, score_facts_file
    from ragspine_eval.outputs.extraction_files import extraction_junit_cases

    cells = TRUTHS["pptx"]["cells"]
    right = score_facts_file(write_jsonl(tmp_path / "ok.jsonl", [fact_of(c) for c in cells]),
                             fixture_targets("pptx"))
    facts = [fact_of(c) for c in cells]
    facts[0]["value"] = "WRONG"
    wrong = score_facts_file(write_jsonl(tmp_path / "bad.jsonl", facts), fixture_targets("pptx"))
    cmp = compare_to_baseline(wrong.reports["pptx"], make_baseline_entry(right.reports["pptx"]))
    root = ET.fromstring(junit_xml(extraction_junit_cases(wrong, {"pptx": cmp}), "extraction"))
    failures = [c.find("failure") for c in root.iter("testcase") if c.find("failure") is not None]
    assert [f.get("type") for f in failures] == ["Regression"]
    assert "'WRONG'" in failures[0].get("message")



def test_an_engine_error_is_an_error_element_not_a_failure(tmp_path):
    from conftest import make_case

    from ragspine_eval.engines.base import CaseOutcome
    from ragspine_eval.qa.evaluation import evaluate

    cases = [make_case("ref-1", "refusal", refuse=True), make_case("ref-2", "refusal", refuse=True)]
    outcomes = [CaseOutcome(error="TimeoutError: 30 s"), CaseOutcome(answer="有 12 个")]
    report = evaluate(cases, outcomes, "tool", reference_texts={})
    path = tmp_path / "j.xml"
    write_qa_junit(path, report)
    root = ET.parse(path).getroot()
    _, failures = check_junit_shape(root)
    errors = root.findall(".//testcase/error")
    assert len(errors) == 3 == int(root.get("errors"))  # refusal, clarification, fabrication
    assert all(e.get("type") == "EngineError" and "TimeoutError: 30 s" in e.get("message")
               for e in errors)
    named = {tc.get("name") for tc in root.iter("testcase") if tc.find("error") is not None}
    assert named == {"ref-1"}
    assert failures == 2  # ref-2 answered instead of refusing, with an invented 12

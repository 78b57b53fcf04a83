"""The case view: one case whole, as a dict and as escaped HTML, on the real engine's reports."""

from __future__ import annotations

import json
import re

import pytest
from builders import real_run

from ragspine_eval import paths
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.judges.groundedness import split_claims, tokens
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.workbench.views.case_view import UnknownCaseError, case_detail, case_html

KEYS = {"id", "question", "reference_date", "case_type", "tags", "expected", "answer", "route",
        "tool_statuses", "sources", "retrieved_context", "error", "mode", "verdicts", "other", "label",
        "retrieval", "repeats"}
VERDICT_KEYS = {"gate", "passed", "error", "flaky", "expected", "actual", "explanation", "evidence",
                "at_baseline", "stage"}


def _report(mode: str, **changed_outcomes) -> QAEvalReport:
    import copy

    cases, outcomes, refs = real_run(mode)
    outcomes = [copy.deepcopy(o) for o in outcomes]
    for i, case in enumerate(cases):
        for name, value in changed_outcomes.get(case.id, {}).items():
            setattr(outcomes[i], name, value)
    return evaluate(cases, outcomes, mode, reference_texts=refs)


@pytest.fixture(scope="module")
def tool():
    return _report("tool")


@pytest.fixture(scope="module")
def agent():
    return _report("agent")


@pytest.fixture(scope="module")
def stored():
    return json.loads(paths.QA_BASELINE.read_text(encoding="utf-8"))["tool"]


def test_a_failing_case_shows_its_verdicts_evidence_and_status_at_baseline(tool, agent, stored):
    detail = case_detail(tool, "num-022", stored, agent)
    assert set(detail) == KEYS
    assert json.loads(json.dumps(detail)) == detail  # JSON-safe
    assert (detail["question"], detail["mode"], detail["case_type"]) == (
        next(c.question for c in tool.cases if c.id == "num-022"), "tool", "numeric")
    assert detail["reference_date"] == "2026-06-12"
    assert detail["expected"]["value"] == 818.0 and detail["expected"]["unit"] == "USD_M"
    verdicts = {v["gate"]: v for v in detail["verdicts"]}
    assert all(set(v) == VERDICT_KEYS for v in detail["verdicts"])
    numeric = verdicts["numeric_accuracy"]
    assert not numeric["passed"] and numeric["evidence"]["found_value"] == 1702.0
    assert "818 USD_M" in numeric["explanation"]
    # num-022 failed both gates when the baseline was recorded, and passed refusal
    assert numeric["at_baseline"] == verdicts["citation_validity"]["at_baseline"] == "failed"
    assert verdicts["refusal_appropriateness"]["at_baseline"] == "passed"
    assert verdicts["refusal_appropriateness"]["passed"]
    other = detail["other"]
    assert other["mode"] == "agent"
    assert (detail["label"], other["label"]) == ("tool mode", "agent mode")  # unless labels given
    assert other["answer"] == next(c.answer for c in agent.cases if c.id == "num-022")
    assert {v["gate"] for v in other["verdicts"]} == set(verdicts)
    assert all(v["at_baseline"] is None for v in other["verdicts"])  # the baseline is tool's


def test_without_a_baseline_or_other_mode_those_parts_are_empty(tool):
    detail = case_detail(tool, "num-001")
    assert detail["other"] is None
    assert all(v["at_baseline"] is None and v["passed"] for v in detail["verdicts"])


def test_the_retrieved_context_marks_the_words_that_support_a_claim(tool):
    detail = case_detail(tool, "nar-003")
    record = next(c for c in tool.cases if c.id == "nar-003")
    claimed = {t for c in split_claims(record.narrative_answer) for t in tokens(c)}
    assert [p["text"] for p in detail["retrieved_context"]] == record.retrieved_context
    for passage in detail["retrieved_context"]:
        assert passage["marks"]
        for start, end in passage["marks"]:
            assert tokens(passage["text"][start:end])
            assert set(tokens(passage["text"][start:end])) <= claimed
        ends = [e for _, e in passage["marks"]]
        starts = [s for s, _ in passage["marks"]]
        assert all(e < s for e, s in zip(ends, starts[1:], strict=False))  # sorted, merged


def test_a_report_read_from_json_gives_the_same_failing_verdicts(tool, agent, stored):
    live = case_detail(tool, "nar-006", stored, agent)
    read = case_detail(json.loads(json.dumps(tool.to_dict())), "nar-006", stored,
                       agent.to_dict())
    failing = [v for v in live["verdicts"] if not v["passed"]]
    assert failing and failing == [v for v in read["verdicts"] if not v["passed"]]
    assert read["retrieved_context"] == live["retrieved_context"]


def test_an_unknown_id_names_the_closest_ids(tool):
    with pytest.raises(UnknownCaseError) as err:
        case_detail(tool, "num-0222")
    assert isinstance(err.value, RagspineEvalError)
    message = str(err.value)
    assert "'num-0222'" in message and "num-022" in message and "tool report" in message


def test_an_old_report_without_the_new_keys_still_shows_a_case(tool):
    data = json.loads(json.dumps(tool.to_dict()))
    for metric in (*data["metrics"].values(), data["fabrication"]):
        for failure in metric["failures"]:
            del failure["explanation"], failure["evidence"]
    for case in data["cases"]:
        for name in ("reference_date", "expected", "sources", "tool_statuses",
                     "retrieved_context", "narrative_answer"):
            case.pop(name, None)
    detail = case_detail(data, "num-022")
    assert (detail["expected"], detail["reference_date"], detail["retrieved_context"]) == ({}, None, [])
    numeric = next(v for v in detail["verdicts"] if v["gate"] == "numeric_accuracy")
    assert numeric["evidence"] == {} and numeric["explanation"] == "Failed."
    page = case_html(detail)
    assert "not in this report" in page and "1702 USD_M" in page


# --- HTML ---------------------------------------------------------------------------------------


def test_the_html_shows_the_case_whole_failing_verdicts_first(tool, agent, stored):
    page = case_html(case_detail(tool, "nar-006", stored, agent))
    record = next(c for c in tool.cases if c.id == "nar-006")
    assert "<script" not in page.lower()
    assert record.question in page and "2026-06-12" in page
    classes = re.findall(r'class="rse-case-verdict (rse-case-\w+)"', page)
    mine = classes[:len(case_detail(tool, "nar-006")["verdicts"])]
    assert mine[0] == "rse-case-fail" and "rse-case-pass" in mine
    assert mine == sorted(mine, key=lambda c: c != "rse-case-fail")  # failing first
    assert "answer_accuracy" in page and "below the 60% needed" in page
    assert "<mark>" in page and "rse-case-sides" in page and "agent mode" in page
    assert "at baseline: failed" in page


def test_every_text_from_a_case_or_an_answer_is_escaped():
    hostile = '<script>alert("x")</script> & <img src=x onerror=y>'
    report = _report("tool", **{"nar-003": {"answer": hostile, "narrative_answer": hostile,
                                             "retrieved_context": [hostile]}})
    page = case_html(case_detail(report, "nar-003"))
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img" in page


def test_a_faithfulness_failure_shows_the_claim_its_coverage_and_missing_words():
    cases, outcomes, _ = real_run("tool")
    at = next(i for i, c in enumerate(cases) if c.id == "nar-003")
    invented = "Quantum underwriting tripled profits in Mars."
    report = _report("tool", **{"nar-003": {
        "narrative_answer": outcomes[at].narrative_answer + "\n" + invented}})
    detail = case_detail(report.to_dict(), "nar-003")
    faith = next(v for v in detail["verdicts"] if v["gate"] == "faithfulness")
    assert not faith["passed"]
    claim = next(c for c in faith["evidence"]["claims"] if not c["entailed"])
    assert (claim["claim"], claim["coverage"]) == (invented, 0.0)
    page = case_html(detail)
    assert invented in page and "quantum, underwriting, tripled, profits, mars" in page


def test_show_case_displays_the_case_with_the_other_mode(tmp_path, tool, agent, stored):
    from IPython.display import HTML

    from ragspine_eval.files import write_json_atomic
    from ragspine_eval.workbench import QANotebookRun, show_case

    write_json_atomic(tmp_path / "qa_agent.json", agent.to_dict())
    run = QANotebookRun(tool, tmp_path / "qa_tool.json", paths.QA_BASELINE, stored, None, "tool")
    shown = show_case(run, "num-022")
    assert isinstance(shown, HTML)
    saved = json.loads(json.dumps(agent.to_dict()))  # the other mode is read from its file
    assert shown.data == case_html(case_detail(tool, "num-022", stored, saved))
    assert "agent mode" in shown.data


def test_the_case_view_shows_the_ranked_passages_with_the_relevant_ones_marked(tool):
    detail = case_detail(tool, "nar-006")
    assert detail["retrieval"]["rank"] is None and detail["retrieval"]["observed"]
    assert {v["gate"]: v["stage"] for v in detail["verdicts"] if not v["passed"]} == {
        "citation_validity": "retrieval", "answer_accuracy": "retrieval",
        "retrieval@5": "retrieval"}
    page = case_html(detail)
    assert "<b>no relevant passage</b> among the 1 retrieved" in page
    assert 'data-rank="1"' in page and "CN_QBR_2025.pptx#c0" in page and "✔ relevant" not in page
    hit = case_html(case_detail(tool, "nar-001"))
    assert "first relevant passage at rank <b>1</b>" in hit
    assert '<tr class="rse-relevant" data-rank="1">' in hit and "✔ relevant" in hit
    assert "stage: retrieval (no relevant passage in the top k)" in page


def test_with_repeats_the_case_view_shows_every_repeat_side_by_side(tool):
    from ragspine_eval.qa.repeats import combine_repeats

    case_id = "num-001"
    wrong = _report("tool", **{case_id: {"found_value": -1.0, "answer": "<b>-1</b> USD_M"}})
    combined = combine_repeats([tool, wrong, tool])
    detail = case_detail(combined, case_id)
    [flaky] = [v for v in detail["verdicts"] if v["gate"] == "numeric_accuracy"]
    assert flaky["flaky"] == [True, False, True]
    said = [r["verdicts"]["numeric_accuracy"] for r in detail["repeats"]]
    assert said == ["pass", "fail", "pass"]
    html = case_html(detail)
    columns = re.findall(r'<div class="rse-case-repeat" data-repeat="(\d)"><b>repeat (\d) · '
                         r"(\w+)</b>", html)
    assert columns == [("0", "1", "PASS"), ("1", "2", "FAIL"), ("2", "3", "PASS")]
    assert "&lt;b&gt;-1&lt;/b&gt; USD_M" in html and "<b>-1</b>" not in html  # escaped
    assert "Every repeat" not in case_html(case_detail(tool, case_id))  # one run: as before

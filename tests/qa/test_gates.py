"""Every gate in both directions on hand-built outcomes."""

from __future__ import annotations

import pytest
from builders import HK_TEXT, narrative_outcome
from conftest import HK_DOC, HK_SOURCE, make_case, right_numeric_outcome

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.qa.gates import (
    citation_validity,
    clarification_appropriateness,
    fabricated_numbers,
    fabrication,
    numeric_accuracy,
    refusal_appropriateness,
)

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


# --- explanations and evidence, on the real engine's answers ----------------------------------


def test_numeric_evidence_names_expected_and_found_value_and_unit():
    from builders import real_case

    case, out, _ = real_case("num-022")  # the engine reads the wrong period: 1702, not 818
    bad = numeric_accuracy(case, out)
    assert not bad.passed
    assert bad.evidence == {"expected_value": 818.0, "expected_unit": "USD_M",
                            "found_value": 1702.0, "found_unit": "USD_M",
                            "value_matches": False, "unit_matches": True}
    assert "818 USD_M" in bad.explanation and "1702 USD_M" in bad.explanation
    assert "value differs" in bad.explanation
    case, out, _ = real_case("num-001")
    good = numeric_accuracy(case, out)
    assert good.passed and good.evidence["value_matches"] and good.evidence["unit_matches"]
    assert good.evidence["found_value"] == case.expected["value"]


def test_citation_evidence_compares_the_source_field_by_field():
    from builders import real_case

    case, out, _ = real_case("num-022")
    bad = citation_validity(case, out)
    assert not bad.passed
    fields = {f["field"]: f for f in bad.evidence["fields"]}
    assert fields["doc"] == {"field": "doc", "expected": "ACME_2025_Interim_Results.pptx",
                             "found": out.found_source["doc"], "matches": False}
    assert fields["locator"]["expected"] == case.expected["source"]["locator"]
    assert bad.evidence["doc_named_in_answer"] is False
    assert "ACME_2025_Interim_Results.pptx" not in out.answer
    assert out.found_source["doc"] in bad.explanation
    case, out, _ = real_case("comp-001", "agent")
    good = citation_validity(case, out)
    assert good.passed and all(f["matches"] for f in good.evidence["fields"])
    assert good.evidence["narrative_doc_in_sources"] and good.evidence["narrative_doc_named_in_answer"]
    assert case.narrative_doc in good.evidence["source_docs"]


def test_a_narrative_doc_missing_from_the_sources_is_named_in_the_evidence():
    case = make_case("nar-1", "narrative")
    out = narrative_outcome(sources=[{"doc": "OTHER.pptx", "locator": "p1"}])
    bad = citation_validity(case, out)
    assert (bad.evidence["narrative_doc_in_sources"], bad.evidence["source_docs"]) == \
           (False, ["OTHER.pptx"])
    assert f"{HK_DOC} not among the sources" in bad.explanation


def test_refusal_evidence_says_what_the_engine_did():
    from builders import real_case

    case, out, _ = real_case("ref-013")  # expected a refusal, the engine answered
    bad = refusal_appropriateness(case, out)
    assert not bad.passed
    assert bad.evidence == {"expected": "refuse", "observed": "answered", "refused": False,
                            "found_value": out.found_value, "route": out.route,
                            "tool_statuses": out.tool_statuses}
    assert f"route {out.route}" in bad.explanation and "answered" in bad.explanation
    case, out, _ = real_case("ref-001")
    good = refusal_appropriateness(case, out)
    assert good.passed and good.evidence["observed"] == "refused" and good.evidence["refused"]


def test_clarification_evidence_names_expected_and_observed_modes():
    from builders import real_case

    case, out, _ = real_case("nar-001")
    bad = clarification_appropriateness(case, out)
    assert not bad.passed
    assert (bad.evidence["expected"], bad.evidence["observed"]) == ("none", out.clarification_mode)
    assert bad.evidence["route"] == out.route and bad.evidence["tool_statuses"] == out.tool_statuses
    assert repr(out.clarification_mode) in bad.explanation
    good = clarification_appropriateness(make_case(), right_numeric_outcome())
    assert good.passed and good.evidence["observed"] == "none"


def test_fabrication_evidence_lists_the_numbers_left():
    refusal = make_case("ref-1", "refusal", refuse=True)
    bad = fabrication(refusal, CaseOutcome(refused=True, answer="FY2024 约 812 USD_M，或 9.5"))
    assert bad.evidence["numbers"] == ["812", "9.5"]
    assert "812, 9.5" in bad.explanation
    good = fabrication(refusal, CaseOutcome(refused=True, answer="查不到 FY2023"))
    assert good.passed and good.evidence["numbers"] == []


def test_a_faithfulness_failure_names_the_claim_its_coverage_and_the_missing_words():
    from builders import real_case

    from ragspine_eval.qa.gates import groundedness_gates
    from ragspine_eval.judges.groundedness import LexicalOverlapJudge

    case, out, refs = real_case("nar-003")
    gate = groundedness_gates(refs, LexicalOverlapJudge())["faithfulness"]
    good = gate(case, out)
    assert good.passed and good.evidence["unsupported"] == 0
    assert all(c["entailed"] and c["coverage"] >= 0.6 for c in good.evidence["claims"])
    invented = "Quantum underwriting tripled profits in Mars."
    out.narrative_answer += "\n" + invented
    bad = gate(case, out)
    assert not bad.passed and bad.evidence["threshold"] == 0.6
    assert bad.evidence["unsupported"] == 1
    claim = next(c for c in bad.evidence["claims"] if not c["entailed"])
    assert claim["claim"] == invented
    assert claim["coverage"] == 0.0  # none of quantum, underwriting, tripled, profits, mars
    assert claim["missing"] == ["quantum", "underwriting", "tripled", "profits", "mars"]
    assert invented in bad.explanation and "0%" in bad.explanation and "quantum" in bad.explanation


def test_a_partly_supported_claim_reports_its_share():
    from ragspine_eval.qa.gates import groundedness_gates
    from ragspine_eval.judges.groundedness import LexicalOverlapJudge

    gate = groundedness_gates({HK_DOC: HK_TEXT}, LexicalOverlapJudge())["faithfulness"]
    out = narrative_outcome(narrative_answer="香港 REVENUE 走弱 quantum.",
                            retrieved_context=["香港 REVENUE"])
    bad = gate(make_case("nar-1", "narrative"), out)
    claim = bad.evidence["claims"][0]
    # 香 港 revenue known; 走 弱 quantum missing: 3 of 6
    assert (claim["coverage"], claim["missing"]) == (0.5, ["走", "弱", "quantum"])
    assert "50%" in bad.explanation and "needs 60%" in bad.explanation


def test_answer_accuracy_evidence_lists_the_expected_words_the_answer_lacks():
    from builders import real_case

    from ragspine_eval.qa.gates import groundedness_gates
    from ragspine_eval.judges.groundedness import LexicalOverlapJudge, tokens

    case, out, refs = real_case("nar-006")  # the engine answers from another document
    gate = groundedness_gates(refs, LexicalOverlapJudge())["answer_accuracy"]
    bad = gate(case, out)
    assert not bad.passed and bad.evidence["doc"] == case.narrative_doc
    assert bad.evidence["recall"] < bad.evidence["threshold"] == 0.6
    reference = refs[case.narrative_doc]
    answered = set(tokens(out.answer))
    assert bad.evidence["missing"] == [t for t in dict.fromkeys(tokens(reference))
                                       if t not in answered]
    assert bad.evidence["missing"][0] in bad.explanation
    case, out, refs = real_case("nar-003")
    good = gate(case, out)
    assert good.passed and good.evidence["recall"] >= 0.6
    assert len(good.evidence["missing"]) <= 0.4 * len(set(tokens(refs[case.narrative_doc])))


def test_every_verdict_of_a_real_run_explains_itself_in_json_safe_evidence():
    import json

    from builders import real_run

    from ragspine_eval.qa.gates import default_gates

    for mode in ("tool", "agent"):
        cases, outcomes, refs = real_run(mode)
        for gate in (*default_gates(refs).values(), fabrication):
            for case, out in zip(cases, outcomes, strict=True):
                verdict = gate(case, out)
                if verdict is None:
                    continue
                assert verdict.explanation.endswith(".") and verdict.evidence
                assert json.loads(json.dumps(verdict.evidence)) == verdict.evidence

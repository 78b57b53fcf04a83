"""Every gate in both directions on hand-built outcomes."""

from __future__ import annotations

import pytest
from builders import HK_TEXT, narrative_outcome
from conftest import HK_DOC, HK_SOURCE, make_case, right_numeric_outcome

from ragspine_eval.qa.engines.base import CaseOutcome
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

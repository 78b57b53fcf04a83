"""Failure stages and RAGChecker's claim split."""

import pytest

from ragspine_eval.judges.groundedness import LexicalOverlapJudge
from ragspine_eval.retrieval.stages import (
    CaseFacts,
    ClaimSplit,
    case_stage,
    claim_split,
    stage_counts,
    stage_of,
)


def narrative(**kw):
    facts = dict(case_type="narrative", expected_clarification="none", expects_refusal=False,
                 route="narrative", clarification_mode="none", refused=False,
                 retrieval_observed=True, rank=1)
    return CaseFacts(**{**facts, **kw})


def test_a_miss_in_the_top_k_is_at_retrieval_and_a_hit_at_the_answer():
    assert stage_of("answer_accuracy", narrative(rank=None), 5) == "retrieval"
    assert stage_of("citation_validity", narrative(rank=7), 5) == "retrieval"
    assert stage_of("faithfulness", narrative(rank=1), 5) == "answer"
    assert stage_of("faithfulness", narrative(rank=7), 10) == "answer"
    assert stage_of("numeric_accuracy", narrative(case_type="composite", route="composite",
                                                  rank=None), 5) == "answer"


def test_retrieval_not_observed_is_never_a_miss():
    assert stage_of("answer_accuracy", narrative(retrieval_observed=False, rank=None), 5) == \
        "unobserved"


def test_errors_routing_and_refusals_come_first():
    assert stage_of("faithfulness", narrative(error=True), 5) == "engine_error"
    assert stage_of("clarification_appropriateness", narrative(), 5) == "routing"
    assert stage_of("answer_accuracy", narrative(clarification_mode="ask_first", rank=None),
                    5) == "routing"
    assert stage_of("answer_accuracy", narrative(route="structured", rank=None), 5) == "routing"
    assert stage_of("refusal_appropriateness", narrative(), 5) == "refusal_guard"
    assert stage_of("fabrication", narrative(expects_refusal=True), 5) == "refusal_guard"
    assert stage_of("numeric_accuracy", narrative(case_type="numeric", route="structured",
                                                  refused=True), 5) == "refusal_guard"


def test_a_case_takes_its_first_stage_and_counts_are_per_gate():
    assert case_stage(["answer", "retrieval"]) == "retrieval"
    assert case_stage([]) is None
    assert stage_counts([("a", "answer"), ("a", "retrieval"), ("a", "answer")]) == \
        {"a": {"retrieval": 1, "answer": 2}}


def test_claims_are_split_by_the_passages_that_support_them():
    passages = ["revenue fell because the MCV segment shrank",
                "bancassurance channel was restructured in Hong Kong"]
    claims = ["revenue fell because the MCV segment shrank.",
              "the bancassurance channel was restructured.",
              "interest rates rose sharply across Asia."]
    split = claim_split(claims, passages, [True, False], LexicalOverlapJudge())
    assert split.support == ("relevant", "irrelevant", "none")
    assert split.to_dict()["relevant"] == 1 and ClaimSplit.from_dict(split.to_dict()) == split
    # a claim both support counts as relevant, whichever comes first
    both = claim_split(claims[:1], passages[::-1] + passages[:1], [False, False, True],
                       LexicalOverlapJudge())
    assert both.support == ("relevant",)
    with pytest.raises(ValueError):
        claim_split(claims, passages, [True], LexicalOverlapJudge())


# --- the answer harness's stages (answer_stage) -------------------------------------------------

from ragspine_eval.retrieval.stages import AnswerFacts, answer_stage  # noqa: E402


def _answer(**kw):
    base = dict(expects_abstain=False, error=False, route_label="narrative", refused=False,
                cited=True, leaked=False, retrieved_pages=frozenset({1, 2}), claims=())
    return AnswerFacts(**{**base, **kw})


def test_a_failing_answer_is_placed_at_the_first_stage_that_explains_it():
    claim = lambda pages, content, page: (frozenset(pages), content, page, False)  # noqa: E731
    assert answer_stage(_answer(error=True, route_label="error")) == "engine_error"
    assert answer_stage(_answer(expects_abstain=True, leaked=True)) == "refusal_guard"
    assert answer_stage(_answer(route_label="clarify", claims=(claim({1}, False, False),))) \
        == "routing"
    # the ask route sent it to the structured channel, which found nothing
    assert answer_stage(_answer(route_label="not_found", refused=True,
                                claims=(claim({1}, False, False),)), "structured") == "routing"
    # refused although the claim's page was retrieved: the guard; with nothing retrieved: retrieval
    assert answer_stage(_answer(refused=True, claims=(claim({1}, False, False),))) \
        == "refusal_guard"
    assert answer_stage(_answer(refused=True, retrieved_pages=frozenset(),
                                claims=(claim({1}, False, False),))) == "retrieval"
    assert answer_stage(_answer(claims=(claim({7}, True, False),))) == "retrieval"
    assert answer_stage(_answer(claims=(claim({2}, False, True),))) == "answer"
    assert answer_stage(_answer(claims=(claim({2}, True, False),))) == "citation"
    assert answer_stage(_answer(cited=False)) == "citation"  # grounded-only, no source
    # a satisfied claim does not place anything; the failing one does
    assert answer_stage(_answer(claims=((frozenset({9}), True, True, True),
                                        claim({1}, False, True)))) == "answer"

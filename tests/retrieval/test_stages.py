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

"""Claims, tokens and the lexical judge."""

from __future__ import annotations

from ragspine_eval.groundedness import (
    ENTAILMENT_THRESHOLD,
    LexicalOverlapJudge,
    faithful,
    split_claims,
    token_recall,
    tokens,
)


def test_tokens_are_ascii_runs_and_single_cjk_characters():
    assert tokens("香港 REVENUE 走弱, MCV-2025") == ["香", "港", "revenue", "走", "弱", "mcv", "2025"]


def test_citation_tails_and_framing_lines_are_not_claims():
    answer = ("基于检索到的资料：\n。\n问题：香港REVENUE为什么下降\n检索片段：\n"
              "[1] 香港收入走弱。银保渠道调整。（来源：HK_QBR_2025Q4.pptx HK#para1）")
    assert split_claims(answer) == ["香港收入走弱。", "银保渠道调整。"]


def test_english_sentences_split_on_full_stops_but_not_decimals():
    assert split_claims("ROE was 14.8 percent. Growth came from agency.") == [
        "ROE was 14.8 percent.", "Growth came from agency."]


def test_judge_threshold_is_inclusive():
    judge = LexicalOverlapJudge()
    context = ["a b c d e f"]
    # 3 of 5 content tokens known = 0.6, exactly the threshold
    assert ENTAILMENT_THRESHOLD == 0.6
    assert judge.entails("b c d x y", ["b c d"])
    assert not judge.entails("b c x y z", context)


def test_empty_narrative_answer_is_not_faithful():
    ok, why = faithful("", ["anything"], LexicalOverlapJudge())
    assert not ok and "no narrative claim" in why


def test_recall_counts_distinct_reference_tokens():
    assert token_recall("agency agency productivity", "agency") == 0.5
    assert token_recall("", "whatever") == 1.0

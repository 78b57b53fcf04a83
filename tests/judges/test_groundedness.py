"""Claims, tokens and the lexical judge."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.judges.groundedness import (
    _STOPWORDS,
    _TOKEN,
    ENTAILMENT_THRESHOLD,
    LexicalOverlapJudge,
    faithful,
    judge_claims,
    recall_check,
    split_claims,
    token_recall,
    token_spans,
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


# Tokens are memoised and, in most texts, found after lower-casing the whole text: the result
# must be exactly the definition's, each ASCII run lower-cased on its own.
_TEXT = st.text(alphabet=st.sampled_from(
    list("aAnNdDtThHeE09 .,-的了和是香港收入") + ["\u0130", "\u212a", "é", "ß", "Ω"]), max_size=30)


@given(st.lists(_TEXT, max_size=4).map(" and The ".join))
def test_tokens_are_the_definition_whatever_the_text(text):
    by_definition = [t for t in (m.lower() for m in _TOKEN.findall(text)) if t not in _STOPWORDS]
    assert tokens(text) == by_definition


def test_the_judge_sees_a_context_list_that_changed_in_place():
    judge = LexicalOverlapJudge()
    context = ["香港 收入 下降"]
    assert judge.entails("香港收入下降", context)
    context[0] = "银保 渠道"
    assert not judge.entails("香港收入下降", context)
    assert judge.entails("银保渠道", context)


# --- per-claim checks and missing tokens -----------------------------------------------------


@given(st.lists(_TEXT, min_size=1, max_size=3), _TEXT)
def test_assess_agrees_with_entails_and_reports_what_it_counted(context, claim):
    judge = LexicalOverlapJudge()
    check = judge.assess(claim, context)
    assert check.entailed == judge.entails(claim, context)
    vocabulary = set(tokens("\n".join(context)))
    claim_tokens = tokens(claim)
    assert list(check.missing) == list(dict.fromkeys(t for t in claim_tokens if t not in vocabulary))
    if claim_tokens:
        known = sum(1 for t in claim_tokens if t in vocabulary)
        assert check.coverage == known / len(claim_tokens)


def test_judge_claims_checks_every_claim_in_order():
    checks = judge_claims("香港收入走弱。Quantum profits.", ["香港 收入 走弱"], LexicalOverlapJudge())
    assert [(c.claim, c.entailed, c.coverage, c.missing) for c in checks] == [
        ("香港收入走弱。", True, 1.0, ()),
        ("Quantum profits.", False, 0.0, ("quantum", "profits")),
    ]
    assert judge_claims("", ["x"], LexicalOverlapJudge()) == []


def test_a_judge_with_only_entails_still_gives_checks_without_coverage():
    class Strict:
        def entails(self, claim, context):
            return False

    [check] = judge_claims("Growth came from agency.", ["agency"], Strict())
    assert (check.entailed, check.coverage, check.missing) == (False, None, ())
    assert check.to_dict() == {"claim": "Growth came from agency.", "entailed": False,
                               "coverage": None, "missing": []}


def test_recall_check_lists_the_reference_tokens_the_answer_lacks_in_order():
    assert recall_check("agency productivity and bancassurance", "agency") == (
        1 / 3, ["productivity", "bancassurance"])
    assert recall_check("", "whatever") == (1.0, [])


@given(_TEXT, _TEXT)
def test_recall_check_is_token_recall(reference, answer):
    recall, missing = recall_check(reference, answer)
    assert recall == token_recall(reference, answer)
    assert set(missing) == set(tokens(reference)) - set(tokens(answer))


@given(_TEXT)
def test_token_spans_cover_exactly_the_tokens(text):
    spans = token_spans(text)
    assert [t for _, _, t in spans] == tokens(text)
    assert all(text[s:e].lower() == t for s, e, t in spans)

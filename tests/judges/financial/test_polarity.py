"""Polarity: directions, negation before them, and how a claim's stance meets a passage's."""

from __future__ import annotations

import pytest

from ragspine_eval.judges.financial.polarity import bare_negations, disagreement, stances
from ragspine_eval.judges.financial.vocabulary import analyse


def said(text: str) -> list[str]:
    return [s for clause in analyse(text).clauses for s, _ in stances(clause)]


@pytest.mark.parametrize(("text", "stance"), [
    ("收入上升", ["up"]), ("revenue grew", ["up"]), ("收入走弱", ["down"]),
    ("revenue declined", ["down"]), ("收入并未走弱", ["not down"]),
    ("revenue did not fall", ["not down"]), ("收入没有增长", ["not up"])])
def test_each_direction_and_its_negation(text, stance):
    assert said(text) == stance


@pytest.mark.parametrize(("claim", "passage", "verdict"), [
    ("up", ["down"], "direction"), ("down", ["up"], "direction"), ("up", ["up"], None),
    ("not down", ["down"], "negation"), ("not down", ["up"], None),
    ("not up", ["up"], "negation"), ("up", [], None)])
def test_how_a_claims_stance_meets_the_passages(claim, passage, verdict):
    assert disagreement(claim, passage) == verdict


def test_a_negation_with_no_direction_after_it_is_bare():
    (clause,) = analyse("新规并不要求披露管理费").clauses
    assert [u.surface for u in bare_negations(clause)] == ["并不"]
    (clause,) = analyse("收入并未走弱").clauses
    assert bare_negations(clause) == []


def test_tightening_and_loosening_are_directions():
    from ragspine_eval.judges.financial.judge import FinancialJudge

    passage = "中国监管动态：金融监管总局发布分红险新规，同时强化对保险销售行为的管理。"
    judge = FinancialJudge()
    assert judge.assess("金融监管总局加强对保险销售行为的管理。", [passage]).entailed
    check = judge.assess("金融监管总局放松对保险销售行为的管理。", [passage])
    assert not check.entailed and check.rule == "direction flipped", check.detail

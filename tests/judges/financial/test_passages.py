"""Passages: the one a clause is judged against holds its numbers first, then its names."""

from __future__ import annotations

from ragspine_eval.judges.financial.passages import best_passage, read_passage
from ragspine_eval.judges.financial.vocabulary import analyse

ROWS = ["ACME_HK FY2024 REVENUE: 1538 USD_M", "ACME_HK FY2025 REVENUE: 1702 USD_M",
        "ACME_CN FY2025 REVENUE: 1320 USD_M"]


def pick(claim: str, texts: list[str]) -> int:
    passages = [read_passage(i, t) for i, t in enumerate(texts)]
    (clause,) = analyse(claim).clauses
    chosen = best_passage(clause, [], passages)
    assert chosen is not None
    return chosen.index


def test_the_passage_stating_the_number_wins_over_one_naming_the_period():
    assert pick("香港2024财年收入为17.02亿美元", ROWS) == 1  # then: period changed


def test_the_passage_naming_the_entity_wins_when_no_number_decides():
    assert pick("中国收入", ROWS) == 2


def test_a_passage_holds_a_chinese_word_written_inside_its_text():
    passage = read_passage(0, "香港 REVENUE 同比走弱，主要原因是 MCV 客群萎缩")
    (clause,) = analyse("客群萎").clauses
    assert all(passage.holds(u) for u in clause if u.kind == "content")

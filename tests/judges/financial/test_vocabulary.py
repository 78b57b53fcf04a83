"""The vocabulary: one key for a concept in both languages and in the KB's codes; periods
before numbers; clauses."""

from __future__ import annotations

import pytest

from ragspine_eval.judges.financial.vocabulary import analyse, lexicon


def keys(text: str, kind: str) -> list[str]:
    return [u.key for u in analyse(text).units if u.kind == kind]


@pytest.mark.parametrize("text", ["香港", "Hong Kong", "HK", "ACME_HK", "ACME Hong Kong"])
def test_an_entity_is_one_concept_in_every_language_and_code(text):
    assert keys(text, "entity") == ["ACME_HK"]


@pytest.mark.parametrize(("text", "metric"), [("收入", "REVENUE"), ("revenue", "REVENUE"),
                                              ("REVENUE", "REVENUE"), ("新单", "NEWSALES"),
                                              ("new sales", "NEWSALES"), ("NEWSALES", "NEWSALES"),
                                              ("净资产收益率", "ROE"), ("return on equity", "ROE")])
def test_a_metric_is_one_concept(text, metric):
    assert keys(text, "metric") == [metric]


@pytest.mark.parametrize(("text", "period"), [
    ("FY2025", "2025FY"), ("2025财年", "2025FY"), ("2025年", "2025FY"), ("fiscal 2025", "2025FY"),
    ("FY25", "2025FY"), ("2025H1", "2025H1"), ("H1 2025", "2025H1"), ("2025年上半年", "2025H1"),
    ("first half of 2025", "2025H1"), ("2025Q4", "2025Q4"), ("fourth quarter of 2025", "2025Q4"),
    ("2025年第四季度", "2025Q4"), ("FY,2025", "2025FY")])
def test_periods_in_both_languages(text, period):
    assert keys(text, "period") == [period]
    assert keys(text, "quantity") == []  # a year is never a figure


def test_the_kb_codes_come_from_facts_csv():
    # AGENCY and BANCA are channels of data/kb/facts.csv; ASIA is the group's geography
    assert lexicon().lookup("asia") == ("entity", "ACME_GROUP")
    assert lexicon().lookup("banca") == ("channel", "BANCA")


def test_lexicon_words_stay_one_word_in_chinese_and_clauses_split_at_commas():
    analysis = analyse("香港收入同比走弱，主要原因是MCV客群萎缩。")
    assert len(analysis.clauses) == 2
    assert [u.kind for u in analysis.clauses[0]] == ["entity", "metric", "basis", "down"]
    assert ("term", "customer_segment") in {(u.kind, u.key) for u in analysis.clauses[1]}


@pytest.mark.parametrize(("text", "parts"), [
    ("香港收入下降而中国上升。", 2),  # two subjects, a change each
    ("Hong Kong revenue fell while China revenue rose.", 2),
    ("USD 3,104 million in Hong Kong and USD 2,460 million in China.", 2),
    ("ACME Group new sales grew as Hong Kong and China both contributed.", 1),  # one statement
    ("香港与中国收入均上升。", 1),
])
def test_a_clause_is_cut_between_statements_about_two_subjects(text, parts):
    assert len(analyse(text).clauses) == parts


def test_basis_horizon_rank_regulator_and_product_are_their_own_kinds():
    kinds = {(u.kind, u.key) for u in analyse("环比 长期 第二驱动力 积金局 趸交").units}
    assert {("basis", "QOQ"), ("horizon", "LONG"), ("rank", "SECOND"), ("regulator", "MPFA"),
            ("product", "SINGLE_PREMIUM")} <= kinds


def test_formal_numerals_are_read_and_common_words_with_them_are_not():
    assert [u.quantity.value for u in analyse("壹拾柒亿零贰佰万美元").units
            if u.quantity is not None] == [1702000000]
    assert keys("香港的代理人队伍", "channel") == ["AGENCY"]  # 队伍 is no 队五


def test_an_attribution_frame_claims_nothing():
    said = [u.key for u in analyse("正如香港QBR所说，香港收入同比走弱").units if u.kind == "content"]
    assert "qbr" not in said and "所说" not in said
    units = analyse("The Group review notes that bancassurance lifted new business").units
    assert not any(u.kind == "word" and u.key == "review" for u in units)


def test_a_gloss_in_brackets_and_a_space_between_thousands():
    assert keys("with-profits (participating) products", "product") == ["PARTICIPATING"] * 2
    assert [u.quantity.value for u in analyse("USD 8 180 million").units
            if u.quantity is not None] == [8180000000]

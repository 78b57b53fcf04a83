"""Figures across passages: which period a figure is for, and what two facts a year apart say."""

from __future__ import annotations

import pytest

from ragspine_eval.judges.financial.facts import dated_figures, derived, nearest_period, trend
from ragspine_eval.judges.financial.passages import read_passage
from ragspine_eval.judges.financial.vocabulary import analyse

ROWS = [read_passage(i, t) for i, t in enumerate(["ACME_HK FY2024 REVENUE: 1538 USD_M",
                                                  "ACME_HK FY2025 REVENUE: 1702 USD_M"])]


def clause_of(text: str):
    analysis = analyse(text)
    return analysis.clauses[0], analysis.text


def test_a_figure_is_for_the_period_joined_to_it():
    clause, text = clause_of("revenue grew from USD 1,538 million in FY2024 to USD 1,702 "
                             "million in FY2025")
    figures = [u for u in clause if u.quantity is not None]
    assert [nearest_period(f, clause, text).key for f in figures] == ["2024FY", "2025FY"]


def test_figures_are_ordered_by_their_periods_a_year_earlier_included():
    clause, text = clause_of("FY2025 revenue of USD 1,702m was up from USD 1,538m a year earlier")
    assert [int(v) for v in dated_figures(clause, text)] == [1538000000, 1702000000]


def test_two_facts_a_year_apart_give_the_trend_and_the_growth_rate():
    clause, _ = clause_of("香港收入同比增长10.7%")
    way = trend(["2025FY"], clause, ROWS)
    assert way is not None and way[0] == "up"
    growth = next(u for u in clause if u.quantity is not None)
    assert derived(growth, clause, ROWS)
    clause, _ = clause_of("香港收入同比增长15%")
    assert not derived(next(u for u in clause if u.quantity is not None), clause, ROWS)


def test_no_trend_without_the_metric_or_two_periods():
    clause, _ = clause_of("香港同比增长")
    assert trend(["2025FY"], clause, ROWS) is None
    clause, _ = clause_of("香港收入同比增长")
    assert trend(["2025FY"], clause, ROWS[1:]) is None


def test_a_comparison_of_two_figures_says_which_is_higher():
    from ragspine_eval.judges.financial.facts import compared

    clause, text = clause_of("Hong Kong's ROE of 16.2% was higher than the group's 14.8%")
    assert compared(clause, text) == "up"
    clause, text = clause_of("集团ROE 14.8%低于香港的16.2%")
    assert compared(clause, text) == "down"
    clause, text = clause_of("revenue grew from USD 1,538 million to USD 1,702 million")
    assert compared(clause, text) is None  # no "than": a change over time, not a comparison


def test_a_percentage_may_be_the_share_of_one_fact_in_another():
    rows = [read_passage(i, t) for i, t in enumerate([
        "ACME_CN FY2025 REVENUE: 1320 USD_M", "ACME_CN FY2025 REVENUE (BANCA): 415 USD_M"])]
    clause, _ = clause_of("中国收入约31%来自银保渠道")
    share = next(u for u in clause if u.quantity is not None)
    assert derived(share, clause, rows)
    clause, _ = clause_of("中国收入约45%来自银保渠道")
    assert not derived(next(u for u in clause if u.quantity is not None), clause, rows)


PROFITS = [read_passage(i, t) for i, t in enumerate([
    "ACME_HK FY2025 PROFIT: 512 USD_M", "ACME_CN FY2025 PROFIT: 990 USD_M",
    "ACME_GROUP FY2024 PROFIT: 6010 USD_M", "ACME_GROUP FY2025 PROFIT: 6605 USD_M"])]
CHINA = [read_passage(i, t) for i, t in enumerate([
    "ACME_CN FY2025 REVENUE: 1320 USD_M", "ACME_CN FY2024 REVENUE: 1180 USD_M",
    "ACME_CN FY2025 REVENUE (AGENCY): 905 USD_M", "ACME_CN FY2025 REVENUE (BANCA): 415 USD_M"])]


def _figure(clause):
    return next(u for u in clause if u.quantity is not None)


def test_a_change_is_of_the_periods_the_clause_names():
    group = PROFITS[2:]  # the judge hands it the passages about the clause's subject
    clause, _ = clause_of("集团2025财年利润比2024财年多5.95亿美元")
    assert derived(_figure(clause), clause, group, ["2025FY", "2024FY"])
    clause, _ = clause_of("Group profit in Q4 2025 was USD 595 million above Q3 2025")
    assert not derived(_figure(clause), clause, group, ["2025Q4", "2025Q3"])


def test_a_difference_may_be_between_two_subjects_of_one_period():
    clause, _ = clause_of("2025财年中国利润比香港多4.78亿美元")
    assert derived(_figure(clause), clause, PROFITS, ["2025FY"])
    clause, _ = clause_of("2025财年中国利润比香港多5.78亿美元")
    assert not derived(_figure(clause), clause, PROFITS, ["2025FY"])


def test_a_ratio_is_one_figure_over_another():
    clause, _ = clause_of("中国2025财年收入是2024财年的1.12倍")
    assert derived(_figure(clause), clause, CHINA, ["2025FY", "2024FY"])
    clause, _ = clause_of("中国2025财年收入是2024财年的1.3倍")
    assert not derived(_figure(clause), clause, CHINA, ["2025FY", "2024FY"])


def test_channels_make_up_the_whole_when_their_figures_add_up_to_it():
    from ragspine_eval.judges.financial.facts import sums_up

    clause, _ = clause_of("中国2025财年收入全部来自代理人和银保两个渠道")
    assert sums_up(clause, CHINA)
    clause, _ = clause_of("中国2025财年收入全部来自代理人渠道")
    assert not sums_up(clause, CHINA)  # one channel: 905 of 1320


def test_the_figure_a_change_moved_from_is_of_the_year_before():
    clause, text = clause_of("China grew its top line to USD 1.32 billion in FY2025 from "
                             "USD 1.18 billion")
    figures = [u for u in clause if u.quantity is not None]
    assert [nearest_period(f, clause, text).key for f in figures] == ["2025FY", "2024FY"]


@pytest.mark.parametrize(("claim", "supported"), [
    ("集团2025财年收入较2024财年的40.12亿美元增加4.88亿美元。", True),
    ("集团2025财年收入较2024财年的40.12亿美元减少4.88亿美元。", False),
])
def test_a_direction_followed_by_the_size_of_a_change_is_the_facts_trend(claim, supported):
    from ragspine_eval.judges.financial.judge import FinancialJudge

    context = ["ACME_GROUP FY2025 REVENUE: 4500 USD_M", "ACME_GROUP FY2024 REVENUE: 4012 USD_M"]
    check = FinancialJudge().assess(claim, context)
    assert check.entailed is supported, check.detail

"""binding.py through the judge: a name, basis or horizon bound to another clause of its passage."""

from datetime import date

import pytest

from ragspine_eval.judges.financial.judge import FinancialJudge

TWO = "香港收入下降而中国上升。Hong Kong revenue fell while China revenue rose."
REG = "香港监管动态：积金局 MPFA 的新规要求强积金产品披露管理费，保监局 IA 正在加强对销售流程的审查。"
SHIFT = "银保渠道调整是为了压降低利润的趸交业务，转向期缴保障产品。管理层判断香港收入短期内仍将承压。"
YOY = "香港收入同比走弱。"
FACTS = ["ACME_HK FY2025 REVENUE: 1702 USD_M", "ACME_HK FY2024 REVENUE: 1538 USD_M",
         "ACME_CN FY2025 NEWSALES: 2460 USD_M", "ACME_HK FY2025 NEWSALES: 3104 USD_M"]


@pytest.mark.parametrize(("claim", "context", "supported", "rule"), [
    ("香港收入下降而中国上升。", [TWO], True, None),
    # a rise bound to Hong Kong that the passage says of China: either rule names it
    ("香港收入上升而中国下降。", [TWO], False, ("direction flipped", "entity swapped")),
    ("Hong Kong revenue rose while China's fell.", [TWO], False,
     ("direction flipped", "entity swapped")),
    ("Hong Kong revenue fell, but China revenue rose.", [TWO], True, None),
    ("In FY2025 new sales were USD 3,104 million in Hong Kong and USD 2,460 million in China.",
     FACTS, True, None),
    ("In FY2025 new sales were USD 2,460 million in Hong Kong and USD 3,104 million in China.",
     FACTS, False, "entity swapped"),
    ("积金局的新规要求强积金产品披露管理费。", [REG], True, None),
    ("保监局的新规要求强积金产品披露管理费。", [REG], False, "regulator swapped"),
    ("The MPFA is stepping up its review of sales processes.", [REG], False,
     "regulator swapped"),
    ("银保渠道调整是为了压降低利润的期缴业务。", [SHIFT], False, "product swapped"),
    ("香港收入环比走弱。", [YOY], False, "comparison basis changed"),
    ("Hong Kong revenue weakened quarter on quarter.", [YOY], False,
     "comparison basis changed"),
    ("Hong Kong revenue weakened year on year.", [YOY], True, None),
    ("香港收入同比上升。", FACTS, True, None),  # two figures a year apart are year on year
    ("香港收入环比上升。", FACTS, False, "comparison basis changed"),
    ("管理层认为香港收入长期仍将承压。", [SHIFT], False, "horizon changed"),
    ("Management expects Hong Kong revenue to stay under pressure in the short term.", [SHIFT],
     True, None),
])
def test_each_name_is_bound_to_its_own_clause(claim, context, supported, rule):
    check = FinancialJudge().assess(claim, context)
    assert check.entailed is supported, check.detail
    if rule is not None:
        assert check.rule in ((rule,) if isinstance(rule, str) else rule), check.detail


@pytest.mark.parametrize(("claim", "reference", "supported"), [
    ("香港去年收入为17.02亿美元。", date(2026, 3, 31), True),
    ("香港去年收入为17.02亿美元。", date(2025, 3, 31), False),  # 去年 is 2024 then
    ("Hong Kong revenue last year was US$1,538m.", date(2025, 5, 1), True),
    ("香港上一财年收入为15.38亿美元。", date(2026, 3, 31), False),
    ("Hong Kong revenue was US$1,538m in FY2024, up to US$1,702m this year.", date(2025, 12, 31),
     True),
])
def test_a_relative_period_is_the_reference_dates(claim, reference, supported):
    check = FinancialJudge().assess(claim, FACTS, reference)
    assert check.entailed is supported, check.detail


def test_without_a_reference_date_last_year_is_not_guessed():
    # nothing says which year 去年 is: the figure is checked, its period is not invented
    check = FinancialJudge().assess("香港去年收入为17.02亿美元。", FACTS)
    assert check.entailed, check.detail


REVENUES = ["ACME_HK FY2025 REVENUE: 1702 USD_M", "ACME_CN FY2025 REVENUE: 1320 USD_M",
            "ACME_GROUP FY2025 REVENUE: 4500 USD_M", "ACME_HK FY2024 REVENUE: 1538 USD_M"]


@pytest.mark.parametrize(("claim", "supported"), [
    ("2025财年香港和中国的收入分别为17.02亿美元和13.2亿美元。", True),
    ("2025财年香港和中国的收入分别为13.2亿美元和17.02亿美元。", False),
    ("In FY2025 Hong Kong and China reported revenue of USD 1,702 million and USD 1,320 "
     "million respectively.", True),
    ("In FY2025 Hong Kong and China reported revenue of USD 1,320 million and USD 1,702 "
     "million respectively.", False),
    ("2025财年香港、中国和集团的收入分别为17.02亿、13.2亿和45亿美元。", True),
    ("2025财年香港、中国和集团的收入分别为17.02亿、45亿和13.2亿美元。", False),
    ("香港2024财年和2025财年的收入分别为15.38亿美元和17.02亿美元。", True),
    ("香港2024财年和2025财年的收入分别为17.02亿美元和15.38亿美元。", False),
])
def test_respectively_binds_each_figure_to_its_own_subject(claim, supported):
    check = FinancialJudge().assess(claim, REVENUES)
    assert check.entailed is supported, check.detail
    if not supported:
        assert check.rule in ("entity swapped", "period changed"), check.detail


def test_without_respectively_nothing_is_paired():
    from ragspine_eval.judges.financial.binding import crosswise
    from ragspine_eval.judges.financial.passages import read_passage
    from ragspine_eval.judges.financial.vocabulary import analyse

    analysis = analyse("2025财年香港和中国的收入为13.2亿美元和17.02亿美元。")
    support = [read_passage(i, t) for i, t in enumerate(REVENUES)]
    assert crosswise(analysis.clauses[0], analysis.text, support) is None


DRIVERS = "中国 REVENUE 增长的核心驱动力是代理人产能提升，其次是银保渠道扩张。"


@pytest.mark.parametrize(("claim", "supported"), [
    ("China's growth came first from agency productivity and then from bancassurance "
     "expansion.", True),
    ("China's growth came first from bancassurance expansion and then from agency "
     "productivity.", False),
])
def test_two_ranks_in_one_clause_are_paired_with_their_channels_in_order(claim, supported):
    check = FinancialJudge().assess(claim, [DRIVERS])
    assert check.entailed is supported, check.detail
    if not supported:
        assert check.rule == "rank swapped", check.detail

"""comparisons.py through the judge: two subjects compared, checked against their facts."""

import pytest

from ragspine_eval.judges.financial.judge import FinancialJudge

FACTS = ["ACME_HK FY2025 PROFIT: 512 USD_M", "ACME_CN FY2025 PROFIT: 990 USD_M",
         "ACME_CN FY2025 REVENUE (AGENCY): 905 USD_M", "ACME_CN FY2025 REVENUE (BANCA): 415 USD_M",
         "ACME_GROUP FY2025 ROE: 14.8 PCT", "ACME_HK FY2025 ROE: 16.2 PCT"]


@pytest.mark.parametrize(("claim", "supported"), [
    ("2025财年中国利润高于香港。", True),
    ("2025财年香港利润高于中国。", False),
    ("2025财年香港利润比中国低。", True),
    ("2025财年香港利润比中国高。", False),
    ("In FY2025 China earned more profit than Hong Kong.", True),
    ("In FY2025 Hong Kong earned more profit than China.", False),
    ("Hong Kong's FY2025 ROE was higher than the Group's.", True),
    ("The Group's FY2025 ROE exceeded Hong Kong's.", False),
    ("In China, agency brought in more FY2025 revenue than bancassurance.", True),
    ("In China, bancassurance brought in more FY2025 revenue than agency.", False),
])
def test_a_comparison_is_the_facts(claim, supported):
    check = FinancialJudge().assess(claim, FACTS)
    assert check.entailed is supported, check.detail
    if not supported:
        assert check.rule == "comparison reversed", check.detail


NEWSALES = ["ACME_HK FY2025 NEWSALES: 3104 USD_M", "ACME_CN FY2025 NEWSALES: 2460 USD_M"]


@pytest.mark.parametrize(("claim", "supported"), [
    ("香港2025财年新单31.04亿美元，高于中国的24.6亿美元。", True),
    ("香港2025财年新单31.04亿美元，低于中国的24.6亿美元。", False),
    ("Hong Kong's FY2025 new sales were USD 3,104 million, above China's USD 2,460 million.",
     True),
    ("Hong Kong's FY2025 new sales were USD 3,104 million, below China's USD 2,460 million.",
     False),
])
def test_a_clause_opening_with_a_comparative_compares_with_the_clause_before(claim, supported):
    check = FinancialJudge().assess(claim, NEWSALES)
    assert check.entailed is supported, check.detail
    if not supported:
        assert check.rule == "comparison reversed", check.detail


@pytest.mark.parametrize(("claim", "supported", "rule"), [
    ("2025财年中国利润比香港多4.78亿美元。", True, None),
    ("2025财年香港利润比中国多4.78亿美元。", False, "comparison reversed"),
    ("Hong Kong's FY2025 profit trailed China's by USD 478 million.", True, None),
    ("2025财年中国利润比香港多5.78亿美元。", False, "number not found"),
])
def test_a_difference_between_two_subjects_is_their_facts(claim, supported, rule):
    check = FinancialJudge().assess(claim, FACTS)
    assert check.entailed is supported, check.detail
    if rule is not None:
        assert check.rule == rule, check.detail

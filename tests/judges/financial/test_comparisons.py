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

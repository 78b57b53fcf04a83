"""The financial judge: every kind of claim both ways and in both languages, the rule it names,
a claim copied from a passage always supported, and WiCE's held-out claims (English Wikipedia).

Contexts are the knowledge base's own texts: fact rows as the engine's tools print them
(`ACME_HK FY2025 REVENUE: 1702 USD_M`) and the narratives of data/kb/narratives.jsonl."""

from __future__ import annotations

import hashlib
from datetime import date
import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragspine_eval import paths
from ragspine_eval.judges import registry as judges
from ragspine_eval.judges.financial.judge import FinancialJudge
from ragspine_eval.judges.groundedness import split_claims
from ragspine_eval.judges.registry import check_judge, check_labelled, read_labelled

NARRATIVES = {row["doc_id"]: row["text"] for row in map(
    json.loads, (paths.KB_DIR / "narratives.jsonl").read_text(encoding="utf-8").splitlines())}
HK = NARRATIVES["HK_QBR_2025Q4.pptx"]
CN = NARRATIVES["CN_QBR_2025.pptx"]
GROUP = NARRATIVES["GROUP_QBR_2025.pptx"]
REG_HK = NARRATIVES["REG_WATCH_HK.pptx"]
FACTS = ["ACME_HK FY2025 REVENUE: 1702 USD_M", "ACME_HK FY2024 REVENUE: 1538 USD_M",
         "ACME_GROUP FY2025 REVENUE: 4500 USD_M", "ACME_GROUP FY2025 ROE: 14.8 PCT",
         "ACME_CN FY2025 REVENUE: 1320 USD_M", "ACME_HK 2025H1 NEWSALES: 1520 USD_M"]
CONTEXT = [HK, CN, GROUP, REG_HK, *FACTS]

# (kind, claim, supported, the rule that rejects it)
CLAIMS = [
    ("paraphrase", "香港2025财年收入为17.02亿美元。", True, None),
    ("paraphrase", "Group revenue for FY2025 came to USD 4.5 billion.", True, None),
    ("paraphrase", "集团2025财年的ROE为百分之十四点八。", True, None),
    ("paraphrase", "In the first half of 2025 Hong Kong booked new sales of US$1.52bn.", True, None),
    ("paraphrase", "Hong Kong revenue declined because the MCV customer segment shrank.", True, None),
    ("paraphrase", "香港收入从2024财年的15.38亿美元增长到2025财年的17.02亿美元。", True, None),
    ("paraphrase", "中国2025财年收入为十三亿二千万美元。", True, None),
    ("paraphrase", "Hong Kong's FY2025 revenue was 1,702 million US dollars.", True, None),
    ("paraphrase", "香港2025财年收入为17.02亿元人民币。", False, "number not found"),
    ("paraphrase", "Hong Kong's FY2025 revenue was 1,702 billion US dollars.", False,
     "number not found"),
    ("number", "香港2025财年收入为18.02亿美元。", False, "number not found"),
    ("number", "Group revenue for FY2025 was USD 4.8 billion.", False, "number not found"),
    ("approximation", "香港2025财年收入约17亿美元。", True, None),
    ("approximation", "Group ROE was roughly 15% in FY2025.", True, None),
    ("approximation", "香港2025财年收入约20亿美元。", False, "number not found"),
    ("approximation", "Group revenue in FY2025 was about USD 5 billion.", False, "number not found"),
    ("negation", "中国收入并未下降。", True, None),
    ("negation", "Hong Kong revenue did not grow.", True, None),
    ("negation", "香港REVENUE同比并未走弱。", False, "negation"),
    ("negation", "Hong Kong revenue did not go down.", False, "negation"),
    ("direction", "中国收入同比增长。", True, None),
    ("direction", "ACME Group new sales grew.", True, None),
    ("direction", "香港收入同比上升。", False, "direction flipped"),
    ("direction", "China revenue declined.", False, "direction flipped"),
    ("direction", "香港2025财年收入同比下降。", False, "direction flipped"),
    ("entity", "集团新单增长，主要得益于香港与中国两大市场同步发力。", True, None),
    ("entity", "Group new sales grew as Hong Kong and China both contributed.", True, None),
    ("entity", "中国2025财年收入为17.02亿美元。", False, "entity swapped"),
    ("entity", "Group revenue in FY2025 was USD 1.702 billion.", False, "entity swapped"),
    ("entity", "中国新单增长，主要得益于香港与中国两大市场同步发力。", False, "entity swapped"),
    ("period", "香港2025年上半年新单为15.2亿美元。", True, None),
    ("period", "Hong Kong new sales were USD 1,520 million in H1 2025.", True, None),
    ("period", "香港2024财年收入为17.02亿美元。", False, "period changed"),
    ("period", "Hong Kong new sales were USD 1,520 million in FY2025.", False, "period changed"),
    ("addition", "香港收入同比走弱，主要原因是MCV客群萎缩和银保渠道结构调整。", True, None),
    ("addition", "China's revenue growth was driven by higher agency productivity.", True, None),
    ("addition", "香港收入同比走弱，主要因为利率上升。", False, None),
    ("addition", "香港收入同比走弱，原因是MCV客群萎缩，以及大量代理人离职。", False, None),
    ("addition", "Hong Kong revenue went down because interest rates rose sharply.", False, None),
]


@pytest.mark.parametrize(("kind", "claim", "supported", "rule"), CLAIMS,
                         ids=[f"{k}-{'yes' if s else 'no'}-{i}" for i, (k, _, s, _) in
                              enumerate(CLAIMS)])
def test_each_kind_both_ways(kind, claim, supported, rule):
    check = FinancialJudge().assess(claim, CONTEXT)
    assert check.entailed is supported, check.detail
    if supported:
        assert check.rule == "supported"
    else:
        assert check.rule != "supported"
        if rule is not None:
            assert check.rule == rule, check.detail


def test_every_kind_is_tested_both_ways_in_both_languages():
    seen = {(k, s, any("\u4e00" <= ch <= "\u9fff" for ch in c)) for k, c, s, _ in CLAIMS}
    for kind in {k for k, _, _, _ in CLAIMS} - {"number"}:
        for supported in (True, False):
            assert {(kind, supported, True), (kind, supported, False)} <= seen, (kind, supported)


# issue 32, batch 9: wordings the rules above were not written for, each rule both ways
H1 = "ACME_HK 2025H1 REVENUE: 818 USD_M"
PROFIT = ["ACME_HK FY2025 PROFIT: 512 USD_M", "ACME_GROUP FY2024 PROFIT: 6010 USD_M"]
CHINA = ["ACME_CN FY2025 REVENUE: 1320 USD_M", "ACME_CN FY2025 REVENUE (AGENCY): 905 USD_M",
         "ACME_CN FY2025 REVENUE (BANCA): 415 USD_M"]
WRITTEN_OTHERWISE = [
    # a clause without a period is of the period of the clause before
    ("For the six months ended 30 June 2025, Hong Kong's revenue was USD 818 million.",
     [HK, H1, *FACTS], None, True, None),
    ("For the six months ended 31 December 2025, Hong Kong's revenue was USD 818 million.",
     [HK, H1, *FACTS], None, False, "period changed"),
    ("Earlier this year, in the first six months, Hong Kong's new sales came to USD 1,520 "
     "million.", CONTEXT, date(2025, 9, 30), True, None),
    ("上财年香港收入为17.02亿美元。", CONTEXT, date(2026, 6, 12), True, None),
    ("上财年香港收入为17.02亿美元。", CONTEXT, date(2025, 3, 15), False, "period changed"),
    # formal numerals, two scales in one figure, thousand million, half a billion
    ("香港2025财年收入为壹拾柒亿零贰佰万美元。", CONTEXT, None, True, None),
    ("香港2025财年收入为壹拾柒万美元。", CONTEXT, None, False, "number not found"),
    ("中国银保渠道2025财年收入为4亿1500万美元。", CHINA, None, True, None),
    ("中国银保渠道2025财年收入为4亿5100万美元。", CHINA, None, False, "number not found"),
    ("Hong Kong's FY2025 revenue was 1.702 thousand million US dollars.", CONTEXT, None, True,
     None),
    ("Hong Kong's FY2025 profit was roughly half a billion dollars.", PROFIT, None, True, None),
    ("Hong Kong's FY2025 profit was roughly a billion dollars.", PROFIT, None, False,
     "number not found"),
    ("Hong Kong's FY2025 revenue was HK$1,702 million.", CONTEXT, None, False, "number not found"),
    # channels that make up the whole
    ("中国2025财年收入全部来自代理人和银保两个渠道。", CHINA, None, True, None),
    ("中国2025财年收入全部来自代理人渠道。", CHINA, None, False, "unsupported words"),
    ("Agency and bancassurance together made up all of China's FY2025 revenue.", CHINA, None,
     True, None),
    # who says it is not what is said; a fee is not a commission
    ("正如香港QBR所说，“香港 REVENUE 同比走弱”，MCV客群萎缩是主要原因之一。", [HK, GROUP], None,
     True, None),
    ("The Group review notes that Hong Kong and China both contributed to new sales growth.",
     [GROUP, HK], None, True, None),
    ("积金局要求强积金产品披露销售佣金。", [REG_HK, HK], None, False, "fee swapped"),
    ("The MPF Schemes Authority requires MPF products to disclose management fees.",
     [REG_HK, HK], None, True, None),
    # names for the subject and the metric; a market or metric the KB has no data on
    ("本港业务2025年上半年新单为15.2亿美元。", CONTEXT, None, True, None),
    ("澳门2025年上半年新单为15.2亿美元。", CONTEXT, None, False, "entity swapped"),
    ("For ACME as a whole, ROE was 14.8% in FY2025.", CONTEXT, None, True, None),
    ("Hong Kong's new business premiums were USD 1,520 million in H1 2025.", CONTEXT, None, True,
     None),
    ("香港2025年上半年新业务价值为15.2亿美元。", CONTEXT, None, False, "metric swapped"),
    # a clause naming no entity is about the entity of the clause before it
    ("香港收入同比走弱，中国收入则增长，核心驱动力是代理人产能提升。", [HK, CN], None, True, None),
    ("由于代理人产能提升，香港收入同比走弱。", [HK, CN], None, False, "entity swapped"),
    # ", from 13.9%": the figure a change moved from is of the year before
    ("Group ROE edged up to 14.8% in FY2025, from 13.9%.",
     ["ACME_GROUP FY2025 ROE: 14.8 PCT", "ACME_GROUP FY2024 ROE: 13.9 PCT"], None, True, None),
    ("Group ROE edged up to 14.8% in FY2025, from 14.2%.",
     ["ACME_GROUP FY2025 ROE: 14.8 PCT", "ACME_GROUP FY2024 ROE: 13.9 PCT"], None, False,
     "number not found"),
    # a computed growth rate rounded where it is written; a comparison of two periods
    ("Group revenue was up 12% on FY2024 in FY2025.",
     ["ACME_GROUP FY2025 REVENUE: 4500 USD_M", "ACME_GROUP FY2024 REVENUE: 4012 USD_M"], None,
     True, None),
    ("Group revenue was up 13% on FY2024 in FY2025.",
     ["ACME_GROUP FY2025 REVENUE: 4500 USD_M", "ACME_GROUP FY2024 REVENUE: 4012 USD_M"], None,
     False, "number not found"),
    ("香港2025财年收入较2024财年上升。", FACTS, None, True, None),
    ("香港2025财年收入较2023财年上升。", FACTS, None, False, "period changed"),
]


@pytest.mark.parametrize(("claim", "context", "reference", "supported", "rule"),
                         WRITTEN_OTHERWISE)
def test_wordings_of_other_writers_both_ways(claim, context, reference, supported, rule):
    check = FinancialJudge().assess(claim, context, reference)
    assert check.entailed is supported, check.detail
    if rule is not None:
        assert check.rule == rule, check.detail


def test_the_lexical_judge_accepts_what_the_financial_judge_rejects():
    """Story 13: most characters of an invented cause occur somewhere in the context."""
    claim = "香港收入同比走弱，主要因为利率上升。"
    assert judges.get("lexical").entails(claim, CONTEXT)
    assert not FinancialJudge().entails(claim, CONTEXT)


def test_the_explanation_names_the_number_the_passage_and_what_it_states():
    check = FinancialJudge().assess("香港2025财年收入为18.02亿美元。", CONTEXT)
    assert check.rule == "number not found"
    assert check.passage == CONTEXT.index(FACTS[0]) + 1
    assert "18.02亿美元" in check.detail and "1.802 billion USD" in check.detail
    assert "1.702 billion USD" in check.detail


def test_the_explanation_names_the_direction_that_disagrees_and_where():
    check = FinancialJudge().assess("香港收入同比上升。", CONTEXT)
    assert check.passage == 1
    assert "上升" in check.detail and "走弱" in check.detail


def test_unsupported_words_are_listed():
    check = FinancialJudge().assess("Hong Kong revenue went down because of the typhoon "
                                    "season.", [HK])
    assert check.rule == "unsupported words"
    assert {"typhoon", "season"} <= set(check.missing)
    assert "typhoon" in check.detail


def test_a_claim_check_serialises_its_rule_passage_and_detail():
    data = FinancialJudge().assess("香港收入同比上升。", CONTEXT).to_dict()
    assert data["rule"] == "direction flipped" and data["passage"] == 1 and data["detail"]


def test_it_is_registered_and_described():
    judge = judges.get("financial")
    assert isinstance(judge, FinancialJudge)
    assert judges.describe(judge) == {"name": "financial", "threshold": judge.threshold}
    assert "financial" in judges.DESCRIPTIONS


def test_no_passage_is_no_support_and_an_empty_claim_claims_nothing():
    assert not FinancialJudge().entails("香港收入为17.02亿美元", [])
    assert FinancialJudge().entails("。", CONTEXT)


PASSAGES = [HK, CN, GROUP, REG_HK, *FACTS, NARRATIVES["GROUP_STRATEGY_2026.pptx"]]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PASSAGES), st.data())
def test_a_claim_copied_verbatim_from_a_passage_is_always_supported(passage, data):
    """Any sentence of any passage, or the passage whole, copied as a claim, is supported."""
    sentences = split_claims(passage) + [passage]
    claim = data.draw(st.sampled_from(sentences))
    others = data.draw(st.lists(st.sampled_from(PASSAGES), max_size=3))
    context = others + [passage]
    check = FinancialJudge().assess(claim, context)
    assert check.entailed, check.detail


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.sampled_from("香港收入增长下降未不约美元亿万%., 0123456789abcFYH年"),
               max_size=40))
# found by this test: a tie between two passages, between two clauses of one passage, and a
# direction read from the claim's own figures where the passage says the clause word for word
@example("未F香")
@example("0,0未")
@example("0%1%降")
def test_any_text_copied_into_the_context_is_supported(text):
    """Whatever the claim, copied whole into the context as a passage, it is supported."""
    check = FinancialJudge().assess(text, [HK, text])
    assert check.entailed, (text, check.detail)


# ../shared beside the project (CI), or the one beside the main checkout (a worktree)
WICE = next((p for p in (paths.PROJECT_ROOT.parent / "shared" / "wice" / "dev.jsonl",
                         Path("/work/shared/wice/dev.jsonl")) if p.exists()),
            Path("/work/shared/wice/dev.jsonl"))


def _held_out(claim: str) -> bool:
    return int(hashlib.sha256(claim.encode("utf-8")).hexdigest()[0], 16) % 2 == 1


@pytest.mark.skipif(not WICE.exists(), reason="WiCE's dev split is not in ../shared/wice")
def test_it_reaches_the_target_on_held_out_wice_claims():
    held = [r for r in read_labelled(WICE) if _held_out(r[0])]
    assert len(held) > 150
    # 0.760 measured (python -m benchmarks.wice_cv); the rules and thresholds were chosen by
    # cross-validation over all of dev, this half included, so this is a floor, not an estimate
    assert check_judge(held, FinancialJudge()).balanced_accuracy >= 0.75


CLAIM_SET = paths.DATA_DIR / "judge" / "financial_claims_heldout.jsonl"


@pytest.mark.skipif(not CLAIM_SET.exists(),
                    reason="the labelled claim set is not in data/judge")
def test_it_reaches_the_target_on_the_held_out_half_of_the_claim_set():
    # issue 32's targets on the held-out half: 0.88 in all, every kind 0.75, zh and en 0.85
    result = check_labelled(CLAIM_SET, FinancialJudge())
    assert result.balanced_accuracy >= 0.88
    by = {(g.field, g.name): g.balanced_accuracy for g in result.groups}
    assert min(v for (field, _), v in by.items() if field == "kind") >= 0.75, by
    assert by[("lang", "zh")] >= 0.85 and by[("lang", "en")] >= 0.85, by

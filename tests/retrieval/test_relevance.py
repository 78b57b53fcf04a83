"""Relevance rules: where a case's rules come from, and the one matching function."""

from ragspine_eval.retrieval.passages import RankedPassage
from ragspine_eval.retrieval.relevance import (
    RelevanceRule,
    locator_matches,
    matches,
    relevant_flags,
    rule_hits,
    rules_from_expected,
)


def p(doc, locator="", text="", rank=1, page=None, slide=None):
    return RankedPassage(rank, doc, locator, page, slide, text=text)


def test_rules_come_from_relevant_then_narrative_doc_then_source():
    both = {"narrative_doc": "N.pptx", "source": {"doc": "F.pptx", "locator": "slide=3"},
            "relevant": [{"doc": "R.pdf", "page": 4, "text": "net profit"},
                         {"doc": "S.pdf", "pages": [1, 2], "locator": "S.pdf@page=1"}]}
    first, second = rules_from_expected(both)
    assert (first.doc, first.pages, first.text, first.origin) == \
        ("R.pdf", frozenset({4}), "net profit", "expected.relevant[0]")
    assert (second.pages, second.locator) == (frozenset({1, 2}), "S.pdf@page=1")
    del both["relevant"]
    assert rules_from_expected(both) == [RelevanceRule(doc="N.pptx", origin="expected.narrative_doc")]
    del both["narrative_doc"]
    assert rules_from_expected(both) == [RelevanceRule(doc="F.pptx", locator="slide=3",
                                                       origin="expected.source")]
    assert rules_from_expected({"clarification": "none", "refuse": False}) == []


def test_a_doc_rule_matches_that_document_only():
    rule = RelevanceRule(doc="REG_WATCH_CN.pptx")
    assert matches(rule, p("REG_WATCH_CN.pptx"))
    assert not matches(rule, p("CN_QBR_2025.pptx"))
    assert not matches(rule, p("reg_watch_cn.pptx"))  # exact by default
    by_name = RelevanceRule(doc="reg_watch_cn", doc_match="name")
    assert matches(by_name, p("decks/REG_WATCH_CN.pptx"))
    assert not matches(by_name, p("REG_WATCH_HK.pptx"))


def test_pages_locator_and_text_must_all_hold():
    rule = RelevanceRule(doc="R.pdf", pages=frozenset({4}), text="Net  PROFIT")
    assert matches(rule, p("R.pdf", text="the net profit rose", page=4))
    assert not matches(rule, p("R.pdf", text="the net profit rose", page=5))
    assert not matches(rule, p("R.pdf", text="revenue rose", page=4))
    assert not matches(rule, p("R.pdf", text="the net profit rose"))  # no page: not on page 4
    slide_rule = RelevanceRule(pages=frozenset({5}))
    assert matches(slide_rule, p("any.pptx", slide=5))


def test_locators_match_equal_or_at_a_component_boundary():
    assert locator_matches("slide=5", "slide=5,frame=2#p1")
    assert locator_matches("slide=5,table=1,row=2,col=3", "slide=5,table=1")
    assert locator_matches("R.pdf@page=1", "R.pdf@page=1#para2-3")
    assert not locator_matches("slide=5", "slide=50#p1")
    assert not locator_matches("", "slide=5")
    assert not locator_matches("#para1", "#para10")


def test_flags_mark_a_passage_any_rule_matches_and_hits_keep_rules_apart():
    rules = [RelevanceRule(doc="A"), RelevanceRule(doc="B")]
    ranked = [p("C", rank=1), p("B", rank=2), p("A", rank=3)]
    assert relevant_flags(rules, ranked) == [False, True, True]
    assert rule_hits(rules, ranked) == [[False, False, True], [False, True, False]]
    assert relevant_flags([], ranked) == [False, False, False]


def test_a_rule_reads_back_from_its_dict():
    rule = RelevanceRule("d.pdf", frozenset({2, 3}), "d.pdf@page=2", "x", "name", origin="o")
    assert RelevanceRule.from_dict(rule.to_dict()) == rule
    assert rule.describe() == "d.pdf p. 2, 3 at d.pdf@page=2 \u201cx\u201d"

"""What a reviewer sees: each claim's page with the drafted occurrence marked and numbered, the
same figure elsewhere on the page marked apart, a claim whose page the workspace lacks shown
with the reason, never dropped."""

from __future__ import annotations

from ragspine_eval.drafting.draft_file import DraftCase, Located, draft_document
from ragspine_eval.drafting.pages import Page, Pages
from ragspine_eval.drafting.review_items import review_items

SHA = "a" * 64
TEXT = "1 Balasore 23.65 0.17\n2 Bhadrak 15.34 0.17\n"
PAGES = Pages((Page("ag.pdf", SHA, 1, TEXT),), sha256={"ag.pdf": SHA})


def test_the_drafted_occurrence_is_the_claim_and_the_others_are_pale():
    drafted = Located("number", "ag.pdf", SHA, 1, "2 Bhadrak 15.34 0.17", "0.17")
    lost = Located("number", "ag.pdf", SHA, 9, "?", "15.34")
    draft = draft_document([DraftCase("bhadrak", "positive", {"en": "Bhadrak surplus?"},
                                      ((drafted,), (lost,)))], {"ag.pdf": 1})
    [case] = review_items(draft, PAGES)
    [page] = case.pages
    marks = [(TEXT[s:e], kind, label) for s, e, kind, label in page.marks]
    assert marks == [("0.17", "also", ""), ("0.17", "claim", "1")]
    assert page.marks[1][0] == TEXT.rindex("0.17")
    assert [a.missing for a in case.anchors] == [None, "ag.pdf has no page 9 in this workspace"]

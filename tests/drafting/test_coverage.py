"""What a gold file covers: every page of the workspace listed, reached or not, and the claims by
kind, the questions by language, the cases by stage and class."""

from __future__ import annotations

from ragspine_eval.drafting.coverage import coverage_of
from ragspine_eval.drafting.draft_file import DraftCase, Located, draft_document, write_draft
from ragspine_eval.drafting.pages import Page, Pages

SHA = "e" * 64
PAGES = Pages(tuple(Page("r.pdf", SHA, n, f"Revenue {n}0.5") for n in (1, 2, 3))
              + (Page("s.pdf", "f" * 64, 1, "Staff 12.5"),), sha256={"r.pdf": SHA,
                                                                    "s.pdf": "f" * 64})


def test_pages_no_case_reaches_are_listed_per_document(tmp_path):
    at = Located("number", "r.pdf", SHA, 2, "Revenue 20.5", "20.5")
    gold = tmp_path / "gold.json"
    write_draft(gold, draft_document([
        DraftCase("a", "positive", {"en": "Revenue?", "zh": "收入？"}, ((at,),),
                  tags={"stage": "retrieval"}),
        DraftCase("b", "abstain", {"en": "Revenue on Mars?"}, forbidden=(at,),
                  tags={"stage": "refusal"})], {"r.pdf": 3}))
    covered = coverage_of(gold, PAGES)
    assert covered.documents == [
        {"document": "r.pdf", "pages": 3, "reached": 1, "not_reached": [1, 3]},
        {"document": "s.pdf", "pages": 1, "reached": 0, "not_reached": [1]}]
    assert (covered.kinds, covered.languages, covered.stages, covered.classes) == (
        {"number": 1}, {"en": 2, "zh": 1}, {"retrieval": 1, "refusal": 1},
        {"positive": 1, "abstain": 1})
    assert any(line.startswith("r.pdf") and line.endswith("1, 3") for line in covered.lines())

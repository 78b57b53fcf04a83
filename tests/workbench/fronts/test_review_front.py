"""What notebooks/review.ipynb shows, without a kernel: the widgets of each drafted case (plain
ipywidgets objects) set as a reviewer sets them, saved as a decisions file that `gold review
apply` folds in; the page excerpt a widget shows keeps every drafted mark on its figure."""

from __future__ import annotations

import pytest

from held_out_pdfs import HELD_OUT, held_out_ws  # noqa: F401
from ragspine_eval.drafting.draft_file import draft_document, write_draft
from ragspine_eval.drafting.pages import read_pages
from ragspine_eval.drafting.questions import draft_from_questions, pages_count
from ragspine_eval.drafting.review import ReviewError, apply_review, read_decisions
from ragspine_eval.workbench.fronts.review import ReviewSession, excerpt

pytest.importorskip("ipywidgets")


@pytest.fixture
def session(held_out_ws, tmp_path):  # noqa: F811
    pages = read_pages(held_out_ws)
    cases, _ = draft_from_questions(held_out_ws, HELD_OUT, pages=pages)
    draft = tmp_path / "draft.json"
    write_draft(draft, draft_document(cases, pages_count(pages)))
    return ReviewSession(draft, held_out_ws)


def test_the_widgets_decisions_saved_and_applied(session):
    first, second = session.controls[:2]
    first.decision.value = "accept"
    for anchor, _, shown, keep, _, _ in first.rows:
        keep.value = shown == "3.81"
    second.decision.value = "reject"
    second.note.value = "asks the population"
    with pytest.raises(ReviewError, match="say who reviewed"):
        session.save(" ")
    path = session.save("dana")
    assert path.name == "draft.decisions.json"
    decisions = read_decisions(path, session.text, session.draft)
    assert [(d.case_id, d.decision) for d in decisions.decisions] == [
        ("cuttack-rice", "accept"), ("ganjam-population", "reject")]
    gold = apply_review(session.draft, decisions, session.pages)
    [case] = gold["cases"]
    assert [a["value"] for a in case["expected"]["required_claims"]] == ["3.81"]
    assert session.widget() is not None  # every case's box builds


def test_the_excerpt_keeps_each_drafted_mark_on_its_figure(session):
    for item in session.items:
        for page in item.pages:
            cut = excerpt(page)
            assert len(cut.text) <= len(page.text)
            drafted = [(page.text[s:e], n) for s, e, k, n in page.marks if k == "claim"]
            assert [(cut.text[s:e], n) for s, e, k, n in cut.marks if k == "claim"] == drafted

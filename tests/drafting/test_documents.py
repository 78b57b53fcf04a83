"""A draft from the documents themselves, over held-out public PDFs: cases in both languages for
every document, each claim's figure on its page of its PDF (pdfplumber's reading), each
abstention about a term no PDF holds with its forbidden numbers on the page it borrows from;
seeded, and the same seed gives the same bytes."""

from __future__ import annotations

import json

from held_out_pdfs import held_out_ws, pdf_text  # noqa: F401
from test_questions import _anchors, on_pdf_page

from ragspine_eval.drafting.documents import draft_from_documents, facts_of, period_of
from ragspine_eval.drafting.draft_file import draft_document, dumps
from ragspine_eval.drafting.pages import Page, read_pages
from ragspine_eval.drafting.questions import pages_count


def _draft(ws, seed=0):
    pages = read_pages(ws)
    cases, skipped = draft_from_documents(pages, seed=seed)
    return json.loads(dumps(draft_document(cases, pages_count(pages)))), cases, skipped


def test_every_document_gets_cases_in_both_languages_each_figure_on_its_pdf_page(
        held_out_ws, pdf_text):
    draft, cases, skipped = _draft(held_out_ws)
    assert skipped == []
    positives = [c for c in draft["cases"] if c["case_class"] == "positive"]
    per_doc = {}
    for case in positives:
        assert case["question"]["en"].strip() and case["question"]["zh"].strip()
        per_doc.setdefault(pdf_text[case["document_sha256"]][0], []).append(case)
        assert all(on_pdf_page(a, pdf_text) for a in _anchors(case))
    assert {doc: len(c) for doc, c in per_doc.items()} == {"agstat.pdf": 6,
                                                         "rainfall_distribution.pdf": 6}
    assert {c["tags"]["stage"] for c in positives} == {"retrieval", "answer", "routing"}


def test_each_abstention_asks_what_no_pdf_holds(held_out_ws, pdf_text):
    _, cases, _ = _draft(held_out_ws)
    abstentions = [c for c in cases if c.case_class == "abstain"]
    assert len(abstentions) == 3 and {c.tags["stage"] for c in abstentions} == {"refusal"}
    every_page = "\n".join(t for _, texts in pdf_text.values() for t in texts).casefold()
    for case in abstentions:
        term = case.rationale.split("'")[1]  # the out-of-scope term the rationale names
        assert term.casefold() not in every_page, term
        assert term in case.questions["en"] or term.removeprefix("FY") in case.questions["en"]
        for f in case.forbidden:
            anchor = {"document_sha256": f.sha256, "page_index": f.page - 1, "value": f.value,
                      "unit": f.unit}
            assert on_pdf_page(anchor, pdf_text), f


def test_the_seed_chooses_and_the_same_seed_gives_the_same_bytes(held_out_ws):
    first, _, _ = _draft(held_out_ws, seed=0)
    assert dumps(first) == dumps(_draft(held_out_ws, seed=0)[0])
    other = _draft(held_out_ws, seed=1)[0]
    assert [c["question"] for c in other["cases"]] != [c["question"] for c in first["cases"]]


def test_a_fact_is_a_label_then_a_figure_and_a_label_said_twice_is_left_out():
    page = Page("p.pdf", "0" * 64, 1, "Revenue 2012 年 1,702.5 up\nStaff 7\nCost 12.5\nCost 13.0\n"
                                      "3 Bhadrak 15.34 13.50\n")
    facts = {f.label: (f.value, f.period, f.others) for f in facts_of(page)}
    assert facts == {"Revenue": ("1,702.5", "2012 年", ()), "Bhadrak": ("15.34", "2012 年",
                                                                        ("13.50",))}
    assert period_of("during 2012-13") == "2012-13" and period_of("2016年上半年") == "2016年上半年"

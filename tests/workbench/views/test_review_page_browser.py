"""The offline review page in a real headless Chromium: each case's page text with its claims
marked and numbered as the claims table numbers them; accept, reject, untick a claim, edit a
value and a page; the exported decisions, applied, give exactly the accepted cases with the
edits; a rejected case is exactly gone. Skipped where Chromium is absent (tests/browser.py)."""

from __future__ import annotations

import json

import pytest

from browser import offline_page
from ragspine_eval.drafting.draft_file import draft_document, dumps, fingerprint
from ragspine_eval.drafting.pages import Page, Pages
from ragspine_eval.drafting.review import apply_review, read_decisions, read_draft
from ragspine_eval.workbench.fronts.review import review_page

pytest.importorskip("playwright")

SHA = "c" * 64
RAIN = ("REGION : SOUTH <script>alert(1)</script>\n7 KERALA 30.5 23.9 28% E 777.5 914.6\n"
        "6 GOA 19.8 25.6\nCOUNTRY (to 9 July) 254.6\n")
PAGES = Pages((Page("rain.pdf", SHA, 1, RAIN), Page("rain.pdf", SHA, 2, "COUNTRY 254.6\n")),
              sha256={"rain.pdf": SHA})


def _draft(tmp_path):
    from ragspine_eval.drafting.draft_file import DraftCase, Located

    def at(value, page=1):
        line = next(x for x in (RAIN + "COUNTRY 254.6").split("\n") if value in x)
        return Located("number", "rain.pdf", SHA, page, line, value)

    cases = [DraftCase("kerala", "positive", {"en": "Kerala's actual rainfall?"},
                       ((at("777.5"),), (at("914.6"),))),
             DraftCase("goa", "positive", {"en": "Goa's rainfall?", "zh": "果阿的降雨量？"},
                       ((at("19.8"),),)),
             DraftCase("country", "positive", {"en": "Country rainfall?"}, ((at("254.6", 2),),)),
             DraftCase("nepal", "abstain", {"en": "Nepal's rainfall?"}, forbidden=(at("30.5"),))]
    path = tmp_path / "draft.json"
    path.write_text(dumps(draft_document(cases, {"rain.pdf": 2})), encoding="utf-8")
    return path


def _export(tmp_path, draft, decide):
    """Open the page, let `decide(page)` click, export; the decisions file's path."""
    text, document = read_draft(draft)
    html = tmp_path / "review.html"
    html.write_text(review_page(document, PAGES, draft.name, fingerprint(text)), encoding="utf-8")
    with offline_page(html) as seen:
        page = seen.page
        decide(page)
        page.fill("#rse-reviewer", "bob")
        page.click("#rse-export")
        exported = page.input_value("#rse-decisions")
        assert seen.errors == [] and seen.network == []
    out = tmp_path / "decisions.json"
    out.write_text(exported, encoding="utf-8")
    return out


def _case(page, case_id):
    return page.locator(f'section[data-case="{case_id}"]')


def _gold(draft, decisions):
    text, document = read_draft(draft)
    return apply_review(document, read_decisions(decisions, text, document), PAGES)


def test_the_page_marks_each_claim_and_its_decisions_apply(tmp_path):
    draft = _draft(tmp_path)

    def decide(page):
        kerala = _case(page, "kerala")
        marks = kerala.locator("mark.rse-claim")
        assert [marks.nth(i).inner_text() for i in range(marks.count())] == ["777.51", "914.62"]
        assert "<script>alert(1)</script>" in kerala.locator(".rse-page pre").inner_text()
        kerala.locator('input.rse-decision[value="accept"]').check()
        kerala.locator('tr.rse-anchor[data-claim="2"] input.rse-keep').uncheck()
        assert "rse-dropped" in kerala.locator('mark[data-claim="2"]').get_attribute("class")
        kerala.locator('tr.rse-anchor[data-claim="1"] input.rse-value').fill("30.5")
        _case(page, "goa").locator('input.rse-decision[value="reject"]').check()
        country = _case(page, "country")
        country.locator('input.rse-decision[value="accept"]').check()
        country.locator('tr.rse-anchor[data-claim="1"] input.rse-page').fill("1")
        assert page.inner_text("#rse-count-accept") == "2"
        assert page.inner_text("#rse-count-undecided") == "1"

    decisions = _export(tmp_path, draft, decide)
    made = json.loads(decisions.read_text())
    assert made["reviewer"] == "bob" and made["draft_sha256"] == fingerprint(draft.read_text())
    gold = _gold(draft, decisions)
    assert [c["case_id"] for c in gold["cases"]] == ["kerala", "country"]
    assert gold["cases"][0]["expected"]["required_claims"] == [
        {"kind": "number", "page_index": 0, "value": "30.5", "document_sha256": SHA}]
    assert gold["cases"][1]["expected"]["required_claims"][0]["page_index"] == 0
    edits = {(e["case_id"], e["old"], e["new"]) for e in gold["changelog"]
             if e["change"] == "reviewed: claim 1 edited" and "review by bob" in e["evidence"]}
    assert edits == {("kerala", "777.5 on page 1", "30.5 on page 1"),
                     ("country", "254.6 on page 2", "254.6 on page 1")}


def test_rejecting_one_case_in_the_page_removes_exactly_it(tmp_path):
    draft = _draft(tmp_path)
    ids = ("kerala", "goa", "country", "nepal")

    def accept_all_but(rejected):
        def decide(page):
            for case_id in ids:
                choice = "reject" if case_id == rejected else "accept"
                _case(page, case_id).locator(f'input.rse-decision[value="{choice}"]').check()
        return decide

    every = _gold(draft, _export(tmp_path, draft, accept_all_but(None)))
    for rejected in ids:
        gold = _gold(draft, _export(tmp_path, draft, accept_all_but(rejected)))
        assert gold["cases"] == [c for c in every["cases"] if c["case_id"] != rejected]

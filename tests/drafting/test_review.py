"""A review's decisions folded into the gold file: only accepted cases, edits checked on their
page, the review recorded in the changelog (who, when, what changed); a malformed, stale or
hostile decisions file is a ReviewError naming the file and the line, and nothing is applied."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.drafting.draft_file import DraftCase, Located, draft_document, dumps
from ragspine_eval.drafting.pages import Page, Pages
from ragspine_eval.drafting.review import (
    FORMAT,
    ReviewError,
    apply_review,
    read_decisions,
    read_draft,
)

SHA = "b" * 64
PAGES = Pages((Page("rain.pdf", SHA, 1, "7 KERALA 30.5 23.9 28% E 777.5 914.6\n6 GOA 19.8 25.6"),
               Page("rain.pdf", SHA, 2, "COUNTRY 254.6 251.8\n")), sha256={"rain.pdf": SHA})


def _at(value, page=1, unit=None):
    return Located("number", "rain.pdf", SHA, page, f"line of {value}", value, unit)


CASES = [DraftCase("kerala", "positive", {"en": "Kerala's actual rainfall?"},
                   ((_at("777.5"),), (_at("914.6"),)), tags={"stage": "answer"}),
         DraftCase("goa", "positive", {"en": "Goa's actual rainfall?"}, ((_at("19.8"),),)),
         DraftCase("country", "positive", {"zh": "全国实际降雨量？"}, ((_at("254.6", 2),),)),
         DraftCase("nepal", "abstain", {"en": "Nepal's rainfall?"}, forbidden=(_at("30.5"),))]


@pytest.fixture
def draft(tmp_path):
    path = tmp_path / "draft.json"
    path.write_text(dumps(draft_document(CASES, {"rain.pdf": 2})), encoding="utf-8")
    return path


def decisions_file(tmp_path, draft, decisions, **top):
    from ragspine_eval.drafting.draft_file import fingerprint

    payload = {"format": FORMAT, "draft": draft.name,
               "draft_sha256": fingerprint(draft.read_text(encoding="utf-8")),
               "reviewer": "alice", "reviewed_at": "2026-12-07T10:00:00Z",
               "decisions": decisions} | top
    path = tmp_path / "decisions.json"
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def applied(tmp_path, draft, decisions, **top):
    text, document = read_draft(draft)
    return apply_review(document, read_decisions(decisions_file(tmp_path, draft, decisions,
                                                                **top), text, document), PAGES)


def test_only_accepted_cases_reach_the_gold_file_and_a_rejected_one_is_exactly_gone(
        tmp_path, draft):
    accept = [{"case_id": c, "decision": "accept"} for c in ("kerala", "goa", "country", "nepal")]
    every = applied(tmp_path, draft, accept)
    rejected = applied(tmp_path, draft, [*accept[:1], {"case_id": "goa", "decision": "reject",
                                                       "note": "two figures"}, *accept[2:]])
    assert [c["case_id"] for c in every["cases"]] == ["kerala", "goa", "country", "nepal"]
    assert [c for c in every["cases"] if c["case_id"] != "goa"] == rejected["cases"]
    assert [e for e in every["changelog"] if e["case_id"] != "goa"] == rejected["changelog"]
    undecided = applied(tmp_path, draft, accept[:2])
    assert [c["case_id"] for c in undecided["cases"]] == ["kerala", "goa"]


def test_an_edit_is_checked_on_its_page_and_recorded_with_who_and_when(tmp_path, draft):
    gold = applied(tmp_path, draft, [
        {"case_id": "kerala", "decision": "accept", "note": "the period column",
         "claims": [{"claim": 2, "keep": False}, {"claim": 1, "value": "30.5"}]},
        {"case_id": "goa", "decision": "accept", "claims": [{"claim": 1, "value": "254.6",
                                                              "page_index": 1}]},
        {"case_id": "nepal", "decision": "accept", "forbidden_numbers": ["30.5", "777.5"]}])
    kerala, goa, nepal = gold["cases"]
    assert kerala["expected"]["required_claims"] == [
        {"kind": "number", "page_index": 0, "value": "30.5", "document_sha256": SHA}]
    assert goa["expected"]["required_claims"][0]["page_index"] == 1
    assert nepal["expected"]["forbidden_numbers"] == ["30.5", "777.5"]
    reviewed = [e for e in gold["changelog"] if e["change"].startswith("reviewed")]
    assert {(e["case_id"], e["change"], e["old"], e["new"]) for e in reviewed} == {
        ("kerala", "reviewed: claim 2 removed", "914.6 on page 1", None),
        ("kerala", "reviewed: claim 1 edited", "777.5 on page 1", "30.5 on page 1"),
        ("goa", "reviewed: claim 1 edited", "19.8 on page 1", "254.6 on page 2"),
        ("nepal", "reviewed: forbidden numbers edited", "30.5", "30.5, 777.5")}
    assert all(e["evidence"].startswith("review by alice at 2026-12-07T10:00:00Z")
               for e in reviewed)
    assert "the period column" in reviewed[0]["evidence"]


def test_a_value_edited_to_one_not_on_its_page_is_refused_naming_the_line(tmp_path, draft):
    with pytest.raises(ReviewError, match=r"decisions.json:\d+ \(case 'goa'\): claim 1: 254.6 "
                                          r"on page 1 is not on page 1 of rain.pdf"):
        applied(tmp_path, draft, [{"case_id": "goa", "decision": "accept",
                                   "claims": [{"claim": 1, "value": "254.6"}]}])


@pytest.mark.parametrize(("decisions", "top", "reason"), [
    ([{"case_id": "q404", "decision": "accept"}], {}, "the draft has no case 'q404'"),
    ([{"case_id": "goa", "decision": "maybe"}], {}, "decision must be one of accept, reject"),
    ([{"case_id": "goa", "decision": "accept", "claim": []}], {}, "did you mean `claims`"),
    ([{"case_id": "goa", "decision": "accept", "claims": [{"claim": 3}]}], {},
     "claim 3 is not a claim of this case"),
    ([{"case_id": "goa", "decision": "accept"}, {"case_id": "goa", "decision": "reject"}], {},
     "decided before"),
    ([{"case_id": "goa", "decision": "accept"}], {"draft_sha256": "0" * 64}, "stale"),
    ([{"case_id": "goa", "decision": "accept"}], {"reviewer": " "}, "`reviewer` must be"),
    ([{"case_id": "goa", "decision": "reject"}], {}, "no case is accepted"),
])
def test_a_bad_decisions_file_names_the_file_the_line_and_the_reason(tmp_path, draft, decisions,
                                                                       top, reason):
    with pytest.raises(ReviewError, match="decisions.json") as caught:
        applied(tmp_path, draft, decisions, **top)
    assert reason in str(caught.value)


@pytest.mark.parametrize(("text", "reason"), [
    ('{"format": "ragspine-eval-gold-review-v1",\n "decisions": [\n  {"case_id": "goa",}\n]}',
     ":3"),
    ("[" * 100 + "]" * 100, "nested more than"),
    ('{"format": "ragspine-eval-gold-review-v1", "note": "\u0007"}', "control"),
    ('{"format": "x", "format": "y"}', "twice"),
])
def test_a_malformed_or_hostile_decisions_file_is_refused(tmp_path, draft, text, reason):
    path = tmp_path / "decisions.json"
    path.write_text(text, encoding="utf-8")
    draft_text, document = read_draft(draft)
    with pytest.raises(ReviewError, match="decisions.json") as caught:
        read_decisions(path, draft_text, document)
    assert reason in str(caught.value)


def test_a_workspace_rebuilt_from_other_files_since_the_draft_is_stale(tmp_path, draft):
    text, document = read_draft(draft)
    decisions = read_decisions(decisions_file(tmp_path, draft, [
        {"case_id": "goa", "decision": "accept"}]), text, document)
    other = Pages(tuple(Page("rain.pdf", "d" * 64, p.page, p.text) for p in PAGES.pages),
                  sha256={"rain.pdf": "d" * 64})
    with pytest.raises(ReviewError, match=r"decisions.json:\d+ \(case 'goa'\): names the "
                                          r"document bbbbbbbbbbbbbbbb\.\.\., which this "
                                          r"workspace does not hold"):
        apply_review(document, decisions, other)

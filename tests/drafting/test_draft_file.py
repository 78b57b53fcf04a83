"""The draft file: nl-answers-gold v2 the gold reader reads, every case marked for review in the
changelog; never replacing a file without force, written whole or not at all."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.drafting.draft_file import (
    DraftCase,
    DraftError,
    Located,
    draft_document,
    dumps,
    unreviewed,
    write_draft,
)
from ragspine_eval.golden.nl_answers import load_answer_cases

A = Located("number", "r.pdf", "a" * 64, 2, "Revenue 1,702.5", "1,702.5")
B = Located("number", "r.pdf", "a" * 64, 5, "Revenue (restated) 1,702.5", "1,702.5")
CASES = [DraftCase("rev", "positive", {"en": "Revenue?", "zh": "收入？"}, ((A, B),)),
         DraftCase("oos", "abstain", {"en": "Revenue on Mars?"}, forbidden=(A,))]


def test_a_figure_on_two_pages_is_any_of_and_the_gold_reader_reads_the_file(tmp_path):
    path = tmp_path / "draft.json"
    write_draft(path, draft_document(CASES, {"r.pdf": 5}))
    data = json.loads(path.read_text())
    assert data["cases"][0]["expected"]["required_claims"] == [{"any_of": [
        {"kind": "number", "page_index": 1, "value": "1,702.5", "document_sha256": "a" * 64},
        {"kind": "number", "page_index": 4, "value": "1,702.5", "document_sha256": "a" * 64}]}]
    assert data["documents"] == [{"file": "r.pdf", "sha256": "a" * 64, "pages": 5}]
    assert unreviewed(data) == ["rev", "oos"]
    assert [c.case_id for c in load_answer_cases(path)] == ["rev", "oos"]
    assert "r.pdf page 5: 'Revenue (restated) 1,702.5'" in path.read_text()


def test_an_existing_file_is_never_replaced_without_force(tmp_path):
    path = tmp_path / "gold.json"
    path.write_text("the team's gold")
    with pytest.raises(DraftError, match="already exists"):
        write_draft(path, draft_document(CASES, {}))
    assert path.read_text() == "the team's gold"
    write_draft(path, draft_document(CASES, {}), force=True)
    assert json.loads(path.read_text())["schema_version"] == "nl-answers-gold-v2"


def test_a_failed_write_leaves_nothing_half_written(tmp_path, monkeypatch):
    import ragspine_eval.files.atomic as atomic

    path = tmp_path / "gold.json"
    path.write_text("before")

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", broken)
    with pytest.raises((DraftError, OSError)):
        write_draft(path, draft_document(CASES, {}), force=True)
    assert path.read_text() == "before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gold.json"]


def test_the_same_cases_give_the_same_text():
    assert dumps(draft_document(CASES, {"r.pdf": 5})) == dumps(draft_document(list(CASES),
                                                                              {"r.pdf": 5}))

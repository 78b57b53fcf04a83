"""CaseOutcome's optional `passages` field: what an HTTP or callable engine may report."""

from __future__ import annotations

import pytest

from ragspine_eval.engines.base import CaseOutcome, OutcomeError, outcome_problem


def test_passages_are_optional_and_none_means_not_observed():
    assert CaseOutcome.from_dict({}).passages is None
    assert CaseOutcome.from_dict({"passages": []}).passages == []
    given = [{"doc": "A.pdf", "locator": "A.pdf@page=3#p1", "chunk_id": "c1",
              "scores": {"bm25": 1.5, "vector": None}, "text": "x", "page": 3},
             {"doc": "B.pptx", "extra": "ignored"}]
    assert CaseOutcome.from_dict({"passages": given}).passages == given


@pytest.mark.parametrize("bad", [
    [{"locator": "no doc"}], [{"doc": 3}], [{"doc": "a", "page": -1}], [{"doc": "a", "page": True}],
    [{"doc": "a", "scores": {"bm25": "high"}}], [{"doc": "a", "scores": [1]}], "not a list",
    [["doc"]],
])
def test_a_malformed_passage_is_an_error_naming_the_field(bad):
    with pytest.raises(OutcomeError, match="field 'passages'"):
        CaseOutcome.from_dict({"passages": bad})
    assert "passages" in outcome_problem(CaseOutcome(passages=bad))

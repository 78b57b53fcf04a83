"""Issue 23 (run_eval at a million cells): the claims most cells make ("no tag", "not merged")
are built once and shared. The report must be the one a run with a fresh dict per claim gives,
byte for byte, and the shared claims must come out of any run unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from benchmarks.extraction import synthetic

from ragspine_eval.extraction import claims
from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
from ragspine_eval.extraction.records import load_ground_truth
from ragspine_eval.extraction.scoring import run_eval


def _fresh_color(record: Any) -> dict[str, str]:  # the claims as they were before sharing
    tags = record.get("tags")
    return dict(sorted(tags.items())) if tags else {}


def _fresh_header(record: Any) -> dict[str, Any]:
    span, origin = record.get("merge_span"), record.get("is_merged_origin")
    return {"is_merged_origin": span is not None if origin is None else origin,
            "merge_span": claims.jsonable(span) if span is not None else None}


def _report_text(facts: list, truth: dict) -> str:
    return json.dumps(run_eval(facts, truth).to_dict(), sort_keys=True, ensure_ascii=False)


def _inputs() -> list[tuple[str, list, dict]]:
    facts, cells = synthetic(3000)
    runs = [("synthetic", facts, {"document": "synthetic", "cells": cells,
                                  "scope": {"sheets": ["Sheet0"]}})]
    for key, doc_set in DOCUMENT_SETS.items():
        truth = load_ground_truth(doc_set.ground_truth_path())
        runs.append((key, [{k: v for k, v in c.items() if k != "feature"}
                           for c in truth["cells"]], truth))
    return runs


@pytest.mark.parametrize(("name", "facts", "truth"), _inputs(), ids=lambda v: v if
                         isinstance(v, str) else "")
def test_shared_claims_give_the_report_fresh_claims_give(monkeypatch, name, facts, truth):
    shared = _report_text(facts, truth)
    monkeypatch.setattr(claims, "color_claim", _fresh_color)
    monkeypatch.setattr(claims, "header_claim", _fresh_header)
    monkeypatch.setitem(claims.CLAIMS, "color_mapping", _fresh_color)
    monkeypatch.setitem(claims.CLAIMS, "header_attribution", _fresh_header)
    assert _report_text(facts, truth) == shared


def test_a_run_leaves_the_shared_claims_as_they_were():
    facts, cells = synthetic(500)
    report = run_eval(facts, {"cells": cells})
    assert claims.NO_TAGS == {}
    assert claims.NOT_MERGED == {"is_merged_origin": False, "merge_span": None}
    assert any(s.expected is claims.NOT_MERGED for s in report.cells)  # they are shared

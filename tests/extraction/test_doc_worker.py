"""The engine reads a user's document in a worker: the same facts as in this process, and every
limit it hits (positions, memory, time) is one DocumentFailure naming the document and the
limit, never this process's memory."""

from __future__ import annotations

import pytest
from hostile_documents import SHEET, hostile_xlsx

from ragspine_eval import paths
from ragspine_eval.extraction.adapter import extract
from ragspine_eval.extraction.doc_worker import DocLimits, DocumentFailure, extract_bounded
from ragspine_eval.extraction.run import ExtractionRun

FIXTURE = paths.FIXTURES_DIR / "product_lines.xlsx"


def test_the_worker_gives_the_facts_the_engine_gives_in_process():
    bounded = extract_bounded(FIXTURE, "xlsx")
    here = extract(FIXTURE, "xlsx")
    assert bounded.facts == here.facts and bounded.describe() == here.describe()


@pytest.mark.parametrize(("limits", "limit", "says"), [
    (DocLimits(), "size", f"sheet {SHEET!r}: its used range A1:XFD1048576 spans"),
    (DocLimits(memory_mb=320, max_positions=10 ** 12), "memory", "320 MiB"),
    (DocLimits(timeout_s=0.5, max_positions=10 ** 12), "time", "0.5 s time limit"),
])
def test_each_limit_fails_the_document_naming_it(tmp_path, limits, limit, says):
    doc = hostile_xlsx(tmp_path / "far.xlsx", far_cell=True)
    with pytest.raises(DocumentFailure) as caught:
        extract_bounded(doc, limits=limits)
    assert caught.value.limit == limit and str(caught.value).startswith(f"{doc}: ")
    assert says in str(caught.value)
    assert caught.value.to_dict() == {"document": "far.xlsx", "limit": limit,
                                      "reason": str(caught.value)}


def test_a_document_that_will_not_open_is_the_engines_own_words(tmp_path):
    (tmp_path / "q.xlsx").write_bytes(b"no zip")
    with pytest.raises(DocumentFailure, match="the engine could not open this xlsx") as caught:
        extract_bounded(tmp_path / "q.xlsx")
    assert caught.value.limit == "open"


def test_failures_kept_apart_round_trip_through_the_report():
    failure = {"document": "far.xlsx", "limit": "size", "reason": "far.xlsx: sheet 'data'"}
    run = ExtractionRun({}, failures={"far.xlsx": failure})
    data = run.to_dict()
    assert data["failures"] == {"far.xlsx": failure}
    assert ExtractionRun.from_dict(data).failures == {"far.xlsx": failure}
    assert "failures" not in ExtractionRun({}).to_dict()  # a clean run's report is unchanged

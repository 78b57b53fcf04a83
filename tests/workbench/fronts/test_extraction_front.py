"""The extraction notebook's documents: parameters resolved as the CLI resolves its flags, a
document the run fails on kept apart (an error, never a verdict) while the others are scored
and reported, and the notebook's gate (workbench.assert_gate, every gated notebook's)."""

from __future__ import annotations

import json
import shutil

import pytest

from ragspine_eval import paths, workbench
from ragspine_eval.extraction.run import Target
from ragspine_eval.ratchet import BaselineError
from ragspine_eval.workbench.fronts.extraction import (
    ExtractionNotebookRun,
    NotebookParameterError,
    empty_run,
    gated_apart,
    notebook_targets,
)

XLSX = Target.fixture("xlsx")
PPTX = Target.fixture("pptx")


def test_parameters_resolve_as_the_cli_flags_do(tmp_path):
    targets, baseline = notebook_targets("pptx", None, None)
    assert [t.key for t in targets] == ["pptx"] and baseline == paths.EXTRACTION_BASELINE
    own, none = notebook_targets("all", None, None, doc=XLSX.document, ground_truth=XLSX.ground_truth)
    assert [t.key for t in own] == ["product_lines.xlsx"] and none is None
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"baseline": "b.json", "documents": [
        {"document": str(XLSX.document), "ground_truth": str(XLSX.ground_truth)},
        {"document": str(PPTX.document), "ground_truth": str(PPTX.ground_truth)}]}), "utf-8")
    listed, stated = notebook_targets("all", None, None, manifest=manifest)
    assert [t.key for t in listed] == ["product_lines.xlsx", "product_review.pptx"]
    assert stated == tmp_path / "b.json"
    assert notebook_targets("all", None, tmp_path / "x.json", manifest=manifest)[1] == \
        tmp_path / "x.json"  # baseline_path wins, as --baseline does


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"manifest": "m.json", "doc": "a.xlsx"}, "leave doc at None"),
    ({"doc": "a.xlsx"}, "needs ground_truth"),
    ({"doc": "a.xlsx", "ground_truth": "nope.json"}, "nope.json: no such file"),
])
def test_parameters_that_name_no_one_set_of_documents_are_refused(kwargs, said):
    with pytest.raises(NotebookParameterError, match=said):
        notebook_targets("all", None, None, **kwargs)


def broken(tmp_path) -> Target:
    doc = tmp_path / "broken.xlsx"
    doc.write_text("not a workbook", encoding="utf-8")
    truth = tmp_path / "broken_truth.json"
    shutil.copy(XLSX.ground_truth, truth)
    data = json.loads(truth.read_text(encoding="utf-8"))
    truth.write_text(json.dumps({**data, "document": "broken.xlsx"}), encoding="utf-8")
    return Target.own(doc, truth)


def test_a_document_the_run_fails_on_is_kept_apart_and_the_others_are_reported(tmp_path):
    report = tmp_path / "report.json"
    bad = broken(tmp_path)
    gated, failures = gated_apart([XLSX, bad, PPTX], None, paths.EXTRACTION_BASELINE, report)
    assert list(failures) == ["broken.xlsx"] and "could not open" in failures["broken.xlsx"]
    assert list(gated.report.reports) == ["xlsx", "pptx"]
    assert set(json.loads(report.read_text(encoding="utf-8"))["documents"]) == {"xlsx", "pptx"}
    alone, only = gated_apart([bad], None, None, tmp_path / "alone.json")
    assert alone is None and list(only) == ["broken.xlsx"]


def test_an_error_in_the_runs_own_files_is_raised_not_blamed_on_a_document(tmp_path):
    bad_baseline = tmp_path / "baseline.json"
    bad_baseline.write_text("{not json", encoding="utf-8")
    with pytest.raises(BaselineError):
        gated_apart([XLSX, PPTX], None, bad_baseline, tmp_path / "r.json")


def test_the_gate_fails_on_a_failed_document_a_missing_baseline_when_required_and_a_regression(
        tmp_path):
    ex = workbench.run_extraction("pptx", None, None, tmp_path / "r.json")
    assert workbench.assert_gate(ex) == "pptx: no regression against the baseline"
    ex.failures["broken.xlsx"] = "the engine could not open it"
    with pytest.raises(AssertionError, match=r"broken.xlsx: FAIL because the run failed on this "
                                             r"document \(neither pass nor regression\): the "
                                             r"engine could not open it"):
        workbench.assert_gate(ex)
    own = workbench.run_extraction("all", None, None, tmp_path / "own.json",
                                   doc=XLSX.document, ground_truth=XLSX.ground_truth)
    assert own.comparisons == {"product_lines.xlsx": None}
    assert workbench.assert_gate(own) == ("product_lines.xlsx: no baseline yet; nothing to "
                                          "compare (record one with the CLI)")
    with pytest.raises(AssertionError, match=r"product_lines.xlsx: no baseline entry, and "
                                             r"require_baseline is set; record one with the "
                                             r"CLI: ragspine-eval extraction"):
        workbench.assert_gate(own, require_baseline=True)


def test_every_regressed_set_and_failed_document_is_named_in_one_error(tmp_path):
    from builders import gate_comparison

    ex = ExtractionNotebookRun(empty_run(), tmp_path / "r.json", None, {},
                               {"xlsx": gate_comparison(0.0), "pptx": gate_comparison(1.0),
                                "pdf": gate_comparison(0.0)}, failures={"far.xlsx": "too big"})
    with pytest.raises(AssertionError) as failed:
        workbench.assert_gate(ex)
    lines = str(failed.value).splitlines()
    assert lines[0].startswith("far.xlsx: FAIL because the run failed on this document")
    assert {"xlsx: the baseline gate failed", "pdf: the baseline gate failed"} <= set(lines)
    assert "REGRESSION [xlsx] g: 1.0000 -> 0.0000 (-1)" in lines
    assert "REGRESSION [pdf] g: 1.0000 -> 0.0000 (-1)" in lines
    assert not any("[pptx]" in line or line.startswith("pptx") for line in lines)
    # every document failed: nothing scored, and the gate still fails
    alone = ExtractionNotebookRun(empty_run(), tmp_path / "r.json", None, {}, {},
                                  failures={"far.xlsx": "too big"})
    with pytest.raises(AssertionError, match="far.xlsx: FAIL because the run failed"):
        workbench.assert_gate(alone)

"""`ragspine-eval notebooks --doc/--ground-truth` and `--manifest`: only the extraction report of
one's own documents, rendered to HTML, its exit code the gate's; flags that do not go together
exit 2 before anything runs."""

from __future__ import annotations

import json

import pytest

from ragspine_eval import paths
from ragspine_eval.cli import main

XLSX = paths.FIXTURES_DIR / "product_lines.xlsx"
TRUTH = paths.FIXTURES_DIR / "fixtures_ground_truth.json"
PPTX = paths.FIXTURES_DIR / "pptx" / "product_review.pptx"
PPTX_TRUTH = paths.FIXTURES_DIR / "pptx" / "pptx_ground_truth.json"


def test_a_manifest_renders_one_extraction_report(tmp_path, capsys):
    manifest = tmp_path / "suite.json"
    manifest.write_text(json.dumps({"documents": [
        {"document": str(XLSX), "ground_truth": str(TRUTH)},
        {"document": str(PPTX), "ground_truth": str(PPTX_TRUTH)}]}), encoding="utf-8")
    code = main(["notebooks", "--out", str(tmp_path / "out"), "--manifest", str(manifest)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "[1/1] extraction_suite: extraction.ipynb manifest=" in printed
    html = (tmp_path / "out" / "extraction_suite.html").read_text(encoding="utf-8")
    assert html.count('class="rse-verdict ') == 2 and "qa_tool" not in printed
    report = json.loads((tmp_path / "out" / "extraction_suite.json").read_text(encoding="utf-8"))
    assert set(report["documents"]) == {"product_lines.xlsx", "product_review.pptx"}


def test_require_baseline_fails_a_document_without_one(tmp_path, capsys):
    code = main(["notebooks", "--out", str(tmp_path), "--doc", str(XLSX), "--ground-truth",
                 str(TRUTH), "--require-baseline"])
    printed = capsys.readouterr().out
    assert code == 1 and "FAILED extraction_product_lines.xlsx" in printed
    assert "no baseline entry, and require_baseline is set" in printed


@pytest.mark.parametrize("args", [["--doc", str(XLSX)], ["--ground-truth", str(TRUTH)],
                                  ["--manifest", "m.json", "--doc", str(XLSX)],
                                  ["--baseline", "b.json"]])
def test_flags_that_do_not_go_together_exit_2(tmp_path, capsys, args):
    code = main(["notebooks", "--out", str(tmp_path), *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.startswith("error: --")

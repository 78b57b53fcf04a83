"""`ragspine-eval notebooks --doc/--ground-truth` and `--manifest`: only the extraction report of
one's own documents, rendered to HTML, its exit code the gate's; flags that do not go together
exit 2 before anything runs. `--render`: a notebook papermill ran elsewhere (CI's compare
against main) rendered as the main job's reports are, or exit 2 naming the file."""

from __future__ import annotations

import json

import nbformat
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


def failed_gate_notebook(path):
    """An output notebook as papermill leaves one whose last cell's gate raised."""
    nb = nbformat.v4.new_notebook()
    banner = nbformat.v4.new_markdown_cell("An Exception was encountered at 'In [2]'.")
    banner.metadata["tags"] = ["papermill-error-cell-tag"]
    gate = nbformat.v4.new_code_cell("print(compare.assert_no_flips(pair))")
    gate.outputs = [nbformat.v4.new_output("error", ename="AssertionError",
                                           evalue="FAIL: 1 case went from pass to fail: num-001",
                                           traceback=["Traceback (most recent call last)"])]
    nb.cells = [banner, gate]
    nbformat.write(nb, path)
    return path


def test_render_writes_the_html_beside_the_notebook_with_the_gate_as_its_message(tmp_path, capsys):
    notebook = failed_gate_notebook(tmp_path / "compare_main_tool.ipynb")
    code = main(["notebooks", "--render", str(notebook)])
    html = tmp_path / "compare_main_tool.html"
    assert code == 0 and capsys.readouterr().out.strip() == str(html)
    text = html.read_text(encoding="utf-8")
    assert "FAIL: 1 case went from pass to fail: num-001" in text
    assert "An Exception was encountered" not in text and "Traceback" not in text


@pytest.mark.parametrize("content", [None, "not a notebook {"])
def test_render_of_a_missing_or_broken_notebook_exits_2_naming_it(tmp_path, capsys, content):
    notebook = tmp_path / "compare_main_tool.ipynb"
    if content is not None:
        notebook.write_text(content, encoding="utf-8")
    code = main(["notebooks", "--render", str(notebook)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"error: {notebook}: ")
    assert not (tmp_path / "compare_main_tool.html").exists()


def test_render_goes_with_no_flag_of_ones_own_documents(tmp_path, capsys):
    code = main(["notebooks", "--render", str(tmp_path / "x.ipynb"), "--doc", str(XLSX),
                 "--ground-truth", str(TRUTH)])
    assert code == 2 and "--render renders one output notebook" in capsys.readouterr().err

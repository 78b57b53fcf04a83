"""notebooks/compare.ipynb and notebooks/history.ipynb end to end: papermill as a PR gate on two
real `ragspine-eval qa` runs (an engine double that answers one case wrong in the second run),
both directions and the same run twice, the store's default pair; the rendered HTML in headless
Chromium with the network cut: the verdict first, live charts, a click on a chart cell that
filters the flip table, a row that opens the case with both runs; history with its defaults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from browser import offline_page
from builders import stored_qa_run

from ragspine_eval import paths
from ragspine_eval.workbench.rendering.notebooks import NOTEBOOKS_DIR, NotebookRun, execute, render_html

PAPERMILL = [sys.executable, "-m", "papermill", "--no-progress-bar"]
WRONG = "num-001"  # the first case of the committed golden set: numeric, Chinese question


@pytest.fixture
def two_runs(tmp_path):
    """(A, B): B answers WRONG wrong where A answered it right; both in the run store."""
    return stored_qa_run(tmp_path, "a"), stored_qa_run(tmp_path, "b", wrong=WRONG)


def papermill(tmp_path: Path, *params: str, notebook: str = "compare") -> tuple[int, Path]:
    out = tmp_path / f"{notebook}-out.ipynb"
    proc = subprocess.run([*PAPERMILL, f"notebooks/{notebook}.ipynb", str(out), *params],
                          cwd=paths.PROJECT_ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    return proc.returncode, out


def last_output(out: Path) -> str:
    cell = nbformat.read(out, as_version=4).cells[-1]
    return "".join(o.get("text", "") + o.get("evalue", "") for o in cell.outputs)


def test_a_case_that_went_wrong_fails_papermill_naming_it(tmp_path, two_runs):
    a, b = two_runs
    code, out = papermill(tmp_path, "-p", "before", str(a), "-p", "after", str(b))
    assert code != 0
    error = next(o for o in nbformat.read(out, as_version=4).cells[-1].outputs
                 if o["output_type"] == "error")
    assert error["ename"] == "AssertionError"
    assert f"FAIL: 1 case went from pass to fail: {WRONG}" in error["evalue"]
    assert f"numeric_accuracy: {WRONG}" in error["evalue"]


@pytest.mark.parametrize("direction", ["same run twice", "fail to pass"])
def test_the_same_run_twice_and_the_fixed_direction_pass(tmp_path, two_runs, direction):
    a, b = two_runs
    before = a if direction == "same run twice" else b
    code, out = papermill(tmp_path, "-p", "before", str(before), "-p", "after", str(a))
    assert code == 0
    text = last_output(out)
    assert text.rstrip().endswith("PASS: no case went from pass to fail")
    assert (f"1 case went from fail to pass: {WRONG}" in text) == (direction == "fail to pass")


def test_with_no_parameters_it_compares_the_two_newest_stored_runs(tmp_path, two_runs):
    code, out = papermill(tmp_path)
    assert code != 0 and f"went from pass to fail: {WRONG}" in last_output(out)


def test_history_runs_with_its_defaults_on_an_empty_store(tmp_path):
    code, out = papermill(tmp_path, notebook="history")
    assert code == 0
    html = "".join(o.get("data", {}).get("text/html", "")
                   for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"
                   for o in c.outputs)
    assert "QA gates over time" in html and "The run store holds no run yet" in html


# --- the HTML in Chromium, offline ---------------------------------------------------------------


@pytest.fixture
def compare_html(tmp_path, two_runs):
    a, b = two_runs
    run = NotebookRun("compare", NOTEBOOKS_DIR / "compare.ipynb",
                      {"before": str(a), "after": str(b)}, tmp_path / "html")
    execute(run)
    assert run.error and "AssertionError" in run.error
    return render_html(run)


def shown(page) -> list[str]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('.rse-compare tr.rse-row'))
        .filter(r => !r.hidden).map(r => r.dataset.id + ' ' + r.dataset.gate)""")


def click_cell(page, gate: str, bucket: str) -> None:
    cell = page.locator(f'.rse-compare path[aria-label^="gate: {gate}; tag value: {bucket};"]')
    cell.first.scroll_into_view_if_needed()
    box = cell.first.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def test_the_compare_report_opens_with_the_verdict_and_draws_live_charts(compare_html):
    text = compare_html.read_text(encoding="utf-8")
    assert "Traceback" not in text and "An Exception was encountered" not in text
    with offline_page(compare_html) as seen:
        body = seen.page.inner_text("body").lstrip()
        assert body.startswith("FAIL: 1 case went from pass to fail")
        assert f"1 pass → fail ({WRONG})" in seen.page.inner_text(".rse-verdict")
        charts = seen.page.evaluate("""() => Array.from(document.querySelectorAll('.rse-chart'))
            .map(c => !!c.dataset.live && !!c.querySelector('svg'))""")
        assert charts and all(charts)
        assert seen.network == [] and seen.errors == []


def test_a_click_on_a_chart_cell_filters_the_flip_table_and_a_row_opens_both_runs(compare_html):
    with offline_page(compare_html) as seen:
        page = seen.page
        assert shown(page) == [f"{WRONG} numeric_accuracy"]
        click_cell(page, "citation_validity", "scope=ACME_HK")  # a cell without a flip
        assert shown(page) == []
        assert "Showing 0 of 1 flipped verdicts" in page.inner_text(".rse-filter-status")
        click_cell(page, "numeric_accuracy", "scope=ACME_HK")
        assert shown(page) == [f"{WRONG} numeric_accuracy"]
        page.locator(".rse-compare tr.rse-row td").first.click()
        slot = page.locator(f'.rse-case-slot[data-case="{WRONG}"]')
        assert slot.is_visible()
        sides = slot.locator(".rse-case-sides > div")
        assert "Answer (before)" in sides.nth(0).inner_text()
        assert "Answer (after)" in sides.nth(1).inner_text()
        assert "FAIL numeric_accuracy" in sides.nth(1).inner_text()
        marked = page.locator(".rse-compare tr.rse-row ins").first.inner_text()
        assert marked and marked in sides.nth(1).inner_text()
        assert seen.errors == []

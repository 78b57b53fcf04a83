"""The extraction explorer in the offline HTML report, in a real headless Chromium with the network
cut: the notebook pointed at a document of one's own (`doc`, `ground_truth`) with a baseline
raised above reach fails and opens on FAIL with the regressed channel; a click on a chart mark
keeps exactly that mark's cells; a row opens the cell's view with its neighbours' values, read
from the document. With `manifest`, one report holds a banner per document.

The document is the fixture workbook, and ../shared/realdocs/49273.xlsx where that folder exists
(RAGSPINE_EVAL_SHARED names another ../shared); its ground truth is a copy of a reviewed one with
two expected values changed, so that two cells are wrong: one was right at baseline (it flips),
one was wrong then too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from browser import offline_page

from ragspine_eval import paths
from ragspine_eval.extraction.readers import read_document
from ragspine_eval.workbench.rendering.notebooks import NOTEBOOKS_DIR, NotebookRun, run_all

SHARED = Path(os.environ.get("RAGSPINE_EVAL_SHARED", paths.PROJECT_ROOT.parent / "shared"))
REALDOCS = SHARED / "realdocs"
TRUTHS = paths.PROJECT_ROOT / "tests" / "fixtures" / "realdocs_truth"
FIXTURE_TRUTH = paths.FIXTURES_DIR / "fixtures_ground_truth.json"
# (document, its reviewed ground truth, the cell that flips, the cell wrong at baseline too)
DOCUMENTS = {
    "fixture": (paths.FIXTURES_DIR / "product_lines.xlsx", FIXTURE_TRUTH, "Performance!C4",
                "Performance!D5"),
    "49273": (REALDOCS / "49273.xlsx", TRUTHS / "49273.xlsx.json", "Sheet1!D2", "Sheet1!C1"),
}


def wrong_truth(truth: Path, cells: list[str], out: Path) -> Path:
    """A copy of `truth` whose expected value of each of `cells` is off by one (or suffixed)."""
    data = json.loads(truth.read_text(encoding="utf-8"))
    for cell in data["cells"]:
        if f"{cell['sheet']}!{cell['cell_ref']}" in cells:
            value = cell["value"]
            cell["value"] = value + 1 if isinstance(value, int | float) else f"{value} (x)"
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def raised_baseline(document: Path, truth: Path, flipped: str, out: Path) -> Path:
    """Every rate of the run at 1.0, above reach, and `flipped` recorded as right."""
    from ragspine_eval.extraction.report import make_baseline_entry
    from ragspine_eval.extraction.run import Target, score_engine

    report = score_engine([Target.own(document, truth)]).reports[document.name]
    entry = make_baseline_entry(report)
    entry["metrics"] = {m: 1.0 for m in entry["metrics"]}
    entry["passed_ids"]["cell_value"] = sorted({*entry["passed_ids"]["cell_value"], flipped})
    out.write_text(json.dumps({document.name: entry}), encoding="utf-8")
    return out


@pytest.fixture(scope="module", params=list(DOCUMENTS))
def own_report(request, tmp_path_factory):
    document, truth, flipped, wrong_then = DOCUMENTS[request.param]
    if not document.exists():
        pytest.skip(f"{document} absent (../shared/realdocs)")
    out = tmp_path_factory.mktemp(f"own-{request.param}")
    truth = wrong_truth(truth, [flipped, wrong_then], out / "truth.json")
    baseline = raised_baseline(document, truth, flipped, out / "B.json")
    run = NotebookRun("own", NOTEBOOKS_DIR / "extraction.ipynb",
                      {"doc": str(document), "ground_truth": str(truth),
                       "baseline_path": str(baseline), "report_path": str(out / "own.json")}, out)
    [done] = run_all(out, runs=[run])
    return done, document, flipped, wrong_then


def shown(page) -> list[str]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('tr.rse-row'))
        .filter(r => !r.hidden).map(r => r.dataset.id.split(':').slice(1).join(':') + ' ' +
        r.dataset.channel)""")


def test_a_raised_baseline_fails_and_the_report_opens_on_fail_with_the_channel(own_report):
    done, document, flipped, _ = own_report
    assert not done.passed and "cell_value" in done.error  # papermill exited non-zero
    with offline_page(done.html, width=1280) as seen:
        body = seen.page.inner_text("body").lstrip()
        assert body.startswith(f"FAIL\n{document.name} · {document.name}")
        banner = " ".join(seen.page.inner_text(".rse-verdict").split())
        assert "cell_value: 100.0% →" in banner and "1 cell flipped" in banner
        seen.page.click("a.rse-show-cases")
        assert shown(seen.page) == [f"{flipped} cell_value"]
        assert seen.page.evaluate("document.documentElement.scrollWidth") <= 1280
        assert seen.network == [] and seen.errors == []


def test_a_chart_click_filters_and_a_row_shows_the_cells_neighbours(own_report):
    done, document, flipped, wrong_then = own_report
    sheet = flipped.split("!")[0]
    with offline_page(done.html, width=1280) as seen:
        page = seen.page
        assert sorted(shown(page)) == sorted([f"{flipped} cell_value", f"{wrong_then} cell_value"])
        first = page.locator("tr.rse-row").first
        assert first.get_attribute("class") == "rse-row rse-regressed"  # regressions first
        slot = page.locator(".rse-case-slot").first
        assert not slot.is_visible()
        # the mismatch bars: the sheet × channel mark of the two wrong cells
        bar = page.locator(f'.rse-explorer path[aria-label*="sheet: {sheet}; mismatches: 2"]')
        bar.first.scroll_into_view_if_needed()
        bar.first.click()
        assert len(shown(page)) == 2
        assert page.inner_text(".rse-filter-status").startswith("Showing 2 of 2")
        # the accuracy bars: a channel with no wrong cell keeps none
        page.locator('.rse-explorer path[aria-label*="channel: coverage; doc_set"]').first.click()
        assert shown(page) == []
        page.click(".rse-clear")
        assert len(shown(page)) == 2
        # the feature heatmap: the feature × channel cell of the flipped cell
        report = json.loads((done.out_dir / "own.json").read_text(encoding="utf-8"))
        cells = report["documents"][document.name]["cells"]
        feature = {f"{c['sheet']}!{c['cell_ref']}": c["feature"] or "(none)" for c in cells
                   if c["channel"] == "cell_value"}
        mark = page.locator(f'.rse-explorer path[aria-label^="channel: cell_value; document set '
                            f'· feature: {document.name} · {feature[flipped]};"]').first
        mark.scroll_into_view_if_needed()
        mark.click()
        assert shown(page) == [f"{c} cell_value" for c in (flipped, wrong_then)
                               if feature[c] == feature[flipped]]
        page.click(".rse-clear")
        page.locator(f'tr.rse-row[data-id="{document.name}:{flipped}"]').click()
        view = page.locator(f'.rse-case-slot[data-case="{document.name}:{flipped}"]')
        assert view.is_visible()
        grid = {c.get_attribute("data-ref"): c.inner_text() for c in
                view.locator("table.rse-cell-grid td:not(.rse-cell-covered)").all()}
        read = {g.sheet: g for g in read_document(document)[1]}[sheet]
        ref = flipped.split("!")[1]
        neighbours = {r: c for r, c in grid.items() if r != ref and c}
        assert len(neighbours) >= 3
        for r, text in neighbours.items():  # the values the document holds, not the report's
            assert text == str(read.cells[r].value)
        focus = view.locator("td.rse-cell-focus")
        assert focus.get_attribute("data-ref") == ref
        assert "wrong on cell_value" in view.inner_text()
        assert seen.network == [] and seen.errors == []


def test_a_manifest_renders_one_report_with_a_banner_per_document(tmp_path):
    truths = sorted(TRUTHS.glob("*.json"))
    entries = [{"document": str(REALDOCS / t.stem), "ground_truth": str(t)} for t in truths
               if (REALDOCS / t.stem).exists()]
    if len(entries) < 2:
        pytest.skip("../shared/realdocs absent")
    entries = entries[:3]
    manifest = tmp_path / "suite.json"
    manifest.write_text(json.dumps({"documents": entries}), encoding="utf-8")
    run = NotebookRun("suite", NOTEBOOKS_DIR / "extraction.ipynb",
                      {"manifest": str(manifest), "report_path": str(tmp_path / "suite_report.json")},
                      tmp_path)
    [done] = run_all(tmp_path, runs=[run])
    assert done.passed, done.error
    names = [Path(e["document"]).name for e in entries]
    with offline_page(done.html, width=1280) as seen:
        banners = [" ".join(b.split()) for b in seen.page.locator(".rse-verdict").all_inner_texts()]
        assert len(banners) == len(names)
        for banner, name in zip(banners, names, strict=True):
            assert banner.startswith(f"NO BASELINE {name} · {name}")
        assert seen.page.inner_text("body").lstrip().startswith("NO BASELINE")
        assert seen.network == [] and seen.errors == []


def test_a_document_the_engine_cannot_open_is_an_error_first_and_fails_the_run(tmp_path):
    doc = tmp_path / "broken.xlsx"
    doc.write_text("not a workbook", encoding="utf-8")
    truth = json.loads(FIXTURE_TRUTH.read_text(encoding="utf-8"))
    (tmp_path / "truth.json").write_text(json.dumps({**truth, "document": "broken.xlsx"}),
                                         encoding="utf-8")
    run = NotebookRun("broken", NOTEBOOKS_DIR / "extraction.ipynb",
                      {"doc": str(doc), "ground_truth": str(tmp_path / "truth.json"),
                       "report_path": str(tmp_path / "broken.json")}, tmp_path)
    [done] = run_all(tmp_path, runs=[run])
    assert not done.passed and "the run failed on this document" in done.error
    with offline_page(done.html, width=1280) as seen:
        body = seen.page.inner_text("body").lstrip()
        assert body.startswith("ERROR: THE RUN FAILED ON THIS DOCUMENT\nbroken.xlsx: ")
        assert "No verdict" in body and "PASS" not in body.split("Baseline gate")[0]
        assert "Traceback" not in body and seen.errors == []

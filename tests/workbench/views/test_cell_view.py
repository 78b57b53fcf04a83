"""The cell view of an extraction cell: its neighbourhood read from the document itself (an xlsx,
a pptx and a PDF fixture), each channel's expected and extracted, the legend entry, the header
path, the table, and the structure relations that differ; every text escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragspine_eval.extraction.readers import read_document
from ragspine_eval.extraction.report import make_baseline_entry
from ragspine_eval.extraction.run import Target, fixture_targets, score_engine
from ragspine_eval.extraction.scoring import run_eval
from ragspine_eval.workbench.views import cell_view


@pytest.fixture(scope="module")
def fixtures_run():
    return score_engine(fixture_targets("all"))


def grid_values(detail) -> dict[str, object]:
    return {c["ref"]: c["value"] for line in detail["grid"]["cells"] for c in line}


def test_an_xlsx_cell_in_its_sheet_with_its_fill_legend_entry_and_neighbours(fixtures_run):
    report = fixtures_run.reports["xlsx"]
    document = Target.fixture("xlsx").document
    detail = cell_view.cell_detail(report, "xlsx", "Performance!A4", document=document,
                                   stored=make_baseline_entry(report))
    read = {g.sheet: g for g in read_document(document)[1]}["Performance"]
    values = grid_values(detail)
    assert set(values) == {f"{c}{r}" for c in "ABC" for r in range(2, 7)}  # 2 on each side
    assert all(values[ref] == (read.cells[ref].value if ref in read.cells else None)
               for ref in values)
    assert detail["fill"] == "FFFF00" and detail["where"] == "sheet Performance"
    assert detail["legend"] == {"entry": "FFFF00 -> product_line=new (legend cell "
                                         "Performance!J2, confirmed)", "why": None}
    color = next(c for c in detail["channels"] if c["channel"] == "color_mapping")
    assert (color["expected"], color["actual"], color["correct"], color["at_baseline"]) == (
        "product_line=new", "product_line=new", True, "right then too")
    assert json.dumps(detail)  # JSON-safe


def test_a_header_cell_shows_the_merged_headers_above_it(fixtures_run):
    report = fixtures_run.reports["xlsx"]
    document = Target.fixture("xlsx").document
    detail = cell_view.cell_detail(report, "xlsx", "Performance!C3", document=document)
    assert detail["header_path"] == ["FY2025", "H1"]
    origin = cell_view.cell_detail(report, "xlsx", "Performance!B1", document=document)
    spans = {c["ref"]: c["span"] for line in origin["grid"]["cells"] for c in line}
    assert spans["B1"] == [1, 6] and spans["A1"] == [3, 1]
    html = cell_view.cell_html(origin)
    assert 'rowspan="3" colspan="1"' in html and "header path" in html


def test_a_pptx_cell_names_its_slide_and_table_and_why_no_legend_mapped_its_fill(fixtures_run):
    report = fixtures_run.reports["pptx"]
    detail = cell_view.cell_detail(report, "pptx", "slide1_table1!R3C1",
                                   document=Target.fixture("pptx").document)
    assert detail["where"] == "slide 1, table 1" and detail["fill"] == "FFFF00"
    assert detail["legend"]["entry"] is None and "detected no legend" in detail["legend"]["why"]
    wrong = [c for c in detail["channels"] if not c["correct"]]
    assert [c["channel"] for c in wrong] == ["color_mapping"]
    assert wrong[0]["expected"] == "product_line=new" and wrong[0]["actual"] == "(no tag)"
    assert grid_values(detail)["R4C1"] == "Beta Storage"
    assert detail["grid"]["cols"] == ["C1", "C2", "C3"]  # no column past the table's edge
    html = cell_view.cell_html(detail)
    assert "slide 1, table 1" in html and "wrong on color_mapping" in html


def test_a_pdf_cell_names_its_page_and_table(fixtures_run):
    report = fixtures_run.reports["pdf"]
    detail = cell_view.cell_detail(report, "pdf", "page1_table1!R3C2",
                                   document=Target.fixture("pdf").document)
    assert detail["where"] == "page 1, table 1"
    read = {g.sheet: g for g in read_document(Target.fixture("pdf").document)[1]}
    assert grid_values(detail)["R3C1"] == read["page1_table1"].cells["R3C1"].value
    assert detail["legend"]["entry"] is None and "no solid fill" in detail["legend"]["why"]


def test_a_cell_the_reader_cannot_place_or_a_missing_document_keeps_the_view(fixtures_run):
    report = fixtures_run.reports["pptx"]
    gone = cell_view.cell_detail(report, "pptx", "slide1_table1!R3C1",
                                 document=Path("/nonexistent/x.pptx"))
    assert gone["grid"] is None and "could not be read" in gone["grid_note"]
    assert gone["channels"]  # expected against extracted is still there
    facts = cell_view.cell_detail(report, "pptx", "slide1_table1!R3C1")
    assert facts["grid"] is None and "only facts were scored" in facts["grid_note"]


def test_a_large_workbook_is_read_only_around_the_cell(fixtures_run, monkeypatch):
    report = fixtures_run.reports["xlsx"]
    monkeypatch.setattr(cell_view, "LARGE_FILE", 0)
    detail = cell_view.cell_detail(report, "xlsx", "Performance!C4",
                                   document=Target.fixture("xlsx").document)
    assert set(grid_values(detail)) == {f"{c}{r}" for c in "ABCDE" for r in range(2, 7)}
    assert "merged spans are not shown" in detail["grid_note"]
    full = cell_view.cell_detail(report, "xlsx", "Performance!C4", cell_view.read_grids(
        Target.fixture("xlsx").document))
    assert grid_values(detail) == grid_values(full)  # the same values, fewer rows read


def test_structure_pairs_that_differ_are_listed_and_marked_in_the_grid(tmp_path):
    doc = Target.fixture("pptx").document
    grid = {g.sheet: g for g in read_document(doc)[1]}["slide1_table1"]
    truth_cells = [{"sheet": "slide1_table1", "cell_ref": ref, "value": c.value}
                   for ref, c in grid.cells.items() if c.value is not None]
    facts = [dict(c) for c in truth_cells]
    moved = next(f for f in facts if f["cell_ref"] == "R4C1")
    moved["value"] = "<b>Beta</b>"
    report = run_eval(facts, {"scope": {"tables": ["slide1_table1"]}, "cells": truth_cells},
                      document=doc.name)
    detail = cell_view.cell_detail(report, "own", "slide1_table1!R4C1", {grid.sheet: grid})
    table = detail["structure"]
    assert table["f1"] < 1 and {"from": "Alpha Cloud", "to": "Beta Storage",
                                "direction": "down", "count": 1} in table["missing"]
    marked = {c["ref"] for line in detail["grid"]["cells"] for c in line if c["differs"]}
    assert {"R3C1", "R4C1", "R5C1", "R4C2"} <= marked and "R1C2" not in marked
    html = cell_view.cell_html(detail)
    assert "lost: Alpha Cloud ↓ Beta Storage" in html
    assert "&lt;b&gt;Beta&lt;/b&gt;" in html and "<b>Beta</b>" not in html


def test_every_text_is_escaped_and_a_fill_is_drawn_only_as_rrggbb(fixtures_run):
    detail = cell_view.cell_detail(fixtures_run.reports["pptx"], "pptx", "slide1_table1!R3C1",
                                   document=Target.fixture("pptx").document)
    detail["grid"]["cells"][0][0].update(value="<script>x()</script>", fill="red;x:url(y)")
    detail["channels"][0]["expected"] = "<img src=x onerror=y>"
    html = cell_view.cell_html(detail)
    assert "<script>x()" not in html and "<img" not in html
    assert "&lt;script&gt;" in html
    styles = re.findall(r'<td[^>]* style="([^"]*)"', html)
    assert styles and all(re.fullmatch(r"background:#[0-9A-Fa-f]{6}", s) for s in styles)

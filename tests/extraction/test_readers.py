"""The independent readers stay bounded: they hold the cells a document has, refuse past
`max_cells()` naming the document, the sheet and the reason, and read a window of one sheet."""

from __future__ import annotations

import pytest
from hostile_documents import FAR_CORNER, NORMAL_CELLS, SHEET, hostile_xlsx
from pptx import Presentation
from pptx.util import Inches

from ragspine_eval import paths
from ragspine_eval.extraction.locators import parse_range
from ragspine_eval.extraction.readers import (
    MAX_CELLS_ENV,
    DocumentTooVast,
    read_document,
    read_window,
)
from ragspine_eval.extraction.records import ExtractionInputError


def test_a_far_cell_is_read_with_the_others_and_no_position_between(tmp_path):
    doc = hostile_xlsx(tmp_path / "far.xlsx", far_cell=True)
    _, [grid] = read_document(doc)
    assert (grid.n_rows, grid.n_cols) == (1_048_576, 16_384)
    assert {ref: c.value for ref, c in grid.cells.items()} == NORMAL_CELLS | {FAR_CORNER: "far"}


def test_a_vast_merge_is_refused_before_openpyxl_builds_it(tmp_path):
    doc = hostile_xlsx(tmp_path / "merge.xlsx", merge="A5:XFD1048576")
    with pytest.raises(DocumentTooVast) as caught:
        read_document(doc)
    assert (caught.value.document, caught.value.sheet) == (doc, SHEET)
    assert "A5:XFD1048576" in caught.value.reason and MAX_CELLS_ENV in str(caught.value)


def test_a_small_merge_still_covers_its_cells(tmp_path):
    _, [grid] = read_document(hostile_xlsx(tmp_path / "m.xlsx", merge="A1:B1"))
    assert grid.cells["B1"].covered and not grid.cells["A1"].covered
    assert grid.cells["A1"].merge_span == [1, 2]


def test_a_table_past_the_bound_is_refused_naming_it(tmp_path, monkeypatch):
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.shapes.add_table(20, 10, Inches(1), Inches(1), Inches(8), Inches(5))
    deck.save(tmp_path / "deck.pptx")
    monkeypatch.setenv(MAX_CELLS_ENV, "199")
    with pytest.raises(DocumentTooVast, match=r"'slide1_table1': the table has 20 rows x 10 "
                                              r"columns \(200 cells\), past the 199"):
        read_document(tmp_path / "deck.pptx")
    monkeypatch.setenv(MAX_CELLS_ENV, "200")
    assert len(read_document(tmp_path / "deck.pptx")[1][0].cells) == 200
    monkeypatch.setenv(MAX_CELLS_ENV, "many")
    with pytest.raises(ExtractionInputError, match=MAX_CELLS_ENV):
        read_document(tmp_path / "deck.pptx")


def test_a_window_holds_the_cells_inside_its_box_only():
    doc = paths.FIXTURES_DIR / "product_lines.xlsx"
    _, grids = read_document(doc)
    whole = grids[0]
    window = read_window(doc, whole.sheet, parse_range("B2:C5"))
    assert (window.n_rows, window.n_cols) == (whole.n_rows, whole.n_cols)
    assert window.cells and window.cells == {
        ref: cell for ref, cell in whole.cells.items()
        if ref[0] in "BC" and 2 <= int(ref[1:]) <= 5}
    with pytest.raises(ExtractionInputError, match="no sheet or table"):
        read_window(doc, whole.sheet.upper(), parse_range("A1:B2"))

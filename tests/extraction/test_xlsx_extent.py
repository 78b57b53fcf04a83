"""A sheet's extent read from its XML agrees with openpyxl's load, and reaches a vast sheet's
corner without building a cell."""

from __future__ import annotations

import warnings

import openpyxl
import pytest
from hostile_documents import SHEET, hostile_xlsx

from ragspine_eval import paths
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.xlsx_extent import area, sheet_extents

REALDOCS = paths.PROJECT_ROOT.parent / "shared" / "realdocs"
WORKBOOKS = [paths.FIXTURES_DIR / "product_lines.xlsx", *sorted(REALDOCS.glob("*.xlsx"))]


@pytest.mark.parametrize("doc", WORKBOOKS, ids=lambda p: p.name)
def test_the_extent_is_openpyxls_used_range_and_stored_cells(doc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        book = openpyxl.load_workbook(doc, data_only=True)
    extents = sheet_extents(doc)
    assert [e.title for e in extents] == book.sheetnames
    for extent, sheet in zip(extents, book.worksheets, strict=True):
        if extent.stored:  # openpyxl calls an empty sheet 1 x 1
            assert (extent.max_row, extent.max_col) == (sheet.max_row, sheet.max_column)
        assert len(extent.merges) == len(sheet.merged_cells.ranges)


def test_a_vast_sheet_is_measured_not_built(tmp_path):
    [far] = sheet_extents(hostile_xlsx(tmp_path / "f.xlsx", far_cell=True))
    assert (far.title, far.stored, far.used) == (SHEET, 5, 1_048_576 * 16_384)
    [merged] = sheet_extents(hostile_xlsx(tmp_path / "m.xlsx", merge="A5:XFD1048576"))
    assert merged.covered == 1_048_572 * 16_384 - 1 and merged.used == 1_048_576 * 16_384
    [cf] = sheet_extents(hostile_xlsx(tmp_path / "c.xlsx", conditional="A:A B2"))
    assert cf.conditional == [("A:A", 1_048_576), ("B2", 1)] and cf.used == 4


def test_areas_of_ranges_columns_rows_and_cells():
    assert area("B2:C4") == (6, 4, 3)
    assert area("3:3") == (16_384, 3, 16_384)
    assert area("XFD1048576") == (1, 1_048_576, 16_384)


def test_a_file_that_is_no_workbook_is_one_clear_error(tmp_path):
    (tmp_path / "x.xlsx").write_bytes(b"not a zip")
    with pytest.raises(ExtractionInputError, match="x.xlsx: cannot read the workbook's parts"):
        sheet_extents(tmp_path / "x.xlsx")

"""Hostile office documents for the fault tests, written into a test's tmp_path (never committed
as binaries): a workbook of about 1.5 KB whose sheet is vast but nearly empty, in three ways the
readers or the engine could walk position by position.

Each xlsx is the smallest valid SpreadsheetML package, written part by part with zipfile: a
helper that went through openpyxl could not write a vast merge (openpyxl's `merge_cells` itself
creates every cell under it).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

FAR_CORNER = "XFD1048576"  # the last cell Excel allows: 16,384 columns x 1,048,576 rows
SHEET = "data"
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml"
# a few normal cells: a header, a number, a text (inline strings: no shared-strings part needed)
NORMAL_CELLS = {"A1": "name", "B1": "amount", "A2": "north", "B2": 12.5}


def _cell(ref: str, value: object) -> str:
    if isinstance(value, str):
        return f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>'
    return f'<c r="{ref}"><v>{value}</v></c>'


def hostile_xlsx(path: Path, *, far_cell: bool = False, merge: str | None = None,
                 conditional: str | None = None) -> Path:
    """A workbook with NORMAL_CELLS on sheet `data` and, as asked, a cell "far" at XFD1048576,
    a merge over `merge` (e.g. "A5:XFD1048576") or a conditional format over `conditional`."""
    rows: dict[int, list[str]] = {}
    for ref, value in NORMAL_CELLS.items():
        rows.setdefault(int(ref[1:]), []).append(_cell(ref, value))
    if far_cell:
        rows.setdefault(1048576, []).append(_cell(FAR_CORNER, "far"))
    sheet_data = "".join(f'<row r="{r}">{"".join(cells)}</row>'
                         for r, cells in sorted(rows.items()))
    extra = f'<mergeCells count="1"><mergeCell ref="{merge}"/></mergeCells>' if merge else ""
    if conditional:
        extra += (f'<conditionalFormatting sqref="{conditional}"><cfRule type="cellIs" '
                  f'priority="1" operator="greaterThan"><formula>0</formula></cfRule>'
                  f'</conditionalFormatting>')
    parts = {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            f'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{_CT}.sheet.main+xml"/>'
            f'<Override PartName="/xl/worksheets/sheet1.xml" '
            f'ContentType="{_CT}.worksheet+xml"/></Types>'),
        "_rels/.rels": (
            f'<Relationships xmlns="{_PKG}"><Relationship Id="rId1" '
            f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'),
        "xl/workbook.xml": (
            f'<workbook xmlns="{_MAIN}" xmlns:r="{_REL}"><sheets><sheet name="{SHEET}" '
            f'sheetId="1" r:id="rId1"/></sheets></workbook>'),
        "xl/_rels/workbook.xml.rels": (
            f'<Relationships xmlns="{_PKG}"><Relationship Id="rId1" Type="{_REL}/worksheet" '
            f'Target="worksheets/sheet1.xml"/></Relationships>'),
        "xl/worksheets/sheet1.xml": (
            f'<worksheet xmlns="{_MAIN}"><sheetData>{sheet_data}</sheetData>{extra}</worksheet>'),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, xml in parts.items():
            archive.writestr(name, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                             + xml)
    return path


def far_cell_xlsx(path: Path) -> Path:
    """The issue's document: a few cells and one at XFD1048576."""
    return hostile_xlsx(path, far_cell=True)

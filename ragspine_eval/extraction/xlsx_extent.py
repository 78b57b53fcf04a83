"""How far each sheet of an xlsx reaches, read from its XML with a bounded streaming parser,
before any reader (openpyxl, or the engine) builds a cell.

openpyxl's normal load keeps only the cells a sheet stores, except under a merge: it creates a
MergedCell for every position a merge covers (`Worksheet._clean_merge_range`), so a 2 KB
workbook merging A5:XFD1048576 takes any machine's memory before a reader sees one cell. And
the engine's extractor walks every position of a sheet's used range and of each
conditional-format range. `sheet_extents(path)` gives, per sheet, what those walks would cost:
the cells it stores, its used range (the far corner of its cells and merges), each merge and
each conditional-format range with the positions it spans; the readers and the engine's worker
refuse a document on these numbers instead of finding out by running out of memory.

Invariants: memory stays constant in the size of a sheet (lxml `iterparse`, each element
cleared once read; entities never resolved, no network); nothing here imports the engine or
loads a workbook with openpyxl (only its pure `range_boundaries`); a part that is not valid
XML raises ExtractionInputError naming the document and the part.
"""

from __future__ import annotations

import posixpath
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ragspine_eval.extraction.records import ExtractionInputError

MAX_ROWS, MAX_COLS = 1_048_576, 16_384  # Excel's (and openpyxl's) largest sheet
_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"


@dataclass
class SheetExtent:
    """What one sheet holds and how far it reaches (positions are row x column counts)."""

    title: str
    part: str
    stored: int = 0  # <c> elements in its XML
    max_row: int = 0
    max_col: int = 0
    merges: list[tuple[str, int]] = field(default_factory=list)  # (A1:B2, positions)
    conditional: list[tuple[str, int]] = field(default_factory=list)  # (sqref token, positions)

    @property
    def used(self) -> int:
        """Positions of the used range A1:(max_col)(max_row): what openpyxl's iter_rows walks."""
        return self.max_row * self.max_col

    @property
    def covered(self) -> int:
        """Positions under merges, origins aside: the MergedCells openpyxl creates on load."""
        return sum(n - 1 for _, n in self.merges)


def area(token: str) -> tuple[int, int, int]:
    """(positions, last row, last column) of `A1:B2`, `A:A`, `3:3` or `B2`."""
    from openpyxl.utils.cell import range_boundaries

    c1, r1, c2, r2 = range_boundaries(token)
    c1, r1 = c1 or 1, r1 or 1
    c2, r2 = c2 or MAX_COLS, r2 or MAX_ROWS
    return (r2 - r1 + 1) * (c2 - c1 + 1), r2, c2


def sheet_extents(path: str | Path) -> list[SheetExtent]:
    """One SheetExtent per worksheet of the xlsx at `path`, in the workbook's order."""
    from lxml import etree

    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:
            sheets = _sheet_parts(archive, path)
            for extent in sheets:
                with archive.open(extent.part) as stream:
                    _scan(etree, stream, extent)
    except (zipfile.BadZipFile, KeyError, OSError, etree.XMLSyntaxError, ValueError) as exc:
        raise ExtractionInputError(f"{path}: cannot read the workbook's parts ({type(exc).__name__}"
                                   f": {str(exc).strip()[:200]}); is it a valid .xlsx file?"
                                   ) from None
    return sheets


def _sheet_parts(archive: zipfile.ZipFile, path: Path) -> list[SheetExtent]:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    book = etree.fromstring(archive.read("xl/workbook.xml"), parser)
    rels = etree.fromstring(archive.read("xl/_rels/workbook.xml.rels"), parser)
    targets = {r.get("Id"): r.get("Target", "") for r in rels.iter(f"{_PKG}Relationship")}
    sheets = []
    for sheet in book.iter(f"{_MAIN}sheet"):
        target = targets.get(sheet.get(_REL_ID), "")
        part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
            posixpath.join("xl", target))
        if part in archive.namelist():
            sheets.append(SheetExtent(sheet.get("name", ""), part))
    return sheets


def _scan(etree, stream, extent: SheetExtent) -> None:  # noqa: ANN001 - lxml's module
    row = col = 0
    tags = (f"{_MAIN}c", f"{_MAIN}row", f"{_MAIN}mergeCell", f"{_MAIN}conditionalFormatting")
    for event, elem in etree.iterparse(stream, events=("start", "end"), tag=tags,
                                       resolve_entities=False, no_network=True):
        tag = elem.tag[len(_MAIN):]
        if event == "start":
            if tag == "row":  # a row without r follows the one before it
                row, col = int(elem.get("r") or row + 1), 0
            continue
        if tag == "c":
            ref = elem.get("r")
            if ref:
                _, row, col = area(ref)
            else:  # a cell without r follows the one before it
                col += 1
            extent.stored += 1
            extent.max_row, extent.max_col = max(extent.max_row, row), max(extent.max_col, col)
            continue
        if tag == "mergeCell" and elem.get("ref"):
            n, r, c = area(elem.get("ref"))
            extent.merges.append((elem.get("ref"), n))
            extent.max_row, extent.max_col = max(extent.max_row, r), max(extent.max_col, c)
        elif tag == "conditionalFormatting":
            extent.conditional += [(t, area(t)[0]) for t in (elem.get("sqref") or "").split()]
        elem.clear()  # a row once read, with its cells: memory stays flat
        while elem.getprevious() is not None:
            del elem.getparent()[0]

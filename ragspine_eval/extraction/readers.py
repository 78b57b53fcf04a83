"""Readers of xlsx, pptx and pdf that are independent of the engine, in the engine's locators.

A ground truth must not be read back from the extractor it scores, so `truth draft` and
`truth check` see a document through other well-kept readers: openpyxl for xlsx (cached values,
fills, merges; a theme or indexed fill colour resolved by xlsx_colors), python-pptx for pptx
tables (cell text, merges) and pdfplumber for the tables of a PDF (its own table finder over
pdfminer.six; the engine has its own, over pypdfium2).

Each reader gives one `ReadGrid` per sheet, slide table or page table, named as the engine
names them: an xlsx sheet by its title with A1 cell references (`B2`); a pptx table
`slide{N}_table{M}` and a PDF table `page{N}_table{M}` (N and M 1-based, M counting the tables
of that slide or page in reading order) with `R{r}C{c}` references (1-based).

Conventions the harness shares with the engine (docs/extraction.md, "Conventions, per document type"): xlsx values are
the cached values of formulas, a date or time as ISO 8601 (`2010-03-21T00:00:00`); pptx and PDF
text is whitespace-collapsed (strip, then every run of whitespace one space); an empty cell's
value is None. A cell under a merge (not its origin) is `covered` and never a ground-truth cell.

Bounded (issue 23): a reader holds only the cells a document has, never the rectangle a sheet
spans, so an xlsx of 3 KB with one cell at XFD1048576 reads in milliseconds. openpyxl's normal
load is already sparse (it keeps the cells the sheet's XML holds); what is dense is
`Worksheet.iter_rows`, which creates every position up to max_row x max_column, so the xlsx
reader walks the cells openpyxl loaded instead. Every reader counts the cells it will hold (cells
stored, cells under a merge, every position of a pptx or PDF table) against `max_cells()`
(1,000,000 by default, RAGSPINE_EVAL_MAX_DOC_CELLS to change it) and, past it, raises
`DocumentTooVast` naming the document, the sheet and the reason, before it builds them; an
xlsx is counted from its XML (xlsx_extent.py) before openpyxl loads it, because openpyxl's load
creates a cell for every position a merge covers.

`read_window(path, sheet, bounds)` reads only the cells of one sheet or table inside a bounding
box (the cell view of the extraction explorer).

Invariant: a reader never imports the engine (tests/extraction/test_readers.py checks it).
"""

from __future__ import annotations

import datetime as dt
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.extraction.locators import column_letter, is_a1, position
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.xlsx_colors import Palette

READERS = {"xlsx": "openpyxl", "pptx": "python-pptx", "pdf": "pdfplumber"}
MAX_CELLS = 1_000_000  # cells a reader holds for one document (existing and under merges)
MAX_CELLS_ENV = "RAGSPINE_EVAL_MAX_DOC_CELLS"


class DocumentTooVast(ExtractionInputError):
    """A document whose sheet or table would make a reader hold more cells than `max_cells()`;
    `document`, `sheet` and `reason` are the message's parts."""

    def __init__(self, document: Path, sheet: str, reason: str):
        super().__init__(f"{document}: sheet or table {sheet!r}: {reason}")
        self.document, self.sheet, self.reason = document, sheet, reason


def max_cells() -> int:
    """The bound on the cells a reader holds for one document: MAX_CELLS, or the environment
    variable RAGSPINE_EVAL_MAX_DOC_CELLS when set (a positive integer)."""
    raw = os.environ.get(MAX_CELLS_ENV)
    if not raw:
        return MAX_CELLS
    if not raw.strip().isdigit() or int(raw) <= 0:
        raise ExtractionInputError(f"{MAX_CELLS_ENV}={raw[:40]!r}: expected a positive number "
                                   f"of cells")
    return int(raw)


class _Budget:
    """Counts the cells one document's reader will hold, refusing past `max_cells()`."""

    def __init__(self, path: Path):
        self.path, self.limit, self.used = path, max_cells(), 0

    def take(self, sheet: str, n: int, what: str) -> None:
        """Count `n` more cells of `sheet`; `what` says what they are, {n} standing for n."""
        self.used += n
        if self.used > self.limit:
            raise DocumentTooVast(
                self.path, sheet, f"{what.format(n=f'{n:,}')}, past the {self.limit:,} cells a "
                f"reader holds for one document; trim it in the document, or raise the bound with "
                f"{MAX_CELLS_ENV} if it is meant")


@dataclass(slots=True)
class ReadCell:
    """One cell as an independent reader sees it."""

    value: Any = None
    fill: str | None = None  # RRGGBB of a solid fill (xlsx: RGB, theme or indexed), else None
    merge_span: list[int] | None = None  # [rows, cols] on a merge's origin
    covered: bool = False  # under a merge, not its origin


@dataclass
class ReadGrid:
    """A sheet or a table: its name (the engine's `sheet`), size and cells by reference."""

    sheet: str
    n_rows: int
    n_cols: int
    cells: dict[str, ReadCell] = field(default_factory=dict)
    a1: bool = True  # A1 references (xlsx) or R{r}C{c} (pptx, pdf)

    def ref(self, row: int, col: int) -> str:
        return f"{column_letter(col)}{row}" if self.a1 else f"R{row}C{col}"

    def position(self, ref: str) -> tuple[int, int] | None:
        """(row, col) of a reference written exactly in this grid's convention, else None."""
        pos = position(ref)
        return pos if pos is not None and is_a1(ref) == self.a1 else None

    def exists(self, ref: str) -> bool:
        pos = self.position(ref)
        if pos is None:
            return False
        return self.a1 or (pos[0] <= self.n_rows and pos[1] <= self.n_cols)


def collapse(text: Any) -> Any:
    """The engine's whitespace rule for pptx and PDF text; None and "" stay None."""
    if text is None:
        return None
    text = " ".join(str(text).split())
    return text or None


def read_document(path: str | Path) -> tuple[str, list[ReadGrid]]:
    """(doc type, grids) of an xlsx, pptx or pdf; ExtractionInputError when it will not open."""
    from ragspine_eval.extraction.adapter import doc_type_of

    path = Path(path)
    doc_type = doc_type_of(path)
    if not path.is_file():
        raise ExtractionInputError(f"{path}: no such document")
    reader = {"xlsx": _read_xlsx, "pptx": _read_pptx, "pdf": _read_pdf}[doc_type]
    try:
        return doc_type, reader(path)
    except ExtractionInputError:
        raise
    except Exception as exc:  # each library raises its own types for a broken file
        raise ExtractionInputError(
            f"{path}: {READERS[doc_type]} could not open this {doc_type} ({type(exc).__name__}: "
            f"{str(exc).strip()[:200] or 'no detail'}); is it a valid .{doc_type} file?"
        ) from None


def read_window(path: str | Path, sheet: str, bounds: tuple[int, int, int, int]) -> ReadGrid:
    """The cells of one sheet or table of a document inside `bounds` (row1, col1, row2, col2,
    inclusive, 1-based; `locators.parse_range("B2:F20")` gives them), read by the same bounded
    readers as `read_document`; n_rows and n_cols stay the whole grid's. ExtractionInputError
    when the document has no such sheet or table (naming the nearest)."""
    from ragspine_eval.extraction.locators import sheet_hint

    path = Path(path)
    _, grids = read_document(path)
    by_name = {g.sheet: g for g in grids}
    if sheet not in by_name:
        raise ExtractionInputError(f"{path}: no sheet or table {sheet!r}; "
                                   f"{sheet_hint(sheet, by_name)}")
    grid = by_name[sheet]
    r1, c1, r2, c2 = bounds
    window = ReadGrid(grid.sheet, grid.n_rows, grid.n_cols, a1=grid.a1)
    for ref, cell in grid.cells.items():
        row, col = position(ref) or (0, 0)
        if r1 <= row <= r2 and c1 <= col <= c2:
            window.cells[ref] = cell
    return window


def _read_xlsx(path: Path) -> list[ReadGrid]:
    import openpyxl
    from openpyxl.cell.cell import MergedCell

    from ragspine_eval.extraction.xlsx_extent import sheet_extents

    budget = _Budget(path)
    # counted from the XML before openpyxl loads: its load creates every cell under a merge
    for extent in sheet_extents(path):
        budget.take(extent.title, extent.stored, "the sheet stores {n} cells")
        if extent.merges:
            largest = max(extent.merges, key=lambda m: m[1])[0]
            budget.take(extent.title, extent.covered,
                        f"its merges cover {{n}} cells (the largest {largest})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl warns of extensions it drops, not of values
        book = openpyxl.load_workbook(path, data_only=True)
    palette = Palette.of(book)
    grids = []
    for sheet in book.worksheets:
        grid = ReadGrid(sheet.title, sheet.max_row, sheet.max_column)
        origins: dict[tuple[int, int], list[int]] = {}
        ranges = sorted(sheet.merged_cells.ranges, key=lambda r: (r.min_row, r.min_col))
        for rng in ranges:
            origins[(rng.min_row, rng.min_col)] = [rng.max_row - rng.min_row + 1,
                                                   rng.max_col - rng.min_col + 1]
        # only the cells the sheet's XML holds (openpyxl keeps them by (row, col)); iter_rows
        # would create every position of the used range, 17 billion for one cell at XFD1048576
        stored = sheet._cells  # noqa: SLF001 - no public API lists the stored cells alone
        for pos in sorted(stored):
            cell = stored[pos]
            if isinstance(cell, MergedCell):  # recorded from the ranges
                continue
            value = _plain(cell.value)
            fill = palette.fill(cell)
            if (value is None or value == "") and fill is None and pos not in origins:
                continue
            grid.cells[cell.coordinate] = ReadCell(None if value == "" else value, fill,
                                                   origins.get(pos))
        for rng in ranges:
            for r in range(rng.min_row, rng.max_row + 1):
                for c in range(rng.min_col, rng.max_col + 1):
                    if (r, c) != (rng.min_row, rng.min_col):
                        grid.cells[grid.ref(r, c)] = ReadCell(covered=True)
        grids.append(grid)
    return grids


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return value


def _read_pptx(path: Path) -> list[ReadGrid]:
    from pptx import Presentation

    budget = _Budget(path)
    grids = []
    for slide_no, slide in enumerate(Presentation(str(path)).slides, start=1):
        table_no = 0
        for shape in slide.shapes:
            if not shape.has_table:
                continue
            table_no += 1
            table = shape.table
            n_rows, n_cols = len(table.rows), len(table.columns)
            grid = ReadGrid(f"slide{slide_no}_table{table_no}", n_rows, n_cols, a1=False)
            budget.take(grid.sheet, n_rows * n_cols, f"the table has {n_rows:,} rows x "
                        f"{n_cols:,} columns ({{n}} cells)")
            # row by row: table.cell(r, c) looks its row up anew on each call (a quadratic walk)
            for r, row in enumerate(table.rows):
                cells = list(row.cells)  # one walk of the row (indexing walks it each time)
                if len(cells) < n_cols:  # table.cell(r, c) would raise here too
                    raise IndexError(f"{grid.sheet}: row {r + 1} has {len(cells)} of the "
                                     f"table's {n_cols} columns")
                for c in range(n_cols):
                    cell = cells[c]
                    span = ([cell.span_height, cell.span_width] if cell.is_merge_origin
                            else None)
                    grid.cells[grid.ref(r + 1, c + 1)] = ReadCell(
                        collapse(cell.text), _pptx_fill(cell), span, cell.is_spanned)
            grids.append(grid)
    return grids


_SOLID_FILL = "{http://schemas.openxmlformats.org/drawingml/2006/main}solidFill"


def _pptx_fill(cell: Any) -> str | None:
    tc_pr = cell._tc.tcPr  # noqa: SLF001 - read as is: cell.fill adds a tcPr to every cell
    if tc_pr is None or tc_pr.find(_SOLID_FILL) is None:
        return None  # no solid fill (most cells), decided without building a FillFormat
    try:
        fill = cell.fill
        if fill.type != 1:  # MSO_FILL.SOLID
            return None
        return str(fill.fore_color.rgb).upper()
    except (AttributeError, TypeError, ValueError):
        return None  # a theme colour: python-pptx gives no RGB for it


def _read_pdf(path: Path) -> list[ReadGrid]:
    import pdfplumber

    budget = _Budget(path)
    grids = []
    with pdfplumber.open(str(path)) as pdf:
        for page_no, page in enumerate(pdf.pages, start=1):
            for table_no, table in enumerate(page.find_tables(), start=1):
                rows = table.extract()
                n_cols = max((len(r) for r in rows), default=0)
                grid = ReadGrid(f"page{page_no}_table{table_no}", len(rows), n_cols, a1=False)
                budget.take(grid.sheet, len(rows) * n_cols, f"the table has {len(rows):,} rows "
                            f"x {n_cols:,} columns ({{n}} cells)")
                for r, row in enumerate(rows, start=1):
                    for c, text in enumerate(row, start=1):
                        # pdfplumber gives None for a position a spanning cell covers
                        grid.cells[grid.ref(r, c)] = (ReadCell(collapse(text)) if text is not None
                                                      else ReadCell(covered=True))
                grids.append(grid)
    return grids

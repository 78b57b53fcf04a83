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

Conventions the harness shares with the engine (README, "Extraction harness"): xlsx values are
the cached values of formulas, a date or time as ISO 8601 (`2010-03-21T00:00:00`); pptx and PDF
text is whitespace-collapsed (strip, then every run of whitespace one space); an empty cell's
value is None. A cell under a merge (not its origin) is `covered` and never a ground-truth cell.

Invariant: a reader never imports the engine (tests/extraction/test_readers.py checks it).
"""

from __future__ import annotations

import datetime as dt
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.extraction.locators import column_letter, is_a1, position
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.xlsx_colors import Palette

READERS = {"xlsx": "openpyxl", "pptx": "python-pptx", "pdf": "pdfplumber"}


@dataclass
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


def _read_xlsx(path: Path) -> list[ReadGrid]:
    import openpyxl
    from openpyxl.cell.cell import MergedCell

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl warns of extensions it drops, not of values
        book = openpyxl.load_workbook(path, data_only=True)
    palette = Palette.of(book)
    grids = []
    for sheet in book.worksheets:
        grid = ReadGrid(sheet.title, sheet.max_row, sheet.max_column)
        covered: set[tuple[int, int]] = set()
        origins: dict[tuple[int, int], list[int]] = {}
        for rng in sheet.merged_cells.ranges:
            origins[(rng.min_row, rng.min_col)] = [rng.max_row - rng.min_row + 1,
                                                   rng.max_col - rng.min_col + 1]
            covered |= {(r, c) for r in range(rng.min_row, rng.max_row + 1)
                        for c in range(rng.min_col, rng.max_col + 1)} - {(rng.min_row, rng.min_col)}
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell, MergedCell):  # recorded from the ranges
                    continue
                value = _plain(cell.value)
                fill = palette.fill(cell)
                pos = (cell.row, cell.column)
                if (value is None or value == "") and fill is None and pos not in origins:
                    continue
                grid.cells[cell.coordinate] = ReadCell(None if value == "" else value, fill,
                                                       origins.get(pos))
        for r, c in covered:
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
            for r in range(n_rows):
                for c in range(n_cols):
                    cell = table.cell(r, c)
                    span = ([cell.span_height, cell.span_width] if cell.is_merge_origin
                            else None)
                    grid.cells[grid.ref(r + 1, c + 1)] = ReadCell(
                        collapse(cell.text), _pptx_fill(cell), span, cell.is_spanned)
            grids.append(grid)
    return grids


def _pptx_fill(cell: Any) -> str | None:
    try:
        fill = cell.fill
        if fill.type != 1:  # MSO_FILL.SOLID
            return None
        return str(fill.fore_color.rgb).upper()
    except (AttributeError, TypeError, ValueError):
        return None  # a theme colour: python-pptx gives no RGB for it


def _read_pdf(path: Path) -> list[ReadGrid]:
    import pdfplumber

    grids = []
    with pdfplumber.open(str(path)) as pdf:
        for page_no, page in enumerate(pdf.pages, start=1):
            for table_no, table in enumerate(page.find_tables(), start=1):
                rows = table.extract()
                n_cols = max((len(r) for r in rows), default=0)
                grid = ReadGrid(f"page{page_no}_table{table_no}", len(rows), n_cols, a1=False)
                for r, row in enumerate(rows, start=1):
                    for c, text in enumerate(row, start=1):
                        # pdfplumber gives None for a position a spanning cell covers
                        grid.cells[grid.ref(r, c)] = (ReadCell(collapse(text)) if text is not None
                                                      else ReadCell(covered=True))
                grids.append(grid)
    return grids

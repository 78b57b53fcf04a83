"""The cell view: one scored cell of an extraction run, shown where it lives in its document.

`cell_detail(...)` gathers it as a JSON-safe dict: the cell in a small grid of its neighbourhood
(RADIUS rows and columns around it: values, fills, merged spans) read from the document itself
by the engine-independent readers `truth draft` uses (extraction.readers), expected against
extracted on each channel with what the baseline said, the legend entry that mapped the cell's
fill (or why none did), the header path above a header_attribution cell, the table (slide,
page) of a pptx or PDF cell, and the table-structure score of its table with the adjacency
relations that differ. `cell_html(detail)` draws it.
Invariants: every text from a document, a ground truth or an extractor is escaped; a fill is
drawn only as a validated RRGGBB; a document that cannot be read leaves the grid out with the
reason, never the view; an xlsx larger than LARGE_FILE is read only in the neighbourhood's rows
and columns (openpyxl's streaming reader; its merged spans are then not known, and said so).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

from ragspine_eval import ratchet as bl
from ragspine_eval.extraction.locators import column_letter, position
from ragspine_eval.extraction.readers import ReadCell, ReadGrid, read_document
from ragspine_eval.extraction.report import EvalReport

RADIUS = 2  # rows and columns shown on each side of the cell
LARGE_FILE = 20 * 1024 * 1024  # bytes: an xlsx above this is read only around the cell
_HEX = re.compile(r"[0-9A-Fa-f]{6}\Z")
_TABLE = re.compile(r"(slide|page)(\d+)_table(\d+)\Z")
AT_BASELINE = {bl.PASSED_THEN: "passed (regression)", bl.FAILED_THEN: "wrong then too",
               bl.NEW_CASE: "new cell", bl.CHANGED_CASE: "ground truth changed",
               None: "not recorded"}


def at_baseline(state: str | None, correct: bool) -> str:
    """What the baseline said of a cell on a channel, as read beside its verdict now."""
    if correct and state in (bl.PASSED_THEN, bl.FAILED_THEN):
        return "right then too" if state == bl.PASSED_THEN else "wrong then (fixed now)"
    return AT_BASELINE[state]


def read_grids(document: str | Path) -> dict[str, ReadGrid] | str:
    """Every grid of a document by sheet name, or the reason it could not be read."""
    try:
        return {g.sheet: g for g in read_document(document)[1]}
    except Exception as exc:  # noqa: BLE001 - shown in the view instead of the grid
        return f"{type(exc).__name__}: {exc}"


def _xlsx_window(path: Path, sheet: str, rows: range, cols: range) -> ReadGrid:
    """Only the rows and columns of a large xlsx around a cell (no merged spans)."""
    import openpyxl

    from ragspine_eval.extraction.xlsx_colors import Palette

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        palette = Palette.of(book)
        ws = book[sheet]
        grid = ReadGrid(sheet, rows.stop - 1, cols.stop - 1)
        for row in ws.iter_rows(min_row=rows.start, max_row=rows.stop - 1,
                                min_col=cols.start, max_col=cols.stop - 1):
            for cell in row:
                if getattr(cell, "row", None) is None:
                    continue
                value = cell.value.isoformat() if hasattr(cell.value, "isoformat") else cell.value
                grid.cells[grid.ref(cell.row, cell.column)] = ReadCell(value, palette.fill(cell))
        return grid
    finally:
        book.close()


def where_of(sheet: str) -> str:
    """Where a grid is in its document, as a reader says it."""
    m = _TABLE.match(sheet)
    if m is None:
        return f"sheet {sheet}"
    return f"{m.group(1)} {m.group(2)}, table {m.group(3)}"


def show_value(value: Any) -> str:
    """A claim as a reader compares it: tags as k=v, anything else as JSON (text quoted)."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "(no tag)"
    return json.dumps(value, ensure_ascii=False, default=str)


def _legend(report: EvalReport, fill: str | None) -> dict[str, str | None]:
    """The legend entry that mapped `fill`, or why none did."""
    legend = report.extraction.get("legend") or {}
    if fill is None:
        return {"entry": None, "why": "the cell has no solid fill the reader could resolve, so "
                                      "no legend entry can map it"}
    stated = legend.get("stated")
    if stated:
        tags = stated.get(fill)
        return ({"entry": f"{fill} -> {show_value(tags)} (stated by the ground truth)",
                 "why": None}
                if tags else {"entry": None, "why": f"the ground truth's legend has no entry for "
                                                    f"fill {fill}"})
    for e in legend.get("confirmed", []):
        if str(e.get("rgb", "")).upper() == fill:
            return {"entry": f"{fill} -> {e.get('tag')} (legend cell {e.get('sheet')}!"
                             f"{e.get('source_ref')}, confirmed)", "why": None}
    for e in legend.get("not_confirmed", []):
        if str(e.get("rgb", "")).upper() == fill:
            return {"entry": None, "why": f"the engine detected {fill} -> {e.get('tag')} but the "
                                          f"harness did not confirm it"}
    if not legend:
        return {"entry": None, "why": "no legend was read for this document"}
    if not legend.get("detected"):
        return {"entry": None, "why": f"the engine detected no legend, so fill {fill} mapped "
                                      f"to no tag"}
    return {"entry": None, "why": f"fill {fill} is not among the legend's entries"}


def _header_path(grid: ReadGrid, row: int, col: int) -> list[str]:
    """The merged headers above the cell whose span covers its column, top down, then the
    cell itself when it is a merge's origin."""
    path = []
    for ref, cell in grid.cells.items():
        pos = grid.position(ref)
        if pos is None or cell.merge_span is None or pos[0] > row:
            continue
        rows, cols = cell.merge_span
        if pos[1] <= col < pos[1] + cols and (pos[0] < row or pos == (row, col)):
            path.append((pos[0], str(cell.value if cell.value is not None else "")))
    return [text for _, text in sorted(path)]


def _structure(report: EvalReport, sheet: str) -> dict[str, Any] | None:
    for table in (report.structure or {}).get("tables", []):
        if table["table"] == sheet or table["table"].startswith(f"{sheet}!"):
            return table
    return None


def _differs(grid: ReadGrid, table: dict[str, Any] | None) -> set[str]:
    """The cells of `grid` in a ground-truth relation the extraction lost or a relation it made
    up (compared by text, as the score is)."""
    if not table:
        return set()
    pairs = {(p["from"], p["to"], p["direction"]) for p in table["missing"] + table["extra"]}
    cells = {grid.position(ref): c.value for ref, c in grid.cells.items()
             if c.value is not None and grid.position(ref) is not None}
    hit: set[str] = set()
    by_row: dict[int, list[int]] = {}
    by_col: dict[int, list[int]] = {}
    for r, c in sorted(cells):
        by_row.setdefault(r, []).append(c)
        by_col.setdefault(c, []).append(r)
    for (r, c), value in cells.items():
        rights = [x for x in by_row[r] if x > c][:1]
        downs = [x for x in by_col[c] if x > r][:1]
        for other, direction in [((r, x), "right") for x in rights] + [((x, c), "down")
                                                                        for x in downs]:
            relation = (" ".join(str(value).split()), " ".join(str(cells[other]).split()),
                        direction)
            if relation in pairs:
                hit |= {grid.ref(r, c), grid.ref(*other)}
    return hit


def _window(grid: ReadGrid, row: int, col: int, radius: int, differs: set[str]
            ) -> dict[str, Any]:
    rows = range(max(1, row - radius), row + radius + 1)
    cols = range(max(1, col - radius), col + radius + 1)
    if not grid.a1:  # a table's size is known: no empty rows or columns past its edge
        rows = range(rows.start, min(rows.stop, grid.n_rows + 1))
        cols = range(cols.start, min(cols.stop, grid.n_cols + 1))
    cells = []
    for r in rows:
        line = []
        for c in cols:
            ref = grid.ref(r, c)
            cell = grid.cells.get(ref, ReadCell())
            line.append({"ref": ref, "value": cell.value, "fill": cell.fill,
                         "span": cell.merge_span, "covered": cell.covered,
                         "focus": (r, c) == (row, col), "differs": ref in differs})
        cells.append(line)
    labels = [column_letter(c) if grid.a1 else f"C{c}" for c in cols]
    return {"rows": [r if grid.a1 else f"R{r}" for r in rows], "cols": labels, "cells": cells}


def _channels(report: EvalReport, locator: str, scores: list[Any],
              stored: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The cell's verdict on each channel it was scored on: expected, extracted, right or
    wrong, the fixture feature, and what the baseline said of it."""
    then = bl.BaselineVerdicts(stored)
    return [{"channel": s.channel, "expected": show_value(s.expected),
             "actual": show_value(s.actual),
             "correct": s.correct, "feature": s.feature,
             "at_baseline": ("no baseline" if stored is None else at_baseline(
                 then.at(s.channel, locator, report.golden.get(locator)), s.correct))}
            for s in scores]


def _document_grids(path: Path, sheet: str, pos: tuple[int, int], radius: int
                    ) -> tuple[dict[str, ReadGrid] | str, bool]:
    """The grids a cell is shown in, read from its document, or why they could not be; and
    whether merged spans were read (not for a large xlsx, read only around the cell)."""
    if not (path.suffix.lower() == ".xlsx" and path.is_file()
            and path.stat().st_size > LARGE_FILE):
        return read_grids(path), True
    try:
        return {sheet: _xlsx_window(path, sheet, range(max(1, pos[0] - radius),
                                                       pos[0] + radius + 1),
                                    range(max(1, pos[1] - radius), pos[1] + radius + 1))}, False
    except Exception as exc:  # noqa: BLE001 - shown instead of the grid
        return f"{type(exc).__name__}: {exc}", True


def cell_detail(report: EvalReport, key: str, locator: str,
                grids: Mapping[str, ReadGrid] | str | None = None, *,
                document: str | Path | None = None, stored: dict[str, Any] | None = None,
                radius: int = RADIUS, scores: list[Any] | None = None) -> dict[str, Any]:
    """One cell of document set `key` whole (see the module docstring). `grids`: the
    document's grids (read_grids), or the reason it could not be read; None reads `document`
    here (only around the cell when it is a large xlsx). `scores`: the cell's CellScores, when
    the caller has them (else looked up in the report)."""
    sheet, _, ref = locator.rpartition("!")
    pos = position(ref)
    if scores is None:
        scores = [s for s in report.cells if s.sheet == sheet and s.cell_ref == ref]
    channels = _channels(report, locator, scores, stored)
    detail: dict[str, Any] = {
        "key": key, "document": report.document, "locator": locator, "sheet": sheet,
        "cell_ref": ref, "where": where_of(sheet), "channels": channels, "grid": None,
        "grid_note": None, "value": None, "fill": None, "legend": None, "header_path": None,
        "structure": None}
    table = _structure(report, sheet)
    if table is not None:
        detail["structure"] = {k: table[k] for k in ("table", "f1", "relations", "extracted",
                                                     "matched", "missing", "extra")
                               if k in table}
    merges_read = True
    if grids is None and document is not None and pos is not None:
        grids, merges_read = _document_grids(Path(document), sheet, pos, radius)
    if isinstance(grids, str):
        detail["grid_note"] = f"the document could not be read: {grids}"
    elif grids is None:
        detail["grid_note"] = "no document to read (only facts were scored)"
    elif pos is None or sheet not in grids:
        detail["grid_note"] = (f"the reader ({report.document or 'the document'}) has no "
                               f"{where_of(sheet)}; the extractor and the reader disagree on "
                               f"its tables")
    else:
        grid = grids[sheet]
        cell = grid.cells.get(ref, ReadCell())
        differs = _differs(grid, table) if merges_read else set()
        detail.update(grid=_window(grid, pos[0], pos[1], radius, differs),
                      value=show_value(cell.value), fill=cell.fill,
                      legend=_legend(report, cell.fill))
        if not merges_read:
            detail["grid_note"] = ("a large workbook: only these rows and columns were read, "
                                   "so merged spans are not shown")
        if any(c["channel"] == "header_attribution" for c in channels):
            detail["header_path"] = (_header_path(grid, *pos) if merges_read else None)
    return detail


STYLE = """<style>
.rse-cell-view{font-family:system-ui,sans-serif;font-size:12.5px}
.rse-cell-view h4{margin:4px 0 6px;font-size:1.15em}
.rse-cell-view table{border-collapse:collapse;margin:4px 0 8px}
.rse-cell-view td,.rse-cell-view th{text-align:left !important;vertical-align:top;padding:3px 6px;
 border:1px solid #ccc;overflow-wrap:anywhere;max-width:220px}
.rse-cell-view table.rse-cell-grid th{background:#f3f3f3;color:#555;font-weight:600}
.rse-cell-view td.rse-cell-focus{outline:3px solid #d73027;outline-offset:-3px;font-weight:700}
.rse-cell-view td.rse-cell-differs{box-shadow:inset 0 -4px 0 #e08a00}
.rse-cell-view td.rse-cell-covered{color:#777;
 background:repeating-linear-gradient(45deg,#f4f4f4,#f4f4f4 4px,#e8e8e8 4px,#e8e8e8 8px)}
.rse-cell-view tr.rse-cell-wrong td{color:#b2182b;font-weight:600}
.rse-cell-view .rse-cell-note{color:#555}
</style>"""


def pairs_html(table: dict[str, Any]) -> str:
    """The adjacency relations of a table that differ, as a list ("" when none does)."""
    items = "".join(
        f"<li>{'lost' if kind == 'missing' else 'made up'}: {escape(p['from'])} "
        f"{'→' if p['direction'] == 'right' else '↓'} {escape(p['to'])}"
        + (f" ×{p['count']}" if p["count"] > 1 else "") + "</li>"
        for kind in ("missing", "extra") for p in table.get(kind, []))
    return f"<ul>{items}</ul>" if items else ""


def _grid_html(grid: dict[str, Any]) -> str:
    cells = grid["cells"]
    under: set[tuple[int, int]] = set()  # covered by an origin drawn in this window
    for i, line in enumerate(cells):
        for j, c in enumerate(line):
            if c["span"]:
                rows, cols = c["span"]
                under |= {(a, b) for a in range(i, min(i + rows, len(cells)))
                          for b in range(j, min(j + cols, len(line)))} - {(i, j)}
    body = []
    for i, line in enumerate(cells):
        tds = [f"<th>{escape(str(grid['rows'][i]))}</th>"]
        for j, c in enumerate(line):
            if (i, j) in under:
                continue
            classes = [n for n, on in (("rse-cell-focus", c["focus"]),
                                       ("rse-cell-differs", c["differs"]),
                                       ("rse-cell-covered", c["covered"])) if on]
            attrs = f' class="{" ".join(classes)}"' if classes else ""
            if c["fill"] and _HEX.match(c["fill"]):
                attrs += f' style="background:#{c["fill"]}"'
            if c["span"]:
                rows, cols = c["span"]
                attrs += (f' rowspan="{min(rows, len(cells) - i)}"'
                          f' colspan="{min(cols, len(line) - j)}"')
            text = ("merged" if c["covered"] else
                    "" if c["value"] is None else str(c["value"]))
            tip = c["ref"] + (f" · fill {c['fill']}" if c["fill"] else "") + (
                f" · merged {c['span'][0]}×{c['span'][1]}" if c["span"] else "")
            tds.append(f'<td title="{escape(tip)}" data-ref="{escape(c["ref"])}"{attrs}>'
                       f"{escape(text)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    head = "<tr><th></th>" + "".join(f"<th>{escape(c)}</th>" for c in grid["cols"]) + "</tr>"
    return (f'<table class="rse-cell-grid"><thead>{head}</thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def cell_html(detail: dict[str, Any]) -> str:
    """The cell view as HTML (see the module docstring); every text escaped."""
    wrong = [c for c in detail["channels"] if not c["correct"]]
    head = (f'<h4>{escape(detail["locator"])} · {escape(detail["where"])} of '
            f'{escape(str(detail["document"] or detail["key"]))} · '
            f'{"wrong on " + ", ".join(escape(c["channel"]) for c in wrong) if wrong else "right"}'
            "</h4>")
    parts = [head]
    if detail["grid"] is not None:
        marked = any(c["differs"] for line in detail["grid"]["cells"] for c in line)
        parts.append('<div class="rse-cell-note">The cell (red outline) and its neighbours as '
                     "the document holds them" + ("; underlined in orange: in a table relation "
                                                  "that differs" if marked else "") + ":</div>"
                     + _grid_html(detail["grid"]))
    if detail["grid_note"]:
        parts.append(f'<div class="rse-cell-note">{escape(detail["grid_note"])}</div>')
    rows = "".join(
        f'<tr class="{"rse-cell-wrong" if not c["correct"] else "rse-cell-right"}">'
        f'<td>{escape(c["channel"])}</td><td>{"wrong" if not c["correct"] else "right"}</td>'
        f'<td>{escape(c["expected"])}</td><td>{escape(c["actual"])}</td>'
        f'<td>{escape(c["at_baseline"])}</td><td>{escape(c["feature"] or "")}</td></tr>'
        for c in detail["channels"])
    parts.append("<table><thead><tr><th>channel</th><th>verdict</th><th>expected</th>"
                 "<th>extracted</th><th>at baseline</th><th>feature</th></tr></thead>"
                 f"<tbody>{rows}</tbody></table>")
    facts = []
    if detail["grid"] is not None:
        facts.append(("in the document", f"{detail['value']}" + (
            f" · fill {detail['fill']}" if detail["fill"] else " · no fill")))
    if detail["legend"]:
        legend = detail["legend"]
        facts.append(("legend", legend["entry"] or f"no entry mapped it: {legend['why']}"))
    if detail["header_path"] is not None:
        facts.append(("header path", " › ".join(detail["header_path"]) or
                      "no merged header above this cell"))
    if facts:
        parts.append("<table><tbody>" + "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>"
                                                for k, v in facts) + "</tbody></table>")
    s = detail["structure"]
    if s:
        listed = pairs_html(s)
        parts.append(f'<div><b>Table structure of {escape(s["table"])}</b>: F1 {s["f1"]:.1%} '
                     f'({s["matched"]} of {s["relations"]} ground-truth relations matched, '
                     f'{s["extracted"]} extracted)'
                     + (listed or " · no relation differs") + "</div>")
    return f'{STYLE}<div class="rse-cell-view">{"".join(parts)}</div>'

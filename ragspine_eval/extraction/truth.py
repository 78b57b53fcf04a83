"""Draft a ground truth from a document, and check a ground truth against its document.

Both see the document through the independent readers (extraction/readers.py), never the
engine, so a ground truth is not the extractor's output read back.

`draft_truth(path, ...)` writes every cell that carries a value, a fill or a merge origin in
the engine's locators, with its value, its fill (`fill`, RRGGBB) and, for xlsx and pptx, its
merge (`merge_span`, `is_merged_origin`), each marked `"reviewed": false`; its `scope` names the
sheets, tables or ranges it was drafted from. Cells under a merge are left out.

`check_truth(truth_path, doc_path)` finds what a ground truth gets wrong about its document:
errors (a locator that does not exist, with the nearest real one as a hint; a cell under a
merge; a scope naming a sheet the document lacks) and warnings (a stated value that differs
from what the reader sees: the ground truth stays the authority). `TruthCheck.lines()` is what
the CLI prints; `ok` is False when there is an error.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.extraction.locators import (
    Scope,
    in_range,
    parse_range,
    position,
    ref_hint,
    sheet_hint,
)
from ragspine_eval.extraction.readers import READERS, ReadGrid, read_document
from ragspine_eval.extraction.records import ExtractionInputError, load_ground_truth
from ragspine_eval.extraction.claims import same_value

MERGE_TYPES = ("xlsx", "pptx")  # where the reader sees merges as spans


def draft_truth(path: str | Path, sheets: list[str] | None = None, cell_range: str | None = None,
                table: int | None = None) -> dict[str, Any]:
    """A ground-truth draft of the document (see the module docstring). `sheets` picks sheets or
    tables by name, `table` the N-th table of the document (1-based), `cell_range` a range of
    each picked grid. Raises ExtractionInputError for a name, number or range that is not there."""
    path = Path(path)
    doc_type, grids = read_document(path)
    picked = _pick(path, grids, sheets, table)
    bounds = parse_range(cell_range) if cell_range else None
    cells = []
    for grid in picked:
        for ref, cell in sorted(grid.cells.items(), key=lambda kv: position(kv[0]) or (0, 0)):
            if cell.covered or (bounds and not in_range(ref, bounds)):
                continue
            record: dict[str, Any] = {"sheet": grid.sheet, "cell_ref": ref, "value": cell.value}
            if cell.fill is not None:
                record["fill"] = cell.fill
            if doc_type in MERGE_TYPES:
                record["merge_span"] = cell.merge_span
                record["is_merged_origin"] = cell.merge_span is not None
            record["reviewed"] = False
            cells.append(record)
    if bounds:
        r1, c1, r2, c2 = bounds
        scope: dict[str, list[str]] = {"ranges": [
            f"{g.sheet}!{g.ref(r1, c1)}:{g.ref(r2, c2)}" for g in picked]}
    else:
        scope = {"sheets": [g.sheet for g in picked]}
    return {"document": path.name,
            "drafted_by": f"ragspine-eval truth draft ({READERS[doc_type]}); every cell is "
                          f"unreviewed until a person checks it and sets \"reviewed\": true",
            "scope": scope, "cells": cells}


def _pick(path: Path, grids: list[ReadGrid], sheets: list[str] | None, table: int | None
          ) -> list[ReadGrid]:
    picked = grids
    if sheets:
        by_name = {g.sheet: g for g in grids}
        for name in sheets:
            if name not in by_name:
                raise ExtractionInputError(f"{path}: no sheet or table {name!r}; "
                                           f"{sheet_hint(name, by_name)}")
        picked = [by_name[n] for n in dict.fromkeys(sheets)]
    if table is not None:
        if not 1 <= table <= len(picked):
            raise ExtractionInputError(f"{path}: --table {table}: the document has "
                                       f"{len(picked)} table(s) ({', '.join(g.sheet for g in picked) or 'none'})")
        picked = [picked[table - 1]]
    return picked


@dataclass
class TruthCheck:
    """What `check_truth` found: errors, warnings, and the cells per sheet or table."""

    truth: Path
    document: Path
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    unreviewed: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    def lines(self) -> list[str]:
        total = sum(self.counts.values())
        out = [f"truth check · {self.truth} · {self.document.name} · {total} cells"
               + (f" ({self.unreviewed} unreviewed)" if self.unreviewed else "")]
        out += [f"  {sheet}: {n} cells" for sheet, n in self.counts.items()]
        out += [f"error: {e}" for e in self.errors]
        out += [f"warning: {w}" for w in self.warnings]
        out.append(f"{'FAIL' if self.errors else 'OK'}: {len(self.errors)} error(s), "
                   f"{len(self.warnings)} warning(s)")
        return out


def check_truth(truth_path: str | Path, doc_path: str | Path) -> TruthCheck:
    """Check a ground truth against its document (see the module docstring)."""
    truth_path, doc_path = Path(truth_path), Path(doc_path)
    truth = load_ground_truth(truth_path)
    doc_type, grids = read_document(doc_path)
    by_name = {g.sheet: g for g in grids}
    result = TruthCheck(truth_path, doc_path)
    scope = Scope(truth.get("scope"), str(truth_path))
    for name in sorted(scope.named_sheets() - set(by_name)):
        result.errors.append(f"{truth_path}: scope names {name!r}, which {doc_path.name} does "
                             f"not have; {sheet_hint(name, by_name)}")
    for i, cell in enumerate(truth["cells"]):
        where = f"{truth_path}: cells[{i}] {cell['sheet']}!{cell['cell_ref']}"
        result.counts[cell["sheet"]] += 1
        result.unreviewed += cell.get("reviewed") is False
        grid = by_name.get(cell["sheet"])
        if grid is None:
            result.errors.append(f"{where}: {doc_path.name} has no sheet or table "
                                 f"{cell['sheet']!r}; {sheet_hint(cell['sheet'], by_name)}")
            continue
        ref = cell["cell_ref"]
        if not grid.exists(ref):
            size = "" if grid.a1 else f" (it has {grid.n_rows} rows and {grid.n_cols} columns)"
            hint = (ref_hint(ref, grid.a1) if grid.position(ref) is None
                    else f"no such cell in {grid.sheet!r}{size}")
            result.errors.append(f"{where}: not a cell of the document; {hint}")
            continue
        seen = grid.cells.get(ref)
        if seen is not None and seen.covered:
            result.errors.append(f"{where}: this cell lies under a merge; state the merge's "
                                 f"first cell instead and leave this one out")
            continue
        if "value" in cell:
            got = seen.value if seen is not None else None
            if not _agree(cell["value"], got):
                result.warnings.append(f"{where}: states {cell['value']!r}, "
                                       f"{READERS[doc_type]} reads {got!r}")
    return result


def _agree(stated: Any, read: Any) -> bool:
    if stated in (None, "") and read in (None, ""):
        return True
    return same_value(stated, read)


def agreement(draft: dict[str, Any], truth: dict[str, Any]) -> tuple[int, int, list[str]]:
    """(agreeing, stated, disagreeing locators): the cells of `truth` that state a value, and
    how many of them the draft states alike (blank and absent agree)."""
    drafted = {f"{c['sheet']}!{c['cell_ref']}": c.get("value") for c in draft["cells"]}
    stated = [c for c in truth["cells"] if "value" in c]
    wrong = [f"{c['sheet']}!{c['cell_ref']}" for c in stated
             if not _agree(c["value"], drafted.get(f"{c['sheet']}!{c['cell_ref']}"))]
    return len(stated) - len(wrong), len(stated), wrong


"""Table structure as the field scores it: the cell-adjacency F1 of ICDAR 2013 (Göbel et al.,
"ICDAR 2013 Table Competition"), per table, beside the cell channels and gated like them.

A table's grid is its non-blank cells by (row, col). Each non-blank cell has at most two
adjacency relations: to the nearest non-blank cell to its right in the same row, and to the
nearest non-blank cell below it in the same column, each recorded as (text of the cell, text of
the neighbour, direction), text whitespace-collapsed. The relations of the ground truth's grid
and of the extracted grid are compared as multisets: precision = matched / extracted, recall =
matched / ground truth, F1 their harmonic mean. A split or merged cell, a shifted column or a
lost row changes relations even where most cell values are right, which is what a structure
score is for.

Only a table the ground truth claims whole is scored: one its `scope` names as a sheet or table
(or a range of it, the extracted grid then cut to that range). A ground truth without a scope
states some cells, not a table, and gets no structure score. The document's figure
(`table_structure` in the baseline) is the micro F1 over its tables: 2·matched / (ground truth +
extracted relations); its case ids are the tables scored 1.0. Each table also lists the
relations that differ (`missing`: in the ground truth, not extracted; `extra`: extracted, not in
the ground truth), at most `LISTED_PAIRS` of each, as {"from", "to", "direction", "count"}.

Invariant: a grid compared with itself scores 1.0; nothing here reads a document.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ragspine_eval.extraction.compare import is_blank
from ragspine_eval.extraction.locators import Scope, in_range, position

TABLE_STRUCTURE = "table_structure"
LISTED_PAIRS = 50
DEFINITION = ("ICDAR 2013 cell-adjacency F1: each non-blank cell related to its nearest "
              "non-blank neighbour to the right and below, relations compared as multisets")


def _text(value: Any) -> str:
    return " ".join(str(value).split())


def adjacency(cells: Mapping[tuple[int, int], Any]) -> Counter:
    """The adjacency relations of a grid {(row, col): value} of non-blank cells."""
    relations: Counter = Counter()
    rows: dict[int, list[int]] = {}
    cols: dict[int, list[int]] = {}
    for r, c in cells:
        rows.setdefault(r, []).append(c)
        cols.setdefault(c, []).append(r)
    for r, in_row in rows.items():
        in_row.sort()
        for a, b in zip(in_row, in_row[1:], strict=False):
            relations[(_text(cells[(r, a)]), _text(cells[(r, b)]), "right")] += 1
    for c, in_col in cols.items():
        in_col.sort()
        for a, b in zip(in_col, in_col[1:], strict=False):
            relations[(_text(cells[(a, c)]), _text(cells[(b, c)]), "down")] += 1
    return relations


def differing(ours: Counter, theirs: Counter, limit: int = LISTED_PAIRS) -> list[dict[str, Any]]:
    """The relations of `ours` that `theirs` lacks (as a multiset), most frequent first."""
    rest = sorted((ours - theirs).items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"from": a, "to": b, "direction": d, "count": n} for (a, b, d), n in rest[:limit]]


def _grid(records: Iterable[Mapping[str, Any]], sheet: str,
          bounds: tuple[int, int, int, int] | None) -> dict[tuple[int, int], Any]:
    grid = {}
    for record in records:
        if record["sheet"] != sheet or is_blank(record.get("value")):
            continue
        pos = position(record["cell_ref"])
        if pos is None or (bounds is not None and not in_range(record["cell_ref"], bounds)):
            continue
        grid[pos] = record["value"]
    return grid


def structure_score(truth_cells: list[Mapping[str, Any]], facts: list[Mapping[str, Any]],
                    scope: Scope) -> dict[str, Any] | None:
    """Per table of the scope and for the document: relations, matched, precision, recall,
    F1 (see the module docstring); None when the ground truth states no scope."""
    if scope.everything:
        return None
    parts = [(s, None) for s in sorted(scope.sheets)] + [(s, b) for s, b in scope.ranges]
    tables = []
    for sheet, bounds in parts:
        truth = adjacency(_grid(truth_cells, sheet, bounds))
        got = adjacency(_grid(facts, sheet, bounds))
        matched = sum((truth & got).values())
        n_truth, n_got = sum(truth.values()), sum(got.values())
        tables.append({
            "table": sheet if bounds is None else f"{sheet}!R{bounds[0]}C{bounds[1]}:"
                                                  f"R{bounds[2]}C{bounds[3]}",
            "relations": n_truth, "extracted": n_got, "matched": matched,
            "precision": matched / n_got if n_got else 1.0,
            "recall": matched / n_truth if n_truth else 1.0,
            "f1": 2 * matched / (n_truth + n_got) if n_truth + n_got else 1.0,
            "missing": differing(truth, got), "extra": differing(got, truth)})
    total = sum(t["relations"] + t["extracted"] for t in tables)
    matched = sum(t["matched"] for t in tables)
    return {"definition": DEFINITION, "f1": 2 * matched / total if total else 1.0,
            "matched": matched, "relations": sum(t["relations"] for t in tables),
            "extracted": sum(t["extracted"] for t in tables), "tables": tables}

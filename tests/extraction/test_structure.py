"""The table-structure score (ICDAR 2013 cell-adjacency F1) and its place in the gate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine_eval.extraction.locators import Scope
from ragspine_eval.extraction.report import make_baseline_entry
from ragspine_eval.extraction.scoring import run_eval
from ragspine_eval.extraction.structure import (
    TABLE_STRUCTURE,
    adjacency,
    structure_score,
)


def cell(ref: str, value, sheet: str = "T") -> dict:
    return {"sheet": sheet, "cell_ref": ref, "value": value}


TABLE = [cell("R1C1", "Region"), cell("R1C2", "Rain"), cell("R2C1", "Assam"),
         cell("R2C2", "17.9"), cell("R3C1", "Bihar"), cell("R3C2", "2.1")]


def test_adjacency_relates_each_cell_to_its_nearest_neighbours_right_and_below():
    relations = adjacency({(1, 1): "a", (1, 3): "b", (3, 1): " c  d "})
    assert relations == {("a", "b", "right"): 1, ("a", "c d", "down"): 1}


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.tuples(st.integers(1, 6), st.integers(1, 6)),
                       st.text(min_size=1, max_size=3).filter(str.strip), max_size=20))
def test_a_grid_scored_against_itself_is_perfect(grid):
    cells = [cell(f"R{r}C{c}", v) for (r, c), v in grid.items()]
    score = structure_score(cells, cells, Scope({"tables": ["T"]}))
    assert score["f1"] == 1.0 and score["matched"] == score["relations"] == score["extracted"]


def test_a_split_row_costs_structure_even_where_values_line_up():
    split = [c for c in TABLE if c["cell_ref"] != "R2C1"] + [cell("R2C1", "As"),
                                                             cell("R2C3", "sam")]
    score = structure_score(TABLE, split, Scope({"tables": ["T"]}))
    assert 0 < score["f1"] < 1 and score["tables"][0]["recall"] < 1


def test_only_a_table_the_scope_claims_whole_is_scored_and_it_is_gated():
    assert structure_score(TABLE, TABLE, Scope(None)) is None
    report = run_eval(TABLE, {"scope": {"tables": ["T"]}, "cells": TABLE})
    entry = make_baseline_entry(report)
    assert entry["metrics"][TABLE_STRUCTURE] == 1.0
    assert entry["passed_ids"][TABLE_STRUCTURE] == ["T"]
    # an empty column in between changes no adjacency; a column slipped one row down does
    wider = [{**c, "cell_ref": c["cell_ref"].replace("C2", "C3")} for c in TABLE]
    assert run_eval(wider, {"scope": {"tables": ["T"]}, "cells": TABLE}).structure["f1"] == 1.0
    slipped = [{**c, "cell_ref": f"R{int(c['cell_ref'][1]) + 1}C2"} if c["cell_ref"].endswith("C2")
               else c for c in TABLE]
    worse = run_eval(slipped, {"scope": {"tables": ["T"]}, "cells": TABLE})
    assert worse.metrics[TABLE_STRUCTURE] < 1.0 and worse.passed_ids()[TABLE_STRUCTURE] == []
    assert TABLE_STRUCTURE not in run_eval(TABLE, TABLE).metrics


def test_a_range_scope_cuts_the_extracted_grid_to_the_range():
    facts = [*TABLE, cell("R9C9", "footnote")]
    truth = {"scope": {"ranges": ["T!R1C1:R3C2"]}, "cells": TABLE}
    assert run_eval(facts, truth).structure["f1"] == 1.0


def test_each_table_lists_the_relations_that_differ():
    split = [dict(c) for c in TABLE]
    split[0] = {**split[0], "value": "changed"}
    [table] = structure_score(TABLE, split, Scope({"tables": ["T"]}))["tables"]
    lost = sum(p["count"] for p in table["missing"])
    assert lost == table["relations"] - table["matched"] > 0
    assert sum(p["count"] for p in table["extra"]) == table["extracted"] - table["matched"]
    assert all("changed" in (p["from"], p["to"]) for p in table["extra"])
    assert not any("changed" in (p["from"], p["to"]) for p in table["missing"])
    same = structure_score(TABLE, TABLE, Scope({"tables": ["T"]}))["tables"][0]
    assert same["missing"] == same["extra"] == []

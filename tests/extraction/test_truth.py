"""Drafting and checking a ground truth through readers independent of the engine.

Small documents are written here with openpyxl and python-pptx; the real documents of
../shared/realdocs are read where that folder exists (skipped elsewhere, never copied).
"""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
from pptx import Presentation
from pptx.util import Inches

from ragspine_eval.extraction.locators import Scope, parse_range
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.truth import agreement, check_truth, draft_truth

REALDOCS = Path(__file__).resolve().parents[3] / "shared" / "realdocs"  # ../shared beside the project
HAND = Path(__file__).resolve().parents[1] / "fixtures" / "realdocs_truth"
needs_realdocs = pytest.mark.skipif(not REALDOCS.is_dir(), reason="../shared/realdocs absent")


@pytest.fixture
def workbook(tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "balance"
    sheet["B2"] = "Category"
    sheet.merge_cells("B2:B3")
    sheet["C2"] = 1000
    sheet["C2"].fill = openpyxl.styles.PatternFill("solid", fgColor="FFD9D9D9")
    sheet["D4"] = "  two  spaces "
    path = tmp_path / "book.xlsx"
    book.save(path)
    return path


def write_truth(path: Path, cells: list[dict], **meta) -> Path:
    path.write_text(json.dumps({**meta, "cells": cells}), encoding="utf-8")
    return path


def test_draft_of_a_workbook_prefills_values_fills_merges_and_marks_every_cell_unreviewed(
        workbook):
    draft = draft_truth(workbook)
    cells = {c["cell_ref"]: c for c in draft["cells"]}
    assert draft["document"] == "book.xlsx" and draft["scope"] == {"sheets": ["balance"]}
    assert set(cells) == {"B2", "C2", "D4"}  # B3 lies under the merge and is left out
    assert cells["B2"]["merge_span"] == [2, 1] and cells["B2"]["is_merged_origin"] is True
    assert cells["C2"] == {"sheet": "balance", "cell_ref": "C2", "value": 1000, "fill": "D9D9D9",
                           "merge_span": None, "is_merged_origin": False, "reviewed": False}
    assert cells["D4"]["value"] == "  two  spaces "  # xlsx text is kept as written
    assert all(c["reviewed"] is False for c in draft["cells"])


def test_draft_range_and_sheet_limit_the_cells_and_set_the_scope(workbook):
    draft = draft_truth(workbook, sheets=["balance"], cell_range="C1:D9")
    assert [c["cell_ref"] for c in draft["cells"]] == ["C2", "D4"]
    assert draft["scope"] == {"ranges": ["balance!C1:D9"]}
    with pytest.raises(ExtractionInputError, match="'balance'"):
        draft_truth(workbook, sheets=["Balance"])


def test_a_deck_table_is_drafted_in_the_engines_locators_whitespace_collapsed(tmp_path):
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(1), Inches(4), Inches(2)).table
    table.cell(0, 0).merge(table.cell(0, 1))
    table.cell(0, 0).text = "Head\n line"
    table.cell(1, 1).text = "42 "
    path = tmp_path / "deck.pptx"
    deck.save(path)
    draft = draft_truth(path)
    cells = {c["cell_ref"]: c for c in draft["cells"]}
    assert {c["sheet"] for c in draft["cells"]} == {"slide1_table1"}
    assert "R1C2" not in cells  # under the merge
    assert cells["R1C1"]["value"] == "Head line" and cells["R1C1"]["merge_span"] == [1, 2]
    assert cells["R2C2"]["value"] == "42" and cells["R2C1"]["value"] is None
    assert draft_truth(path, table=1)["cells"] == draft["cells"]
    with pytest.raises(ExtractionInputError, match="1 table"):
        draft_truth(path, table=2)


@pytest.mark.parametrize(("sheet", "ref", "hint"), [
    ("Balance", "C2", "'balance'"),
    ("balance", "$C$2", "'C2'"),
    ("balance", "c2", "'C2'"),
])
def test_check_refuses_a_locator_that_does_not_exist_and_names_the_nearest(
        workbook, tmp_path, sheet, ref, hint):
    truth = write_truth(tmp_path / "gt.json", [{"sheet": sheet, "cell_ref": ref, "value": 1000}])
    result = check_truth(truth, workbook)
    assert not result.ok
    assert len(result.errors) == 1 and hint in result.errors[0] and ref in result.errors[0]


def test_check_refuses_a_cell_under_a_merge_and_warns_of_a_different_value(workbook, tmp_path):
    truth = write_truth(tmp_path / "gt.json", [
        {"sheet": "balance", "cell_ref": "B3", "value": None},
        {"sheet": "balance", "cell_ref": "C2", "value": 999, "reviewed": False},
        {"sheet": "balance", "cell_ref": "Z99", "value": ""},  # a blank beyond the used range
    ])
    result = check_truth(truth, workbook)
    assert [("B3" in e, "under a merge" in e) for e in result.errors] == [(True, True)]
    assert len(result.warnings) == 1 and "999" in result.warnings[0] and "1000" in result.warnings[0]
    assert result.counts == {"balance": 3} and result.unreviewed == 1
    assert result.lines()[0].endswith("3 cells (1 unreviewed)")


def test_check_refuses_a_scope_naming_a_missing_sheet(workbook, tmp_path):
    truth = write_truth(tmp_path / "gt.json", [{"sheet": "balance", "cell_ref": "C2"}],
                        scope={"sheets": ["Sheet9"]})
    assert any("Sheet9" in e for e in check_truth(truth, workbook).errors)


def test_scope_covers_its_sheets_and_ranges_only():
    scope = Scope({"sheets": ["slide1_table1"], "ranges": ["balance!B2:C3"]})
    assert scope.covers("slide1_table1", "R9C9") and scope.covers("balance", "C3")
    assert not scope.covers("balance", "D3") and not scope.covers("other", "B2")
    assert Scope(None).covers("anything", "A1")
    assert parse_range("r2c3:R1C1") == (1, 1, 2, 3)
    with pytest.raises(ExtractionInputError, match="A1:F20"):
        parse_range("B2-C3")


def test_the_readers_do_not_use_the_engine(workbook):
    draft_truth(workbook)
    from ragspine_eval.extraction import readers, xlsx_colors

    for module in (readers, xlsx_colors):
        source = Path(module.__file__).read_text(encoding="utf-8")
        assert "ragspine." not in source.replace("ragspine_eval.", ""), module.__name__


@needs_realdocs
@pytest.mark.parametrize("truth", sorted(HAND.glob("*.json")), ids=lambda p: p.stem)
def test_the_draft_agrees_with_the_hand_written_ground_truth(truth):
    document = REALDOCS / truth.stem
    hand = json.loads(truth.read_text(encoding="utf-8"))
    agree, stated, wrong = agreement(draft_truth(document), hand)
    assert stated >= 10 and agree / stated >= 0.95, wrong
    assert check_truth(truth, document).ok


def test_hand_written_ground_truths_cover_every_real_document():
    names = {p.stem for p in HAND.glob("*.json")}
    assert len(names) == 8
    if REALDOCS.is_dir():
        assert names == {p.name for p in REALDOCS.iterdir() if p.suffix != ".md"}


"""Colour on documents of one's own: the reviewer's legend stated in a ground truth, and the
fill channel that scores the resolved fill colour where a ground truth states it."""

from __future__ import annotations

import json

import openpyxl
import pytest
from openpyxl.styles import PatternFill

from ragspine_eval.extraction.compare import stated_legend
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.run import Target, score_engine
from ragspine_eval.extraction.claims import fingerprint
from ragspine_eval.extraction.scoring import CHANNELS, run_eval
from ragspine_eval.extraction.truth import draft_truth


@pytest.fixture
def heat_map(tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "map"
    for ref, value, rgb in (("A1", 1, "D9D9D9"), ("A2", 2, "FFC000"), ("A3", 3, None)):
        sheet[ref] = value
        if rgb:
            sheet[ref].fill = PatternFill("solid", fgColor="FF" + rgb)
    path = tmp_path / "heat.xlsx"
    book.save(path)
    return path


def score(doc, tmp_path, truth):
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(truth), encoding="utf-8")
    return score_engine([Target.own(doc, path)]).reports[doc.name]


def test_the_ground_truths_legend_is_the_reviewed_mapping_and_the_report_says_whose(
        heat_map, tmp_path):
    truth = {"legend": {"#d9d9d9": {"quintile": "1"}, "FFC000": {"quintile": "2"}}, "cells": [
        {"sheet": "map", "cell_ref": "A1", "tags": {"quintile": "1"}},
        {"sheet": "map", "cell_ref": "A2", "tags": {"quintile": "2"}},
        {"sheet": "map", "cell_ref": "A3", "tags": {}}]}
    report = score(heat_map, tmp_path, truth)
    m = report.channels["color_mapping"]
    assert (m.correct, m.total) == (3, 3)
    assert "stated by the ground truth" in report.extraction["legend"]["statement"]
    del truth["legend"]  # the engine finds no legend block here: no tag at all
    report = score(heat_map, tmp_path, truth)
    assert report.channels["color_mapping"].correct == 1
    assert "the engine detected no legend" in report.extraction["legend"]["statement"]


def test_the_fill_channel_scores_the_resolved_colour_where_the_ground_truth_states_it(
        heat_map, tmp_path):
    draft = draft_truth(heat_map)
    assert [c.get("fill") for c in draft["cells"]] == ["D9D9D9", "FFC000", None]
    report = score(heat_map, tmp_path, draft)
    assert (report.channels["fill"].correct, report.channels["fill"].total) == (2, 2)
    draft["cells"][0]["fill"] = "000000"  # a theme colour resolved wrongly would look so
    report = score(heat_map, tmp_path, draft)
    assert report.channels["fill"].mismatches == [
        {"locator": "map!A1", "expected": "000000", "actual": "D9D9D9"}]
    assert "fill" in report.metrics


def test_a_fill_given_as_an_object_only_describes_and_changes_no_fingerprint():
    cell = {"sheet": "S", "cell_ref": "A1", "value": 1}
    described = {**cell, "fill": {"rgb": "D9D9D9"}}
    assert fingerprint(described) == fingerprint(cell) != fingerprint({**cell, "fill": "D9D9D9"})
    report = run_eval([{**cell, "resolved_rgb": "D9D9D9"}], [described])
    assert tuple(report.channels) == CHANNELS


def test_pdf_facts_have_no_fill_to_score():
    report = run_eval([{"sheet": "page1_table1", "cell_ref": "R1C1", "value": "x"}],
                      [{"sheet": "page1_table1", "cell_ref": "R1C1", "fill": "FFFF00"}],
                      unsupported={"fill": "no fills in PDF"})
    assert report.channels["fill"].not_scored == "no fills in PDF"
    assert "fill" not in report.metrics


@pytest.mark.parametrize("legend", [{"D9D9D": {"q": "1"}}, {"D9D9D9": "1"}])
def test_a_malformed_legend_is_refused(legend):
    with pytest.raises(ExtractionInputError, match="maps a fill to its tags"):
        stated_legend({"legend": legend})
    assert stated_legend({"legend": [{"rgb": "FFFF00", "tags": {}}]}) is None

"""The extraction report's banners and explorer as HTML, without a kernel or a browser (the
browser tests click the same HTML): a banner per document set, the regressed channel with a link
to the cells that flipped, channels not scored, a failed document apart; the mismatch table
regressions first, each row with the values the charts select on, each cell's view."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from ragspine_eval import paths, workbench
from ragspine_eval.workbench.views import extraction_explorer as xe


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<(style|script)[^>]*>.*?</\1>", " ",
                                                               html, flags=re.S))).split())


@pytest.fixture(scope="module")
def regressed(tmp_path_factory):
    """pptx and pdf against a baseline that says pptx's color_mapping was 100% right, with two
    of its wrong cells right then."""
    out = tmp_path_factory.mktemp("x")
    data = json.loads(paths.EXTRACTION_BASELINE.read_text(encoding="utf-8"))
    data["pptx"]["metrics"]["color_mapping"] = 1.0
    data["pptx"]["passed_ids"]["color_mapping"] += ["slide1_table1!R3C1", "slide1_table1!R4C1"]
    (out / "b.json").write_text(json.dumps(data), encoding="utf-8")
    return workbench.run_extraction("all", None, out / "b.json", out / "r.json")


def test_one_banner_per_set_fail_first_names_the_channel_and_links_the_flipped_cells(regressed):
    html = xe.verdicts_html(regressed, "rse-explorer-x1")
    assert html.count('class="rse-verdict ') == 3
    fail = text(html.split('class="rse-verdict ')[2])
    assert fail.startswith("rse-verdict-fail\"> FAIL pptx · product_review.pptx")
    assert "color_mapping : 100.0% → 86.7% · 2 cells flipped (right at baseline, wrong now)" in fail
    assert "header_attribution: the engine's pptx_styled extractor does not report" in fail
    link = re.search(r"data-match='([^']*)'", html)
    assert json.loads(unescape(link.group(1))) == {
        "doc": ["pptx"], "channel": ["color_mapping"],
        "id": ["pptx:slide1_table1!R3C1", "pptx:slide1_table1!R4C1"]}
    assert 'data-target="rse-explorer-x1"' in html
    assert text(html).startswith("PASS xlsx")


def test_a_failed_document_is_an_error_banner_never_a_verdict(regressed):
    regressed.failures["<evil>.xlsx"] = "the engine could not open <evil>.xlsx"
    try:
        html = xe.verdicts_html(regressed)
    finally:
        del regressed.failures["<evil>.xlsx"]
    last = text(html.split('class="rse-verdict ')[-1])
    assert "ERROR: THE RUN FAILED ON THIS DOCUMENT" in last and "No verdict" in last
    assert "PASS" not in last and "<evil>" not in html and "&lt;evil&gt;" in html


def test_the_table_lists_every_wrong_cell_regressions_first_with_what_charts_select(regressed):
    rows = xe.mismatch_rows(regressed)
    wrong = {(k, s.locator, s.channel) for k, r in regressed.run.reports.items()
             for s in r.cells if not s.correct}
    assert {(r["key"], r["locator"], r["channel"]) for r in rows} == wrong
    assert [r["at"] for r in rows[:2]] == ["passed (regression)"] * 2
    assert all(r["at"] != "passed (regression)" for r in rows[2:])
    html = xe.explorer_html(regressed, "rse-explorer-x1")
    first = re.search(r'<tr class="rse-row rse-regressed" data-id="([^"]*)" data-doc="([^"]*)" '
                      r"data-channel=\"([^\"]*)\" data-places='([^']*)'>", html)
    assert first.group(1, 2, 3) == ("pptx:slide1_table1!R3C1", "pptx", "color_mapping")
    assert json.loads(unescape(first.group(4))) == ["pptx · slide1_table1", "pptx · rgb_fill"]
    slots = re.findall(r'<div class="rse-case-slot" data-case="([^"]*)" hidden>', html)
    assert sorted(slots) == sorted({f"{k}:{loc}" for k, loc, _ in wrong})
    assert html.count('class="rse-chart"') == 3 and html.count('"name": "pick"') == 3


def test_a_clean_run_says_there_is_nothing_to_explore(tmp_path):
    ex = workbench.run_extraction("xlsx", None, None, tmp_path / "r.json")
    html = xe.explorer_html(ex)
    assert "No mismatching cell: every scored cell is right on every channel." in html
    assert 'class="rse-row' not in html
    assert "No table structure scored" in xe.structure_html(ex.run)


def test_each_scored_table_lists_its_score_and_the_relations_that_differ():
    from ragspine_eval.extraction.run import ExtractionRun
    from ragspine_eval.extraction.scoring import run_eval

    truth = [{"sheet": "T", "cell_ref": ref, "value": v} for ref, v in
             [("R1C1", "Region"), ("R1C2", "Rain"), ("R2C1", "Assam"), ("R2C2", "<17.9>")]]
    facts = [dict(c) for c in truth]
    facts[3]["value"] = "17.9"
    run = ExtractionRun({"own": run_eval(facts, {"scope": {"tables": ["T"]}, "cells": truth})})
    html = xe.structure_html(run)
    assert "own · T</b>: F1 50.0% (2 of 4 ground-truth relations matched, 4 extracted)" in html
    assert "lost: Assam → &lt;17.9&gt;" in html and "made up: Assam → 17.9" in html

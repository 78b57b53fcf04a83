"""A run over document sets (extraction_run.py): which facts belong to which set, and the run's
report as JSON and as the tidy frames the notebooks use."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from builders import TRUTHS, fact_of, write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
from ragspine_eval.extraction.records import ExtractionInputError
from ragspine_eval.extraction.report import COVERAGE
from ragspine_eval.extraction.run import (
    ExtractionRun,
    Target,
    fixture_targets,
    score_engine,
    score_facts_file,
)
from ragspine_eval.extraction.scoring import CHANNELS, run_eval


def test_facts_go_to_their_set_by_doc_key_or_document_name(tmp_path):
    xlsx = [fact_of(c, doc="xlsx") for c in TRUTHS["xlsx"]["cells"]]
    pdf = [fact_of(c, document="product_tables.pdf") for c in TRUTHS["pdf"]["cells"]]
    path = write_jsonl(tmp_path / "f.jsonl", xlsx + pdf)
    run = score_facts_file(path, fixture_targets("all"))
    assert run.reports["xlsx"].coverage.rate == 1.0 and run.reports["pdf"].coverage.rate == 1.0
    pptx = run.reports["pptx"]
    blanks = [c for c in TRUTHS["pptx"]["cells"] if c.get("value") in (None, "")]
    # with no fact of the deck, only the cells that assert a blank are met (and say why)
    assert pptx.n_facts == 0 and pptx.coverage.matched == len(blanks) < len(TRUTHS["pptx"]["cells"])
    assert pptx.warnings and "no facts" in pptx.warnings[0]
    only_pdf = score_facts_file(path, fixture_targets("pdf"))
    assert set(only_pdf.reports) == {"pdf"} and only_pdf.reports["pdf"].n_facts == len(pdf)


def test_with_one_set_facts_that_name_no_document_belong_to_it(tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl", [fact_of(c) for c in TRUTHS["pptx"]["cells"]])
    report = score_facts_file(path, fixture_targets("pptx")).reports["pptx"]
    assert all(m.accuracy == 1.0 for m in report.channels.values())
    assert report.source == str(path)


def test_a_locator_twice_in_a_facts_file_names_both_lines(tmp_path):
    cells = TRUTHS["pdf"]["cells"]
    path = write_jsonl(tmp_path / "f.jsonl", [fact_of(cells[0]), fact_of(cells[1]),
                                              fact_of(cells[0])])
    with pytest.raises(ExtractionInputError, match=rf"{path}:3: .* appears twice .* {path}:1"):
        score_facts_file(path, fixture_targets("pdf"))


def test_an_unknown_set_name_is_an_error_naming_the_first_line_and_every_unknown_name(tmp_path):
    cells = TRUTHS["xlsx"]["cells"]
    facts = [fact_of(c, doc="xlsx") for c in cells[:6]]
    facts[2]["doc"], facts[4]["doc"], facts[5]["doc"] = "xlxs", "xls", "xlxs"
    path = write_jsonl(tmp_path / "f.jsonl", facts)
    for docs in ("all", "xlsx"):
        with pytest.raises(ExtractionInputError) as info:
            score_facts_file(path, fixture_targets(docs))
        assert str(info.value) == (
            f"{path}:3: \"doc\" names an unknown document set 'xlxs' (this file also names "
            f"'xls'); the known sets are xlsx, pptx, pdf (in any case); correct \"doc\" in the "
            f"facts file (or in the extractor that writes it)")


def test_set_names_match_in_any_case(tmp_path):
    path = write_jsonl(tmp_path / "f.jsonl",
                       [fact_of(c, doc="XLSX") for c in TRUTHS["xlsx"]["cells"]]
                       + [fact_of(c, doc="Pdf") for c in TRUTHS["pdf"]["cells"]])
    run = score_facts_file(path, fixture_targets("all"))
    assert run.reports["xlsx"].coverage.rate == 1.0 and run.reports["pdf"].coverage.rate == 1.0


def test_a_null_doc_or_document_names_nothing(tmp_path):
    facts = [fact_of(c, doc=None, document=None) for c in TRUTHS["pdf"]["cells"]]
    path = write_jsonl(tmp_path / "f.jsonl", facts)
    assert score_facts_file(path, fixture_targets("pdf")).reports["pdf"].coverage.rate == 1.0
    with pytest.raises(ExtractionInputError, match=rf"{path}:1: the fact names no document"):
        score_facts_file(path, fixture_targets("all"))


def test_own_target_is_keyed_by_the_document_name_else_the_ground_truths(tmp_path):
    named, unnamed = tmp_path / "truth_a.json", tmp_path / "truth_b.json"
    named.write_text(json.dumps({"document": "reports/q3.xlsx", "cells": []}), encoding="utf-8")
    unnamed.write_text(json.dumps({"cells": []}), encoding="utf-8")
    assert Target.own(None, named) == Target("q3.xlsx", None, named)
    assert Target.own(None, unnamed).key == "truth_b"
    assert Target.own(tmp_path / "q3.xlsx", unnamed).key == "q3.xlsx"


def xlsx_truth_named(tmp_path, document: str):
    """The xlsx fixture's ground truth, saying it is for `document`."""
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"document": document, "cells": TRUTHS["xlsx"]["cells"]},
                             ensure_ascii=False), encoding="utf-8")
    return gt


def xlsx_facts(tmp_path, **naming):
    """Right facts for every xlsx fixture cell, each naming its document as given."""
    return write_jsonl(tmp_path / "f.jsonl", [fact_of(c, **naming) for c in TRUTHS["xlsx"]["cells"]])


def test_facts_of_own_document_go_to_it_by_its_set_name_in_any_case(tmp_path):
    gt = xlsx_truth_named(tmp_path, "q3.xlsx")
    path = xlsx_facts(tmp_path, doc="Q3.xlsx")
    run = score_facts_file(path, [Target("q3.xlsx", None, gt)])
    assert run.reports["q3.xlsx"].coverage.rate == 1.0


def test_a_fact_names_its_document_by_file_name_whatever_the_folder_and_case(tmp_path):
    target = Target.own(None, xlsx_truth_named(tmp_path, "some/dir/Q3.xlsx"))
    path = xlsx_facts(tmp_path, document="exports/q3.XLSX")
    assert score_facts_file(path, [target]).reports[target.key].coverage.rate == 1.0


def test_a_facts_file_none_of_whose_facts_is_scored_is_refused_not_scored_zero(tmp_path):
    gt = xlsx_truth_named(tmp_path, "q3.xlsx")
    path = xlsx_facts(tmp_path, document="q4.xlsx")
    with pytest.raises(ExtractionInputError, match=r"f.jsonl: no fact in the file is of the "
                                                   r"document set\(s\) scored \(q3.xlsx"):
        score_facts_file(path, [Target.own(None, gt)])


def test_a_ground_truth_for_another_document_is_refused_before_the_engine_runs(tmp_path,
                                                                               monkeypatch):
    import ragspine_eval.extraction.run as extraction_run

    pptx, xlsx = DOCUMENT_SETS["pptx"], DOCUMENT_SETS["xlsx"]
    monkeypatch.setattr(extraction_run, "extract", lambda *a: pytest.fail("the engine ran"))
    target = Target("product_review.pptx", pptx.document_path(), xlsx.ground_truth_path())
    with pytest.raises(ExtractionInputError) as info:
        score_engine([target])
    assert str(info.value).startswith(
        f"{xlsx.ground_truth_path()}: this ground truth is for 'product_lines.xlsx' (its "
        f"\"document\") but the document given is 'product_review.pptx'")


@pytest.mark.parametrize("document", [None, "PRODUCT_REVIEW.PPTX", "decks/product_review.pptx"])
def test_a_ground_truth_naming_this_document_or_none_is_scored(tmp_path, document):
    truth = {**TRUTHS["pptx"], "document": document}
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(truth, ensure_ascii=False), encoding="utf-8")
    doc = DOCUMENT_SETS["pptx"].document_path()
    report = score_engine([Target("deck", doc, gt)]).reports["deck"]
    assert report.coverage.rate == 1.0


def test_the_run_report_round_trips_and_gives_tidy_frames(tmp_path):
    facts = [fact_of(c, doc="xlsx") for c in TRUTHS["xlsx"]["cells"]]
    facts[10]["value"] = "wrong"
    path = write_jsonl(tmp_path / "f.jsonl", facts)
    run = score_facts_file(path, [Target.fixture("xlsx")])
    run.baselines = {"xlsx": {"cell_value": 1.0, COVERAGE: 1.0}}
    again = ExtractionRun.from_dict(json.loads(json.dumps(run.to_dict(), ensure_ascii=False)))
    assert again.reports == run.reports and again.baselines == run.baselines

    cells = again.to_frame()
    assert len(cells) == 3 * len(TRUTHS["xlsx"]["cells"])
    assert cells.columns[0] == "doc_set" and set(cells.doc_set) == {"xlsx"}
    wrong = cells[~cells.correct]
    assert wrong.locator.tolist() == [f"{facts[10]['sheet']}!{facts[10]['cell_ref']}"]
    assert wrong.groupby("sheet").size().to_dict() == {facts[10]["sheet"]: 1}

    summary = again.summary_frame().set_index("channel")
    assert list(summary.index) == [*CHANNELS, COVERAGE]
    assert summary.loc["cell_value", "baseline"] == 1.0
    assert summary.loc["cell_value", "correct"] == len(TRUTHS["xlsx"]["cells"]) - 1
    assert pd.isna(summary.loc["color_mapping", "baseline"])  # not in the stored entry


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_only_cells_on_both_sides_are_scored_whatever_the_overlap(data):
    truth = TRUTHS["pptx"]["cells"]
    kept = data.draw(st.sets(st.integers(0, len(truth) - 1)))
    extra = data.draw(st.integers(0, 5))
    facts = [fact_of(truth[i]) for i in sorted(kept)]
    facts += [{"sheet": "elsewhere", "cell_ref": f"R{n}C1", "value": "x"} for n in range(extra)]
    report = run_eval(facts, truth)
    # a cell asserting a blank is met without a fact too, on cell_value only
    blank = {i for i, c in enumerate(truth) if c.get("value") in (None, "")} - kept
    for name, metric in report.channels.items():
        met = len(kept) + (len(blank) if name == "cell_value" else 0)
        assert (metric.total, metric.correct) == (met, met)
    cov = report.coverage
    assert (cov.matched, len(cov.missing), len(cov.unexpected)) == (
        len(kept) + len(blank), len(truth) - len(kept) - len(blank), extra)
    assert cov.matched - len(blank) + len(cov.unexpected) == report.n_facts

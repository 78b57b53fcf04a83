"""The engine's extraction end to end over each committed fixture (extraction_adapter.py and
extraction_run.py), the legend the harness confirms, what the engine cannot do, and documents
that will not open."""

from __future__ import annotations

import importlib

import pytest

from ragspine_eval.extraction.adapter import (
    EXTRACTORS,
    REVIEWER,
    UNSUPPORTED,
    doc_type_of,
    extract,
)
from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
from ragspine_eval.extraction.records import ExtractionInputError, load_ground_truth
from ragspine_eval.extraction.run import fixture_targets, score_engine
from ragspine_eval.extraction.scoring import CHANNELS, run_eval


@pytest.fixture(scope="module")
def extracted():
    return {key: extract(d.document_path(), key) for key, d in DOCUMENT_SETS.items()}


@pytest.fixture(scope="module")
def engine_run():
    return score_engine(fixture_targets("all"))


def grids(key: str):
    module = importlib.import_module(EXTRACTORS[key])
    return module.extract_grids(DOCUMENT_SETS[key].document_path())


# --- end to end over each fixture ----------------------------------------------------------------


def test_the_engine_scores_every_fixture_on_its_channels_with_full_coverage(engine_run):
    assert set(engine_run.reports) == {"xlsx", "pptx", "pdf"}
    for key, report in engine_run.reports.items():
        truth = load_ground_truth(DOCUMENT_SETS[key].ground_truth_path())
        assert report.coverage.ground_truth_cells == len(truth["cells"])
        assert report.coverage.missing == [] and report.coverage.unexpected == [], key
        assert set(report.channels) == set(CHANNELS)
        for name, metric in report.channels.items():
            if name in UNSUPPORTED[key]:
                assert (metric.total, metric.not_scored) == (0, UNSUPPORTED[key][name])
            else:
                assert metric.total == len(truth["cells"]) and metric.not_scored is None


def test_the_xlsx_legend_is_detected_confirmed_by_the_harness_and_applied(extracted):
    legend = extracted["xlsx"].legend
    assert legend.confirmed_by == REVIEWER and legend.mapping_version == 1
    assert [(e["rgb"], e["tag"], f"{e['sheet']}!{e['source_ref']}") for e in legend.confirmed] == [
        ("FFFF00", "product_line=new", "Performance!J2"),
        ("EBF1DE", "product_line=mature", "Performance!J3")]
    assert legend.not_confirmed == []
    assert "confirmed by the harness" in legend.statement and "EBF1DE -> product_line=mature" \
        in legend.statement
    facts = {(f["sheet"], f["cell_ref"]): f for f in extracted["xlsx"].facts}
    # theme accent3 + tint resolves to the legend's green, so it maps; the CF trap does not
    assert facts[("Performance", "A5")]["tags"] == {"product_line": "mature"}
    assert facts[("区域明细", "D2")]["tags"] == {} and facts[("区域明细", "D2")]["cf_affected"]
    assert facts[("Performance", "A1")]["merge_span"] == [3, 1]


def test_the_report_says_which_legend_the_harness_confirmed(engine_run):
    described = engine_run.reports["xlsx"].extraction
    assert described["legend"]["confirmed_by"] == REVIEWER
    assert described["extractor"] == EXTRACTORS["xlsx"]
    assert described["engine"].startswith("rag-spine ")
    pptx = engine_run.reports["pptx"].extraction["legend"]
    assert pptx["detected"] == [] and "detected no legend" in pptx["statement"]
    assert engine_run.reports["pdf"].extraction["legend"] is None


# --- the declarations of what the engine cannot do, checked against its real output -----------


def test_pptx_really_reports_no_merges_although_the_deck_has_them():
    truth = load_ground_truth(DOCUMENT_SETS["pptx"].ground_truth_path())
    assert any(c["merge_span"] for c in truth["cells"])
    cells = [c for g in grids("pptx") for c in g.cells.values()]
    assert cells and not any(c.is_merged_origin or c.merge_span for c in cells), \
        "the engine now reports pptx merges: drop header_attribution from UNSUPPORTED['pptx']"


def test_pdf_really_reports_no_fills_and_no_spans_although_the_pdf_has_both():
    truth = load_ground_truth(DOCUMENT_SETS["pdf"].ground_truth_path())
    assert any(c["tags"] for c in truth["cells"]) and any(c["merge_span"] for c in truth["cells"])
    cells = [c for g in grids("pdf") for c in g.cells.values()]
    assert cells and not any(c.resolved_rgb for c in cells), \
        "the engine now reads PDF fills: drop color_mapping from UNSUPPORTED['pdf']"
    assert not any(c.is_merged_origin or c.merge_span for c in cells), \
        "the engine now reports PDF spans: drop header_attribution from UNSUPPORTED['pdf']"


def test_unsupported_channels_are_left_out_of_the_facts(extracted):
    for key, ext in extracted.items():
        for fact in ext.facts:
            assert ("tags" in fact) == ("color_mapping" not in UNSUPPORTED[key])
            assert ("merge_span" in fact) == ("header_attribution" not in UNSUPPORTED[key])


def test_empty_cells_with_nothing_on_them_are_not_facts(extracted):
    # the deck's merged header covers R1C3, R1C4 and R2C1; the engine lists them as ""
    refs = {(f["sheet"], f["cell_ref"]) for f in extracted["pptx"].facts}
    assert not refs & {("slide1_table1", r) for r in ("R1C3", "R1C4", "R2C1")}
    assert ("slide1_table2", "R1C1") in refs  # an empty swatch has a fill: it is a fact


# --- documents that will not open ---------------------------------------------------------------


@pytest.mark.parametrize("name, content, reason", [
    ("broken.xlsx", b"PK\x03\x04 not really a workbook", "could not open this xlsx"),
    ("broken.pptx", b"plain text", "could not open this pptx"),
    ("broken.pdf", b"%PDF-1.7\n garbage", "the PDF will not open"),
])
def test_a_document_that_will_not_open_is_a_clear_input_error(tmp_path, name, content, reason):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ExtractionInputError, match=rf"^{path}: .*{reason}"):
        extract(path)


def test_a_missing_document_or_an_unknown_type_is_refused(tmp_path):
    with pytest.raises(ExtractionInputError, match="no such document"):
        extract(tmp_path / "gone.xlsx")
    with pytest.raises(ExtractionInputError, match=r"cannot extract a \.docx file"):
        doc_type_of(tmp_path / "memo.docx")


def test_facts_of_a_fresh_extraction_score_like_the_report(extracted):
    truth = load_ground_truth(DOCUMENT_SETS["xlsx"].ground_truth_path())
    report = run_eval(extracted["xlsx"].facts, truth, unsupported=extracted["xlsx"].unsupported)
    assert all(m.accuracy == 1.0 and m.total == 120 for m in report.channels.values())


# --- the reviewer's choices, on grids built from the engine's own IR ----------------------------


def legend_grid(sheet: str, rows: list[tuple[str, str]], data: dict[str, str]):
    from ragspine.extraction.ir import StyledCell, StyledGrid

    grid = StyledGrid(sheet=sheet, source_doc_id="mine.xlsx")
    for n, (rgb, text) in enumerate(rows, start=1):
        grid.cells[f"A{n}"] = StyledCell(value=None, cell_ref=f"A{n}", resolved_rgb=rgb)
        grid.cells[f"B{n}"] = StyledCell(value=text, cell_ref=f"B{n}")
    for ref, rgb in data.items():
        grid.cells[ref] = StyledCell(value="x", cell_ref=ref, resolved_rgb=rgb)
    return grid


def test_the_reviewer_confirms_only_mappable_unambiguous_entries():
    from ragspine_eval.extraction.adapter import review_legend

    grids = [
        legend_grid("one", [("FFFF00", "黄色=新产品线"), ("00B0F0", "蓝色=停产"),
                            ("EBF1DE", "绿色=成熟产品线")], {"D1": "FFFF00", "D2": "EBF1DE"}),
        legend_grid("two", [("FFFF00", "黄色=成熟产品线")], {"D1": "00B0F0"}),
    ]
    review, tags = review_legend(grids, "mine.xlsx")
    assert [(e["rgb"], e["tag"]) for e in review.confirmed] == [("EBF1DE", "product_line=mature")]
    reasons = {(e["sheet"], e["rgb"]): e["reason"] for e in review.not_confirmed}
    assert reasons == {("one", "FFFF00"): "this colour has two meanings in the document's legends",
                       ("two", "FFFF00"): "this colour has two meanings in the document's legends",
                       ("one", "00B0F0"): "the engine has no tag for this meaning"}
    assert tags["one"] == {"A3": {"product_line": "mature"}, "D2": {"product_line": "mature"}}
    assert tags["two"] == {}
    assert review.statement.endswith("EBF1DE -> product_line=mature (one!B3)")


def test_no_legend_means_no_mapping_and_no_tags():
    from ragspine_eval.extraction.adapter import review_legend

    review, tags = review_legend([legend_grid("one", [], {"D1": "FFFF00"})], "mine.xlsx")
    assert (review.detected, review.confirmed, review.mapping_version, tags) == ([], [], None, {})
    assert "detected no legend" in review.statement

"""The extraction notebook's tables and charts, computed without a kernel from a facts run."""

from __future__ import annotations

import json

import altair as alt
import pytest
from builders import TRUTHS, fact_of, write_jsonl

from ragspine_eval.extraction.report import make_baseline_entry
from ragspine_eval.extraction.run import fixture_targets, score_facts_file
from ragspine_eval.workbench.views import charts, frames, provenance_view


@pytest.fixture
def runs(tmp_path):
    """A perfect run over pptx, and one with a single wrong colour tag and value on it."""
    cells = TRUTHS["pptx"]["cells"]
    perfect = score_facts_file(write_jsonl(tmp_path / "ok.jsonl", [fact_of(c) for c in cells]),
                               fixture_targets("pptx"))
    broken_facts = [fact_of(c) for c in cells]
    tagged = next(i for i, c in enumerate(cells) if c.get("tags"))
    broken_facts[tagged]["tags"] = {}
    broken_facts[0]["value"] = "WRONG"
    broken = score_facts_file(write_jsonl(tmp_path / "bad.jsonl", broken_facts),
                              fixture_targets("pptx"))
    return perfect, broken, cells[tagged], cells[0]


def test_channel_accuracy_marks_the_channels_that_fell_and_names_the_cells(runs):
    perfect, broken, tagged, first = runs
    stored = {"pptx": make_baseline_entry(perfect.reports["pptx"])}
    table = frames.channel_accuracy(broken, stored).set_index("channel")
    assert table.loc["color_mapping", "status"] == "regression"
    assert table.loc["color_mapping", "regressed cells"] == f"{tagged['sheet']}!{tagged['cell_ref']}"
    assert table.loc["cell_value", "status"] == "regression"
    assert table.loc["coverage", "status"] == "pass"
    assert list(table.index)[-1] == "coverage"
    assert table.loc["cell_value", "delta"] < 0


def test_channel_accuracy_without_a_baseline_and_for_a_channel_never_stated(runs):
    perfect, *_ = runs
    table = frames.channel_accuracy(perfect).set_index("channel")
    assert table.loc["cell_value", "status"] == "no baseline"
    assert table.loc["cell_value", "ci_lo"] < 1.0 == table.loc["cell_value", "accuracy"]


def test_mismatches_by_sheet_and_the_mismatch_table(runs):
    _, broken, tagged, first = runs
    by_sheet = frames.mismatches_by_sheet(broken)
    assert by_sheet["mismatches"].sum() == 2
    table = frames.mismatch_table(broken)
    assert set(table["channel"]) == {"cell_value", "color_mapping"}
    row = table[table["channel"] == "cell_value"].iloc[0]
    assert row["locator"] == f"{first['sheet']}!{first['cell_ref']}" and row["actual"] == "'WRONG'"
    assert len(frames.mismatch_table(broken, channel="color_mapping")) == 1
    assert frames.mismatch_table(runs[0]).empty


def test_extraction_run_info_shows_the_facts_file_and_ground_truth(runs):
    _, broken, *_ = runs
    fields = dict(zip(*provenance_view.extraction_run_info(broken, "out/x.json").T.values))
    assert fields["document sets"] == "pptx"
    assert "bad.jsonl [" in fields["facts file"]
    assert "pptx_ground_truth.json [" in fields["golden set"]
    assert fields["versions"].startswith("facts file (unknown)")


def test_channel_bars_and_mismatch_bars_are_readable(runs):
    perfect, broken, *_ = runs
    s = charts.channel_bars(frames.channel_accuracy(broken)).to_dict()
    assert s["facet"]["column"]["field"] == "doc_set"
    bars = s["spec"]["layer"][0]["encoding"]
    assert bars["x"]["axis"]["format"] == ".0%" and bars["color"]["scale"]["domain"] == [0, 1]
    assert [layer["mark"]["type"] for layer in s["spec"]["layer"]] == ["bar", "rule", "tick",
                                                                       "text"]
    m = charts.mismatch_bars(frames.mismatches_by_sheet(broken)).to_dict()
    assert m["title"] == "Mismatching cells per sheet" and m["encoding"]["x"]["title"] == "mismatching cells"
    empty = charts.mismatch_bars(frames.mismatches_by_sheet(perfect))
    assert isinstance(empty, alt.Chart) and empty.to_dict()["mark"]["type"] == "text"


def test_a_channel_the_engine_cannot_do_reads_not_scored_in_the_chart():
    from ragspine_eval.extraction.run import score_engine

    pdf = frames.channel_accuracy(score_engine(fixture_targets("pdf")))
    assert (pdf["status"] == "not scored").sum() == 2  # colour and header: no fills, no spans
    svg = charts.svg(charts.channel_bars(pdf).to_dict())
    assert svg.count(">not scored<") == 2  # drawn text (each mark also has an aria-label)


def test_the_run_report_carries_provenance_that_round_trips(runs):
    from ragspine_eval.extraction.run import ExtractionRun

    _, broken, *_ = runs
    again = ExtractionRun.from_dict(json.loads(json.dumps(broken.to_dict())))
    assert again.provenance == broken.provenance
    assert broken.provenance.harness == "extraction" and broken.provenance.facts is not None


def test_an_engine_run_fingerprints_the_documents_it_read(tmp_path):
    import shutil

    from ragspine_eval.extraction.fixtures import DOCUMENT_SETS
    from ragspine_eval.extraction.run import Target, score_engine

    doc_set = DOCUMENT_SETS["pdf"]
    copy = tmp_path / doc_set.document_path().name
    shutil.copy(doc_set.document_path(), copy)
    target = Target("pdf", copy, doc_set.ground_truth_path())
    first = score_engine([target]).provenance.documents
    with copy.open("ab") as handle:
        handle.write(b"\n% a byte more\n")
    second = score_engine([target]).provenance.documents
    assert first.n_cases == 1 and first.path.endswith(copy.name)
    assert first.fingerprint != second.fingerprint


def test_feature_accuracy_shows_what_an_aggregate_hides(runs):
    _, broken, tagged, _ = runs
    table = frames.feature_accuracy(broken)
    row = table[(table.channel == "color_mapping") & (table.feature == tagged.get("feature"))].iloc[0]
    assert row["correct"] == row["total"] - 1 and row["accuracy"] < 1.0
    assert table["total"].sum() == len(broken.to_frame())
    s = charts.feature_heatmap(table).to_dict()
    assert s["title"] == "Accuracy per channel and fixture feature"
    assert s["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0, 1]
    svg = charts.svg(s)  # as drawn in the HTML report
    assert f"{row['correct']}/{row['total']}" in svg and "undefined" not in svg

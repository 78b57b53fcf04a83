"""The Markdown step summary: verdict, provenance, gate table, regressions, top failing tags."""

from __future__ import annotations

import json

from builders import sample_report

from ragspine_eval.outputs.qa_files import qa_summary_markdown
from ragspine_eval.outputs.summary_md import MAX_REGRESSIONS, Summary, TagRow, summary_markdown
from ragspine_eval.ratchet import BaselineComparison, GateResult


def test_summary_has_a_row_per_gate_the_regressions_and_the_worst_tags():
    report = sample_report()
    cmp = BaselineComparison(False, regressions=[{"metric": "numeric_accuracy", "baseline": 1.0,
                                                  "current": 0.5, "delta": -0.5}],
                             case_regressions=[{"metric": "numeric_accuracy", "id": "num-002"}],
                             improvements=[{"metric": "citation_validity", "baseline": 0.5,
                                            "current": 1.0, "delta": 0.5}])
    text = qa_summary_markdown(report, {"metrics": {"numeric_accuracy": 1.0}, "fabrication_count": 0},
                               GateResult("regression", 1, [], cmp))
    assert text.startswith("## ragspine-eval qa · tool · 3 cases: FAIL (regression)")
    assert "| numeric_accuracy | 0.5000 | [0.09, 0.91] | 1/2 | 1.0000 |" in text
    assert ("| fabrication (lower is better) | 1.0000 (1 of 1 fabricated) | [0.21, 1.00] | 0/1 "
            "| 0 fabricated |") in text
    assert report.fabrication_sentence() in text.splitlines()
    regressions = text.split("### Regressions")[1].split("###")[0]
    assert "REGRESSION [tool] numeric_accuracy: 1.0000 -> 0.5000" in regressions
    assert "CASE REGRESSION [tool] numeric_accuracy: num-002" in regressions
    assert "improved" not in regressions
    tags = text.split("### Top failing tags")[1]
    assert "| fabrication | scope=EXTERNAL | 1/1 | 1.00 fabricated | [0.21, 1.00] |" in tags
    assert len(text.splitlines()) < 40


def test_summary_of_an_ungated_clean_run_says_so():
    text = summary_markdown(Summary("x", "PASS (pass)", [], [], [], [TagRow("g", "k", "v", 3, 3)]))
    assert "None." in text and "No case fails." in text


def test_summary_stays_short_and_tables_survive_pipes():
    many = [f"CASE REGRESSION [tool] g: c{i}" for i in range(MAX_REGRESSIONS + 7)]
    tags = [TagRow("g", "topic", f"T|{i}", 0, 5) for i in range(30)]
    text = summary_markdown(Summary("t", "FAIL", [], [], many, tags))
    assert "… and 7 more" in text and text.count("CASE REGRESSION") == MAX_REGRESSIONS
    assert text.count("topic=T\\|") == 5


def test_extraction_summary_has_a_row_per_set_and_channel_and_the_worst_sheets(tmp_path):
    from builders import TRUTHS, fact_of, write_jsonl

    from ragspine_eval.extraction.report import make_baseline_entry
    from ragspine_eval.extraction.run import fixture_targets, score_facts_file
    from ragspine_eval.outputs.extraction_files import extraction_summary_markdown
    from ragspine_eval.ratchet import run_gate

    cells = TRUTHS["pptx"]["cells"]
    good = score_facts_file(write_jsonl(tmp_path / "ok.jsonl", [fact_of(c) for c in cells]),
                            fixture_targets("pptx"))
    baseline = tmp_path / "b.json"
    run_gate(baseline, "pptx", make_baseline_entry(good.reports["pptx"]))
    facts = [fact_of(c) for c in cells]
    facts[0]["value"] = "WRONG"
    bad = score_facts_file(write_jsonl(tmp_path / "bad.jsonl", facts), fixture_targets("pptx"))
    result = run_gate(baseline, "pptx", make_baseline_entry(bad.reports["pptx"]))
    text = extraction_summary_markdown(bad, {"pptx": result})
    assert text.startswith("## ragspine-eval extraction · pptx: FAIL")
    assert "| pptx · cell_value |" in text and "| pptx · coverage |" in text
    assert f"CASE REGRESSION [pptx] cell_value: {cells[0]['sheet']}!{cells[0]['cell_ref']}" in text
    assert f"| cell_value | sheet=pptx:{cells[0]['sheet']} | 1/" in text


def test_fabrication_reads_the_same_in_the_cli_and_the_summary_on_a_real_run(tmp_path):
    """Issue 13 item 7: one figure and one interval for fabrication, in both outputs."""
    from ragspine_eval.outputs.qa_files import gate_table
    from ragspine_eval.stats import format_interval
    from ragspine_eval.paths import QA_GOLDEN_SET
    from ragspine_eval.qa.run import run_qa_eval

    report = run_qa_eval(QA_GOLDEN_SET, "agent")
    sentence = report.fabrication_sentence()
    assert sentence == ("fabrication: 0 of 13 refusal answers held an invented number, "
                        "rate 0.00 [0.00, 0.23] (lower is better)")
    console = gate_table(report)
    summary = qa_summary_markdown(report).splitlines()
    assert sentence in console and sentence in summary
    interval = format_interval(report.fabrication_interval)
    row = next(l for l in console if l.startswith("fabrication ("))
    assert f"0.0000 {interval}" in row
    assert f"| 0.0000 (0 of 13 fabricated) | {interval} |" in next(
        l for l in summary if l.startswith("| fabrication ("))


def test_drift_has_its_own_section_above_the_regressions():
    from ragspine_eval.qa.baseline_entry import make_baseline_entry
    from ragspine_eval.ratchet import compare

    report = sample_report()
    now = make_baseline_entry(report)
    stored = {**now, "metrics": {**now["metrics"], "numeric_accuracy": 1.0},
              "kb": {"fingerprint": "0123abcd00000000", "files": {"facts.csv": "aa"}}}
    cmp = compare({**now, "kb": {"fingerprint": "4567ef0100000000", "files": {"facts.csv": "bb"}}},
                  stored)
    text = qa_summary_markdown(report, stored, GateResult("regression", 1, [], cmp))
    drift = text.split("### Drift")[1].split("###")[0]
    assert ("- knowledge base changed since the baseline was recorded: facts.csv differs "
            "(kb 0123abcd… -> 4567ef01…)") in drift
    assert text.index("### Drift") < text.index("### Regressions")
    assert "REGRESSION [tool] numeric_accuracy" in text.split("### Regressions")[1]
    # the same run on the baseline's own KB: no drift section
    same = compare({**now, "kb": stored["kb"]}, stored)
    text = qa_summary_markdown(report, stored, GateResult("regression", 1, [], same))
    assert "### Drift" not in text and "knowledge base changed" not in text


# --- table structure ------------------------------------------------------------------------

STRUCTURE_TABLE = [{"sheet": "T", "cell_ref": ref, "value": value} for ref, value in [
    ("R1C1", "Region"), ("R1C2", "Rain"), ("R2C1", "Assam"), ("R2C2", "17.9"),
    ("R3C1", "Bihar"), ("R3C2", "2.1")]]  # 7 adjacency relations: 3 right, 4 down


def _structure_run(tmp_path, name: str, facts: list[dict]):
    from builders import write_jsonl

    from ragspine_eval.extraction.run import Target, score_facts_file

    truth = tmp_path / "table_truth.json"
    truth.write_text(json.dumps({"document": "table.xlsx", "scope": {"tables": ["T"]},
                                 "cells": STRUCTURE_TABLE}), encoding="utf-8")
    return score_facts_file(write_jsonl(tmp_path / name, facts), [Target.own(None, truth)])


def test_extraction_summary_shows_table_structure_as_the_console_does_and_its_regressions(
        tmp_path):
    from ragspine_eval.extraction.report import make_baseline_entry
    from ragspine_eval.outputs.extraction_files import extraction_table
    from ragspine_eval.outputs.extraction_files import extraction_summary_markdown
    from ragspine_eval.ratchet import run_gate

    good = _structure_run(tmp_path, "good.jsonl", STRUCTURE_TABLE)
    text = extraction_summary_markdown(good, {})
    assert "| table.xlsx · table_structure | 1.0000 | - | 7/7 | - |" in text
    baseline = tmp_path / "b.json"
    run_gate(baseline, "table.xlsx", make_baseline_entry(good.reports["table.xlsx"]))
    # every value right, but a stray cell inside the table: one more relation, none lost
    bad = _structure_run(tmp_path, "bad.jsonl",
                         [*STRUCTURE_TABLE, {"sheet": "T", "cell_ref": "R2C3", "value": "x"}])
    report = bad.reports["table.xlsx"]
    assert report.channels["cell_value"].accuracy == 1.0 and report.coverage.rate == 1.0
    result = run_gate(baseline, "table.xlsx", make_baseline_entry(report))
    bad.baselines = {"table.xlsx": {"cell_value": 1.0, "coverage": 1.0, "table_structure": 1.0}}
    text = extraction_summary_markdown(bad, {"table.xlsx": result})
    assert text.startswith("## ragspine-eval extraction · table.xlsx: FAIL")
    f1 = f"{2 * 7 / (7 + 8):.4f}"  # 0.9333: 7 matched of 7 ground-truth and 8 extracted
    assert f"| table.xlsx · table_structure | {f1} | - | 7/7 | 1.0000 |" in text
    console = next(line for line in extraction_table("table.xlsx", report, {"metrics": {
        "table_structure": 1.0}}) if line.startswith("table_structure"))
    assert f"{f1}       7/7    1.0000" in console  # the console's figures, the same ones
    assert "relations extracted: table.xlsx: 8" in text
    regressions = text.split("### Regressions")[1].split("###")[0]
    assert f"REGRESSION [table.xlsx] table_structure: 1.0000 -> {f1}" in regressions
    # every line the gate gave for the set, and nothing of the channels that held
    assert all(line in regressions for line in result.lines if "REGRESSION" in line)
    assert "cell_value" not in regressions and "coverage" not in regressions


def test_extraction_summary_has_no_table_structure_row_when_the_run_scored_none(tmp_path):
    from builders import TRUTHS, fact_of, write_jsonl

    from ragspine_eval.extraction.run import Target, fixture_targets, score_facts_file
    from ragspine_eval.outputs.extraction_files import extraction_summary_markdown

    cells = TRUTHS["xlsx"]["cells"]
    run = score_facts_file(write_jsonl(tmp_path / "f.jsonl", [fact_of(c) for c in cells]),
                           fixture_targets("xlsx"))
    assert run.reports["xlsx"].structure is None
    text = extraction_summary_markdown(run, {})
    assert "| xlsx · cell_value |" in text and "table_structure" not in text
    # nor for a ground truth of a table's cells that claims no table (no scope)
    truth = tmp_path / "cells.json"
    truth.write_text(json.dumps({"cells": STRUCTURE_TABLE}), encoding="utf-8")
    run = score_facts_file(write_jsonl(tmp_path / "t.jsonl", STRUCTURE_TABLE),
                           [Target.own(None, truth)])
    assert "table_structure" not in extraction_summary_markdown(run, {})

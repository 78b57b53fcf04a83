"""The notebooks' tables, computed without a kernel."""

from __future__ import annotations

import pytest
from builders import frames_report as report
from conftest import make_case, right_numeric_outcome

from ragspine_eval import paths
from ragspine_eval.outputs.diff import diff_reports
from ragspine_eval.qa.baseline_entry import make_baseline_entry
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.workbench.views import frames, provenance_view

HK_TEXT = "香港 REVENUE 同比走弱，主要原因是 MCV 客群萎缩。"




def test_headline_has_every_gate_then_fabrication_with_baseline_and_delta():
    head = frames.headline(report(num2_right=False), make_baseline_entry(report()))
    assert head["gate"].tolist()[-2:] == ["retrieval@5", "fabrication"]
    assert len(head) == 8  # the six, the retrieval gate, fabrication
    row = head.set_index("gate").loc["numeric_accuracy"]
    assert (row["current"], row["baseline"], row["delta"]) == (0.5, 1.0, -0.5)
    assert row["passed/total"] == "1/2" and row["status"] == "regression"
    assert row["regressed cases"] == "num-002"
    fab = head.set_index("gate").loc["fabrication"]
    assert (fab["measure"], fab["current"], fab["baseline"], fab["status"]) == ("count", 0, 0, "pass")


def test_headline_flags_a_swap_as_a_regression_although_the_rate_held():
    cases = [make_case("num-001"), make_case("num-002")]
    wrong = right_numeric_outcome(found_value=9.0)
    before = evaluate(cases, [right_numeric_outcome(), wrong], "tool", reference_texts={})
    after = evaluate(cases, [wrong, right_numeric_outcome()], "tool", reference_texts={})
    row = frames.headline(after, make_baseline_entry(before)).set_index("gate").loc["numeric_accuracy"]
    assert (row["delta"], row["status"], row["regressed cases"]) == (0, "regression", "num-001")


def test_headline_without_a_baseline_says_so():
    head = frames.headline(report())
    assert set(head["status"]) == {"no baseline"} and head["delta"].isna().all()


def test_tag_rates_are_per_gate_tag_and_value_in_unit_interval():
    rates = frames.tag_rates(report(num2_right=False))
    row = rates[(rates.gate == "numeric_accuracy") & (rates.bucket == "scope=ACME_CN")].iloc[0]
    assert (row.total, row.passed, row.pass_rate) == (1, 0, 0.0)
    assert rates["pass_rate"].between(0, 1).all()
    assert set(rates["tag"]) == {"topic", "scope", "qtype"}


def test_failures_by_counts_only_failures():
    counts = frames.failures_by(report(num2_right=False), "qtype")
    assert counts.to_dict("records") == [
        {"gate": "numeric_accuracy", "qtype": "relative_period", "failures": 1}]
    assert frames.failures_by(report(), "qtype").empty


def test_failure_table_has_the_drill_down_columns_and_filters():
    table = frames.failure_table(report(num2_right=False))
    assert list(table.columns) == ["id", "gate", "stage", "rank", "at baseline", "topic", "scope",
                                   "qtype", "case_type", "question", "expected", "actual",
                                   "answer excerpt"]
    assert set(table["id"]) == {"num-002"} and set(table["at baseline"]) == {"no baseline"}
    assert frames.failure_table(report(num2_right=False), scope="ACME_HK").empty
    assert len(frames.failure_table(report(num2_right=False), scope="ACME_CN")) == len(table)
    either = frames.failure_table(report(num2_right=False), scope=["ACME_HK", "ACME_CN"])
    assert len(either) == len(table)


def test_a_misspelt_filter_names_the_columns_there_are():
    with pytest.raises(ValueError, match=r"no column 'scop' to filter on; the columns are id, gate"):
        frames.failure_table(report(num2_right=False), scop="ACME_CN")


def test_the_failure_table_tells_a_regression_from_an_old_failure_and_a_new_case():
    baseline_run = evaluate([make_case("num-001"), make_case("num-002")],
                            [right_numeric_outcome(), right_numeric_outcome(found_value=9.0)],
                            "tool", reference_texts={})
    stored = make_baseline_entry(baseline_run)
    cases = [make_case("num-001"), make_case("num-002"), make_case("num-003")]
    wrong = right_numeric_outcome(found_value=9.0)
    now = evaluate(cases, [wrong, wrong, wrong], "tool", reference_texts={})
    table = frames.failure_table(now, stored, gate="numeric_accuracy")
    assert dict(zip(table["id"], table["at baseline"], strict=True)) == {
        "num-001": "passed (regression)", "num-002": "failed", "num-003": "new case"}


def test_an_edited_case_is_no_regression_in_the_tables_as_in_the_gate():
    """The gate calls an edited golden case a golden change, not a case regression; so do the
    failure table and the heatmap, which read the baseline through the same BaselineVerdicts."""
    from ragspine_eval.qa.baseline_entry import compare_to_baseline

    stored = make_baseline_entry(report())
    edited = report(num2_right=False)
    stored["golden"]["num-002"] = "0" * 16  # as if num-002 was edited since the baseline
    cmp = compare_to_baseline(edited, stored)
    assert cmp.case_regressions == [] and [g["id"] for g in cmp.golden_changes] == ["num-002"]
    table = frames.failure_table(edited, stored)
    assert set(table.loc[table["id"] == "num-002", "at baseline"]) == {"golden case changed"}
    assert frames.tag_rates(edited, stored)["regressed"].eq(0).all()


def test_a_gate_the_baseline_never_recorded_reads_not_recorded():
    stored = make_baseline_entry(report())
    del stored["passed_ids"]["numeric_accuracy"]
    table = frames.failure_table(report(num2_right=False), stored)
    assert set(table["at baseline"]) == {"not recorded"}
    rates = frames.tag_rates(report(num2_right=False), stored)
    assert rates.loc[rates["gate"] == "numeric_accuracy", "baseline_rate"].isna().all()


def test_tag_rates_show_where_a_drop_sits_against_the_baseline():
    stored = make_baseline_entry(report())
    rates = frames.tag_rates(report(num2_right=False), stored).set_index(["gate", "bucket"])
    dropped = rates.loc[("numeric_accuracy", "qtype=relative_period")]
    assert (dropped["regressed"], dropped["baseline_rate"], dropped["pass_rate"]) == (1, 1.0, 0.0)
    # num-002 regressed, and only on numeric_accuracy: each of its three tag buckets holds it
    assert set(rates.index[rates["regressed"] > 0]) == {
        ("numeric_accuracy", "topic=FIN"), ("numeric_accuracy", "scope=ACME_CN"),
        ("numeric_accuracy", "qtype=relative_period")}
    assert rates.loc[("numeric_accuracy", "topic=FIN"), "baseline_rate"] == 1.0
    without = frames.tag_rates(report(num2_right=False))
    assert without["regressed"].eq(0).all() and without["baseline_rate"].isna().all()


def test_answer_excerpts_are_short_single_lines():
    long = "第一行\n" + "x" * 500  # names no source, so citation_validity fails
    bad = evaluate([make_case()], [right_numeric_outcome(answer=long)], "tool", reference_texts={})
    excerpt = frames.failure_table(bad)["answer excerpt"].iloc[0]
    assert "\n" not in excerpt and len(excerpt) == frames.EXCERPT_CHARS and excerpt.endswith("…")


def test_mode_diff_puts_tool_first_and_names_each_flipped_case_with_its_question():
    tool, agent = report(mode="tool"), report(num2_right=False, mode="agent")
    diff = frames.mode_diff(agent, tool)
    flipped = frames.flips(diff, tool, agent)
    assert flipped[["gate", "id", "direction"]].values.tolist() == [
        ["numeric_accuracy", "num-002", "pass_to_fail"]]
    assert flipped["question"].tolist() == ["question of num-002"]
    table = frames.mode_diff_table(diff).set_index("gate")
    assert table.loc["numeric_accuracy", "tool rate"] == 1.0
    assert table.loc["numeric_accuracy", "agent rate"] == 0.5
    assert table.loc["numeric_accuracy", "pass in tool, fail in agent"] == 1
    assert frames.flips(frames.mode_diff(report(mode="tool"), report(mode="agent"))).empty


def test_compared_runs_name_both_runs_and_what_differs_between_them():
    tool, agent = report(mode="tool").to_dict(), report(mode="agent").to_dict()
    tool["provenance"] = {"engine": "rag-spine", "engine_version": "0.17.2", "git_commit": "a" * 40,
                          "times": {"started_at": "2026-11-02T08:00:00+00:00"}}
    agent["provenance"] = {**tool["provenance"], "git_commit": "b" * 40,
                           "times": {"started_at": "2026-12-03T08:00:00+00:00"}}
    rows = frames.compared_runs(diff_reports(tool, agent)).values.tolist()
    assert rows[0][0] == "tool run" and "commit aaaaaaaaaaaa" in rows[0][1]
    assert "2026-11-02T08:00:00" in rows[0][1]  # an old report shows its own date
    assert rows[1][0] == "agent run" and "commit bbbbbbbbbbbb" in rows[1][1]
    assert rows[2:] == [["note", "mode differs: tool vs agent"]]


def test_headline_and_tag_rates_carry_wilson_intervals_around_the_rate():
    head = frames.headline(report(num2_right=False)).set_index("gate")
    lo, hi = head.loc["numeric_accuracy", ["ci_lo", "ci_hi"]]
    assert lo < 0.5 < hi
    # fabrication: the interval of the fabrication rate (0 of 1 fabricated), lower is better
    assert head.loc["fabrication", "passed/total"] == "0 of 1 fabricated"
    lo, hi = head.loc["fabrication", ["ci_lo", "ci_hi"]]
    assert lo == 0 and 0.5 < hi < 1
    rates = frames.tag_rates(report())
    assert (rates["ci_lo"] <= rates["pass_rate"]).all() and (rates["pass_rate"] <= rates["ci_hi"]).all()


def test_run_info_shows_provenance_and_the_report_path(tmp_path):
    from ragspine_eval.qa.run import run_qa_eval

    golden = tmp_path / "golden.jsonl"
    golden.write_text(paths.QA_GOLDEN_SET.read_text(encoding="utf-8").splitlines()[0] + "\n",
                      encoding="utf-8")
    real = run_qa_eval(golden, "tool")
    real.provenance = real.provenance.with_baseline(paths.QA_BASELINE, "tool", None)
    info = provenance_view.run_info(real, "out/qa_tool.json")
    assert frames.run_info is provenance_view.run_info  # still importable from frames
    fields = dict(zip(info.field, info.value))
    assert (fields["engine"], fields["mode"], fields["report"]) == ("ragspine", "tool", "out/qa_tool.json")
    assert fields["versions"].startswith("rag-spine 0.17")
    assert real.provenance.golden.fingerprint in fields["golden set"]
    assert "data/kb [" in fields["knowledge base"]
    assert fields["baseline"] == "data/golden/qa_baseline.json [tool: no entry yet]"
    assert "git commit" in fields and "started" in fields


def test_stage_failures_and_retrieval_by_tag_read_the_report():
    from builders import real_run

    from ragspine_eval.qa.evaluation import evaluate

    cases, outcomes, refs = real_run("agent")
    run = evaluate(cases, outcomes, "agent", reference_texts=refs)
    stages = frames.stage_failures(run)
    assert {(g, s) for g, s in zip(stages["gate"], stages["stage"])} >= {
        ("answer_accuracy", "retrieval"), ("retrieval@5", "retrieval"),
        ("clarification_appropriateness", "routing")}
    assert stages["failures"].sum() == sum(len(m.failures) for m in run.gates().values())
    table = frames.failure_table(run, gate="answer_accuracy")
    assert dict(zip(table["id"], zip(table["stage"], table["rank"]))) == {
        "nar-006": ("retrieval", "none"), "comp-003": ("routing", "none")}
    by_tag = frames.retrieval_by_tag(run).set_index(["tag", "value"])
    assert by_tag.loc[("all", "all"), "measured"] == 17
    cn = by_tag.loc[("scope", "ACME_CN")]
    assert cn["hit@5"] < 1.0 and cn["ci_lo"] < cn["hit@5"] < cn["ci_hi"]

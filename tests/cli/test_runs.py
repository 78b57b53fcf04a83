"""`ragspine-eval runs`, `runs show`, `--no-store` and `diff` with run references: what the
analyst reads, and the exit codes (0, 1 a case went from pass to fail, 2 a bad reference)."""

from __future__ import annotations

import re

import pytest
from builders import frames_report

from ragspine_eval.cli import main
from ragspine_eval.runs import list_runs, store_report


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_two_qa_runs_are_both_listed_newest_first_in_120_columns(capsys, tmp_path, tiny_golden,
                                                               monkeypatch):
    monkeypatch.setenv("RAGSPINE_EVAL_RUNS_DIR", str(tmp_path / "store"))
    for mode in ("tool", "agent"):
        code, out, _ = run(capsys, "qa", "--mode", mode, "--golden", str(tiny_golden),
                           "--baseline", str(tmp_path / "b.json"))
        assert code == 0 and f"run kept as {list_runs()[0].id}" in out
    code, out, err = run(capsys, "runs")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert max(map(len, lines)) <= 120
    tool, agent = list_runs(key="tool")[0], list_runs(key="agent")[0]
    rows = [line for line in lines if re.match(r"\d{8}-\d{6}-", line)]
    assert [row.split()[0] for row in rows] == [agent.id, tool.id]
    assert rows[0].split()[2:5] == ["agent", "rag-spine", agent.engine.split()[1]]
    assert "lexical" in rows[0] and "no baseline" in rows[1]  # tool bootstrapped the file
    assert " num cit ref cla fai ans fab" in lines[0]
    assert "not shown for width: retrieval@5 (--json lists every rate)" in out
    assert "num numeric_accuracy" in out  # the legend spells out each abbreviation
    rate = int(tool.rates["clarification_appropriateness"] * 100)
    assert rows[1].split()[-4] == str(rate)


def test_no_store_keeps_nothing(capsys, tmp_path, tiny_golden):
    code, out, _ = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline",
                       str(tmp_path / "b.json"), "--no-store")
    assert code == 0 and "run kept" not in out and list_runs() == []
    code, out, _ = run(capsys, "runs")
    assert code == 0 and "no stored runs in" in out and "ragspine-eval qa" in out


def test_an_extraction_run_is_kept_under_its_document_set(capsys, tmp_path):
    code, out, _ = run(capsys, "extraction", "--docs", "xlsx", "--baseline",
                       str(tmp_path / "x.json"))
    assert code == 0
    [kept] = list_runs()
    assert (kept.kind, kept.key, kept.verdict) == ("extraction", "xlsx", "no baseline")
    assert set(kept.rates) == {"cell_value", "color_mapping", "header_attribution"}
    code, out, _ = run(capsys, "runs", "--kind", "extraction")
    assert kept.id in out and " val col hdr" in out


@pytest.fixture
def stored(own_run_store):
    """A tool run with every case right, then one where num-002 went wrong, then an agent run."""
    right = store_report(frames_report().to_dict(), kind="qa", key="tool", verdict="pass")
    wrong = store_report(frames_report(num2_right=False).to_dict(), kind="qa", key="tool",
                         verdict="fail")
    agent = store_report(frames_report(mode="agent").to_dict(), kind="qa", key="agent",
                         verdict="pass")
    return right, wrong, agent


def test_filters_and_count(capsys, stored):
    right, wrong, agent = stored
    _c, out, _e = run(capsys, "runs", "--key", "tool")
    assert right.id in out and wrong.id in out and agent.id not in out
    _c, out, _e = run(capsys, "runs", "-n", "1")
    assert agent.id in out and right.id not in out and wrong.id not in out


def test_show_prints_the_header_each_gate_and_the_failing_ids(capsys, stored):
    _right, wrong, _agent = stored
    code, out, _ = run(capsys, "runs", "show", "@tool")
    assert code == 0
    assert out.startswith(f"run {wrong.id} · qa tool · fail\n")
    assert re.search(r"numeric_accuracy\s+0\.5000 .* 1/2 .*num-002", out), out


def test_show_of_a_bad_reference_exits_2_naming_it_and_the_closest(capsys, stored):
    code, _out, err = run(capsys, "runs", "show", "@tol")
    assert code == 2 and err.startswith("error: @tol: no stored run has the key 'tol'")
    assert "closest: @tool" in err and err.count("\n") == 1


def test_diff_takes_references_and_fails_on_the_case_that_went_wrong(capsys, stored):
    right, wrong, _agent = stored
    code, out, _ = run(capsys, "diff", "@tool~1", "@tool")
    assert code == 1
    assert f"old: @tool~1 = run {right.id}" in out and f"new: @tool = run {wrong.id}" in out
    assert "pass→fail numeric_accuracy: num-002" in out
    from builders import id_prefix

    code, out, _ = run(capsys, "diff", id_prefix(wrong.id, right.id), "@tool")  # the same run
    assert code == 0 and "no case went from pass to fail" in out
    code, out, _ = run(capsys, "diff", str(right.path), "@latest")  # a stored .json.gz path
    assert code == 0 and f"old: {right.path}" in out


def test_diff_of_an_unknown_reference_exits_2(capsys, stored):
    code, _out, err = run(capsys, "diff", "@tool~5", "@tool")
    assert code == 2 and "@tool~5: the store holds 2 runs of key tool" in err


def test_an_interrupted_run_is_kept_marked(capsys, tmp_path, tiny_golden, monkeypatch):
    from ragspine_eval.qa import run as qa_run

    real = qa_run.run_qa

    def stopped(what, how):  # noqa: ANN001, ANN202 - the real run's report, as Ctrl-C leaves it
        partial = real(what, how)
        partial.interrupted = True
        return partial

    monkeypatch.setattr(qa_run, "run_qa", stopped)
    code, _out, _err = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline",
                           str(tmp_path / "b.json"))
    assert code == 130
    [kept] = list_runs()
    assert kept.verdict == "interrupted"


def test_a_run_with_engine_errors_is_kept_marked(capsys, tmp_path, tiny_golden):
    code, _out, _err = run(capsys, "qa", "--golden", str(tiny_golden), "--baseline",
                           str(tmp_path / "b.json"), "--engine",
                           "engine_doubles:raises_on_second", "--mode", "tool")
    assert code == 1
    [kept] = list_runs()
    assert kept.verdict == "errors" and kept.engine.startswith("engine_doubles:")
    _c, out, _e = run(capsys, "runs")
    assert " errors " in out


def test_json_lists_every_rate_and_the_stored_path(capsys, stored):
    import json

    right, wrong, agent = stored
    code, out, _ = run(capsys, "runs", "--json")
    listed = json.loads(out)
    assert code == 0 and [r["id"] for r in listed] == [agent.id, wrong.id, right.id]
    assert listed[1]["rates"] == wrong.rates and listed[1]["path"] == str(wrong.path)
    assert listed[1]["failing"]["numeric_accuracy"] == ["num-002"]
    code, out, _ = run(capsys, "runs", "show", "@tool", "--json")
    assert code == 0 and json.loads(out)["metrics"]["numeric_accuracy"]["pass_rate"] == 0.5

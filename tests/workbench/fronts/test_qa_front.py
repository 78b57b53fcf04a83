"""The QA notebook's calls without a kernel: its run through the one gate of every notebook's
last cell (workbench.assert_gate, fronts/gate.py), a missing baseline entry failing in CI, the
cases kept apart under the banner, an interrupted run, a stored run loaded by reference."""

from __future__ import annotations

import pytest
from builders import gate_comparison

from ragspine_eval.workbench import QANotebookRun, assert_gate


def qa_run(tmp_path, comparison=None, *, mode: str = "tool", engine_error: bool = False):
    """A QA notebook run of two cases (`num-001` and `ref-1`) in `mode`, compared as given."""
    from conftest import make_case, right_numeric_outcome

    from ragspine_eval.engines.base import CaseOutcome
    from ragspine_eval.qa.evaluation import evaluate

    refused = CaseOutcome(error="TimeoutError: 30 s") if engine_error else CaseOutcome(refused=True)
    report = evaluate([make_case("num-001"), make_case("ref-1", "refusal", refuse=True)],
                      [right_numeric_outcome(), refused], mode, reference_texts={})
    return QANotebookRun(report, tmp_path / "r.json", tmp_path / "b.json", None, comparison, mode)


def test_a_mode_without_a_baseline_passes_unless_a_baseline_is_required(tmp_path):
    run = qa_run(tmp_path, mode="agent")
    assert assert_gate(run) == ("agent: no baseline yet; nothing to compare (record one with "
                                "the CLI)")
    with pytest.raises(AssertionError, match=r"agent: no baseline entry, and require_baseline is "
                                             r"set; record one with the CLI: ragspine-eval qa "
                                             r"--mode agent --update-baseline"):
        assert_gate(run, require_baseline=True)


def test_engine_errors_fail_the_notebooks_gate_with_their_count_and_ids(tmp_path):
    with pytest.raises(AssertionError, match=r"tool: FAIL because of 1 engine errors \(ref-1\): "
                                             r"the engine raised, timed out or answered "
                                             r"malformed"):
        assert_gate(qa_run(tmp_path, engine_error=True))
    # an engine error and a regression: both reasons in the one error
    with pytest.raises(AssertionError) as both:
        assert_gate(qa_run(tmp_path, gate_comparison(0.0), engine_error=True))
    lines = str(both.value).splitlines()
    assert lines[0].startswith("tool: FAIL because of 1 engine errors (ref-1)")
    assert "tool: the baseline gate failed" in lines
    assert "REGRESSION [tool] g: 1.0000 -> 0.0000 (-1)" in lines
    assert "no baseline yet" in assert_gate(qa_run(tmp_path))


def test_the_gate_message_names_drift_on_a_pass_and_above_the_regressions_on_a_fail(tmp_path):
    drift = "DRIFT [tool] knowledge base changed since the baseline was recorded: facts.csv"
    same = assert_gate(qa_run(tmp_path, gate_comparison(1.0)))
    assert same == "tool: no regression against the baseline"
    passing = assert_gate(qa_run(tmp_path, gate_comparison(1.0, drift=True)))
    assert passing.splitlines()[0] == "tool: no regression against the baseline"
    assert passing.splitlines()[1].startswith(drift)
    with pytest.raises(AssertionError) as failed:
        assert_gate(qa_run(tmp_path, gate_comparison(0.0, drift=True)))
    lines = str(failed.value).splitlines()
    assert lines[0] == "tool: the baseline gate failed"
    assert lines[1].startswith(drift)
    assert "CASE REGRESSION [tool] g: a passed in the baseline and fails now" in lines[2:]


def test_cases_apart_shows_errors_and_flaky_verdicts_and_nothing_for_a_clean_run(tmp_path):
    from conftest import make_case, right_numeric_outcome

    from ragspine_eval.engines.base import CaseOutcome
    from ragspine_eval.qa.repeats import combine_repeats
    from ragspine_eval.qa.evaluation import evaluate
    from ragspine_eval.workbench import cases_apart

    cases = [make_case("num-001"), make_case("num-002")]
    wrong = right_numeric_outcome(found_value=9.0)

    def run(*reports):
        return QANotebookRun(combine_repeats(list(reports)), tmp_path / "r.json", tmp_path / "b.json",
                     None, None, "tool")

    def one(*outcomes):
        return evaluate(cases, list(outcomes), "tool", reference_texts={})

    clean = one(right_numeric_outcome(), right_numeric_outcome())
    assert cases_apart(run(clean, clean)).html == ""
    flaky = cases_apart(run(clean, one(right_numeric_outcome(), wrong))).html
    assert "Flaky verdicts" in flaky and "num-002" in flaky and "pass, fail" in flaky
    assert "Engine errors" not in flaky
    errored = cases_apart(run(one(CaseOutcome(error="EngineError: 503"), right_numeric_outcome())))
    assert "Engine errors: 1 cases with no verdict" in errored.html and "503" in errored.html


def test_interrupting_the_kernel_mid_run_writes_the_report_and_lets_the_interrupt_go_on(
        tmp_path, tiny_golden, monkeypatch):
    import json

    from ragspine_eval import paths
    from ragspine_eval.workbench.fronts.qa import run_qa

    def ctrl_c(done: int, total: int, errors: int) -> None:
        if done >= 2:
            raise KeyboardInterrupt  # what a kernel interrupt raises in the main thread

    monkeypatch.setenv("RSE_SLOW_SECONDS", "0.2")
    with pytest.raises(KeyboardInterrupt):
        run_qa("tool", tiny_golden, tmp_path / "b.json", paths.KB_DIR, tmp_path / "r.json",
               engine="engine_doubles:slow_right_value", progress=ctrl_c)
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["interrupted"] is True and len(report["cases"]) == 5
    assert not (tmp_path / "b.json").exists()


def test_load_report_takes_a_stored_run_where_it_takes_a_path(tmp_path):
    from builders import frames_report, id_prefix

    from ragspine_eval.runs import RunRefError, store_report
    from ragspine_eval.workbench import load_report

    kept = store_report(frames_report(num2_right=False).to_dict(), kind="qa", key="tool")
    agent = store_report(frames_report(mode="agent").to_dict(), kind="qa", key="agent")
    for ref in ("@tool", "@latest~1", kept.id, id_prefix(kept.id, agent.id), str(kept.path)):
        report = load_report(ref)
        assert report.mode == "tool" and report.metrics["numeric_accuracy"].passed == 1, ref
    assert load_report("@agent").mode == "agent"
    assert load_report(tmp_path / "qa_agent.json") is None  # a missing file: none yet
    with pytest.raises(RunRefError, match="@tool~2: the store holds 1 run of key tool"):
        load_report("@tool~2")

"""Run diffs: flipped cases per gate, rate changes, McNemar p, and what is never paired."""

from __future__ import annotations

import json

import pytest
from conftest import make_case, right_numeric_outcome
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.outputs.diff import (
    ReportError,
    diff_reports,
    diff_table,
    diff_verdicts,
    load_report,
)
from ragspine_eval.stats import mcnemar_exact
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.qa.report import QAEvalReport

CASES = [make_case(f"num-{i:03d}") for i in range(1, 8)] + [
    make_case("ref-001", "refusal", refuse=True)]


def report(mode: str, wrong: set[str]) -> QAEvalReport:
    """Every numeric case right except those in `wrong`; the refusal case refused cleanly."""
    outcomes = [right_numeric_outcome(found_value=1.0) if c.id in wrong else right_numeric_outcome()
                for c in CASES[:-1]] + [CaseOutcome(refused=True, answer="查不到")]
    return evaluate(CASES, outcomes, mode, reference_texts={})


def test_flipped_cases_are_named_per_gate_between_a_tool_and_an_agent_report():
    tool, agent = report("tool", {"num-007"}), report("agent", {"num-001", "num-002", "num-003"})
    diff = diff_reports(tool, agent)
    numeric = next(g for g in diff.gates if g.gate == "numeric_accuracy")
    assert numeric.pass_to_fail == ["num-001", "num-002", "num-003"]
    assert numeric.fail_to_pass == ["num-007"]
    assert (numeric.old_rate, numeric.new_rate) == (6 / 7, 4 / 7)
    assert numeric.rate_change == pytest.approx(-2 / 7)
    assert numeric.p_value == mcnemar_exact(3, 1) == pytest.approx(0.625)
    assert numeric.paired == 7
    untouched = next(g for g in diff.gates if g.gate == "refusal_appropriateness")
    assert (untouched.pass_to_fail, untouched.fail_to_pass, untouched.p_value) == ([], [], 1.0)
    assert [g.gate for g in diff.gates][-1] == "fabrication"
    assert diff.regressed
    assert diff.notes == ["mode differs: tool vs agent",
                          "a report has no provenance: its inputs cannot be compared"]
    lines = diff_table(diff)
    assert "pass→fail numeric_accuracy: num-001, num-002, num-003" in lines
    assert "fail→pass numeric_accuracy: num-007" in lines
    assert lines[-1] == "REGRESSED: 3 pass→fail flip(s) in 3 case(s)"


def test_only_gains_do_not_count_as_a_regression():
    diff = diff_reports(report("tool", {"num-001"}), report("tool", set()))
    assert not diff.regressed
    assert diff_table(diff)[-1] == "no case went from pass to fail"


def test_six_one_way_flips_are_marked_as_more_than_noise():
    six = {f"num-00{i}" for i in range(1, 7)}
    diff = diff_reports(report("tool", set()), report("tool", six))
    numeric = next(g for g in diff.gates if g.gate == "numeric_accuracy")
    assert numeric.p_value == pytest.approx(2 / 64)
    row = next(l for l in diff_table(diff) if l.startswith("numeric_accuracy"))
    assert row.endswith("0.0312 *")


def test_a_case_edited_between_the_runs_is_never_paired():
    old = report("tool", set()).to_dict()
    new = report("tool", {"num-004"}).to_dict()
    edited = next(c for c in new["cases"] if c["id"] == "num-004")
    edited["fingerprint"] = "0" * 16
    diff = diff_reports(old, new)
    assert diff.changed_cases == ["num-004"] and not diff.regressed
    assert any("golden case changed" in l and "num-004" in l for l in diff_table(diff))


def test_cases_in_one_run_only_are_counted_not_paired():
    old = report("tool", set()).to_dict()
    new = evaluate(CASES[:5], [right_numeric_outcome()] * 5, "tool", reference_texts={}).to_dict()
    diff = diff_reports(old, new)
    numeric = next(g for g in diff.gates if g.gate == "numeric_accuracy")
    assert numeric.paired == 5 and numeric.only_old == ["num-006", "num-007"]
    assert "scored in the old run only (not paired): num-006, num-007, ref-001" in diff_table(diff)


def test_an_engine_error_in_the_new_run_is_no_flip_but_is_named_and_fails_the_diff():
    old = report("tool", set()).to_dict()
    outcomes = [CaseOutcome(error="EngineError: cannot reach http://staging/v1/ask")] + [
        right_numeric_outcome()] * 6 + [CaseOutcome(refused=True, answer="查不到")]
    new = evaluate(CASES, outcomes, "tool", reference_texts={}).to_dict()
    diff = diff_reports(old, new)
    assert diff.new_errors == ["num-001"] and "num-001" not in diff.regressed_cases
    lines = diff_table(diff)
    assert "engine error in the new run (no verdict): num-001" in lines
    assert not any(l.startswith("scored in the old run only") and "num-001" in l for l in lines)
    assert lines[-1].startswith("FAIL: ") and "1 engine error(s) in the new run" in lines[-1]


def test_a_run_without_engine_errors_names_none():
    diff = diff_reports(report("tool", set()).to_dict(), report("tool", set()).to_dict())
    assert diff.new_errors == [] and diff_table(diff)[-1] == "no case went from pass to fail"


def test_frames_for_a_notebook():
    diff = diff_reports(report("tool", set()), report("agent", {"num-002"}))
    frame = diff.to_frame()
    assert list(frame.gate) == [g.gate for g in diff.gates]
    row = frame.set_index("gate").loc["numeric_accuracy"]
    assert (row.pass_to_fail, row.fail_to_pass, row.paired) == (1, 0, 7)
    flips = diff.flips_frame()
    # a wrong value with the right source fails numeric_accuracy only
    assert flips.to_dict("records") == [{"gate": "numeric_accuracy", "id": "num-002",
                                         "direction": "pass_to_fail"}]
    assert json.loads(json.dumps(diff.to_dict()))["regressed"] is True


@given(st.dictionaries(st.sampled_from([f"c{i}" for i in range(12)]), st.booleans()),
       st.dictionaries(st.sampled_from([f"c{i}" for i in range(12)]), st.booleans()))
def test_flips_are_the_discordant_pairs_and_swap_with_the_order(old, new):
    [forward] = diff_verdicts({"g": old}, {"g": new})
    [backward] = diff_verdicts({"g": new}, {"g": old})
    paired = set(old) & set(new)
    concordant = [i for i in paired if old[i] == new[i]]
    assert len(forward.pass_to_fail) + len(forward.fail_to_pass) + len(concordant) == len(paired)
    assert (forward.pass_to_fail, forward.fail_to_pass) == (backward.fail_to_pass,
                                                           backward.pass_to_fail)
    assert forward.p_value == backward.p_value


@pytest.mark.parametrize(("content", "reason"), [
    ("{not json", "not valid JSON"),
    ('{"mode": "tool"}', "not a ragspine-eval QA report"),
    ('{"metrics": {"numeric_accuracy": {"failures": []}}}', "lacks 'passed_ids'"),
    ('{"metrics": {"g": {"passed_ids": ["a"], "failures": [{"id": "a"}]}}}', "corrupt"),
])
def test_a_file_that_is_not_a_report_is_named_with_the_reason(tmp_path, content, reason):
    path = tmp_path / "r.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ReportError, match=reason) as err:
        load_report(path)
    assert str(err.value).startswith(str(path))


def test_a_missing_report_says_how_to_make_one(tmp_path):
    with pytest.raises(ReportError, match="ragspine-eval qa --report"):
        load_report(tmp_path / "nope.json")


def test_an_engine_that_reports_no_version_is_named_as_such_in_the_notes():
    old, new = report("agent", set()).to_dict(), report("agent", set()).to_dict()
    old["provenance"] = {"engine": "rag-spine", "engine_version": "0.17.2"}
    new["provenance"] = {"engine": "http://127.0.0.1:8000", "engine_version": None}
    diff = diff_reports(old, new)
    assert diff.notes == ["engine differs: rag-spine 0.17.2 vs http://127.0.0.1:8000 (version unknown)"]

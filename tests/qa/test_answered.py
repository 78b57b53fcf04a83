"""A run with engine errors compared on the cases it answered (qa/answered.py): an errored case
is never a regression, a golden change or an improvement, whichever cases error; a wrong answer
beside the errors still is."""

from __future__ import annotations

from dataclasses import replace

from engine_doubles import right_value
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine_eval import paths
from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import load_golden_set
from ragspine_eval.qa.baseline_entry import compare_to_baseline, make_baseline_entry
from ragspine_eval.qa.evaluation import evaluate

CASES = load_golden_set(paths.QA_GOLDEN_SET)
HEALTHY = [right_value(c) for c in CASES]
BASELINE = make_baseline_entry(evaluate(CASES, HEALTHY, "tool", reference_texts={}))


def _run(errored: set[int], wrong: frozenset[int] = frozenset()):
    outcomes = [CaseOutcome(error="TimeoutError: 30 s") if i in errored else
                replace(out, found_value=-1.0) if i in wrong else out
                for i, out in enumerate(HEALTHY)]
    return evaluate(CASES, outcomes, "tool", reference_texts={})


@settings(max_examples=40, deadline=None)
@given(st.sets(st.integers(0, len(CASES) - 1), min_size=1))
def test_engine_errors_alone_never_fail_the_comparison(errored):
    cmp = compare_to_baseline(_run(errored), BASELINE)
    assert cmp.passed, cmp
    assert not cmp.case_regressions and not cmp.golden_changes and not cmp.improvements
    assert cmp.notes[0].startswith(f"{len(errored)} engine errors: compared with the baseline")


def test_the_same_errors_without_restriction_would_read_as_regressions():
    """The reason answered.py exists: compared as it stands, a run whose refusal cases errored
    looks like a run that lost every one of them."""
    from ragspine_eval.ratchet import compare

    refusals = {i for i, c in enumerate(CASES) if c.expected["refuse"]}
    report = _run(refusals)
    assert not compare(make_baseline_entry(report), BASELINE).passed
    assert compare_to_baseline(report, BASELINE).passed


def test_a_wrong_answer_beside_errors_is_still_a_case_regression():
    numeric = next(i for i, c in enumerate(CASES) if c.expects_value)
    others = {i for i in range(len(CASES)) if i != numeric}
    cmp = compare_to_baseline(_run(set(list(others)[:5]), {numeric}), BASELINE)
    assert not cmp.passed
    assert {"metric": "numeric_accuracy", "id": CASES[numeric].id} in cmp.case_regressions
    [row] = [r for r in cmp.regressions if r["metric"] == "numeric_accuracy"]
    assert row["current"] < row["baseline"] == 1.0


def test_a_baseline_without_case_ids_is_compared_on_rates_and_says_so():
    legacy = {"metrics": dict(BASELINE["metrics"]), "fabrication_count": 0, "n_cases": 71}
    cmp = compare_to_baseline(_run({0}), legacy)
    assert "the baseline predates per-case ids" in cmp.notes[0]


def test_the_tables_show_the_baseline_on_the_cases_the_gate_compares():
    from ragspine_eval.qa.answered import baseline_shown
    from ragspine_eval.workbench.views import frames

    refusals = {i for i, c in enumerate(CASES) if c.expected["refuse"]}
    report = _run(refusals)
    shown, footnote = baseline_shown(report, BASELINE)
    answered = len(CASES) - len(refusals)
    assert footnote.startswith(f"baseline: its rates on the {answered} cases answered now")
    # the healthy baseline's rates over the answered cases are this run's: no false drop shown
    assert shown["metrics"] == {n: m.pass_rate for n, m in report.metrics.items()}
    head = frames.headline(report, BASELINE).set_index("gate")
    assert (head["baseline"] == head["current"]).all() and set(head["status"]) == {"pass"}
    assert baseline_shown(_run(set()), BASELINE) == (BASELINE, None)

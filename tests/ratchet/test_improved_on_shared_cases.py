""""improved" only on the same cases: a rate that rose because the golden set changed is no
improvement; the message says the set changed and gives the rate on the shared cases."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.ratchet import GateOptions, compare, run_gate
from ragspine_eval.ratchet.compare import describe


def entry(n_cases: int, passed: list[str], applicable: int | None = None) -> dict:
    ids = [f"c{i:03d}" for i in range(n_cases)]
    total = applicable or n_cases
    return {"metrics": {"refusal": len(passed) / total}, "fabrication_count": 0,
            "n_cases": n_cases, "passed_ids": {"refusal": sorted(passed)},
            "golden": {i: f"fp-{i}" for i in ids}}


def ids(*numbers: int) -> list[str]:
    return [f"c{i:03d}" for i in numbers]


def test_adding_a_passing_case_raises_the_rate_but_is_no_improvement():
    stored = entry(71, ids(*range(70)))           # 70/71 = 0.9859
    current = entry(72, ids(*range(70), 71))      # 71/72 = 0.9861: only the new case passed
    cmp = compare(current, stored)
    assert cmp.passed and cmp.improvements == []
    lines = describe(cmp, "tool")
    assert not any(line.startswith("improved") for line in lines)
    note = next(line for line in lines if "golden set changed" in line)
    assert "(1 added)" in note and "refusal 0.9859 -> 0.9861 is no improvement" in note
    assert "on the 71 cases both runs share it is 0.9859 -> 0.9859 (70/71 passed then, " \
           "70/71 now)" in note


def test_a_shared_case_that_now_passes_is_an_improvement_said_on_the_shared_cases():
    stored = entry(71, ids(*range(70)))
    current = entry(72, ids(*range(71)))          # c070, shared, passes now
    cmp = compare(current, stored)
    assert [r["metric"] for r in cmp.improvements] == ["refusal"]
    line = next(line for line in describe(cmp, "tool") if line.startswith("improved"))
    assert "the golden set changed (1 added); on the 71 cases both runs share: " \
           "0.9859 -> 1.0000" in line


def test_with_the_same_cases_an_improvement_reads_as_before():
    cmp = compare(entry(4, ids(0, 1, 2)), entry(4, ids(0, 1)))
    line = next(line for line in describe(cmp, "tool") if line.startswith("improved"))
    assert line == "improved [tool] refusal: 0.5000 -> 0.7500 (+0.25)"


def test_the_gate_says_the_set_grew_rather_than_improved(tmp_path):
    path = tmp_path / "b.json"
    run_gate(path, "tool", entry(71, ids(*range(70))))
    result = run_gate(path, "tool", entry(72, ids(*range(70), 71)),
                      GateOptions(record_command="RECORD"))
    assert result.exit_code == 0
    assert not any("this run improved" in line for line in result.lines)
    assert result.lines[-1] == ("the golden set grew by 1 case(s) the baseline does not know; "
                                "record them with: RECORD")


@given(st.integers(min_value=2, max_value=40), st.data())
def test_improved_on_a_changed_set_means_more_shared_cases_pass(n, data):
    then = data.draw(st.sets(st.integers(0, n - 1), min_size=1))
    extra = data.draw(st.integers(1, 5))
    now = data.draw(st.sets(st.integers(0, n + extra - 1), min_size=1))
    stored, current = entry(n, ids(*then)), entry(n + extra, ids(*now))
    cmp = compare(current, stored)
    shared_gain = len({i for i in now if i < n}) > len(then)
    assert bool(cmp.improvements) == (shared_gain and current["metrics"]["refusal"]
                                      > stored["metrics"]["refusal"])

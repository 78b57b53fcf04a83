"""The Dask executor gives the report --jobs 1 gives; a worker killed mid-run, or a case past
its time limit, does not lose the run; Ctrl-C stops it with every case recorded. Real
LocalClusters of two worker processes."""

from __future__ import annotations

import pytest

pytest.importorskip("dask.distributed")

from conftest import make_case  # noqa: E402
from engine_doubles import DiesOnceEngine, ScriptedEngine, Tagged, TaggedEngine  # noqa: E402
from ragspine_eval.execution.dask_executor import run_cases_dask  # noqa: E402
from ragspine_eval.engines.base import NOT_RUN_INTERRUPTED  # noqa: E402
from ragspine_eval.qa.run import run_qa_eval  # noqa: E402
from ragspine_eval.execution.runner import RunInterrupted, RunOptions  # noqa: E402


def comparable(report) -> dict:
    data = report.to_dict()
    data["provenance"].pop("times")
    return data


@pytest.mark.parametrize("mode", ["tool", "agent"])
def test_dask_on_a_local_cluster_gives_the_report_of_jobs_1(tiny_golden, mode):
    serial = run_qa_eval(tiny_golden, mode, cache=False)
    on_dask = run_qa_eval(tiny_golden, mode, cache=False, executor="dask", jobs=2)
    assert comparable(on_dask) == comparable(serial)


def test_a_worker_killed_mid_run_loses_no_case(tmp_path):
    cases = [make_case(f"num-{i:03d}") for i in range(12)]
    engine = DiesOnceEngine(victim="num-005", marker=str(tmp_path / "died"))
    outcomes = run_cases_dask(engine, cases, RunOptions(jobs=2, case_timeout=30))
    assert (tmp_path / "died").exists()  # the worker really died
    assert [o.answer for o in outcomes] == [f"answer to {c.id}" for c in cases]
    assert not any(o.error for o in outcomes)


def test_a_case_past_its_time_limit_is_that_cases_error(tmp_path):
    cases = [make_case(f"num-{i:03d}") for i in range(4)]
    engine = ScriptedEngine(hang=("num-001",))
    outcomes = run_cases_dask(engine, cases, RunOptions(jobs=2, case_timeout=1))
    assert "TimeoutError" in (outcomes[1].error or "")
    assert [o.error for i, o in enumerate(outcomes) if i != 1] == [None, None, None]


def test_an_engine_of_another_outcome_type_gets_its_faults_in_that_type():
    cases = [make_case(f"num-{i:03d}") for i in range(4)]
    engine = TaggedEngine(hang=("num-001",), fail=("num-002",))
    outcomes = run_cases_dask(engine, cases, RunOptions(jobs=2, case_timeout=1))
    assert all(type(o) is Tagged and o.case_id == c.id for o, c in zip(outcomes, cases))
    assert "TimeoutError" in outcomes[1].error and "engine fault" in outcomes[2].error


def test_ctrl_c_cancels_what_is_left_and_records_it_as_not_run():
    cases = [make_case(f"num-{i:03d}") for i in range(12)]  # batches of one, 0.3 s each

    def ctrl_c(done: int, total: int, errors: int) -> None:
        raise KeyboardInterrupt  # in the main thread, at the first batch back

    with pytest.raises(RunInterrupted) as stopped:
        run_cases_dask(ScriptedEngine(delay=0.3), cases, RunOptions(jobs=2), ctrl_c)
    outcomes = stopped.value.outcomes
    assert len(outcomes) == 12 and stopped.value.done == 1
    assert [o.error for o in outcomes].count(NOT_RUN_INTERRUPTED) == 11
    assert next(o.answer for o in outcomes if o.error is None).startswith("answer to num-")


def test_an_unreachable_scheduler_is_bad_input_naming_it():
    from ragspine_eval.execution.dask_executor import ExecutorError

    with pytest.raises(ExecutorError, match="tcp://127.0.0.1:9"):
        run_cases_dask(ScriptedEngine(), [make_case()], RunOptions(), scheduler="tcp://127.0.0.1:9")

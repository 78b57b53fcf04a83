"""The runner: case order whatever the parallelism, faults as case errors, time limits, fail-fast,
Ctrl-C."""

from __future__ import annotations

import os
import time

import pytest
from conftest import make_case, same_run
from engine_doubles import LoneSurrogateEngine, ScriptedEngine, Tagged, TaggedEngine, traced

from ragspine_eval import paths
from ragspine_eval.engines.base import NOT_RUN_INTERRUPTED, CaseOutcome
from ragspine_eval.engines.callable_engine import CallableEngine
from ragspine_eval.qa.run import run_qa_eval
from ragspine_eval.execution.runner import RunInterrupted, RunOptions, run_cases

CASES = [make_case(f"c{i}") for i in range(1, 7)]


def answers(outcomes) -> list[str | None]:
    return [o.error or o.answer for o in outcomes]


def test_outcomes_come_back_in_case_order_even_when_later_cases_finish_first():
    def slower_for_earlier(case):
        time.sleep(0.05 * (7 - int(case.id[1:])))  # c1 finishes last
        return {"answer": f"answer to {case.id}"}

    engine = CallableEngine(slower_for_earlier, "t:slower", "tool")
    outcomes = run_cases(engine, CASES, RunOptions(jobs=6))
    assert answers(outcomes) == [f"answer to c{i}" for i in range(1, 7)]


def test_an_engine_exception_is_that_cases_error_and_the_run_goes_on():
    outcomes = run_cases(ScriptedEngine(fail=("c2",)), CASES, RunOptions(jobs=2))
    assert outcomes[1].error.startswith("RuntimeError: engine fault on c2")
    assert [o.error for i, o in enumerate(outcomes) if i != 1] == [None] * 5


@pytest.mark.parametrize("parallel", ["threads", "processes"])
def test_a_case_past_its_time_limit_is_an_error_and_the_next_cases_run(tmp_path, parallel):
    trace = tmp_path / "trace"
    engine = ScriptedEngine(hang=("c2",), parallel=parallel, trace=str(trace))
    outcomes = run_cases(engine, CASES, RunOptions(jobs=2, case_timeout=0.5))
    assert outcomes[1].error == "TimeoutError: no answer within the case timeout of 0.5 s"
    assert answers(outcomes[2:]) == [f"answer to c{i}" for i in range(3, 7)]
    if parallel == "processes":
        hung_pid = next(int(line.split()[1]) for line in traced(trace) if line.startswith("c2 "))
        with pytest.raises(ProcessLookupError):  # the worker running c2 was killed and reaped
            os.kill(hung_pid, 0)


def test_a_worker_process_that_dies_is_that_cases_error_and_a_fresh_worker_goes_on():
    engine = ScriptedEngine(die=("c3",), parallel="processes")
    outcomes = run_cases(engine, CASES, RunOptions(jobs=2))
    assert "worker process running this case died (exit code 3)" in outcomes[2].error
    assert [o.error for i, o in enumerate(outcomes) if i != 2] == [None] * 5


def test_fail_fast_stops_at_the_first_error_and_records_the_rest_as_not_run(tmp_path):
    trace = tmp_path / "trace"
    outcomes = run_cases(ScriptedEngine(fail=("c3",), trace=str(trace)), CASES,
                         RunOptions(fail_fast=True))
    assert answers(outcomes[:2]) == ["answer to c1", "answer to c2"]
    assert "engine fault on c3" in outcomes[2].error
    assert {o.error for o in outcomes[3:]} == {
        "not run: the run stopped at the first engine error, case c3 (--fail-fast)"}
    assert [line.split()[0] for line in traced(trace)] == ["c1", "c2", "c3"]


def test_fail_fast_in_parallel_gives_the_serial_outcomes():
    engine = ScriptedEngine(fail=("c2", "c5"), delay=0.02)
    serial = run_cases(engine, CASES, RunOptions(fail_fast=True))
    parallel = run_cases(engine, CASES, RunOptions(jobs=4, fail_fast=True))
    assert [o.to_dict() for o in parallel] == [o.to_dict() for o in serial]
    assert "c2" in serial[1].error and all("case c2 (--fail-fast)" in o.error for o in serial[2:])


STOPPED = "not run: the run stopped before this case finished: the budget was spent at c3"


def test_a_case_that_says_the_run_must_stop_stops_it_and_the_rest_are_not_run(tmp_path):
    trace = tmp_path / "trace"
    outcomes = run_cases(ScriptedEngine(stop=("c3",), trace=str(trace)), CASES, RunOptions())
    assert answers(outcomes) == ["answer to c1", "answer to c2", *[STOPPED] * 4]
    assert [line.split()[0] for line in traced(trace)] == ["c1", "c2", "c3"]  # none after it


def test_once_a_case_stops_the_run_the_schedule_hands_out_nothing_more():
    from ragspine_eval.execution.state import RunState

    state = RunState([make_case(f"c{i}") for i in range(1, 7)], RunOptions(jobs=2), None)
    assert [state.schedule.take(), state.schedule.take()] == [0, 1]
    state.finish(1, CaseOutcome(error=STOPPED))
    assert state.stopped == STOPPED
    assert state.schedule.take() is None and state.schedule.exhausted()


@pytest.mark.parametrize("parallel", ["threads", "processes"])
def test_in_parallel_a_stop_ends_the_run_long_before_its_last_case(tmp_path, parallel):
    """Cases handed out before the main thread saw the stop, or already sent ahead to a worker
    process, run to their end (a spent budget refuses their paid calls too); the rest are not
    run. How many ran depends on the machine's load (up to PIPELINE_CASES a worker, and what
    the other worker finished meanwhile): here only that it is far from all of them."""
    trace = tmp_path / "trace"
    cases = [make_case(f"c{i}") for i in range(1, 201)]
    engine = ScriptedEngine(stop=("c3",), parallel=parallel, trace=str(trace), delay=0.02)
    outcomes = run_cases(engine, cases, RunOptions(jobs=2))
    ran = [line.split()[0] for line in traced(trace)]
    assert len(ran) < len(cases) // 2
    for case, out in zip(cases, outcomes):  # each answered, or not run for the stop's reason
        assert out.error in (None, STOPPED) and (out.error or case.id in ran)


@pytest.mark.parametrize("parallel", ["threads", "processes"])
def test_an_engine_of_another_outcome_type_gets_its_faults_in_that_type(tmp_path, parallel):
    """An engine that says its `outcome_type` (the answer and retrieval harnesses' engines)
    gets every outcome the runner makes in that type, made by the type's own `failed(case,
    error)`: an exception, a time limit, a dead worker, fail-fast's not-run cases, a stop and
    Ctrl-C's not-run cases, each for its own case."""
    died = ("c4",) if parallel == "processes" else ()
    engine = TaggedEngine(fail=("c2",), hang=("c3",), die=died, parallel=parallel)
    outs = run_cases(engine, CASES, RunOptions(jobs=2, case_timeout=1.0))
    assert all(type(o) is Tagged and o.case_id == c.id for o, c in zip(outs, CASES))
    assert "engine fault on c2" in outs[1].error and "TimeoutError" in outs[2].error
    assert parallel == "threads" or "worker process running this case died" in outs[3].error
    assert [o.answer for o in outs[4:]] == ["answer to c5", "answer to c6"]
    fast = run_cases(TaggedEngine(fail=("c2",), parallel=parallel), CASES,
                     RunOptions(fail_fast=True))
    assert [o.case_id for o in fast] == [c.id for c in CASES] and "fail-fast" in fast[5].error
    stopped = run_cases(TaggedEngine(stop=("c2",), parallel=parallel), CASES, RunOptions())
    assert [o.error for o in stopped[2:]] == [STOPPED.replace("c3", "c2")] * 4
    assert [o.case_id for o in stopped] == [c.id for c in CASES]
    cases = [make_case(f"c{i}") for i in range(1, 31)]
    slow = TaggedEngine(parallel=parallel, delay=0.1)
    halted = interrupted(lambda: run_cases(slow, cases, RunOptions(jobs=2), ctrl_c_at(2)))
    assert all(type(o) is Tagged and o.case_id == c.id for o, c in zip(halted.outcomes, cases))
    assert NOT_RUN_INTERRUPTED in {o.error for o in halted.outcomes}


def test_a_case_answered_in_another_type_than_the_engine_says_is_its_error():
    class Says(ScriptedEngine):
        outcome_type = Tagged  # and returns CaseOutcome

    outs = run_cases(Says(), CASES[:2], RunOptions())
    assert [o.error for o in outs] == ["engine scripted returned CaseOutcome, not a Tagged"] * 2
    assert [o.case_id for o in outs] == ["c1", "c2"]


def test_progress_counts_every_case_and_every_error():
    seen = []
    run_cases(ScriptedEngine(fail=("c4",)), CASES, RunOptions(jobs=3),
              progress=lambda *p: seen.append(p))
    assert [done for done, _, _ in seen] == list(range(1, 7))
    assert {total for _, total, _ in seen} == {6}
    assert seen[-1][2] == 1


@pytest.mark.parametrize("options", [{"jobs": 0}, {"case_timeout": 0}, {"case_timeout": -1.0}])
def test_run_options_refuse_nonsense(options):
    with pytest.raises(ValueError):
        RunOptions(**options)


@pytest.mark.parametrize("mode", ["tool", "agent"])
def test_parallel_in_process_report_equals_the_serial_report(mode):
    """--jobs 2 runs the in-process engine in two worker processes over the same SQLite stores."""
    serial = run_qa_eval(paths.QA_GOLDEN_SET, mode, jobs=1)
    parallel = run_qa_eval(paths.QA_GOLDEN_SET, mode, jobs=2)
    assert not serial.errors
    assert same_run(parallel.to_dict()) == same_run(serial.to_dict())


def ctrl_c_at(n: int):
    """A progress callback that presses Ctrl-C once n cases are done: it raises in the main
    thread, where a real SIGINT lands."""
    def progress(done: int, total: int, errors: int) -> None:
        if done >= n:
            raise KeyboardInterrupt
    return progress


def interrupted(call) -> RunInterrupted:
    try:
        call()
    except KeyboardInterrupt as exc:  # the old runner let a bare one through
        assert isinstance(exc, RunInterrupted), f"a bare {type(exc).__name__}"
        return exc
    raise AssertionError("the run was not interrupted")


@pytest.mark.parametrize("parallel", ["threads", "processes"])
def test_ctrl_c_stops_handing_out_cases_and_records_every_unfinished_one_as_not_run(
        tmp_path, parallel):
    trace = tmp_path / "trace"
    cases = [make_case(f"c{i}") for i in range(1, 61)]  # 6 s of work on 2 workers
    engine = ScriptedEngine(parallel=parallel, trace=str(trace), delay=0.2)
    started = time.monotonic()
    stopped = interrupted(lambda: run_cases(engine, cases, RunOptions(jobs=2), ctrl_c_at(3)))
    assert time.monotonic() - started < 4  # stopped at once, not after the 60 cases
    outcomes = stopped.outcomes
    assert len(outcomes) == 60
    finished = [o for o in outcomes if o.error != NOT_RUN_INTERRUPTED]
    assert stopped.done == len(finished) >= 3
    assert all(o.answer.startswith("answer to c") and o.error is None for o in finished)
    assert NOT_RUN_INTERRUPTED == ("not run: the run was interrupted (Ctrl-C) before this case "
                                   "finished")
    began = len(traced(trace))
    time.sleep(0.6)  # a worker left running would start three more cases meanwhile
    # each worker: the case in hand, and one whose answer was on its way when it was ended
    assert len(traced(trace)) == began <= stopped.done + 2 * 2
    if parallel == "processes":
        for pid in {int(line.split()[1]) for line in traced(trace)}:
            with pytest.raises(ProcessLookupError):  # every worker was killed and reaped
                os.kill(pid, 0)


def test_an_interrupted_run_is_scored_with_what_it_has_and_says_so(tiny_golden):
    """run_qa_eval raises the interrupt again with the report; with repeats, the interrupted
    repeat is combined with the finished ones."""
    engine = ScriptedEngine(delay=0.2)
    stopped = interrupted(lambda: run_qa_eval(tiny_golden, "tool", engine=engine, repeat=2,
                                              progress=ctrl_c_at(5 + 2)))
    report = stopped.report
    assert report.interrupted and report.repeats == 2 and report.n_cases == 5
    ids = [c.id for c in report.cases]
    not_run = [c.id for c in report.not_run]
    assert 1 <= len(not_run) <= 3 and ids[-len(not_run):] == not_run
    assert stopped.done == 5 - len(not_run)
    assert report.to_dict()["interrupted"] is True
    assert report.interrupted_sentence().startswith(
        f"INTERRUPTED (Ctrl-C) after {5 - len(not_run)} of 5 cases")
    assert "interrupted (Ctrl-C) before these cases finished" in report.errors_sentence()


def test_the_in_process_engine_is_forked_only_where_no_other_thread_runs():
    import threading

    from ragspine_eval.engines.inprocess import RagspineEngine
    from ragspine_eval.execution.cache import CachingEngine
    from ragspine_eval.execution.workers import start_method

    class Forkable:
        forkable = True

    assert start_method(ScriptedEngine(parallel="processes")) == "spawn"  # not ours to copy
    assert RagspineEngine.forkable and CachingEngine(Forkable(), None).forkable
    if threading.active_count() == 1:
        assert start_method(Forkable()) == "fork"
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert start_method(Forkable()) == "spawn"  # a lock another thread holds could be copied
    finally:
        release.set()
        other.join()



def test_one_job_in_its_own_process_checks_each_outcome_as_the_thread_does():
    """RunOptions.own_process: the worker only answers, this process checks each outcome as it
    arrives; the error a malformed one becomes is the one the thread gives it."""
    cases = [make_case("a"), make_case("bad"), make_case("c")]
    own = run_cases(LoneSurrogateEngine(parallel="processes"), cases,
                    RunOptions(own_process=True))
    threaded = run_cases(LoneSurrogateEngine(), cases, RunOptions())
    assert [o.error for o in own] == [o.error for o in threaded]
    assert own[1].error.startswith("OutcomeError: scripted returned an outcome whose")
    assert own[0].answer == "answer to a" and own[2].error is None

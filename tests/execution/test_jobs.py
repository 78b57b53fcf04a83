"""--jobs auto (execution/jobs.py, issue 33): the usable cores for the in-process engine when
enough cases are to reach it, else 1; and whatever it picks, the report is --jobs 1's."""

from __future__ import annotations

import pytest
from conftest import same_run

from ragspine_eval import paths
from ragspine_eval.execution import jobs
from ragspine_eval.files.jsontext import indented_text
from ragspine_eval.qa.run import run_qa_eval


def test_a_number_is_taken_as_given():
    assert jobs.resolve_jobs(3, 10, True) == 3
    assert jobs.resolve_jobs(1, 10**6, True) == 1


@pytest.mark.parametrize("bad", [True, 2.0, "two", None])
def test_anything_else_is_refused(bad):
    with pytest.raises(ValueError):
        jobs.resolve_jobs(bad, 10, True)


def test_auto_is_serial_under_the_threshold_and_for_engines_on_threads(monkeypatch):
    monkeypatch.setattr(jobs, "usable_cores", lambda: 4)
    assert jobs.resolve_jobs("auto", jobs.AUTO_SERIAL_BELOW - 1, True) == 1
    assert jobs.resolve_jobs("auto", jobs.AUTO_SERIAL_BELOW, True) == 4
    assert jobs.resolve_jobs("auto", 10**6, False) == 1  # an HTTP or callable engine
    # forked workers start at once: they pay from far fewer cases
    assert jobs.AUTO_SERIAL_BELOW_FORKED < jobs.AUTO_SERIAL_BELOW
    assert jobs.resolve_jobs("auto", jobs.AUTO_SERIAL_BELOW_FORKED - 1, True, forked=True) == 1
    assert jobs.resolve_jobs("auto", jobs.AUTO_SERIAL_BELOW_FORKED, True, forked=True) == 4
    assert jobs.resolve_jobs("auto", jobs.AUTO_SERIAL_BELOW_FORKED, True) == 1  # spawned
    monkeypatch.setattr(jobs, "AUTO_SERIAL_BELOW", 2)
    assert jobs.resolve_jobs("auto", 3, True) == 3  # never more workers than cases


def test_parse_jobs():
    assert jobs.parse_jobs("auto") == jobs.AUTO and jobs.parse_jobs(" AUTO ") == jobs.AUTO
    assert jobs.parse_jobs("2") == 2
    for bad in ("0", "-1", "x"):
        with pytest.raises(ValueError):
            jobs.parse_jobs(bad)


def test_usable_cores_is_what_this_process_may_run_on():
    assert 1 <= jobs.usable_cores()


@pytest.mark.parametrize("mode", ["tool", "agent"])
def test_auto_running_workers_writes_the_report_of_jobs_1_byte_for_byte(monkeypatch, mode):
    """The threshold lowered so that auto runs the committed golden set on two workers."""
    chosen = []
    resolve = jobs.resolve_jobs

    def spy(value, to_run, in_process, forked=False):
        chosen.append(resolve(value, to_run, in_process, forked))
        return chosen[-1]

    monkeypatch.setattr(jobs, "AUTO_SERIAL_BELOW", 10)
    monkeypatch.setattr(jobs, "AUTO_SERIAL_BELOW_FORKED", 10)
    monkeypatch.setattr(jobs, "usable_cores", lambda: 2)
    monkeypatch.setattr(jobs, "resolve_jobs", spy)
    serial = run_qa_eval(paths.QA_GOLDEN_SET, mode, jobs=1, cache=False)
    auto = run_qa_eval(paths.QA_GOLDEN_SET, mode, jobs="auto", cache=False)
    assert chosen[-1] == 2  # auto did run two workers
    assert not serial.errors
    assert indented_text(_text_of(auto)) == indented_text(_text_of(serial))


def _text_of(report) -> dict:
    """same_run's, without the checkout's commit either (a commit between the two runs is
    not what the number of jobs decides)."""
    data = same_run(report.to_dict())
    data["provenance"].pop("git_commit", None)
    data["provenance"].pop("git_dirty", None)
    return data


# --- one job in a worker process of its own (jobs.own_process) -----------------------------------


def test_one_job_gets_a_process_of_its_own_only_where_it_is_forked_and_a_core_is_free(
        monkeypatch):
    enough = jobs.OWN_PROCESS_FROM
    monkeypatch.setattr(jobs, "usable_cores", lambda: 2)
    assert jobs.own_process(1, enough, forked=True)
    assert not jobs.own_process(1, enough - 1, forked=True)  # a short run stays in a thread
    assert not jobs.own_process(1, 10**6, forked=False)  # spawned: it would import the engine
    assert not jobs.own_process(2, 10**6, forked=True)  # two jobs are two workers already
    monkeypatch.setattr(jobs, "usable_cores", lambda: 1)
    assert not jobs.own_process(1, 10**6, forked=True)  # no second core to score on


@pytest.fixture
def one_job_in_a_process(monkeypatch):
    """Every run of one job with cases to run puts its engine in a worker process (forked, or
    spawned where this test process has other threads: the mechanism is the same); the
    decisions are recorded, so a test knows the worker process really ran."""
    chosen: list[bool] = []
    monkeypatch.setattr(jobs, "own_process",
                        lambda n, to_run, forked: chosen.append(n == 1 and to_run > 0)
                        or chosen[-1])
    return chosen


@pytest.mark.parametrize("mode", ["tool", "agent"])
def test_one_job_in_its_own_process_writes_the_report_of_the_thread_byte_for_byte(
        one_job_in_a_process, monkeypatch, mode):
    in_process = run_qa_eval(paths.QA_GOLDEN_SET, mode, jobs=1, cache=False)
    assert one_job_in_a_process == [True]
    monkeypatch.setattr(jobs, "own_process", lambda *a, **k: False)
    in_thread = run_qa_eval(paths.QA_GOLDEN_SET, mode, jobs=1, cache=False)
    assert not in_thread.errors
    assert indented_text(_text_of(in_process)) == indented_text(_text_of(in_thread))


def test_one_job_in_its_own_process_stores_every_answer_for_the_next_run(
        one_job_in_a_process):
    cold = run_qa_eval(paths.QA_GOLDEN_SET, "tool", jobs=1)
    warm = run_qa_eval(paths.QA_GOLDEN_SET, "tool", jobs=1)
    assert one_job_in_a_process[0]  # the cold run ran in the worker process (the warm: none)
    assert warm.provenance.cache["reused"] == cold.n_cases
    assert indented_text(_text_of(warm)) == indented_text(_text_of(cold))


def test_one_job_in_its_own_process_keeps_what_it_answered_before_ctrl_c(
        one_job_in_a_process):
    from ragspine_eval.execution.runner import RunInterrupted

    def ctrl_c_at_20(done: int, total: int, errors: int) -> None:
        if done >= 20:
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as stopped:
        run_qa_eval(paths.QA_GOLDEN_SET, "tool", jobs=1, progress=ctrl_c_at_20)
    assert one_job_in_a_process[0]
    answered = stopped.value.done
    assert 20 <= answered < stopped.value.report.n_cases
    resumed = run_qa_eval(paths.QA_GOLDEN_SET, "tool", jobs=1)
    assert resumed.provenance.cache["reused"] >= answered  # what arrived is not run again


def test_a_resumed_run_builds_its_reused_cases_while_the_engine_answers_the_rest(
        one_job_in_a_process, monkeypatch):
    """The cases a stopped run answered come back with their stored verdicts; their records are
    built as the other answers arrive (streaming.Streamer.at), none left for evaluate after the
    last answer, and the report is the one a cold run writes."""
    from ragspine_eval.execution.runner import RunInterrupted
    from ragspine_eval.qa import run as qa_run

    def ctrl_c_at_30(done: int, total: int, errors: int) -> None:
        if done >= 30:
            raise KeyboardInterrupt

    with pytest.raises(RunInterrupted):
        run_qa_eval(paths.QA_GOLDEN_SET, "tool", jobs=1, progress=ctrl_c_at_30)
    left_to_evaluate: list[int] = []
    real = qa_run.evaluate

    def watched(cases, outcomes, mode, **kw):
        reuse = kw.get("reuse")
        if reuse is not None and reuse.scored and reuse.streamed:
            left_to_evaluate.append(sum(s is not None and e is None
                                        for s, e in zip(reuse.scored, reuse.streamed)))
        return real(cases, outcomes, mode, **kw)

    monkeypatch.setattr(qa_run, "evaluate", watched)
    resumed = run_qa_eval(paths.QA_GOLDEN_SET, "tool", jobs=1)
    assert one_job_in_a_process[-1]  # the resumed run's rest ran in the worker process
    assert resumed.provenance.cache["reused"] >= 30
    assert left_to_evaluate == [0]
    monkeypatch.setattr(jobs, "own_process", lambda *a, **k: False)
    cold = run_qa_eval(paths.QA_GOLDEN_SET, "tool", jobs=1, cache=False)
    assert indented_text(_text_of(resumed)) == indented_text(_text_of(cold))

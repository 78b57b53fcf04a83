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

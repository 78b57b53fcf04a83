"""Cases scored as their outcomes arrive from worker processes: scored once, the same report."""

from __future__ import annotations

import json

import pytest

from ragspine_eval.engines.base import CaseOutcome
from ragspine_eval.golden.cases import load_golden_set
from ragspine_eval.qa import case_record, streaming
from ragspine_eval.qa.evaluation import Reuse, evaluate
from ragspine_eval.qa.run import run_qa_eval


def report_text(report) -> str:
    data = report.to_dict()
    data["provenance"].pop("times")
    data["provenance"].pop("git_commit", None)
    data["provenance"].pop("cache")  # null without the cache, its counts with it
    return json.dumps(data, ensure_ascii=False)


@pytest.fixture
def records_made(monkeypatch):
    """How many case records were built in this process (one per case scored)."""
    made: list[str] = []
    real = case_record.CaseRecord.of.__func__

    def counting(cls, case, out):
        made.append(case.id)
        return real(cls, case, out)

    monkeypatch.setattr(case_record.CaseRecord, "of", classmethod(counting))
    return made


@pytest.mark.parametrize("cache", [False, None])
def test_worker_processes_cases_are_scored_once_and_give_the_serial_report(
        tiny_golden, records_made, cache, monkeypatch):
    serial = run_qa_eval(tiny_golden, "agent", jobs=1, cache=False)
    records_made.clear()
    arrived: list[int] = []
    real = streaming.Streamer.__call__
    monkeypatch.setattr(streaming.Streamer, "__call__",
                        lambda self, i, out: arrived.append(i) or real(self, i, out))
    parallel = run_qa_eval(tiny_golden, "agent", jobs=2, cache=cache)
    assert sorted(arrived) == list(range(5))  # each case scored as it came back
    assert sorted(records_made) == sorted(c.id for c in parallel.cases)  # once each, not twice
    assert report_text(parallel) == report_text(serial)


def test_an_outcome_with_an_error_is_left_to_evaluate():
    cases = load_golden_set_of_two()
    streamer = streaming.Streamer(cases, {}, None)
    streamer(0, CaseOutcome(error="RuntimeError: boom"))
    streamer(1, CaseOutcome(answer="x"))
    assert streamer.streamed[0] is None and streamer.streamed[1] is not None


def test_a_gate_that_raises_stops_streaming_and_evaluate_raises_as_before():
    cases = load_golden_set_of_two()
    streamer = streaming.Streamer(cases, {}, None)

    def broken(case, out):
        raise ValueError("a broken gate")

    streamer.gates[0] = broken
    streamer(0, CaseOutcome(answer="x"))
    streamer(1, CaseOutcome(answer="y"))
    assert streamer.stopped and streamer.streamed == [None, None]
    outcomes = [CaseOutcome(answer="x"), CaseOutcome(answer="y")]
    streamed = evaluate(cases, outcomes, "tool", reference_texts={},
                        reuse=Reuse(streamed=streamer.streamed)).to_dict()
    assert streamed == evaluate(cases, outcomes, "tool", reference_texts={}).to_dict()


def load_golden_set_of_two():
    from ragspine_eval import paths

    return load_golden_set(paths.QA_GOLDEN_SET)[:2]

"""Latency per case: nearest-rank percentiles, by tag, errors left out, the trace's LLM calls."""

from __future__ import annotations

import logging
from datetime import date

from ragspine_eval.engines.trace import LLMTrace
from ragspine_eval.execution.latency import LatencySummary, lines, percentile, summarize


def test_nearest_rank_percentiles_are_times_some_case_took():
    values = [0.1 * i for i in range(1, 21)]  # 0.1 .. 2.0
    assert percentile(values, 50) == values[9]
    assert percentile(values, 95) == values[18]
    assert percentile([3.0], 95) == 3.0 and percentile([], 50) is None
    assert LatencySummary.of([0.2, 0.1, 0.4]).to_dict() == {"n": 3, "p50": 0.2, "p95": 0.4,
                                                            "max": 0.4}


def test_summarize_by_tag_leaves_errors_out_of_the_percentiles():
    got = summarize([("a", {"t": "x"}, 0.1, False), ("b", {"t": "x"}, 0.3, False),
                     ("c", {"t": "y"}, 9.0, True), ("d", {}, None, False)])
    assert got["run"] == {"n": 2, "p50": 0.1, "p95": 0.3, "max": 0.3}
    assert set(got["by_tag"]) == {"t=x"} and got["cases"] == {"a": 0.1, "b": 0.3, "c": 9.0}
    assert "llm" not in got
    assert lines(got)[0] == "latency per case: p50 100.0 ms · p95 300.0 ms · max 300.0 ms (2 cases)"


def test_timed_keeps_the_wall_time_and_this_threads_llm_calls_on_the_outcome():
    from ragspine_eval.engines.base import CaseOutcome
    from ragspine_eval.execution.latency import seconds_of, timed

    logger = logging.getLogger("ragspine.trace")
    level = logger.level

    def answer(stage):
        logger.info("trace", extra={"llm_calls": [{"stage": stage, "ms": 4}]})
        return CaseOutcome(answer="x")

    one, two = timed(answer, "synthesis"), timed(answer, "tool_round")
    assert seconds_of(one) > 0 and seconds_of(CaseOutcome()) is None
    assert one == CaseOutcome(answer="x")  # not a field: equality and the report unchanged
    assert one.llm_calls_seen == [{"stage": "synthesis", "ms": 4}]
    assert two.llm_calls_seen == [{"stage": "tool_round", "ms": 4}]  # this call's only
    assert logger.level == level and not any(isinstance(h, LLMTrace) for h in logger.handlers)


def test_a_run_installs_the_trace_once_not_once_per_case(monkeypatch):
    # adding a handler or a level clears every logger's cache: per case it cost a tenth of a
    # fast case, so a run holds one trace from its first case to its last
    from ragspine_eval.engines.base import CaseOutcome
    from ragspine_eval.execution.latency import seconds_of
    from ragspine_eval.execution.runner import RunOptions, run_cases
    from ragspine_eval.golden.cases import GoldenCase

    added: list[logging.Handler] = []
    original = logging.Logger.addHandler

    def counting(self, handler):
        if self.name == "ragspine.trace":
            added.append(handler)
        original(self, handler)

    monkeypatch.setattr(logging.Logger, "addHandler", counting)

    class Engine:
        name = label = mode = "tool"

        def run_case(self, case):
            logging.getLogger("ragspine.trace").info(
                "t", extra={"llm_calls": [{"stage": "synthesis", "ms": 1}]})
            return CaseOutcome(answer=case.id)

    cases = [GoldenCase(f"c{i}", "q", "numeric", {}, {}, date(2025, 1, 1)) for i in range(6)]
    outs = run_cases(Engine(), cases, RunOptions(jobs=1))
    assert [o.answer for o in outs] == [c.id for c in cases]
    assert len(added) == 1
    assert all(seconds_of(o) is not None for o in outs)
    assert all(getattr(o, "llm_calls_seen") == [{"stage": "synthesis", "ms": 1}] for o in outs)
    assert not any(isinstance(h, LLMTrace) for h in logging.getLogger("ragspine.trace").handlers)

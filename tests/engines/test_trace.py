"""The engine's trace, listened to: each thread's LLM calls per stage, tokens per call, the
request's own totals apart, the logger as it was afterwards."""

from __future__ import annotations

import logging
import threading

from ragspine_eval.engines.trace import LLMTrace, listening


def test_the_trace_counts_this_threads_llm_calls_per_stage():
    trace = LLMTrace()
    logger = logging.getLogger("ragspine.trace")
    with listening(trace):
        with trace.case() as calls:
            logger.info("trace", extra={"llm_calls": [{"stage": "answer", "ms": 12,
                                                       "in_tokens": 60, "out_tokens": 5},
                                                      {"stage": "rerank", "ms": 3,
                                                       "in_tokens": None, "out_tokens": None}],
                                        "token_usage": {"input_tokens": 100, "output_tokens": 7}})
            other = threading.Thread(target=lambda: logger.info(
                "trace", extra={"llm_calls": [{"stage": "answer", "ms": 99}]}))
            other.start()
            other.join()
        assert [c["stage"] for c in calls] == ["answer", "rerank", "(request)"]
        logger.info("trace", extra={"llm_calls": [{"stage": "answer", "ms": 50}]})  # no case open
    # each call's tokens under its stage; a call that reported none has none
    assert trace.totals() == {"answer": {"calls": 1, "ms": 12, "input_tokens": 60,
                                         "output_tokens": 5},
                              "rerank": {"calls": 1, "ms": 3},
                              "(request)": {"calls": 0, "ms": 0, "input_tokens": 100,
                                            "output_tokens": 7}}
    assert trace not in logger.handlers

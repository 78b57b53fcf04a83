"""The engine's trace logger, listened to: the LLM calls and tokens it reports, per calling thread.

`LLMTrace` is a logging handler on the engine's trace logger (`TRACE_LOGGER`); `with
trace.case() as calls:` around one engine call collects what that thread's calls reported;
`listening(handler)` puts a handler on the logger for a while. Here, with the engines, because
the engines opened on a workspace (workspace_retriever.py) listen while they open and answer;
execution/latency.py holds one trace for a whole run and times each case with it.

Invariants: a trace keeps counts (stage, milliseconds, tokens), never prompt or answer text;
it reads only the calling thread's calls; tokens are per call, so per stage (the engine's trace
reads each call's usage from the response: a replayed one's is the recorded usage); the
request's own totals (its `token_usage`, which counts only the agent loop's calls) are kept as
the pseudo-stage `REQUEST` with no call; the logger's level is put back when listening ends.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

TRACE_LOGGER = "ragspine.trace"  # the engine's trace logger (its observability module's name)
REQUEST = "(request)"  # the engine's per-request token totals: no call, no stage of its own


def _call_counts(call: Mapping[str, Any]) -> dict[str, Any]:
    """One call of the engine's trace (its `LLMCall`: stage, ms, in_tokens, out_tokens read
    from the response's usage, so a replayed call carries its recorded tokens) as the counts
    kept: stage, ms, and the tokens when the call reported them."""
    out: dict[str, Any] = {"stage": str(call.get("stage")),
                           "ms": call.get("ms") if isinstance(call.get("ms"), int) else 0}
    for theirs, ours in (("in_tokens", "input_tokens"), ("out_tokens", "output_tokens")):
        value = call.get(theirs)
        if isinstance(value, int) and not isinstance(value, bool):
            out[ours] = value
    return out


class LLMTrace(logging.Handler):
    """Counts the LLM calls and tokens the engine's trace reports, per calling thread.

    `with trace.case() as calls:` around one case's engine call collects that thread's calls;
    `totals()` is every stage's {"calls", "ms", "input_tokens", "output_tokens"} so far."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self._lock = threading.Lock()
        self._open: dict[int, list[dict[str, Any]]] = {}
        self._totals: dict[str, dict[str, Any]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        calls = getattr(record, "llm_calls", None)
        usage = getattr(record, "token_usage", None)
        if not isinstance(calls, list) and not isinstance(usage, dict):
            return
        with self._lock:
            bucket = self._open.get(record.thread or 0)
            if bucket is None:
                return
            for call in calls or []:
                if isinstance(call, Mapping):
                    bucket.append(_call_counts(call))
            if isinstance(usage, dict):
                bucket.append({"stage": REQUEST, "ms": 0,
                               "input_tokens": int(usage.get("input_tokens") or 0),
                               "output_tokens": int(usage.get("output_tokens") or 0)})

    @contextmanager
    def case(self) -> Iterator[list[dict[str, Any]]]:
        ident = threading.get_ident()
        calls: list[dict[str, Any]] = []
        with self._lock:
            self._open[ident] = calls
        try:
            yield calls
        finally:
            with self._lock:
                self._open.pop(ident, None)
                for call in calls:
                    stage = self._totals.setdefault(call["stage"], {"calls": 0, "ms": 0})
                    if call["stage"] != REQUEST:
                        stage["calls"] += 1
                    stage["ms"] += call["ms"]
                    for key in ("input_tokens", "output_tokens"):
                        if key in call:
                            stage[key] = stage.get(key, 0) + call[key]

    def totals(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {k: dict(v) for k, v in self._totals.items()}


@contextmanager
def listening(handler: logging.Handler) -> Iterator[None]:
    """`handler` on the engine's trace logger, at INFO, for the duration; restored after."""
    logger = logging.getLogger(TRACE_LOGGER)
    level = logger.level
    logger.addHandler(handler)
    if not logger.isEnabledFor(logging.INFO):
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)

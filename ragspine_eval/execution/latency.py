"""Latency per case and its summary per run and by tag: p50, p95 and max of the wall time; and
each case's LLM calls as the engine's trace reported them, kept on its outcome (`timed`) for
models/usage.py, which counts them (per stage and tag, every repeat) into `times.usage`.

Invariants:
- a latency is wall time measured around one case's engine call (`time.perf_counter`), in
  seconds; a case that errored is left out of the percentiles (its time measures the failure);
- percentiles are the nearest-rank kind (the smallest value with at least q% of the values at
  or below it): a p95 is a time some case took, never an interpolation between two;
- the LLM calls are those the engine's trace reported (engines/trace.py's `LLMTrace`: counts
  per calling thread, never prompt or answer text; the request's own totals as the
  pseudo-stage `REQUEST`, which models/usage.py keeps apart from every stage);
- everything here varies between two runs of the same inputs, so a report keeps it under
  `provenance.times` (provenance.py), the one part left out of the byte-identical comparison.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ragspine_eval.engines.trace import TRACE_LOGGER, LLMTrace

SECONDS_ATTR = "seconds_taken"  # a timed outcome's wall time: an attribute, never a field


LLM_ATTR = "llm_calls_seen"  # the LLM calls the engine's trace reported during the call


def timed(answer: Any, *args: Any) -> Any:
    """`answer(*args)` (an engine call returning a CaseOutcome), its wall time set on the
    outcome as the attribute `seconds_taken` and the LLM calls the engine's trace reported in
    this thread meanwhile as `llm_calls_seen`: attributes, not dataclass fields, so they are in
    no equality, no report field and no cache entry, yet they cross a process boundary (pickle
    keeps them)."""
    with tracing() as trace, trace.case() as calls:
        started = time.perf_counter()
        out = answer(*args)
        seconds = time.perf_counter() - started
    try:
        object.__setattr__(out, SECONDS_ATTR, seconds)
        object.__setattr__(out, LLM_ATTR, list(calls))
    except (AttributeError, TypeError):  # an outcome without a __dict__: not timed
        pass
    return out


def seconds_of(outcome: Any) -> float | None:
    """The wall time `timed` set on an outcome (None: not timed, e.g. reused from the cache)."""
    value = getattr(outcome, SECONDS_ATTR, None)
    return value if isinstance(value, float) else None


_SHARED: dict[str, Any] = {"trace": None, "users": 0, "level": None}
_SHARED_LOCK = threading.Lock()


@contextmanager
def tracing() -> Iterator[LLMTrace]:
    """One LLMTrace on the engine's trace logger for this process while any timed call runs
    (threads share it; each reads only its own calls); the logger as it was once none runs.
    A run holds it from its first case to its last (runner.py, a worker process's loop): adding
    and removing a handler and a level clears every logger's cache, which per case cost as
    much as a tenth of a fast case."""
    with _SHARED_LOCK:
        if _SHARED["users"] == 0:
            logger = logging.getLogger(TRACE_LOGGER)
            _SHARED["trace"], _SHARED["level"] = LLMTrace(), logger.level
            logger.addHandler(_SHARED["trace"])
            if not logger.isEnabledFor(logging.INFO):
                logger.setLevel(logging.INFO)
        _SHARED["users"] += 1
        trace = _SHARED["trace"]
    try:
        yield trace
    finally:
        with _SHARED_LOCK:
            _SHARED["users"] -= 1
            if _SHARED["users"] == 0:
                logger = logging.getLogger(TRACE_LOGGER)
                logger.removeHandler(_SHARED["trace"])
                logger.setLevel(_SHARED["level"])
                _SHARED["trace"] = None


def percentile(values: Iterable[float], q: float) -> float | None:
    """The nearest-rank q-th percentile (0 < q <= 100), None for no value."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class LatencySummary:
    """p50, p95 and max of the wall times of n cases, in seconds."""

    n: int
    p50: float | None
    p95: float | None
    max: float | None

    @classmethod
    def of(cls, seconds: Iterable[float]) -> LatencySummary:
        values = list(seconds)
        return cls(len(values), _round(percentile(values, 50)), _round(percentile(values, 95)),
                   _round(max(values)) if values else None)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "p50": self.p50, "p95": self.p95, "max": self.max}

    def text(self) -> str:
        if not self.n:
            return "no case timed"
        return (f"p50 {_ms(self.p50)} · p95 {_ms(self.p95)} · max {_ms(self.max)} "
                f"({self.n} cases)")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def summarize(cases: Iterable[tuple[str, Mapping[str, str], float | None, bool]]
              ) -> dict[str, Any]:
    """The latency record of a run from (case id, tags, seconds or None, errored) per case:
    {"unit": "s", "run": summary, "by_tag": {"key=value": summary}, "cases": {id: seconds}}
    (a report written before `times.usage` also held "llm", the trace's per-stage totals)."""
    per_case: dict[str, float] = {}
    by_tag: dict[str, list[float]] = {}
    timed = []
    for case_id, tags, seconds, errored in cases:
        if seconds is None:
            continue
        per_case[case_id] = round(seconds, 6)
        if errored:
            continue
        timed.append(seconds)
        for key, value in sorted(tags.items()):
            by_tag.setdefault(f"{key}={value}", []).append(seconds)
    return {"unit": "s", "run": LatencySummary.of(timed).to_dict(),
            "by_tag": {k: LatencySummary.of(v).to_dict() for k, v in sorted(by_tag.items())},
            "cases": per_case}


def lines(latency: Mapping[str, Any] | None, *, tags_shown: int = 5,
          run_line: bool = True) -> list[str]:
    """Console lines: the run's p50/p95/max (unless `run_line` is False: the provenance's lines
    show it), the slowest tag buckets by p95 (the LLM stages are the provenance's line)."""
    if not latency:
        return []
    run = latency.get("run") or {}
    out = [f"latency per case: {LatencySummary(**run).text()}"] if run and run_line else []
    if not run_line and tags_shown:
        out.append("slowest tags by p95:")
    buckets = sorted(((k, v) for k, v in (latency.get("by_tag") or {}).items() if v.get("n")),
                     key=lambda kv: (-(kv[1].get("p95") or 0), kv[0]))
    for key, value in buckets[:tags_shown]:
        out.append(f"  {key}: {LatencySummary(**value).text()}")
    return out

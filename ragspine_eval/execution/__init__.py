"""Execution: how the cases of a run reach an engine, and what is reused from earlier runs.

runner (`run_cases`: cases in order, in parallel, within a time limit), state (the state of one
run that the runner and its workers share), workers (worker threads and processes),
dask_executor (cases on a Dask cluster), cache (the outcome and verdict cache), golden_memo
(validated golden sets kept in the cache's file). Nothing here scores a case: a verdict stored
or read here is text to the cache, decoded by the QA harness.

The names below are imported on first use, so that importing one part does not import all.
"""

from importlib import import_module
from typing import Any

_WHERE = {
    "run_cases": "runner",
    "RunOptions": "runner",
    "RunInterrupted": "runner",
    "OutcomeCache": "cache",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)

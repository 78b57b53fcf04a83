"""Execution: how the cases of a run reach an engine, and what is reused from earlier runs.

runner (`run_cases`: cases in order, in parallel, within a time limit), options (`RunOptions`),
state (the state of one run that the runner and its workers share), workers (worker threads and processes),
dask_executor (cases on a Dask cluster), jobs (`--jobs auto`), collector (the cyclic collector
while a run holds its data), cache (the outcome and verdict cache), whole_run (a whole run in one
entry), case_texts (a report's case list kept beside it), golden_memo (validated golden sets
kept in the cache's file), latency. The run path that drives them is pipeline/. Nothing here scores a case: a verdict stored
or read here is text to the cache, decoded by the QA harness.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "run_cases": "runner",
    "RunOptions": "options",
    "RunInterrupted": "runner",
    "OutcomeCache": "cache",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)

"""The fourth step of a run: what is kept for the next one: each case's scoring (the verdict
cache) as it is scored, and the whole-run entry once the run is over.

`scored_saver(plan, outcomes)` is the scorer's `on_scored(i, entry)`: case i's scoring stored,
tied to the checksum of the outcome it was scored from; `streamed_saver(plan)` the same for a
streaming scorer, `(i, outcome, entry)`. `keep(plan, outcomes, interrupted)` commits the
verdicts and stores the whole-run entry (execution/whole_run.py).

Why: a re-run where nothing changed would otherwise read two entries per case (its verdicts and
the outcome they are tied to) and check two checksums per case; the whole-run entry is one read
and one checksum (warm / cold at 10,000 tool cases 11.3% -> 6.7%, benchmarks/RESULTS.md,
"Second pass (branch perf2)"; writing it costs a cold 10k run 0.16 s after the last answer).
The verdicts are written in small batches, each its own short transaction
(execution/cache_db.Writer), never one commit per case.

Invariants: a whole-run entry is written only for a run whose every case has its scoring,
never for a run with an engine error or one Ctrl-C stopped (whole_run.py); a failing disk costs
the next run its reuse, never this run.
"""

from __future__ import annotations

from typing import Any

from ragspine_eval.pipeline.plan import Plan


def scored_saver(plan: Plan, outcomes: list[Any]) -> Any:
    """on_scored(i, entry) for the scorer: each case scored now goes to the verdict cache
    (None: this run keeps no scoring)."""
    cache, scoring, cases = plan.cache, plan.scoring, plan.cases
    if cache is None or not scoring:
        return None

    def save(i: int, entry: Any) -> None:
        cache.put_scored(cases[i], outcomes[i], entry, scoring)
    return save


def streamed_saver(plan: Plan) -> Any:
    """save(i, outcome, entry) for a streaming scorer: each case scored as it arrives goes to
    the verdict cache (None: this run keeps no scoring)."""
    cache, scoring, cases = plan.cache, plan.scoring, plan.cases
    if cache is None or not scoring:
        return None
    return lambda i, out, entry: cache.put_scored(cases[i], out, entry, scoring)


def keep(plan: Plan, outcomes: list[Any], interrupted: bool) -> None:
    """Commit the verdicts stored during the run and, for a run that ended, its whole-run
    entry (the next identical run reads one entry)."""
    if plan.cache is None or not plan.scoring:
        return
    plan.cache.flush("verdicts")
    if not interrupted:
        plan.cache.keep_run(plan.cases, outcomes)

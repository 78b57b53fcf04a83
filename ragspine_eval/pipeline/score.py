"""The third step of a run: scoring, as the answers arrive or after the last one.

The scoring itself is the harness's (qa/report.py's `evaluate`, qa/streaming.py's `Streamer`;
retrieval_only/run.py judges each question's passages); this step decides when it happens. A
`StreamingScorer` is called with each answer as it arrives, in the main process, while worker
processes answer the next cases; `scores_as_answers_arrive` says whether a run does that.

Why: when cases run in worker processes the main process only waits for their answers; a cold
run then scored every case after the last one came back, one core busy and the other idle.
Scoring each answer as it arrives takes the harness's own work off the engine's critical path:
with one job in a forked worker of its own (execution/jobs.own_process), 10,000 tool cases
10.5 s against 11.3 s on the 2-core machine (benchmarks/RESULTS.md, "`--jobs 1`: one forked
worker"). A resumed run also builds its reused cases' results a share with each arriving
answer (resume 57.6% -> 53.7% of a full run at 30,000 tool cases, RESULTS.md).

Invariants: a streamed case's results are exactly what scoring it after the run gives (the
harness's scorer promises it: qa/streaming.py), so the report is the same byte for byte
however the cases ran; only one run of local worker processes streams (Dask hands its answers
back at the end; repeats are scored each on its own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ragspine_eval.pipeline.spec import RunHow

OnOutcome = Callable[[int, Any], None]  # (the j-th case of the run, its outcome)


class StreamingScorer(Protocol):
    def at(self, positions: Sequence[int], stored: Sequence[tuple[int, Any]] = ()
           ) -> OnOutcome:
        """The on_outcome of a run over the cases at `positions`; `stored`: (case index,
        stored scoring) of the cases reused with their scoring, built as answers arrive."""
        ...


def scores_as_answers_arrive(how: RunHow, options: Any) -> bool:
    """Whether this run scores each answer as it arrives (module docstring): one run, on the
    local executor, its cases in worker processes (several jobs, or one of its own)."""
    return how.repeat == 1 and how.executor == "local" and (options.jobs > 1
                                                            or options.own_process)

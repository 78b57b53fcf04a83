"""Running golden cases through an engine: in case order, in parallel, within a time limit.

`run_cases(engine, cases, RunOptions(jobs, case_timeout, fail_fast), progress)` returns one
outcome per case, of the engine's outcome type (engines/base.outcome_type: CaseOutcome unless
the engine says another). Invariants:
- outcomes are in case order whatever `jobs` is and whatever order the cases finish in, so a
  report is the same for every `jobs` (given an engine that answers the same case the same way);
- nothing an engine does ends the run: an exception, a case past `case_timeout`, or a worker
  process that dies becomes that case's `error` (an outcome of the engine's type, made by the
  type's `failed(case, error)`: so does every not-run case below), and the next case goes on;
- no hang: the time limit covers the whole case (an engine's own retries included). A case past
  it is abandoned: its thread is left to finish on its own and never reused (a thread cannot be
  stopped), or its worker process is killed and a fresh one started; cases queued behind it on
  that worker go back to the front of the queue. All threads are daemons and all worker
  processes daemonic, so an abandoned case never keeps the program alive;
- fail_fast: the first error in case order ends the run. Every later case is recorded as not
  run, even when a parallel worker already answered it, so the report equals a serial run's;
  a worker starts no case after its own error;
- a case whose outcome says the run must stop (engines/base.NOT_RUN_STOPPED: a model call
  budget spent, models/budget.py) stops it, whatever the options: no case is handed out after
  it (cases already sent ahead to a worker process run to their end: a spent budget refuses
  their paid calls too), and every case without an outcome gets that same not-run text; the
  caller (pipeline/answer.py) then ends the run as an interrupted one, which resumes;
- Ctrl-C (a KeyboardInterrupt in the main thread, or raised by `progress`) stops the run at
  once: no case is handed out any more, answers already waiting in a worker's pipe are kept,
  worker processes with a case in hand are killed and worker threads abandoned (they record
  nothing more). `RunInterrupted` is raised with one outcome per case, in case order: those
  that finished as they came, every other one `interrupted_outcome()` (no holes). It is a
  KeyboardInterrupt, so a caller that does not look inside is interrupted as before. A second
  Ctrl-C while the workers are ended is a plain KeyboardInterrupt;
- parallel cases run in threads, or in worker processes when the engine says
  `parallel = "processes"` (the in-process engine: CPU-bound Python, and SQLite handles that must
  not cross a fork); an engine that also says `isolated = True` (a user's callable) runs in a
  worker process for one job too, so that os._exit or a crash in it ends one case, not the run;
  so does one job with `RunOptions.own_process` (jobs.own_process: a second core scores
  meanwhile). Worker processes are forked where workers.start_method says it is safe (no
  other thread), else spawned and given a pickled engine; either way each opens its own
  handles.

The workers themselves (threads and processes) are in workers.py, the state they share with
the main loop in state.py. How, and why it is cheap per case: a thread worker takes case after case by itself and never
waits for the main thread, which only wakes to report progress, enforce time limits and notice
the end. Worker processes are driven from the main thread alone (no thread per worker), each
kept a few cases ahead through its pipe, so a worker never idles while its next case is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragspine_eval.engines.base import (
    CaseOutcome,
    Engine,
    interrupted_outcome,
    not_run,
    outcome_type,
    stop_reason,
)
from ragspine_eval.golden.cases import GoldenCase
from ragspine_eval.execution.state import OnOutcome, Progress, RunState
from ragspine_eval.execution import latency
from ragspine_eval.execution.collector import gc_relaxed
# the options live apart so that state.py reads them without importing the runner
from ragspine_eval.execution.options import DEFAULT_CASE_TIMEOUT, RunOptions
from ragspine_eval.execution.workers import ProcessWorker, ThreadWorker

__all__ = ["DEFAULT_CASE_TIMEOUT", "RunInterrupted", "RunOptions", "run_cases"]

def run_cases(engine: Engine, cases: Sequence[GoldenCase], options: RunOptions = RunOptions(),
              progress: Progress | None = None, on_outcome: OnOutcome | None = None
              ) -> list[Any]:
    """Run every case through the engine; outcomes in case order (see the module invariants).
    `on_outcome(i, outcome)` is called in this thread as case i's outcome arrives, only when
    the cases run in worker processes: this thread is idle then, so work it does on each
    outcome (qa/streaming.py scores it) is done while the workers answer the next cases."""
    cases = list(cases)
    if not cases:
        return []
    jobs = min(options.jobs, len(cases))
    processes = (getattr(engine, "parallel", "threads") == "processes"
                 and (jobs > 1 or options.own_process or getattr(engine, "isolated", False)))
    kind = outcome_type(engine)
    run = RunState(cases, options, progress, on_outcome if processes else None, kind)
    worker = ProcessWorker if processes else ThreadWorker
    workers: list[Any] = []
    interrupted = False
    try:
        workers += [worker(engine, run) for _ in range(jobs)]
        with gc_relaxed(), latency.tracing():
            run.drive(workers)
    except KeyboardInterrupt:
        interrupted = True
        run.schedule.cancel()
        for key in list(run.pipes.get_map().values()):
            key.data.receive()  # answers already in a pipe are answers: keep them
    finally:
        run.schedule.cancel()
        for w in workers:
            w.close()  # a worker process with a case in hand is killed, a thread abandoned
        run.pipes.close()

    outcomes = list(run.outcomes)  # an abandoned thread can no longer change it
    stop = run.schedule.stopped_at
    if stop is not None:
        skipped = (f"not run: the run stopped at the first engine error, case {cases[stop].id} "
                   f"(--fail-fast)")
        for i in range(stop + 1, len(cases)):
            outcomes[i] = kind.failed(cases[i], skipped)
    if interrupted:
        raise RunInterrupted.partial(outcomes, cases, kind)
    if run.stopped is not None:  # the run stopped itself: what had not finished is not run
        outcomes = [out or kind.failed(case, run.stopped) for out, case in zip(outcomes, cases)]
    missing = [cases[i].id for i, out in enumerate(outcomes) if out is None]
    if missing:  # a worker itself failed; never hand back a report with holes
        raise RuntimeError(f"no outcome for case(s) {', '.join(missing)}")
    return outcomes  # type: ignore[return-value]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run part-way (see the module invariants). `outcomes`: one per case, in
    case order, the unfinished ones `interrupted_outcome()`; `done`: how many had finished.
    run.run_qa_eval raises it again with the `report` scored from those outcomes, so that the
    gated run can write what the run has before the interrupt ends the program."""

    def __init__(self, outcomes: list[Any], done: int, report: Any = None):
        super().__init__(f"interrupted after {done} of {len(outcomes)} cases")
        self.outcomes, self.done, self.report = outcomes, done, report
        # what stopped a run that stopped itself (engines/base.NOT_RUN_STOPPED ...); None: Ctrl-C
        self.reason = stop_reason(getattr(out, "error", None) for out in outcomes)

    @classmethod
    def partial(cls, outcomes: Sequence[Any], cases: Sequence[Any] | None = None,
                kind: type[Any] = CaseOutcome) -> RunInterrupted:
        """The interrupt of a run whose cases without an outcome (None) never finished: each
        of them becomes `interrupted_outcome()` of the outcome type `kind`, for its case.
        Every executor stops this way."""
        cases = cases if cases is not None else [None] * len(outcomes)
        return cls([out or interrupted_outcome(case, kind) for out, case in zip(outcomes, cases)],
                   sum(out is not None for out in outcomes))

    @classmethod
    def of(cls, outcomes: list[Any], report: Any = None) -> RunInterrupted:
        """The interrupt of a run whose every case has an outcome, the unfinished ones a
        not-run text (engines/base.not_run)."""
        return cls(outcomes, sum(not not_run(getattr(out, "error", None)) for out in outcomes),
                   report)

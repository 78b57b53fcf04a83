"""Running golden cases through an engine: in case order, in parallel, within a time limit.

`run_cases(engine, cases, RunOptions(jobs, case_timeout, fail_fast), progress)` returns one
`CaseOutcome` per case. Invariants:
- outcomes are in case order whatever `jobs` is and whatever order the cases finish in, so a
  report is the same for every `jobs` (given an engine that answers the same case the same way);
- nothing an engine does ends the run: an exception, a case past `case_timeout`, or a worker
  process that dies becomes that case's `error`, and the next case goes on;
- no hang: the time limit covers the whole case (an engine's own retries included). A case past
  it is abandoned: its thread is left to finish on its own and never reused (a thread cannot be
  stopped), or its worker process is killed and a fresh one started; cases queued behind it on
  that worker go back to the front of the queue. All threads are daemons and all worker
  processes daemonic, so an abandoned case never keeps the program alive;
- fail_fast: the first error in case order ends the run. Every later case is recorded as not
  run, even when a parallel worker already answered it, so the report equals a serial run's;
  a worker starts no case after its own error;
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
  worker process for one job too, so that os._exit or a crash in it ends one case, not the run. Worker processes are spawned, not forked, and receive a pickled engine that
  opens its own handles.

The workers themselves (threads and processes) are in workers.py. How, and why it is cheap
per case: a thread worker takes case after case by itself and never
waits for the main thread, which only wakes to report progress, enforce time limits and notice
the end. Worker processes are driven from the main thread alone (no thread per worker), each
kept a few cases ahead through its pipe, so a worker never idles while its next case is sent.
"""

from __future__ import annotations

import heapq
import selectors
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine_eval.qa.engines.base import (
    CaseOutcome,
    Engine,
    interrupted_outcome,
)
from ragspine_eval.qa.golden import GoldenCase
from ragspine_eval.qa.workers import ProcessWorker, ThreadWorker

DEFAULT_CASE_TIMEOUT = 120.0
# How often the main thread looks at the time limits and the progress while nothing happens.
PROGRESS_POLL = 0.05
IDLE_POLL = 0.5
# After reading outcomes from worker processes the main thread waits this long, so that it
# reads them a few at a time (each wake costs more than a case's message); the cases queued
# on each worker keep it busy meanwhile.
PIPE_COALESCE = 0.002

Progress = Callable[[int, int, int], None]  # (cases done, cases in total, errors so far)


@dataclass(frozen=True)
class RunOptions:
    jobs: int = 1
    case_timeout: float = DEFAULT_CASE_TIMEOUT
    fail_fast: bool = False

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if not self.case_timeout > 0:
            raise ValueError(f"case_timeout must be a positive number of seconds, "
                             f"got {self.case_timeout}")


def run_cases(engine: Engine, cases: Sequence[GoldenCase], options: RunOptions = RunOptions(),
              progress: Progress | None = None) -> list[CaseOutcome]:
    """Run every case through the engine; outcomes in case order (see the module invariants)."""
    cases = list(cases)
    if not cases:
        return []
    jobs = min(options.jobs, len(cases))
    processes = (getattr(engine, "parallel", "threads") == "processes"
                 and (jobs > 1 or getattr(engine, "isolated", False)))
    run = _Run(cases, options, progress)
    worker = ProcessWorker if processes else ThreadWorker
    workers: list[Any] = []
    interrupted = False
    try:
        workers += [worker(engine, run) for _ in range(jobs)]
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
        not_run = (f"not run: the run stopped at the first engine error, case {cases[stop].id} "
                   f"(--fail-fast)")
        for i in range(stop + 1, len(cases)):
            outcomes[i] = CaseOutcome(error=not_run)
    if interrupted:
        raise RunInterrupted.partial(outcomes)
    missing = [cases[i].id for i, out in enumerate(outcomes) if out is None]
    if missing:  # a worker itself failed; never hand back a report with holes
        raise RuntimeError(f"no outcome for case(s) {', '.join(missing)}")
    return outcomes  # type: ignore[return-value]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run part-way (see the module invariants). `outcomes`: one per case, in
    case order, the unfinished ones `interrupted_outcome()`; `done`: how many had finished.
    run.run_qa_eval raises it again with the `report` scored from those outcomes, so that the
    gated run can write what the run has before the interrupt ends the program."""

    def __init__(self, outcomes: list[CaseOutcome], done: int, report: Any = None):
        super().__init__(f"interrupted after {done} of {len(outcomes)} cases")
        self.outcomes, self.done, self.report = outcomes, done, report

    @classmethod
    def partial(cls, outcomes: Sequence[CaseOutcome | None]) -> RunInterrupted:
        """The interrupt of a run whose cases without an outcome (None) never finished: each
        of them becomes `interrupted_outcome()`. Every executor stops this way."""
        return cls([out or interrupted_outcome() for out in outcomes],
                   sum(out is not None for out in outcomes))


class _Schedule:
    """Hands out case indices, lowest first: cases given back (their worker was killed with
    them queued) before new ones. After stop_after(i), none beyond the lowest such i."""

    def __init__(self, n: int):
        self._next, self._n = 0, n
        self._returned: list[int] = []
        self.stopped_at: int | None = None
        self._lock = threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            limit = self._n if self.stopped_at is None else self.stopped_at + 1
            if self._returned and self._returned[0] < limit:
                return heapq.heappop(self._returned)
            if self._next >= limit:
                return None
            self._next += 1
            return self._next - 1

    def give_back(self, indices: Sequence[int]) -> None:
        with self._lock:
            for i in indices:
                heapq.heappush(self._returned, i)

    def stop_after(self, i: int) -> None:
        with self._lock:
            if self.stopped_at is None or i < self.stopped_at:
                self.stopped_at = i
                self._next = max(self._next, i + 1)  # i itself has run

    def cancel(self) -> None:
        """Hand out nothing more (the run is over or being abandoned)."""
        with self._lock:
            self._n = 0
            self._returned.clear()

    def exhausted(self) -> bool:
        with self._lock:
            limit = self._n if self.stopped_at is None else self.stopped_at + 1
            return self._next >= limit and not any(i < limit for i in self._returned)


class _Run:
    """The shared state of one run: outcomes, the schedule, and what the main thread reports."""

    def __init__(self, cases: list[GoldenCase], options: RunOptions, progress: Progress | None):
        self.cases, self.options, self.progress = cases, options, progress
        self.outcomes: list[CaseOutcome | None] = [None] * len(cases)
        self.schedule = _Schedule(len(cases))
        self.completed: list[int] = []  # indices in the order they finished (append is atomic)
        self.wake = threading.Event()
        self.pipes = selectors.DefaultSelector()  # worker processes' pipes, data: the worker
        self._reported = self._errors = 0

    def finish(self, i: int, out: CaseOutcome) -> None:
        """Record case i's outcome (from any thread); with fail_fast an error stops the run."""
        self.outcomes[i] = out
        if out.error and self.options.fail_fast:
            self.schedule.stop_after(i)
        self.completed.append(i)

    def drive(self, workers: list[Any]) -> None:
        """The main thread's loop: feed worker processes, enforce time limits, report."""
        poll = PROGRESS_POLL if self.progress else IDLE_POLL
        while True:
            self.wake.clear()  # before looking: a lane that ends from here on is seen by wait
            now = time.monotonic()
            for w in workers:
                w.check(now)
            fed = True
            while fed:  # one case to each worker in turn, so small runs spread over all
                fed = False
                for w in workers:
                    fed = w.feed(now) or fed
            self._report()
            if self.schedule.exhausted() and all(w.idle() for w in workers):
                return
            deadlines = [d for w in workers if (d := w.deadline()) is not None]
            timeout = max(0.0, min([poll, *(d - now for d in deadlines)]))
            if self.pipes.get_map():
                ready = self.pipes.select(timeout)
                for key, _ in ready:
                    key.data.receive()
                if ready:
                    time.sleep(PIPE_COALESCE)
            else:
                self.wake.wait(timeout)

    def _report(self) -> None:
        if self.progress is None:
            return
        while self._reported < len(self.completed):
            i = self.completed[self._reported]
            self._reported += 1
            self._errors += bool(self.outcomes[i].error)  # type: ignore[union-attr]
            self.progress(self._reported, len(self.cases), self._errors)

"""The state of one run that the runner's main loop and its workers share.

`RunState` holds the outcomes (one slot per case, in case order), the `Schedule` that hands out
case indices, and the main thread's loop (`drive`: feed worker processes, enforce time limits,
report progress, hand each outcome to `on_outcome` as it is recorded). runner.py makes one per run; workers.py reads and records through it. It
lives apart from both so that neither imports the other.

Invariants: an outcome is recorded once per case, from any thread (`finish`); with fail_fast the
first error in case order stops the schedule after it; a case not run because the run must stop
(engines/base.NOT_RUN_STOPPED) hands out no case more; cases given back (a worker killed with
them queued) are handed out again before new ones, lowest first.
"""

from __future__ import annotations

import heapq
import selectors
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ragspine_eval.engines.base import NOT_RUN_STOPPED, CaseOutcome
from ragspine_eval.execution.options import RunOptions
from ragspine_eval.golden.cases import GoldenCase

# How often the main thread looks at the time limits and the progress while nothing happens.
PROGRESS_POLL = 0.05
IDLE_POLL = 0.5
# After reading outcomes from worker processes the main thread waits this long, so that it
# reads them a few at a time (each wake costs more than a case's message); the cases queued
# on each worker keep it busy meanwhile.
PIPE_COALESCE = 0.002

Progress = Callable[[int, int, int], None]  # (cases done, cases in total, errors so far)
# (case index, its outcome), called in the main thread as each case's outcome is recorded
OnOutcome = Callable[[int, Any], None]


class Schedule:
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


class RunState:
    """The shared state of one run: outcomes, the schedule, and what the main thread reports."""

    def __init__(self, cases: list[GoldenCase], options: RunOptions, progress: Progress | None,
                 on_outcome: OnOutcome | None = None, kind: type[Any] = CaseOutcome):
        self.cases, self.options, self.progress = cases, options, progress
        self.on_outcome = on_outcome
        self.kind = kind  # the engine's outcome type (engines/base.outcome_type)
        self.outcomes: list[Any] = [None] * len(cases)  # of the engine's outcome type
        self.schedule = Schedule(len(cases))
        self.completed: list[int] = []  # indices in the order they finished (append is atomic)
        self.wake = threading.Event()
        self.pipes = selectors.DefaultSelector()  # worker processes' pipes, data: the worker
        self._reported = self._errors = self._handed = 0
        self.stopped: str | None = None  # the not-run text of the case that stopped the run

    def failed(self, i: int, error: str) -> Any:
        """Case i's outcome when the runner ends it with `error` (a time limit, a lost worker),
        of the engine's outcome type."""
        return self.kind.failed(self.cases[i], error)

    def finish(self, i: int, out: Any) -> None:
        """Record case i's outcome (from any thread); with fail_fast an error stops the run, and
        a case that says the run must stop (a spent model budget) stops it whatever the options."""
        self.outcomes[i] = out
        if out.error and self.options.fail_fast:
            self.schedule.stop_after(i)
        if out.error and self.stopped is None and out.error.startswith(NOT_RUN_STOPPED):
            self.stopped = out.error
            self.schedule.cancel()
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
        if self.on_outcome is not None:
            while self._handed < len(self.completed):
                i = self.completed[self._handed]
                self._handed += 1
                self.on_outcome(i, self.outcomes[i])  # type: ignore[arg-type]
        if self.progress is None:
            return
        while self._reported < len(self.completed):
            i = self.completed[self._reported]
            self._reported += 1
            self._errors += bool(self.outcomes[i].error)  # type: ignore[union-attr]
            self.progress(self._reported, len(self.cases), self._errors)

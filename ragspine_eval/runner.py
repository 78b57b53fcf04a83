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
- parallel cases run in threads, or in worker processes when the engine says
  `parallel = "processes"` (the in-process engine: CPU-bound Python, and SQLite handles that must
  not cross a fork). Worker processes are spawned, not forked, and receive a pickled engine that
  opens its own handles.

How, and why it is cheap per case: a thread worker takes case after case by itself and never
waits for the main thread, which only wakes to report progress, enforce time limits and notice
the end. Worker processes are driven from the main thread alone (no thread per worker), each
kept a few cases ahead through its pipe, so a worker never idles while its next case is sent.
"""

from __future__ import annotations

import heapq
import multiprocessing
import pickle
import select
import selectors
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine_eval.engines.base import CaseOutcome, Engine, error_outcome, timeout_outcome
from ragspine_eval.golden import GoldenCase

DEFAULT_CASE_TIMEOUT = 120.0
# How long a fresh worker process may take to import the engine before it counts as failed.
WORKER_START_TIMEOUT = 120.0
# Cases sent ahead to one worker process, and at most this many bytes of them, so that the
# pipe to the worker never fills (its outcomes could fill the pipe back: neither would move).
PIPELINE_CASES = 16
PIPELINE_BYTES = 32 * 1024
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
    processes = jobs > 1 and getattr(engine, "parallel", "threads") == "processes"
    run = _Run(cases, options, progress)
    worker = _ProcessWorker if processes else _ThreadWorker
    workers = [worker(engine, run) for _ in range(jobs)]
    try:
        run.drive(workers)
    finally:
        run.schedule.cancel()
        for w in workers:
            w.close()
        run.pipes.close()

    outcomes = run.outcomes
    stop = run.schedule.stopped_at
    if stop is not None:
        not_run = (f"not run: the run stopped at the first engine error, case {cases[stop].id} "
                   f"(--fail-fast)")
        for i in range(stop + 1, len(cases)):
            outcomes[i] = CaseOutcome(error=not_run)
    missing = [cases[i].id for i, out in enumerate(outcomes) if out is None]
    if missing:  # a worker itself failed; never hand back a report with holes
        raise RuntimeError(f"no outcome for case(s) {', '.join(missing)}")
    return outcomes  # type: ignore[return-value]


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


def _answer(engine: Engine, case: GoldenCase) -> CaseOutcome:
    """engine.run_case, with anything it raises or returns amiss turned into the case's error."""
    try:
        out = engine.run_case(case)
    except Exception as exc:
        return error_outcome(exc)
    if not isinstance(out, CaseOutcome):
        return CaseOutcome(error=f"engine {engine.name} returned {type(out).__name__}, "
                                 f"not a CaseOutcome")
    return out


def _close(engine: Engine) -> None:
    close = getattr(engine, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # closing the handles of a finished run must not mask its results
            pass


# --- threads -----------------------------------------------------------------------------------


class _Lane:
    """One worker thread's state, shared with the main thread under `lock`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.current: tuple[int, float] | None = None  # (case index, monotonic start)
        self.abandoned = False
        self.done = False


def _lane_main(engine: Engine, run: _Run, lane: _Lane) -> None:
    """A worker thread: take cases until there are none, or until abandoned."""
    try:
        while True:
            with lane.lock:
                if lane.abandoned:
                    return
                i = run.schedule.take()
                if i is None:
                    lane.current = None
                    return
                lane.current = (i, time.monotonic())
            out = _answer(engine, run.cases[i])
            with lane.lock:
                if lane.abandoned:  # the main thread has recorded its timeout
                    return
                lane.current = None
                run.finish(i, out)  # before the next take: fail_fast stops this lane too
    finally:
        lane.done = True
        _close(engine)  # the engine's handles belong to this thread
        run.wake.set()


class _ThreadWorker:
    """Runs cases in a daemon thread; a case past the time limit abandons that thread and a
    fresh one takes the next cases."""

    def __init__(self, engine: Engine, run: _Run):
        self.engine, self.run = engine, run
        self._lane: _Lane | None = None

    def _start(self) -> None:
        self._lane = lane = _Lane()
        threading.Thread(target=_lane_main, args=(self.engine, self.run, lane),
                         name="ragspine-eval-case", daemon=True).start()

    def check(self, now: float) -> None:
        if self._lane is None:
            self._start()
            return
        lane, limit = self._lane, self.run.options.case_timeout
        with lane.lock:
            current = lane.current
            if current is None or now - current[1] <= limit:
                return
            lane.abandoned = True
        self.run.finish(current[0], timeout_outcome(limit))
        self._start()

    def feed(self, now: float) -> bool:
        return False  # a thread takes its cases itself

    def deadline(self) -> float | None:
        current = self._lane.current if self._lane else None
        return None if current is None else current[1] + self.run.options.case_timeout

    def idle(self) -> bool:
        return self._lane is not None and self._lane.done

    def close(self) -> None:
        pass  # the thread ends once the schedule hands it nothing


# --- processes ---------------------------------------------------------------------------------

_READY = b"ready"


def _process_main(engine: Engine, conn: Any) -> None:
    """A worker process: answer pickled cases from the pipe until it closes or sends b""."""
    try:
        conn.send_bytes(_READY)
        while True:
            try:
                message = conn.recv_bytes()
            except EOFError:
                return
            if not message:
                return
            conn.send_bytes(pickle.dumps(_answer(engine, pickle.loads(message)),
                                         pickle.HIGHEST_PROTOCOL))
    finally:
        _close(engine)


class _ProcessWorker:
    """Runs cases in one spawned worker process, a few cases ahead; a case past the time limit
    kills the process, and the cases queued behind it go back to the schedule."""

    def __init__(self, engine: Engine, run: _Run):
        self.engine, self.run = engine, run
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None
        self._ready = False
        self._started = 0.0
        self._since = 0.0  # when the oldest case in flight can have started
        self._inflight: deque[tuple[int, int]] = deque()  # (case index, pickled size)
        self._bytes = 0
        self._ahead = 1 if run.options.fail_fast else PIPELINE_CASES

    def _start(self, now: float) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_process_main, args=(self.engine, child),
                                       name="ragspine-eval-worker", daemon=True)
        self._proc.start()
        child.close()
        self._conn, self._ready, self._started = parent, False, now
        self.run.pipes.register(parent, selectors.EVENT_READ, self)
        self._readable = select.poll()  # Connection.poll() builds a selector on every call
        self._readable.register(parent, select.POLLIN)

    def feed(self, now: float) -> bool:
        """Send one more case if this worker has room for it."""
        if len(self._inflight) >= self._ahead or (self._inflight and
                                                  self._bytes >= PIPELINE_BYTES):
            return False
        i = self.run.schedule.take()
        if i is None:
            return False
        if self._proc is None:
            self._start(now)
        message = pickle.dumps(self.run.cases[i], pickle.HIGHEST_PROTOCOL)
        if not self._inflight:
            self._since = now
        self._inflight.append((i, len(message)))
        self._bytes += len(message)
        try:
            self._conn.send_bytes(message)
        except OSError:
            self._lost(self._died_text())
        return True

    def receive(self) -> None:
        try:
            while self._conn is not None and self._readable.poll(0):
                message = self._conn.recv_bytes()
                now = time.monotonic()
                if message == _READY:
                    self._ready, self._since = True, now
                    continue
                i, size = self._inflight.popleft()
                self._bytes -= size
                self._since = now
                self.run.finish(i, pickle.loads(message))
        except (EOFError, OSError):
            self._lost(self._died_text())

    def check(self, now: float) -> None:
        deadline = self.deadline()
        if deadline is None or now <= deadline:
            return
        if not self._ready:
            self._lost(f"RuntimeError: worker process failed to start within "
                       f"{WORKER_START_TIMEOUT:g} s")
        else:
            self._lost(timeout_outcome(self.run.options.case_timeout).error)  # type: ignore[arg-type]

    def _died_text(self) -> str:
        self._proc.join(timeout=5)
        code = self._proc.exitcode
        if not self._ready:
            return f"RuntimeError: worker process failed to start (exit code {code})"
        return f"RuntimeError: the worker process running this case died (exit code {code})"

    def _lost(self, error: str) -> None:
        """The oldest case in flight ends with `error`; the process goes, and the cases queued
        behind that case go back to the schedule for a fresh worker."""
        self._kill()
        if not self._inflight:
            return
        i, _ = self._inflight.popleft()
        self.run.schedule.give_back([j for j, _ in self._inflight])
        self._inflight.clear()
        self._bytes = 0
        self.run.finish(i, CaseOutcome(error=error))

    def deadline(self) -> float | None:
        if not self._inflight:
            return None
        if not self._ready:
            return self._started + WORKER_START_TIMEOUT
        return self._since + self.run.options.case_timeout

    def idle(self) -> bool:
        return not self._inflight

    def _kill(self) -> None:
        if self._proc is not None:
            self.run.pipes.unregister(self._conn)
            self._proc.kill()
            self._proc.join(timeout=5)
            self._conn.close()
        self._proc = self._conn = None
        self._ready = False

    def close(self) -> None:
        if self._proc is None:
            return
        if self._inflight:  # the run is being abandoned (fail-fast, an interrupt)
            self._kill()
            return
        try:
            self._conn.send_bytes(b"")
            self._proc.join(timeout=10)
        except (OSError, ValueError):
            pass
        self._kill()

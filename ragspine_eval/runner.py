"""Running golden cases through an engine: in case order, in parallel, within a time limit.

`run_cases(engine, cases, RunOptions(jobs, case_timeout, fail_fast), progress)` returns one
`CaseOutcome` per case. Invariants:
- outcomes are in case order whatever `jobs` is and whatever order the cases finish in, so a
  report is the same for every `jobs` (given an engine that answers the same case the same way);
- nothing an engine does ends the run: an exception, a case past `case_timeout`, or a worker
  process that dies becomes that case's `error`, and the next case goes on;
- no hang: the time limit covers the whole case (an engine's own retries included). A case past
  it is abandoned: its thread is left to finish on its own and never reused (a thread cannot be
  stopped), or its worker process is killed and a fresh one started. All threads are daemons and
  all worker processes daemonic, so an abandoned case never keeps the program alive;
- fail_fast: the first error in case order ends the run. Every later case is recorded as not
  run, even when a parallel worker already answered it, so the report equals a serial run's;
- parallel cases run in threads, or in worker processes when the engine says
  `parallel = "processes"` (the in-process engine: CPU-bound Python, and SQLite handles that must
  not cross a fork). Worker processes are spawned, not forked, and receive a pickled engine that
  opens its own handles.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine_eval.engines.base import CaseOutcome, Engine, error_outcome, timeout_outcome
from ragspine_eval.golden import GoldenCase

DEFAULT_CASE_TIMEOUT = 120.0
# How long a fresh worker process may take to import the engine before it counts as failed.
WORKER_START_TIMEOUT = 120.0

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
    schedule = _Schedule(len(cases))
    finished: queue.Queue[tuple[int, CaseOutcome]] = queue.Queue()

    def slot() -> None:
        worker = _ProcessWorker(engine) if processes else _ThreadWorker(engine)
        try:
            while (i := schedule.take()) is not None:
                out = worker.run(cases[i], options.case_timeout)
                if out.error and options.fail_fast:
                    schedule.stop_after(i)  # before this slot takes another case
                finished.put((i, out))
        finally:
            worker.close()

    slots = [threading.Thread(target=slot, name=f"ragspine-eval-slot-{n}", daemon=True)
             for n in range(jobs)]
    for t in slots:
        t.start()

    outcomes: list[CaseOutcome | None] = [None] * len(cases)
    done = errors = 0
    while any(t.is_alive() for t in slots) or not finished.empty():
        try:
            i, out = finished.get(timeout=0.05)
        except queue.Empty:
            continue
        outcomes[i] = out
        done += 1
        if out.error:
            errors += 1
        if progress:
            progress(done, len(cases), errors)

    stop = schedule.stopped_at
    if stop is not None:
        not_run = (f"not run: the run stopped at the first engine error, case {cases[stop].id} "
                   f"(--fail-fast)")
        for i in range(stop + 1, len(cases)):
            outcomes[i] = CaseOutcome(error=not_run)
    missing = [cases[i].id for i, out in enumerate(outcomes) if out is None]
    if missing:  # a slot thread itself failed; never hand back a report with holes
        raise RuntimeError(f"no outcome for case(s) {', '.join(missing)}")
    return outcomes  # type: ignore[return-value]


class _Schedule:
    """Hands out case indices in order; after stop_after(i), none beyond the lowest such i."""

    def __init__(self, n: int):
        self._next, self._n = 0, n
        self.stopped_at: int | None = None
        self._lock = threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            limit = self._n if self.stopped_at is None else self.stopped_at
            if self._next >= limit:
                return None
            self._next += 1
            return self._next - 1

    def stop_after(self, i: int) -> None:
        with self._lock:
            if self.stopped_at is None or i < self.stopped_at:
                self.stopped_at = i


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


def _thread_main(engine: Engine, inbox: queue.Queue, outbox: queue.Queue) -> None:
    try:
        while (case := inbox.get()) is not None:
            outbox.put(_answer(engine, case))
    finally:
        _close(engine)  # the engine's handles belong to this thread


class _ThreadWorker:
    """Runs cases in one daemon thread; a case past the time limit abandons that thread."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._inbox: queue.Queue | None = None
        self._outbox: queue.Queue | None = None

    def run(self, case: GoldenCase, timeout: float) -> CaseOutcome:
        if self._inbox is None:
            self._inbox, self._outbox = queue.Queue(), queue.Queue()
            threading.Thread(target=_thread_main, args=(self.engine, self._inbox, self._outbox),
                             name="ragspine-eval-case", daemon=True).start()
        self._inbox.put(case)
        try:
            return self._outbox.get(timeout=timeout)
        except queue.Empty:
            self.close()  # the thread exits once its case returns; the next case gets a new one
            return timeout_outcome(timeout)

    def close(self) -> None:
        if self._inbox is not None:
            self._inbox.put(None)
            self._inbox = None


# --- processes ---------------------------------------------------------------------------------

_READY = "ready"


def _process_main(engine: Engine, conn: Any) -> None:
    """A worker process: answer cases from the pipe until it closes or sends None."""
    try:
        conn.send(_READY)
        while True:
            try:
                case = conn.recv()
            except EOFError:
                return
            if case is None:
                return
            conn.send(_answer(engine, case))
    finally:
        _close(engine)


class _ProcessWorker:
    """Runs cases in one spawned worker process; a case past the time limit kills it."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self._ctx = multiprocessing.get_context("spawn")
        self._proc: Any = None
        self._conn: Any = None

    def _start(self) -> str | None:
        """Start a worker; return why it could not start, or None."""
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_process_main, args=(self.engine, child),
                                       name="ragspine-eval-worker", daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent
        try:
            if parent.poll(WORKER_START_TIMEOUT) and parent.recv() == _READY:
                return None
        except (EOFError, OSError):
            pass
        code = self._proc.exitcode
        self._kill()
        return f"worker process failed to start (exit code {code})"

    def run(self, case: GoldenCase, timeout: float) -> CaseOutcome:
        if self._proc is None and (why := self._start()):
            return CaseOutcome(error=f"RuntimeError: {why}")
        try:
            self._conn.send(case)
            if not self._conn.poll(timeout):
                self._kill()
                return timeout_outcome(timeout)
            return self._conn.recv()
        except (EOFError, OSError):
            self._proc.join(timeout=5)
            code = self._proc.exitcode
            self._kill()
            return CaseOutcome(error=f"RuntimeError: the worker process running this case died "
                                     f"(exit code {code})")

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join(timeout=5)
            self._conn.close()
        self._proc = self._conn = None

    def close(self) -> None:
        if self._proc is None:
            return
        try:
            self._conn.send(None)
            self._proc.join(timeout=10)
        except (OSError, ValueError):
            pass
        self._kill()

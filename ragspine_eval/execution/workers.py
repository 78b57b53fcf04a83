"""The workers of a run: threads, or worker processes (spawned, or forked where start_method
says it is safe), each taking cases from the schedule.

Owned by runner.py, which drives them from the main thread: `check(now)` enforces the time limit
of the case in hand, `feed(now)` keeps a worker process a few cases ahead through its pipe,
`deadline()` and `idle()` tell the main loop when to look again and when the run is over.
Invariants: anything an engine raises or returns amiss becomes that case's error (`answer`); an
abandoned thread is never reused and records nothing more; a worker process past its limit is
killed and its queued cases go back to the schedule. Ctrl-C is the main thread's alone: worker
processes ignore SIGINT (from their first instruction: it is blocked while they are spawned),
and a worker process is started and ended with SIGINT held back, so an interrupt never finds
one half started or half ended; `close` kills a worker that still has a case in hand.
"""

from __future__ import annotations

import multiprocessing
import pickle
import select
import selectors
import signal
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing import resource_tracker
from typing import TYPE_CHECKING, Any

from ragspine_eval.execution import latency
from ragspine_eval.execution.collector import gc_relaxed
from ragspine_eval.engines.base import (
    CaseOutcome,
    Engine,
    error_outcome,
    outcome_problem,
    outcome_type,
    timeout_text,
)
from ragspine_eval.golden.cases import GoldenCase

if TYPE_CHECKING:
    from ragspine_eval.execution.state import RunState

# How long a fresh worker process may take to import the engine before it counts as failed.
WORKER_START_TIMEOUT = 120.0
# Cases sent ahead to one worker process, and at most this many bytes of them, so that the
# pipe to the worker never fills (its outcomes could fill the pipe back: neither would move).
PIPELINE_CASES = 16
PIPELINE_BYTES = 32 * 1024


def _answer(engine: Engine, case: GoldenCase, check: bool = True) -> Any:
    """_answer_untimed, its wall time kept on the outcome (latency.timed)."""
    return latency.timed(_answer_untimed, engine, case, check)


def _answer_untimed(engine: Engine, case: GoldenCase, check: bool = True) -> Any:
    """engine.run_case, with anything it raises or returns amiss turned into the case's error
    (an outcome of the engine's type): sys.exit and a KeyboardInterrupt the engine raises too
    (a real Ctrl-C reaches the main thread only, never a worker), an outcome of another type,
    and a CaseOutcome built with wrong types (`check`; else `checked` is the receiver's to
    call)."""
    kind = outcome_type(engine)
    try:
        out = engine.run_case(case)
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        return error_outcome(exc, case, kind)
    if not isinstance(out, kind):
        return kind.failed(case, f"engine {engine.name} returned {type(out).__name__}, "
                                 f"not a {kind.__name__}")
    return checked(engine, out) if check else out


def checked(engine: Engine, out: Any) -> Any:
    """The outcome, or the error of one whose fields cannot be scored or written (a
    CaseOutcome's: engines/base.outcome_problem)."""
    problem = outcome_problem(out)
    if problem is not None:
        return CaseOutcome(error=f"OutcomeError: {engine.name} returned an outcome whose "
                                 f"{problem}")
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


def _lane_main(engine: Engine, run: RunState, lane: _Lane) -> None:
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


class ThreadWorker:
    """Runs cases in a daemon thread; a case past the time limit abandons that thread and a
    fresh one takes the next cases."""

    def __init__(self, engine: Engine, run: RunState):
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
        self.run.finish(current[0], self.run.failed(current[0], timeout_text(limit)))
        self._start()

    def feed(self, now: float) -> bool:
        return False  # a thread takes its cases itself

    def deadline(self) -> float | None:
        current = self._lane.current if self._lane else None
        return None if current is None else current[1] + self.run.options.case_timeout

    def idle(self) -> bool:
        return self._lane is not None and self._lane.done

    def close(self) -> None:
        # the thread ends once the schedule hands it nothing; one still in a case (the run was
        # interrupted) records nothing when it comes back
        if self._lane is not None:
            with self._lane.lock:
                self._lane.abandoned = True


# --- processes ---------------------------------------------------------------------------------

_READY = b"ready"


def _process_main(engine: Engine, conn: Any, check: bool = True) -> None:
    """A worker process: answer pickled cases from the pipe until it closes or sends b""
    (`check`: each outcome checked here, else by the parent as it arrives).
    Ctrl-C is the parent's to handle (it stops the run and ends its workers): ignored here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # held back while spawned
    try:
        conn.send_bytes(_READY)
        with gc_relaxed(), latency.tracing():
            _serve(engine, conn, check)
    finally:
        _close(engine)


def _serve(engine: Engine, conn: Any, check: bool = True) -> None:
    """Answer cases from the pipe until it closes or sends b"" (an empty message)."""
    while True:
        try:
            message = conn.recv_bytes()
        except EOFError:
            return
        if not message:
            return
        conn.send_bytes(pickle.dumps(_answer(engine, pickle.loads(message), check),
                                     pickle.HIGHEST_PROTOCOL))


@contextmanager
def _sigint_held() -> Iterator[None]:
    """Ctrl-C held back while a worker process is started or ended, so that it never leaves a
    worker half known (started and not yet registered, unregistered and not yet killed): it
    arrives as the block ends. Two holds, since either alone leaks: SIGINT is blocked (a process
    started meanwhile inherits the block, so a Ctrl-C sent to the whole terminal group while it
    imports the engine waits, and is dropped once _process_main ignores SIGINT: no traceback
    from a worker on the analyst's terminal), and Python's handler is swapped for one that only
    notes it (a SIGINT that came just before the block still raises at the next instruction
    otherwise). Python handles signals in the main thread only: elsewhere, only the block."""
    caught: list[int] = []
    main = (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is not None)  # None: a handler set outside Python
    previous = signal.signal(signal.SIGINT, lambda signum, _: caught.append(signum)) if main \
        else None
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # one that waited is noted now
        if main:
            signal.signal(signal.SIGINT, previous)
            if caught:
                signal.raise_signal(signal.SIGINT)  # to the handler it was meant for


def start_method(engine: Engine) -> str:
    """"fork" for an engine that says it may be forked (`forkable`: the in-process engine) in a
    process with no other thread, where fork is: the worker starts at once with the engine
    already imported (spawning one imports it again, about 0.8 s and a core each). Else
    "spawn": forking a process with other threads (a Jupyter kernel's, a user's) can copy a
    lock another thread holds, and another engine's state is not ours to copy."""
    return "fork" if getattr(engine, "forkable", False) and forks_here() else "spawn"


def forks_here() -> bool:
    """Whether a forkable engine's workers would be forked now (start_method)."""
    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


class ProcessWorker:
    """Runs cases in one worker process (start_method), a few cases ahead; a case past the time
    limit kills the process, and the cases queued behind it go back to the schedule. With
    `RunOptions.own_process` (one worker, a core left for this process) each outcome is
    checked here as it arrives rather than in the worker: off the engine's critical path."""

    def __init__(self, engine: Engine, run: RunState):
        self.engine, self.run = engine, run
        self._check_here = run.options.own_process
        self._ctx = multiprocessing.get_context(start_method(engine))
        self._proc: Any = None
        self._conn: Any = None
        self._ready = False
        self._started = 0.0
        self._since = 0.0  # when the oldest case in flight can have started
        self._inflight: deque[tuple[int, int]] = deque()  # (case index, pickled size)
        self._bytes = 0
        self._ahead = 1 if run.options.fail_fast else PIPELINE_CASES

    def _start(self, now: float) -> None:
        # the first spawn starts multiprocessing's resource tracker, which unblocks SIGINT
        # as it does: started here, before the block, it leaves the block alone
        resource_tracker.ensure_running()
        with _sigint_held():  # the child inherits the block: see _sigint_held
            parent, child = self._ctx.Pipe()
            self._proc = self._ctx.Process(target=_process_main,
                                           args=(self.engine, child, not self._check_here),
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
                out = pickle.loads(message)
                self.run.finish(i, checked(self.engine, out) if self._check_here else out)
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
            self._lost(timeout_text(self.run.options.case_timeout))

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
        self.run.finish(i, self.run.failed(i, error))

    def deadline(self) -> float | None:
        if not self._inflight:
            return None
        if not self._ready:
            return self._started + WORKER_START_TIMEOUT
        return self._since + self.run.options.case_timeout

    def idle(self) -> bool:
        return not self._inflight

    def _kill(self) -> None:
        with _sigint_held():  # never half done: a Ctrl-C then finds the worker gone or whole
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

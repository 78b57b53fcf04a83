"""The second step of a run: the engine answers the cases the caches do not, on the chosen
executor, each answer stored as it comes.

`run_options(how, to_run, engine)` chooses how many cases run at once and whether one job gets
a worker process of its own; `answer(plan, how, options, open_engine, make_scorer)` opens the
engine only when some case must reach it (`open_engine()`: a context manager yielding it) and
returns one list of outcomes per repeat, in case order, with per case whether it was reused.

Why it is fast (figures of benchmarks/RESULTS.md and docs/performance.md):
- `--jobs auto` (execution/jobs.py): forked workers from 300 cases to run (10,000 tool cases:
  two workers give 1.3x; 3,000 cases 2.59 s against 3.70 s), counting only the cases the cache
  cannot answer, so a warm re-run with a few edited cases stays in one process;
- one job in a forked worker of its own from 1,000 cases (execution/jobs.own_process: 10,000
  cases 10.5 s against 11.3 s): this process then checks and stores each answer as it arrives
  (`_stored_here`: the cache's JSON and SQLite writes were 4.4% of the run, the outcome check
  2.5% of the worker's time), before scoring it (score.py), instead of the worker;
- the cyclic collector is paused for the run (execution/collector.py: about a tenth of a cold
  10,000-case tool run) and running again only while the engine answers (`_interruptible`);
- nothing is imported or built for the engine when the caches answer every case.

Invariants: outcomes are in case order whatever the executor or `jobs` (execution/runner.py);
only the cases the caches cannot answer reach the engine, and each answer is stored as soon as
it comes (an error or an interrupted case never), so a run killed part-way resumes from where it
was; Ctrl-C, or a case that stops the run (a spent model budget), stops it with every answer it
had (`Answers.interrupted`), the unfinished cases holding the runner's not-run error.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from ragspine_eval.engines.base import stop_reason
from ragspine_eval.execution.collector import gc_running
from ragspine_eval.execution.runner import RunInterrupted
from ragspine_eval.pipeline.plan import Plan
from ragspine_eval.pipeline.score import scores_as_answers_arrive
from ragspine_eval.pipeline.spec import EXECUTORS, RunHow


@dataclass
class Answers:
    """Per repeat (outcomes in case order, per case whether it was reused), whether Ctrl-C
    stopped the run, the engine that answered (None: the caches answered every case) and the
    scorer that scored answers as they arrived (None: none did)."""

    runs: list[tuple[list[Any], list[bool]]] = field(default_factory=list)
    interrupted: bool = False
    engine: Any = None
    scorer: Any = None

    @property
    def outcomes(self) -> list[Any]:
        """The first repeat's outcomes (what is kept, and timed)."""
        return self.runs[0][0]

    @property
    def reused(self) -> list[bool]:
        return self.runs[0][1]


def run_options(how: RunHow, to_run: int, in_process: bool, forkable: bool) -> Any:
    """The runner's RunOptions for `to_run` cases: jobs resolved (jobs.resolve_jobs), and one
    job in a forked worker of its own where that wins (jobs.own_process). `in_process`: the
    engine's parallel cases run in processes; `forkable`: its workers may be forked."""
    from ragspine_eval.execution.jobs import own_process, resolve_jobs
    from ragspine_eval.execution.runner import DEFAULT_CASE_TIMEOUT, RunOptions
    from ragspine_eval.execution.workers import forks_here

    forked = how.executor == "local" and forks_here() and forkable
    jobs = resolve_jobs(how.jobs, to_run, in_process or how.executor == "dask", forked)
    return RunOptions(jobs, how.case_timeout or DEFAULT_CASE_TIMEOUT, how.fail_fast,
                      own_process=in_process and own_process(jobs, to_run, forked))


def answer(plan: Plan, how: RunHow, options: Any,
           open_engine: Callable[[], AbstractContextManager[Any]],
           make_scorer: Callable[[], Any] | None = None) -> Answers:
    """Every case answered: by the caches (plan.py), else by the engine (module docstring).
    `make_scorer()` (called once the engine is open) is the harness's streaming scorer
    (score.py), used where the run scores answers as they arrive."""
    n = len(plan.cases)
    if plan.answered:  # every case known and scored: the engine is neither imported nor started
        if how.progress:
            how.progress(n, n, 0)
        return Answers([(plan.known, [True] * n)])  # type: ignore[list-item]
    got = Answers()
    with open_engine() as engine:
        got.engine = engine
        if make_scorer is not None and scores_as_answers_arrive(how, options):
            got.scorer = make_scorer()
        runner = executor(how.executor, how.scheduler)
        for k in range(how.repeat):
            if hasattr(engine, "repeat_index"):  # a cassette keeps each repeat's answers apart
                engine.repeat_index = k  # (models/recorder.py: the repeat is in a call's key)
            outcomes, reused, got.interrupted = _run_with_cache(
                runner, engine, plan, options, _nth_repeat(how.progress, k, how.repeat, n),
                got.scorer)
            got.runs.append((outcomes, reused))
            if got.interrupted:
                break
    return got


def executor(name: str, scheduler: str | None) -> Callable[..., list]:
    """run_cases(engine, cases, options, progress, on_outcome) of the chosen executor."""
    from ragspine_eval.execution.runner import run_cases

    if name == "local":
        return run_cases
    if name == "dask":
        from ragspine_eval.execution.dask_executor import run_cases_dask

        # Dask's workers hand their outcomes back at the end: nothing to stream
        return lambda engine, cases, options, progress, on_outcome=None: run_cases_dask(
            engine, cases, options, progress, scheduler=scheduler)
    raise ValueError(f"unknown executor {name!r}; expected one of {', '.join(EXECUTORS)}")


def _nth_repeat(progress: Any, k: int, repeat: int, n: int) -> Any:
    """The progress callback of repeat k: one bar over every repeat's cases."""
    if progress is None or repeat == 1:
        return progress
    return lambda done, total, errors: progress(k * n + done, repeat * n, errors)


def _run_with_cache(run_cases: Callable[..., list], engine: Any, plan: Plan, options: Any,
                    progress: Any, scorer: Any) -> tuple[list, list[bool], bool]:
    """Outcomes in case order, per case whether it was reused, and whether Ctrl-C stopped the
    run. Only the plan's `todo` cases reach the engine, each answer stored as it comes."""
    from ragspine_eval.execution.cache import CachingEngine

    cases, cache = plan.cases, plan.cache
    if cache is None:
        outcomes, interrupted = _interruptible(
            run_cases, engine, cases, options, progress,
            scorer.at(range(len(cases))) if scorer else None)
        return outcomes, [False] * len(cases), interrupted
    have, positions = plan.have(), plan.todo
    todo = [cases[i] for i in positions]
    reused = len(cases) - len(todo)

    def ticked(done: int, total: int, errors: int) -> None:
        progress(done + reused, len(cases), errors)

    if progress and reused:
        progress(reused, len(cases), 0)
    on_outcome = scorer.at(positions, [] if plan.scored is None else [
        (i, s) for i, s in enumerate(plan.scored) if s is not None]) if scorer else None
    if options.own_process and on_outcome is not None:
        # the one worker only answers: this process, a core of its own, stores each answer
        # as it arrives, before scoring it (and whatever arrived unreported, after the run)
        answers, interrupted = _stored_here(run_cases, engine, cache, todo, options,
                                            ticked if progress else None, on_outcome)
    else:
        answers, interrupted = _interruptible(run_cases, CachingEngine(engine, cache), todo,
                                              options, ticked if progress else None, on_outcome)
    fresh = iter(answers)
    outcomes = [next(fresh) if have_i is None else out
                for out, have_i in zip(plan.known, have)]  # type: ignore[arg-type]
    return outcomes, [out is not None for out in have], interrupted


def _stored_here(run_cases: Callable[..., list], engine: Any, cache: Any, todo: list,
                 options: Any, progress: Any, on_outcome: Callable[[int, Any], None]
                 ) -> tuple[list, bool]:
    """_interruptible over the bare engine, each answer stored in this process as it arrives
    (then handed to on_outcome), the rest once the run ends or stops; committed before return."""
    stored = [False] * len(todo)

    def put(j: int, out: Any) -> None:
        cache.put(todo[j], out)
        stored[j] = True
        on_outcome(j, out)

    try:
        answers, interrupted = _interruptible(run_cases, engine, todo, options, progress, put)
        for j, out in enumerate(answers):
            if not stored[j]:
                cache.put(todo[j], out)  # an error or an interrupted case is never stored
    finally:
        cache.flush()
    return answers, interrupted


def _interruptible(run_cases: Callable[..., list], *args: Any) -> tuple[list, bool]:
    """run_cases(*args) and False; after Ctrl-C, or when a case stopped the run (a spent model
    budget: engines/base.NOT_RUN_STOPPED, on every executor), every outcome it had and True.
    The cyclic collector runs meanwhile: an engine's objects may hold cycles."""
    try:
        with gc_running():
            outcomes = run_cases(*args)
    except RunInterrupted as stopped:
        return stopped.outcomes, True
    return outcomes, stop_reason(getattr(out, "error", None) for out in outcomes) is not None

"""Running cases on a Dask cluster: a LocalCluster on this machine, or an existing scheduler.

`run_cases_dask(engine, cases, options, progress, scheduler)` returns one outcome (of the
engine's outcome type) per case in case order, like runner.run_cases, so a report is the same as with `--jobs 1` (once
times are dropped). Dask is an optional extra (`pip install 'ragspine-eval[dask]'`); without it
the call says what to install. Invariants:
- the engine is pickled to the workers once (as for runner's worker processes), and cases go in
  small batches, so Dask's per-task cost stays far below an engine call;
- `case_timeout` still holds: each case runs in a watchdog thread on its worker, and a case past
  its limit becomes that case's timeout error;
- a worker killed mid-run does not lose the run: Dask re-runs its tasks on another worker (up to
  its allowed-failures); a batch that still fails becomes an error on each of its cases, and
  the run completes;
- Ctrl-C stops the run as runner.run_cases does: the batches not yet back are cancelled, their
  cases recorded as not run, and `RunInterrupted` raised with every outcome; the cluster is
  closed (a LocalCluster's worker processes end with it). A batch is the unit: the cases a
  cancelled batch had already answered are lost to the report (the outcome cache, when on,
  keeps them);
- with `scheduler` (tcp://HOST:PORT) the workers must see the same files as this process (the
  knowledge base's stores are built in a scratch folder here): a shared file system, or workers
  on this machine.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Sequence
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.engines.base import Engine, error_outcome, outcome_type, timeout_outcome
from ragspine_eval.golden.cases import GoldenCase
from ragspine_eval.execution.runner import RunInterrupted

BATCHES_PER_WORKER = 8
MAX_BATCH = 32


class ExecutorError(RagspineEvalError):
    """The executor cannot start: Dask missing, or no scheduler at the address given."""


def run_cases_dask(engine: Engine, cases: Sequence[GoldenCase], options: Any,
                   progress: Callable[[int, int, int], None] | None = None,
                   scheduler: str | None = None) -> list[Any]:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ExecutorError("--executor dask needs Dask: pip install 'ragspine-eval[dask]' "
                            "(the set-up of this project installs it)") from None
    cases = list(cases)
    if not cases:
        return []
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout=10)
        else:
            cluster = LocalCluster(n_workers=options.jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=40)
            client = Client(cluster)
    except (OSError, TimeoutError) as exc:
        if cluster is not None:
            cluster.close()
        raise ExecutorError(f"cannot reach the Dask scheduler {scheduler or '(local cluster)'}: "
                            f"{exc}; check the address, or drop --scheduler to start a local "
                            f"cluster") from None
    try:
        return _run(client, as_completed, engine, cases, options, progress)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _run(client: Any, as_completed: Any, engine: Engine, cases: list[GoldenCase], options: Any,
         progress: Callable[[int, int, int], None] | None) -> list[Any]:
    workers = max(1, len(client.scheduler_info().get("workers", {})) or options.jobs)
    size = max(1, min(MAX_BATCH, len(cases) // (workers * BATCHES_PER_WORKER)))
    batches = [list(range(i, min(i + size, len(cases)))) for i in range(0, len(cases), size)]
    [engine_ref] = client.scatter([engine], broadcast=True)
    futures = {client.submit(answer_batch, engine_ref, [cases[i] for i in batch],
                             options.case_timeout, pure=False): batch for batch in batches}
    outcomes: list[Any] = [None] * len(cases)
    kind = outcome_type(engine)
    done = errors = 0
    try:
        for future in as_completed(futures):
            batch = futures[future]
            try:
                answers = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker lost for good: the cases' error
                lost = f"the Dask worker running this case was lost ({type(exc).__name__}: {exc})"
                answers = [kind.failed(cases[i], lost) for i in batch]
            for i, out in zip(batch, answers, strict=True):
                outcomes[i] = out
                errors += bool(out.error)
            done += len(batch)
            if progress:
                progress(done, len(cases), errors)
    except KeyboardInterrupt:
        client.cancel(list(futures))  # the cluster itself is closed by the caller
        raise RunInterrupted.partial(outcomes, cases, kind) from None
    return outcomes  # type: ignore[return-value]


def answer_batch(engine: Engine, cases: list[GoldenCase], case_timeout: float
                 ) -> list[Any]:
    """On a worker: each case through the engine within its time limit. A case past the limit
    is abandoned in its thread (a thread cannot be stopped) and a fresh thread takes the next."""
    outcomes = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    for case in cases:
        future = pool.submit(_answer, engine, case)
        try:
            outcomes.append(future.result(timeout=case_timeout))
        except concurrent.futures.TimeoutError:
            outcomes.append(timeout_outcome(case_timeout, case, outcome_type(engine)))
            pool.shutdown(wait=False)
            pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    pool.shutdown(wait=False)
    return outcomes


def _answer(engine: Engine, case: GoldenCase) -> Any:
    from ragspine_eval.execution.latency import timed

    return timed(_answer_untimed, engine, case)


def _answer_untimed(engine: Engine, case: GoldenCase) -> Any:
    kind = outcome_type(engine)
    try:
        out = engine.run_case(case)
    except Exception as exc:  # noqa: BLE001 - the engine's fault is the case's error
        return error_outcome(exc, case, kind)
    if not isinstance(out, kind):
        return kind.failed(case, f"engine returned {type(out).__name__}, not a {kind.__name__}")
    return out

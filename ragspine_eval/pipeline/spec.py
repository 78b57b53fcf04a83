"""A run as plain data: what is run (`RunWhat`) and how it is run (`RunHow`).

The CLI, the gated runs and the notebooks build these two; every harness that asks an engine
(qa/run.py, retrieval_only/run.py) hands them to the pipeline's steps (plan, answer, score,
keep, report: this package's other modules). Neither holds anything a run computes.

Invariants: a `RunHow` is checked when it is made (a bad `jobs`, time limit or repeat count is
a ValueError before anything is read), and nothing in it changes a report: the same `RunWhat`
gives the same report whatever the `RunHow`, save `repeat` (repeats are combined, qa/repeats.py)
and `fail_fast` (the cases after the first error are not run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.paths import KB_DIR

Progress = Callable[[int, int, int], None]  # (cases done, cases in total, errors so far)
EXECUTORS = ("local", "dask")


@dataclass(frozen=True)
class RunWhat:
    """What is run: the cases' file (a golden set or a question file), the knowledge base (the
    KB folder or an engine workspace), the engine (an --engine string or an Engine object) and
    its mode (None: the engine's first), the judge (a registered name, an object, or None: the
    default), the engine configuration (engines/engine_config.py; None: its defaults), `k`:
    how deep retrieval is judged (QA's retrieval gate k; a retrieval run's top_k), and the
    model the engine asks with its cassette and the cassette's mode (models.ModelRun; None, or
    the default ModelRun: the engine's MockProvider, and nothing of the run changes); `spec`,
    the --engine string as engines.factory parsed it, `workspace`, the engine workspace at `kb`
    as knowledge.workspace read it, and `cases`, the cases of `golden` as its reader read them,
    where the caller (the CLI, a harness's check) did: nothing below parses or reads them
    again."""

    golden: str | Path
    kb: str | Path = KB_DIR
    engine: Any = "ragspine"
    mode: str | None = None
    judge: Any = None
    engine_config: Any = None
    k: int | None = None
    model: Any = None
    # what was read once (none of it changes what is run: left out of equality and repr)
    spec: Any = field(default=None, compare=False, repr=False)
    workspace: Any = field(default=None, compare=False, repr=False)
    cases: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.model is not None:  # the MockProvider without a cassette is no model at all
            from ragspine_eval.models.recorder import in_use

            object.__setattr__(self, "model", in_use(self.model))

    def read_workspace(self) -> Any:
        """The workspace at `kb` (knowledge.workspace.Workspace): the one read already, else
        read now."""
        if self.workspace is not None:
            return self.workspace
        from ragspine_eval.knowledge.workspace import read_workspace

        return read_workspace(self.kb)

    def keyed(self, key: str) -> str:
        """The baseline key of this run: `key`, then `+` the engine configuration's label when
        one with settings is given, then `~` the model's provider and name when it is not the
        MockProvider (`agent+bm25~litellm:openai/gpt-4o`): each is gated against its own
        entry. Every harness's key ends this way (qa/, retrieval_only/, answers/harness.py)."""
        config, model = self.engine_config, self.model
        key = key if config is None or not config.settings() else f"{key}+{config.label}"
        return key if model is None or model.spec.is_default else f"{key}~{model.spec.label}"

    def model_keyed(self, kb_key: str) -> str:
        """The knowledge-base part of the outcome cache's key with the model's fingerprint
        (models.ModelRun.fingerprint): another model, or another replayed cassette, other
        answers."""
        return kb_key if self.model is None else f"{kb_key}+{self.model.fingerprint()}"

    def cache_policy(self, how: RunHow) -> RunHow:
        """`how` for the outcome cache: a recording reads and keeps no stored outcome (it asks
        the model for every case; an outcome reused would leave that case's calls out of the
        cassette)."""
        if self.model is None or self.model.mode != "record":
            return how
        from dataclasses import replace

        return replace(how, cache=False)


@dataclass(frozen=True)
class RunHow:
    """How it is run: `jobs` (cases at once, or "auto": execution/jobs.py), `executor` ("local":
    threads or worker processes; "dask": a LocalCluster, or the cluster at `scheduler`), the
    time limit per case (`case_timeout`, None: the runner's default) and an HTTP engine's
    `retries`, `repeat` (every case that many times, never from the cache), the outcome cache
    (`cache`: None uses it where the engine is known, False never; `cache_key` names a
    deployed HTTP or callable engine), `fail_fast` (stop at the first engine error) and
    `progress` (called with cases done, in total, errors so far)."""

    jobs: int | str = 1
    executor: str = "local"
    scheduler: str | None = None
    case_timeout: float | None = None
    retries: int | None = None
    repeat: int = 1
    cache: bool | None = None
    cache_key: str | None = None
    fail_fast: bool = False
    progress: Progress | None = None

    def __post_init__(self) -> None:
        from ragspine_eval.execution.jobs import resolve_jobs
        from ragspine_eval.execution.runner import DEFAULT_CASE_TIMEOUT, RunOptions

        if self.repeat < 1:
            raise ValueError(f"repeat must be at least 1, got {self.repeat}")
        # checked before anything is read; the number of jobs is chosen by the answer step
        RunOptions(resolve_jobs(self.jobs, 0, False),
                   self.case_timeout or DEFAULT_CASE_TIMEOUT, self.fail_fast)

    @property
    def uses_cache(self) -> bool | None:
        """The cache policy for this run: repeats never read or keep stored answers (a stored
        answer would make every repeat the same)."""
        return self.cache if self.repeat == 1 else False

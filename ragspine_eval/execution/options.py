"""How one run's cases reach the engine: `RunOptions(jobs, case_timeout, fail_fast,
own_process)`, read by the runner (runner.py), its shared state (state.py) and the workers.

Invariants: options are checked when made (at least one job, a positive time limit), and none
changes what an engine answers: only whether and when an answer arrives (runner.py).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_CASE_TIMEOUT = 120.0


@dataclass(frozen=True)
class RunOptions:
    jobs: int = 1
    case_timeout: float = DEFAULT_CASE_TIMEOUT
    fail_fast: bool = False
    # one job's cases in a worker process of its own (jobs.own_process), for an engine whose
    # parallel cases run in processes: the caller's thread is then free to score meanwhile
    own_process: bool = False

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if not self.case_timeout > 0:
            raise ValueError(f"case_timeout must be a positive number of seconds, "
                             f"got {self.case_timeout}")

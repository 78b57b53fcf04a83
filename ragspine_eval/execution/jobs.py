"""`--jobs auto`: how many cases run at once when the user does not say (issue 33).

`resolve_jobs("auto", to_run, engine_kind)` is the number of usable cores (the CPUs this
process may run on, `os.sched_getaffinity`, not the machine's count: a container or `taskset`
limits them) for the in-process engine, whose workers are processes; but 1 when fewer than
`AUTO_SERIAL_BELOW` cases are to reach the engine: a spawned worker first imports the engine
and opens its stores (about 0.6 s on the 2-core machine of benchmarks/RESULTS.md), which a short
run does not win back. Forked workers (workers.start_method: the command line, no other
thread) start at once with the engine imported, so they pay from `AUTO_SERIAL_BELOW_FORKED`. Cases the outcome cache answers do not count, so a warm re-run with a
few edited cases stays in one process. Any other engine (HTTP, a callable) runs on threads,
whose right number is the service's, not this machine's: `auto` is 1 there, as before.

`own_process(jobs, to_run, forked)`: whether one job's cases run in a forked worker process of
their own while this process stores and scores each answer as it arrives (qa/streaming.py):
where a second core is free, the harness's own work then leaves the engine's critical path
(`--jobs 1` measured in benchmarks/RESULTS.md). Only where the worker would be forked: a
spawned one first imports the engine again, which a run of one job does not win back.

Invariants: the report is the same whatever the number (runner.py's invariant: outcomes in
case order), so `auto` changes only the time; an int is returned as given.
"""

from __future__ import annotations

import os

AUTO = "auto"
# Derived, not measured as a crossover (benchmarks/RESULTS.md, "Issue 33"): two workers start
# in about 0.6 s and give 1.3x on 10,000 tool-mode cases (about 1.2 ms a case serial), so they
# win back their start from about 2,300 cases to run; 3,000 leaves a margin for the cheaper
# mode. The same report whatever it picks (tests/execution/test_jobs.py).
AUTO_SERIAL_BELOW = 3_000
# Measured (benchmarks/RESULTS.md, "the cold path"): whole `ragspine-eval qa --mode tool`
# processes on the quiet 2-core machine, --jobs 2 forked against --jobs 1, median of three:
# 300 cases 0.85 s against 0.89 s, 1,000 1.29 s against 1.59 s, 3,000 2.59 s against 3.70 s.
AUTO_SERIAL_BELOW_FORKED = 300
# Measured the same way (RESULTS.md, "`--jobs 1`: one forked worker"), whole `--jobs 1`
# processes, the forked worker against the thread, three each: 300 cases 0.85-0.86 s against
# 0.83-0.87 s (nothing won), 1,000 1.47-1.48 s against 1.49-1.50 s; 10,000 10.5 s against 11.3 s.
OWN_PROCESS_FROM = 1_000


def usable_cores() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def parse_jobs(text: str) -> int | str:
    """--jobs's value: a positive int or "auto"; ValueError otherwise."""
    if text.strip().lower() == AUTO:
        return AUTO
    value = int(text)
    if value < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return value


def resolve_jobs(jobs: int | str, to_run: int, in_process: bool, forked: bool = False) -> int:
    """The number of cases run at once: `jobs` itself, or auto's choice (module docstring)
    for `to_run` cases to reach the engine, the in-process one or another (`forked`: its
    workers would be forked)."""
    if jobs != AUTO:
        if not isinstance(jobs, int) or isinstance(jobs, bool):
            raise ValueError(f"jobs must be a positive int or {AUTO!r}, got {jobs!r}")
        return jobs
    if not in_process or to_run < (AUTO_SERIAL_BELOW_FORKED if forked else AUTO_SERIAL_BELOW):
        return 1
    return min(usable_cores(), to_run)


def own_process(jobs: int, to_run: int, forked: bool) -> bool:
    """Whether a run of one job puts its engine in a forked worker process (module docstring):
    a forkable engine in a process that may fork, a second usable core, and at least
    `OWN_PROCESS_FROM` cases to reach the engine."""
    return (jobs == 1 and forked and to_run >= OWN_PROCESS_FROM
            and usable_cores() >= 2)

"""The last step of a run: what the report says of how it ran: the cache's share, each case's
wall time and the run's latency figures, what its model calls used, the workspace's chunking.

Nothing here changes a verdict or a figure of the report; two runs of the same inputs differ
only under `provenance.times` (and in `provenance.cache`: what was reused).

Invariants: a reused case, or one that did not run, has no wall time; the latency figures
(p50/p95/max per run and by tag) are over the cases this run computed only, the first
repeat's (execution/latency.py); what the model calls used (calls, tokens, ms and cost per run,
stage and tag: models/usage.py) is over the cases every repeat computed, counted once and kept
in one place, `times.usage`, which every output reads.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any


def with_cache(provenance: Any, cache: Any, n_cases: int) -> Any:
    """The provenance with the outcome cache's summary (reused, computed, folder)."""
    return provenance if cache is None else replace(provenance, cache=cache.summary(n_cases))


def with_latency(provenance: Any, cases: list[Any], outcomes: list[Any],
                 reused: list[bool]) -> Any:
    """The provenance with each case's wall time (a reused or unrun case has none) and its
    p50/p95/max per run and by tag under `times.latency`."""
    from ragspine_eval.execution import latency

    if provenance.times is None:
        return provenance
    timings = [(c.id, dict(c.tags), None if was_reused else latency.seconds_of(o),
                bool(getattr(o, "error", None))) for c, o, was_reused in
               zip(cases, outcomes, reused)]
    return replace(provenance, times=replace(provenance.times,
                                             latency=latency.summarize(timings)))


def with_usage(provenance: Any, usage: Any) -> Any:
    """The provenance with what the model calls of every repeat used under `times.usage`
    (`usage`: models/usage.py `ModelUsage.of(cases, runs, model)`); as it was for None (no
    model, no call) or a provenance without times."""
    if provenance.times is None or usage is None:
        return provenance
    return replace(provenance, times=replace(provenance.times, usage=usage.to_dict()))


def workspace_of(kb: str | Path) -> dict[str, Any]:
    """{"workspace": {"chunking": ...}} for an engine workspace as the KB, else nothing."""
    from ragspine_eval.knowledge.workspace import chunking_of, is_workspace, read_workspace

    return ({"workspace": {"chunking": chunking_of(read_workspace(kb))}}
            if is_workspace(kb) else {})

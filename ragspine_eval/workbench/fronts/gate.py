"""The one gate every notebook's last cell asserts: `print(workbench.assert_gate(run,
require_baseline))`, for a QA, extraction, retrieval or answers notebook run alike.

It owns what the gate says and when it fails; it knows no harness. Every notebook run gives it
the same small shape (`GatedNotebookRun`): its `harness` (the word), `keys` (name -> baseline
key), `comparisons` (name -> BaselineComparison, None where the key has no baseline entry),
`engine_errors` (the ids of the cases the engine raised, timed out or answered malformed on),
`failures` ({key: why} of the documents the run failed on; extraction only, empty elsewhere)
and `record_hint` (the CLI command that records a missing baseline).
Invariants: the gate never writes a baseline (recording is the CLI's job). It raises
AssertionError on any regression, any engine error, any document the run failed on, and, with
`require_baseline` (CI, as the CLI's --require-baseline), any key with no baseline entry; every
reason of every key in ONE error, so papermill's failing cell names them all. An engine error or
a failed document is neither a pass nor a regression. Otherwise it returns `gate_message` per
key, one per line group: a key without a baseline passes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from ragspine_eval import ratchet as bl
from ragspine_eval.outputs.console import short_ids

IDS_SHOWN = 20  # engine errors named by id in the gate's error; the rest counted


class GatedNotebookRun(Protocol):
    """What a notebook run gives the gate (the module docstring says what each means)."""

    @property
    def harness(self) -> str: ...
    @property
    def keys(self) -> Mapping[str, str]: ...
    @property
    def comparisons(self) -> Mapping[str, bl.BaselineComparison | None]: ...
    @property
    def engine_errors(self) -> Sequence[str]: ...
    @property
    def failures(self) -> Mapping[str, str]: ...
    @property
    def record_hint(self) -> str: ...


def gate_message(comparison: bl.BaselineComparison | None, key: str) -> str:
    """What the gate says of one key: pass or each regression, with drift (another knowledge
    base or engine than the baseline's) first either way."""
    if comparison is None:
        return f"{key}: no baseline yet; nothing to compare (record one with the CLI)"
    if comparison.passed:
        return "\n".join([f"{key}: no regression against the baseline",
                          *bl.drift_lines(comparison, key)])
    return "\n".join([f"{key}: the baseline gate failed",
                      *bl.describe(comparison, key, bl.LISTED_PER_KIND)])


def assert_gate(run: GatedNotebookRun, require_baseline: bool = False) -> str:
    """Raise AssertionError naming every reason the run fails its gate (module docstring);
    return the pass message of each key otherwise."""
    keyed = [(run.keys.get(name, name), c) for name, c in run.comparisons.items()]
    reasons = _engine_errors(run)
    reasons += [f"{key}: FAIL because the run failed on this document (neither pass nor "
                f"regression): {why}" for key, why in run.failures.items()]
    if require_baseline:
        reasons += [f"{key}: no baseline entry, and require_baseline is set; record one with "
                    f"the CLI: {run.record_hint}" for key, c in keyed if c is None]
    reasons += [gate_message(c, key) for key, c in keyed if c is not None and not c.passed]
    if reasons:
        raise AssertionError("\n".join(reasons))
    if not keyed:
        return f"{run.harness}: nothing was gated (no baseline key in this run)"
    return "\n".join(gate_message(c, key) for key, c in keyed)


def _engine_errors(run: GatedNotebookRun) -> list[str]:
    """The gate's line for the run's engine errors: how many, and their ids (bounded)."""
    ids = list(run.engine_errors)
    if not ids:
        return []
    keys = ", ".join(run.keys.values()) or run.harness
    return [f"{keys}: FAIL because of {len(ids)} engine errors ({short_ids(ids, IDS_SHOWN)}): "
            f"the engine raised, timed out or answered malformed; these cases are neither "
            f"passes nor failures"]

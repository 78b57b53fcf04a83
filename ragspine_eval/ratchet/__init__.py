"""The ratchet: one baseline mechanism for both harnesses.

compare (a run's entry against the stored one: regressions, case regressions, golden changes,
improvements, and drift: another knowledge base or engine), baseline_file (the baseline file
and its history, read and recorded under a lock), gate (compare, and record where asked: only
upward, or a reviewed move with a reason).

The baseline ratchets up and never down; a regression fails the gate, never lowers it.
"""

from ragspine_eval.ratchet.baseline_file import (
    BaselineError,
    check_baseline_location,
    check_outputs,
    history_path,
    load_baselines,
    lock_path,
    locked,
    validate_entry,
)
from ragspine_eval.ratchet.compare import (
    CHANGED_CASE,
    FAILED_THEN,
    LISTED_PER_KIND,
    LOWER_IS_BETTER,
    NEW_CASE,
    PASSED_THEN,
    BaselineComparison,
    BaselineVerdicts,
    compare,
    describe,
    drift_lines,
    ratcheted,
)
from ragspine_eval.ratchet.gate import (
    GateOptions,
    GateResult,
    check_without_recording,
    run_gate,
)

__all__ = [
    "CHANGED_CASE", "FAILED_THEN", "LISTED_PER_KIND", "LOWER_IS_BETTER", "NEW_CASE",
    "PASSED_THEN", "BaselineComparison", "BaselineError", "BaselineVerdicts", "GateOptions",
    "GateResult", "check_baseline_location", "check_outputs", "check_without_recording",
    "compare", "describe", "drift_lines", "history_path", "load_baselines", "lock_path",
    "locked", "ratcheted", "run_gate", "validate_entry",
]

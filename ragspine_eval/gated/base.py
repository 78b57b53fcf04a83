"""What every gated run is: its report, its baseline key and entry, the comparison, the ratchet's
verdict, the files written, the run as the run store keeps it, and the one exit rule.

`GatedRun` is the base of each harness's gated run (qa.py, retrieval.py), so a new harness
gated under the ratchet gets the same fields and the same exit code by subclassing it.
Invariants: the exit code is the gate's when the run was gated with options; without them (a
notebook) a run with engine errors is 1, and otherwise 1 only for a regression against the
stored entry (none stored: 0). The verdict line names the harness and the key; an interrupted
run has no verdict of pass or fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import ratchet, runs


@dataclass
class GatedRun:
    """A gated run. `comparison` is the run against the stored entry (None: no entry yet);
    `gate` is the ratchet's verdict when the run was gated with options (None: only compared)."""

    harness: ClassVar[str] = "run"

    report: Any
    key: str
    baseline_path: Path
    stored: dict[str, Any] | None
    comparison: ratchet.BaselineComparison | None
    gate: ratchet.GateResult | None = None
    written: list[tuple[str, Path]] = field(default_factory=list)
    kept: runs.RunSummary | None = None  # the run as the run store keeps it (None: not kept)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 a regression, a refused update or engine errors."""
        if self.gate is not None:
            return self.gate.exit_code
        if self.report.errors:
            return 1
        return 0 if self.comparison is None or self.comparison.passed else 1

    @property
    def verdict(self) -> str:
        """The run's last line: PASS, FAIL or INTERRUPTED, the harness, the key and why."""
        report = self.report
        if getattr(report, "interrupted", False):
            return (f"INTERRUPTED: {self.harness} {self.key} after {report.finished} of "
                    f"{report.n_cases} cases: no verdict, the baseline untouched")
        if report.errors:
            return f"FAIL: {self.harness} {self.key}: {len(report.errors)} engine errors"
        status = self.gate.status if self.gate else self.ungated_status()
        return (f"{'PASS' if self.exit_code == 0 else 'FAIL'}: {self.harness} {self.key} "
                f"gate {status}")

    def ungated_status(self) -> str:
        """The gate's word for a run only compared (a notebook's)."""
        if self.comparison is None:
            return "no baseline"
        return "pass" if self.comparison.passed else "regression"

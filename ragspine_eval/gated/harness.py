"""What a harness is to the gated run: one small object per harness (`Harness`), the run it
leaves (`GatedRun`) and how it is gated (`Gate`). A baseline key's suffix (the configuration,
the model) is what is run's own: pipeline.spec.RunWhat.keyed.

A harness says how its inputs are read and checked, its baseline file and keys, its run, its
comparison with a stored entry, its baseline entry, the lines it prints and the files it writes;
gated/runner.py takes every harness through the same steps with them. The four live in their
own folders (qa/harness.py, retrieval_only/harness.py, answers/harness.py,
extraction/harness.py): a new harness is one folder and one `Harness` object.

Invariants: one exit rule and one run-store verdict for every harness (`GatedRun.exit_code`,
`runs.record.verdict`): 2 for input found bad during the run (a document the engine failed on),
then the gates' worst, then 1 for engine errors, then the comparison with the stored entry (none
stored: 0). A run whose report is not complete (Ctrl-C, or a spent model budget) has no verdict
of pass or fail and records nothing; the CLI turns it into exit 130 (cli/common.finish).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import ratchet, runs

Echo = Callable[[str], None]
Writer = Callable[[Path], "str | None"]


@dataclass(frozen=True)
class Gate:
    """How a run is gated: `options` (the CLI's; None: a notebook's run, only compared), the
    command that records it (a string, or one per key), whether the run store keeps it, and
    where the lines for a person go (None: nowhere)."""

    options: ratchet.GateOptions | None = None
    record_command: str | Callable[[str], str] | None = None
    store: bool = True
    echo: Echo | None = None

    def options_for(self, key: str) -> ratchet.GateOptions | None:
        """The options that gate `key`, with the command that records it, checked (exit 2 on a
        bad combination); None: the run is only compared."""
        if self.options is None:
            return None
        command = self.record_command
        options = self.options if command is None else replace(
            self.options, record_command=command(key) if callable(command) else command)
        options.check()
        return options


class Harness:
    """One harness as the gated run sees it. `what` is the harness's own frozen, checked
    description of the run, `how` the pipeline's RunHow (or None). Subclasses override what
    differs; the defaults are what most harnesses do."""

    name: ClassVar[str] = "run"  # the verdict's word and the run store's kind
    unit: ClassVar[str] = "cases"  # what its report counts (extraction: document sets)
    # the report is written after the gates when it holds their verdicts (extraction)
    report_after_gate: ClassVar[bool] = False

    def baseline_path(self, what: Any) -> Path | None:
        raise NotImplementedError

    def inputs(self, what: Any) -> dict[Path, str]:
        """What no output may land on, each named as a message names it."""
        raise NotImplementedError

    def check(self, what: Any) -> Any:
        """Read and check what comes before the keys (the judge, the workspace): `what` with
        what was read in it, so that nothing below reads it again."""
        return what

    def keys(self, what: Any) -> dict[str, str]:
        """Name (a route, a document set, or the harness's own name) -> baseline key."""
        raise NotImplementedError

    def read(self, what: Any, how: Any) -> Any:
        """Read the cases whole (exit 2 on a bad line), after the gate options are checked:
        `what` with them in it (nothing below reads them again)."""
        return what

    def run(self, what: Any, how: Any, stored: dict[str, dict[str, Any] | None],
            say: Echo) -> Any:
        """The report: complete, or interrupted with what ran (never raised)."""
        raise NotImplementedError

    def finish(self, run: GatedRun) -> Iterable[str]:
        """The report completed with what the gate knows (the entry compared, in the provenance),
        and the lines to say before anything is written (the table, the provenance)."""
        return ()

    def compare(self, report: Any, name: str, entry: dict[str, Any]
                ) -> ratchet.BaselineComparison:
        raise NotImplementedError

    def gate(self, run: GatedRun, name: str, options: ratchet.GateOptions, say: Echo
             ) -> ratchet.GateResult:
        """The ratchet's verdict on one key (gated/runner.py `gate_key` by default)."""
        raise NotImplementedError

    def write_report(self, path: Path, run: GatedRun, data: dict[str, Any]) -> str | None:
        """Write the report (`data`: its dict, built once for the file and the run store)."""
        from ragspine_eval.files import write_json_atomic

        return write_json_atomic(path, data)

    def scored(self, report: Any, name: str) -> bool:
        """Whether the run scored `name` (compared and gated); extraction's document kept
        apart, or not run, is not."""
        return True

    def after_gates(self, run: GatedRun, before: Any, say: Echo) -> None:
        """What follows the gates before the files are written, given the baseline as the run
        found it (extraction: a document kept apart puts back what they recorded)."""

    def writers(self, run: GatedRun, outputs: Any) -> list[tuple[str, Path | None, Writer]]:
        """(label, path, writer) of each file after the report (JUnit, summary, ...)."""
        raise NotImplementedError

    def store_key(self, run: GatedRun) -> str:
        return ", ".join(run.keys.values())

    def verdict_lines(self, run: GatedRun) -> list[str]:
        """The run's last lines, printed when it was gated with options."""
        return [run.verdict]

    def closing_lines(self, run: GatedRun) -> list[str]:
        """Lines after the verdict, gated or not (extraction: the documents kept apart)."""
        return []

    def failed_inputs(self, run: GatedRun) -> bool:
        """Whether input found bad during the run makes it exit 2 (extraction's documents)."""
        return False


@dataclass
class GatedRun:
    """A gated run: its report, its keys and stored entries (None: none yet), a comparison per
    key (None: nothing stored), and the ratchet's verdict per key when gated with options."""

    harness: Harness
    report: Any
    keys: dict[str, str]
    baseline_path: Path | None
    stored: dict[str, dict[str, Any] | None]
    comparisons: dict[str, ratchet.BaselineComparison | None] = field(default_factory=dict)
    gates: dict[str, ratchet.GateResult] = field(default_factory=dict)
    written: list[tuple[str, Path]] = field(default_factory=list)
    kept: runs.RunSummary | None = None  # the run as the run store keeps it (None: not kept)

    @property
    def key(self) -> str:
        return ", ".join(self.keys.values())

    @property
    def comparison(self) -> ratchet.BaselineComparison | None:
        """The comparison of a run of one key."""
        return next(iter(self.comparisons.values()), None)

    @property
    def gate(self) -> ratchet.GateResult | None:
        """The gate of a run of one key (None: only compared)."""
        return next(iter(self.gates.values()), None)

    @property
    def status(self) -> str:
        """complete, interrupted (Ctrl-C) or stopped (a model budget spent)."""
        return self.report.status

    @property
    def exit_code(self) -> int:
        """2 input found bad during the run, else the gates' worst, else 1 for engine errors,
        else 0 unless a comparison regressed."""
        if self.harness.failed_inputs(self):
            return 2
        if self.gates:
            return max(g.exit_code for g in self.gates.values())
        if getattr(self.report, "errors", None):
            return 1
        return 0 if all(c is None or c.passed for c in self.comparisons.values()) else 1

    @property
    def verdict(self) -> str:
        """The run's last line: PASS, FAIL or INTERRUPTED, the harness, the key and why."""
        report, what = self.report, f"{self.harness.name} {self.key}"
        if report.status != "complete":
            return (f"INTERRUPTED: {what} after {report.finished} of {report.n_cases} "
                    f"{self.harness.unit}: no verdict, the baseline untouched")
        if report.errors:
            return f"FAIL: {what}: {len(report.errors)} engine errors"
        if self.gates:
            status = ", ".join(g.status for g in self.gates.values())
        else:
            status = "no baseline" if self.comparison is None else (
                "pass" if self.comparison.passed else "regression")
        return f"{'PASS' if self.exit_code == 0 else 'FAIL'}: {what} gate {status}"

    def or_interrupt(self) -> GatedRun:
        """The run, or KeyboardInterrupt when it did not finish (Ctrl-C, or its model budget
        spent): a notebook's cell stops there, its report written."""
        if self.report.status != "complete":
            raise KeyboardInterrupt(self.verdict)
        return self

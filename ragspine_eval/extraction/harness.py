"""The extraction harness as the gated run takes it (gated/harness.py): `ExtractionWhat` and
`ExtractionHarness`.

`ExtractionHarness` keys each document set by its own key, scores facts from the engine's extractors
(or from a facts file) per set (run.py), gates each set with a baseline file (none: a document
of one's own without --baseline is only scored), and writes the report (after the gates: it
holds their verdicts), the facts, the JUnit and the Markdown summary.
Its module sits in extraction/ but belongs to the gated run's floor (tests/test_layout.py).

Invariants: a document of one's own is read by the engine in a worker under `limits`
(doc_worker.DocLimits); one of several that fails there is kept apart (`failures`): neither
scored nor gated, the others gated and written, what the gates recorded put back, and the run
exits 2. Ctrl-C between documents ends the run with the sets scored so far, the rest `not_run`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import ratchet
from ragspine_eval.extraction.doc_worker import DocLimits
from ragspine_eval.extraction.run import Target
from ragspine_eval.gated.harness import Echo, GatedRun, Harness

KEPT_APART = "a document of the run was kept apart: nothing was recorded"


@dataclass(frozen=True)
class ExtractionWhat:
    """An extraction run's inputs: the document sets, the facts file (None: the engine reads
    each document), the baseline file (None: nothing is gated) and the worker's limits."""

    targets: tuple[Target, ...]
    facts: Path | None = None
    baseline: Path | None = None
    limits: DocLimits | None = None


class ExtractionHarness(Harness):
    name: ClassVar[str] = "extraction"
    report_after_gate: ClassVar[bool] = True
    unit: ClassVar[str] = "document sets"

    def baseline_path(self, what: ExtractionWhat) -> Path | None:
        return Path(what.baseline) if what.baseline is not None else None

    def inputs(self, what: ExtractionWhat) -> dict[Path, str]:
        inputs: dict[Path, str] = {}
        for t in what.targets:
            inputs[t.ground_truth] = f"ground truth {t.ground_truth}"
            if t.document is not None:
                inputs[t.document] = f"document {t.document}"
        if what.facts is not None:
            inputs[Path(what.facts)] = f"facts file {what.facts}"
        return inputs

    def keys(self, what: ExtractionWhat) -> dict[str, str]:
        return {t.key: t.key for t in what.targets}

    def run(self, what: ExtractionWhat, how: Any, stored: dict[str, dict[str, Any] | None],
            say: Echo) -> Any:
        from ragspine_eval.extraction.run import score_engine, score_facts_file

        if what.facts is not None:
            return score_facts_file(Path(what.facts), list(what.targets))
        facts: dict[str, list[dict[str, Any]]] = {}
        run = score_engine(list(what.targets), on_facts=facts.__setitem__, limits=what.limits)
        run.facts = facts
        for failure in run.failures.values():
            say(f"error: engine failure on a document, kept apart (not scored, not gated, its "
                f"baseline entry unchanged): {failure['reason']}")
        return run

    def scored(self, report: Any, name: str) -> bool:
        return name in report.reports

    def finish(self, run: GatedRun) -> list[str]:
        from ragspine_eval.outputs.extraction_files import extraction_table, mismatch_examples

        report, lines = run.report, [*filter(None, [run.report.interrupted_line()])]
        for key in report.reports:
            lines += extraction_table(key, report.reports[key], run.stored.get(key),
                                      report.engine)
            lines += mismatch_examples(report.reports[key])
        report.baselines = {k: (run.stored.get(k) or {}).get("metrics") for k in report.reports}
        if run.baseline_path is not None:
            report.with_baseline(run.baseline_path,
                                 {k: v for k, v in run.stored.items() if v is not None})
        return lines + list(report.provenance.lines())

    def compare(self, report: Any, name: str, entry: dict[str, Any]
                ) -> ratchet.BaselineComparison:
        from ragspine_eval.extraction.report import compare_to_baseline

        return compare_to_baseline(report.reports[name], entry)

    def gate(self, run: GatedRun, name: str, options: ratchet.GateOptions, say: Echo
             ) -> ratchet.GateResult:
        from ragspine_eval.extraction.report import make_baseline_entry
        from ragspine_eval.outputs.extraction_files import mismatch_details

        scored = run.report.reports[name]
        gate = ratchet.run_gate(run.baseline_path, name,  # type: ignore[arg-type]
                                make_baseline_entry(scored), options)
        for line in gate.lines:
            say(line)
        if gate.comparison is not None:
            for line in mismatch_details(scored, gate.comparison.case_regressions):
                say(line)
        return gate

    def after_gates(self, run: GatedRun, before: Any, say: Echo) -> None:
        """Each set's gate into the report; a document kept apart: exit 2 leaves the baseline as
        it was, also for the documents that were scored."""
        from ragspine_eval.ratchet import baseline_file

        # the report holds each set's gate, an interrupted run's too
        for key, gate in run.gates.items():
            run.report.gate[key] = {"status": gate.status, "exit_code": gate.exit_code,
                                    "lines": gate.lines}
        if not run.report.failures or run.baseline_path is None:
            return
        after = baseline_file.snapshot(run.baseline_path)
        if after == before:
            return
        baseline_file.undo(run.baseline_path, before, after)
        for entry in run.report.gate.values():
            entry["undone"] = KEPT_APART
        say(f"baseline: {run.baseline_path} left as it was (what this run recorded was put "
            f"back): a document was kept apart; fix or drop it and run again")

    def writers(self, run: GatedRun, outputs: Any) -> list[tuple[str, Path | None, Any]]:
        from ragspine_eval.files import write_atomic
        from ragspine_eval.outputs.extraction_files import (
            write_extraction_junit,
            write_extraction_summary,
        )

        def save_facts(path: Path) -> str:
            lines = [json.dumps(f, ensure_ascii=False) for key in run.keys
                     for f in run.report.facts.get(key, [])]
            write_atomic(path, "".join(line + "\n" for line in lines))
            return f"{len(lines)} facts"

        comparisons = {key: gate.comparison for key, gate in run.gates.items()}
        return [("facts", outputs.save_facts, save_facts),
                ("junit", outputs.junit,
                 lambda p: write_extraction_junit(p, run.report, comparisons)),
                ("summary", outputs.summary_md,
                 lambda p: write_extraction_summary(p, run.report, run.gates))]

    def store_key(self, run: GatedRun) -> str:
        return ",".join(k for k in run.keys if k not in run.report.failures)

    def verdict_lines(self, run: GatedRun) -> list[str]:
        report = run.report
        if report.status != "complete":
            return [run.verdict]
        lines = []
        for key in report.reports:
            if run.baseline_path is None:
                lines.append(f"no baseline gate for {key} (a document of your own): pass "
                             f"--baseline FILE to keep one")
            elif (gate := run.gates.get(key)) is not None:
                undone = (" (not recorded: a document was kept apart)"
                          if report.gate.get(key, {}).get("undone") else "")
                lines.append(f"{'PASS' if gate.exit_code == 0 else 'FAIL'}: extraction {key} "
                             f"gate {gate.status}{undone}")
        return lines

    def closing_lines(self, run: GatedRun) -> list[str]:
        failures = run.report.failures
        if not failures:
            return []
        return [f"FAIL: the engine failed on {len(failures)} document(s), kept apart: "
                f"{', '.join(failures)} (exit 2; the reason is above and in the report's "
                f"\"failures\")"]

    def failed_inputs(self, run: GatedRun) -> bool:
        return bool(run.report.failures)

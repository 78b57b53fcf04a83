"""The QA harness as the gated run takes it (gated/harness.py): `QAWhat` and `QAHarness`.

`QAHarness` checks the engine's spec and the judge, reads the golden set whole (exit 2 on a bad
line, before any engine call), keys the run by the engine's key (`tool`, `agent@http`), the engine
configuration's label and the model (pipeline.spec.RunWhat.keyed), runs the cases at the retrieval gate
k the stored entry records, and writes the report, its JUnit and its Markdown summary.
Its module sits in qa/ but belongs to the gated run's floor (tests/test_layout.py): it
composes this harness with the outputs and the ratchet.

Invariants: a run with engine errors never creates or changes a baseline, and says why with
the errored ids; the report is written before the gate, so a gate that fails leaves it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import paths, ratchet
from ragspine_eval.gated.harness import Echo, GatedRun, Harness
from ragspine_eval.gated.runner import ENGINE_ERRORS
from ragspine_eval.pipeline.spec import RunHow, RunWhat


@dataclass(frozen=True)
class QAWhat:
    """A QA run's inputs: the run (its golden set, KB, engine, mode, judge, configuration and
    model) and the baseline file it is gated against."""

    run: RunWhat
    baseline: Path = paths.QA_BASELINE


def engine_errors_reason(report: Any) -> str:
    """The stated reason a run with engine errors fails, with the errored ids."""
    from ragspine_eval.outputs.console import short_ids

    n = len(report.errors)
    return (f"FAIL because of {n} engine error{'s' if n != 1 else ''} "
            f"({short_ids([c.id for c in report.errors])}): the engine raised, timed out or "
            f"answered malformed, so these cases are neither passes nor failures; a run with "
            f"engine errors never creates or changes a baseline. Fix the engine or its service "
            f"and run again")


class QAHarness(Harness):
    name: ClassVar[str] = "qa"

    def baseline_path(self, what: QAWhat) -> Path:
        return Path(what.baseline)

    def inputs(self, what: QAWhat) -> dict[Path, str]:
        return {Path(what.run.golden): f"golden set {what.run.golden}",
                Path(what.run.kb): f"knowledge base {what.run.kb}"}

    def check(self, what: QAWhat) -> QAWhat:
        if what.run.judge is None or isinstance(what.run.judge, str):  # an unknown name: exit 2
            from ragspine_eval.judges import registry as judges

            judge = judges.get(what.run.judge or judges.DEFAULT_JUDGE)  # resolved once
            return replace(what, run=replace(what.run, judge=judge))
        return what

    def keys(self, what: QAWhat) -> dict[str, str]:
        from ragspine_eval.engines import parse_engine

        engine, spec = what.run.engine, what.run.spec
        if spec is None and isinstance(engine, str):
            spec = parse_engine(engine, what.run.mode)
        key = spec.key if spec is not None else engine.label
        return {"qa": what.run.keyed(key)}

    def read(self, what: QAWhat, how: RunHow | None) -> QAWhat:
        from ragspine_eval.execution.cache import cache_dir
        from ragspine_eval.execution.golden_memo import load_golden_set_cached

        # a set validated before is remembered (not with --no-cache)
        cases = load_golden_set_cached(
            what.run.golden, None if how is not None and how.cache is False else cache_dir())
        return replace(what, run=replace(what.run, cases=cases))

    def run(self, what: QAWhat, how: RunHow | None, stored: dict[str, dict[str, Any] | None],
            say: Echo) -> Any:
        from ragspine_eval.qa import run as qa_run
        from ragspine_eval.qa.retrieval_gate import stored_k

        run_what = what.run if what.run.k is not None else replace(
            what.run, k=stored_k(stored.get("qa")))  # the k the baseline records
        return qa_run.run_qa(run_what, how or RunHow())

    def finish(self, run: GatedRun) -> list[str]:
        from ragspine_eval.outputs.qa_files import gate_table

        report, stored = run.report, run.stored.get("qa")
        report.provenance = report.provenance.with_baseline(run.baseline_path, run.key, stored)
        return [*gate_table(report, stored), *report.provenance.lines()]

    def compare(self, report: Any, name: str, entry: dict[str, Any]
                ) -> ratchet.BaselineComparison:
        from ragspine_eval.qa.baseline_entry import compare_to_baseline

        return compare_to_baseline(report, entry)

    def gate(self, run: GatedRun, name: str, options: ratchet.GateOptions, say: Echo
             ) -> ratchet.GateResult:
        from ragspine_eval.qa.baseline_entry import entry_for_gate

        report, key = run.report, run.keys[name]
        if report.errors:
            gate = ratchet.check_without_recording(run.baseline_path, key, run.comparison,
                                                   engine_errors_reason(report),
                                                   status=ENGINE_ERRORS)
        else:
            gate = ratchet.run_gate(run.baseline_path, key,
                                    entry_for_gate(report, run.stored.get(name), options),
                                    options)
        for line in gate.lines:
            say(line)
        return gate

    def write_report(self, path: Path, run: GatedRun, data: dict[str, Any]) -> None:
        from ragspine_eval.qa.report_file import write_report

        write_report(path, run.report, data)

    def writers(self, run: GatedRun, outputs: Any) -> list[tuple[str, Path | None, Any]]:
        from ragspine_eval.outputs.qa_files import write_qa_junit, write_qa_summary

        comparison = run.gate.comparison if run.gate is not None else run.comparison
        return [("junit", outputs.junit, lambda p: write_qa_junit(p, run.report, comparison)),
                ("summary", outputs.summary_md,
                 lambda p: write_qa_summary(p, run.report, run.stored.get("qa"), run.gate))]

"""The retrieval-only harness as the gated run takes it (gated/harness.py): `RetrievalWhat`
and `RetrievalHarness`.

`RetrievalHarness` reads the workspace and the question file whole before the engine is opened, keys
the run `<name>@k<top_k>` (the name: gated/own_workspace.py's; then the configuration's label
and the model: pipeline.spec.RunWhat.keyed), runs every question through the engine's retriever
(run.py), and writes the report, its JUnit and its Markdown summary. The baseline file, by
default, is gated/own_workspace.py's: data/golden/retrieval_baseline.json for a workspace
inside the project, one beside the question file for one outside it.
Its module sits in retrieval_only/ but belongs to the gated run's floor (tests/test_layout.py).

Invariants: a run with engine errors never creates or changes a baseline; a changed engine
configuration is said (DRIFT) before the gate's lines.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import ratchet
from ragspine_eval.gated.harness import Echo, GatedRun, Harness
from ragspine_eval.gated.runner import gate_key
from ragspine_eval.pipeline.spec import RunHow, RunWhat


@dataclass(frozen=True)
class RetrievalWhat:
    """A retrieval run's inputs: the run (`golden`: the question file, `kb`: the workspace,
    `k`: top_k, None: the configuration's, else 10; the configuration and the model), the
    baseline file (None: gated/own_workspace.py's) and the name its key starts with (None: the
    default)."""

    run: RunWhat
    baseline: Path | None = None
    name: str | None = None

    @property
    def top_k(self) -> int:
        config = self.run.engine_config
        return self.run.k if self.run.k is not None else (config.top_k or 10)


def baseline_key(what: RetrievalWhat, name: str | None = None) -> str:
    """`<name>@k<top_k>` (the name: `name`, else the workspace's folder name), then the
    configuration's label and the model (pipeline.spec.RunWhat.keyed)."""
    name = name or Path(os.path.realpath(what.run.kb)).name or "workspace"  # a loop: no raise
    return what.run.keyed(f"{name}@k{what.top_k}")


class RetrievalHarness(Harness):
    name: ClassVar[str] = "retrieval"

    def baseline_path(self, what: RetrievalWhat) -> Path:
        from ragspine_eval.gated.own_workspace import default_baseline

        if what.baseline is not None:
            return Path(what.baseline)
        return default_baseline(what.run.kb, what.run.golden, "retrieval")

    def inputs(self, what: RetrievalWhat) -> dict[Path, str]:
        config = what.run.engine_config
        return {Path(what.run.golden): f"question file {what.run.golden}",
                Path(what.run.kb): f"workspace {what.run.kb}",
                **({Path(config.path): f"engine config {config.path}"} if config.path else {})}

    def check(self, what: RetrievalWhat) -> RetrievalWhat:
        from ragspine_eval.knowledge.workspace import read_workspace

        return replace(what, run=replace(what.run, workspace=read_workspace(what.run.kb)))

    def keys(self, what: RetrievalWhat) -> dict[str, str]:
        from ragspine_eval.gated.own_workspace import run_name

        name = run_name(what.run.kb, what.run.golden, what.name, what.run.workspace)
        return {"retrieval": baseline_key(what, name)}

    def read(self, what: RetrievalWhat, how: RunHow | None) -> RetrievalWhat:
        from ragspine_eval.golden.question_files import load_question_file

        questions = load_question_file(what.run.golden)
        return replace(what, run=replace(what.run, cases=questions))

    def run(self, what: RetrievalWhat, how: RunHow | None,
            stored: dict[str, dict[str, Any] | None], say: Echo) -> Any:
        from ragspine_eval.retrieval_only.run import run_retrieval

        return run_retrieval(replace(what.run, k=what.top_k), how or RunHow())

    def finish(self, run: GatedRun) -> list[str]:
        from ragspine_eval.outputs.retrieval_files import retrieval_table

        report, stored = run.report, run.stored.get("retrieval")
        report.provenance = report.provenance.with_baseline(run.baseline_path, run.key, stored)
        return [*retrieval_table(report, stored, run.key), *report.provenance.lines()]

    def compare(self, report: Any, name: str, entry: dict[str, Any]
                ) -> ratchet.BaselineComparison:
        from ragspine_eval.retrieval_only.report import compare_retrieval

        return compare_retrieval(report, entry)

    def gate(self, run: GatedRun, name: str, options: ratchet.GateOptions, say: Echo
             ) -> ratchet.GateResult:
        from ragspine_eval.retrieval_only.report import make_retrieval_entry

        return gate_key(run, name, lambda: make_retrieval_entry(run.report), options, say)

    def writers(self, run: GatedRun, outputs: Any) -> list[tuple[str, Path | None, Any]]:
        from ragspine_eval.outputs.retrieval_files import (
            write_retrieval_junit,
            write_retrieval_summary,
        )

        comparison = run.gate.comparison if run.gate is not None else run.comparison
        return [("junit", outputs.junit,
                 lambda p: write_retrieval_junit(p, run.report, comparison, run.key)),
                ("summary", outputs.summary_md,
                 lambda p: write_retrieval_summary(p, run.report, run.stored.get("retrieval"),
                                                   run.gate, run.key))]

"""The answer harness as the gated run takes it (gated/harness.py): `AnswersWhat` and
`AnswersHarness`.

`AnswersHarness` reads the workspace and the gold file whole before the engine is opened, keys each
route `<name>@answers:<route>` (the name: gated/own_workspace.py's; then the configuration's
label and the model: pipeline.spec.RunWhat.keyed), so each workspace, route, configuration and model is
gated against its own entry; asks and judges every question on each route (run.py), and writes
the report, its JUnit and its Markdown summary. The baseline file, by default, is
gated/own_workspace.py's: data/golden/answers_baseline.json for a workspace inside the project
(the committed set's, as `make run` gates it), `<gold stem>.answers_baseline.json` beside the
gold file for one outside it, so a run over one's own workspace never writes into the project.
The run store keeps it under the routes' keys joined by ", ".
Its module sits in answers/ but belongs to the gated run's floor (tests/test_layout.py).

Invariants: a run with engine errors never creates or changes a baseline; the verdict line
counts the questions passing per route and says when nothing was compared.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import ratchet
from ragspine_eval.gated.harness import Echo, GatedRun, Harness
from ragspine_eval.gated.runner import gate_key
from ragspine_eval.pipeline.spec import RunHow, RunWhat


@dataclass(frozen=True)
class AnswersWhat:
    """An answer run's inputs: the run (`golden`: the gold file, `kb`: the workspace, `mode`:
    the routes joined by "+", the configuration and the model), the languages (None: every
    one), the baseline file and the name its keys start with (None: the defaults), and whether
    the cases the workspace cannot answer run as gold errors instead of exit 2."""

    run: RunWhat
    languages: tuple[str, ...] | None = None
    baseline: Path | None = None
    name: str | None = None
    allow_gold_errors: bool = False

    @property
    def routes(self) -> tuple[str, ...]:
        return tuple(self.run.mode.split("+")) if self.run.mode else ("ask", "narrative")


def answers_run(workspace: str | Path, gold: str | Path, routes: tuple[str, ...] = (
        "ask", "narrative"), config: Any = None, model: Any = None) -> RunWhat:
    """The RunWhat of an answer run: its gold file and workspace, its routes as its mode."""
    from ragspine_eval.engines.engine_config import DEFAULT

    return RunWhat(Path(gold), Path(workspace), "ragspine", "+".join(routes), None,
                   config or DEFAULT, model=model)


def baseline_key(what: AnswersWhat, route: str, name: str | None = None) -> str:
    """`<name>@answers:<route>` (the name: `name`, else the workspace's folder name), then the
    configuration's label and the model (pipeline.spec.RunWhat.keyed)."""
    name = name or Path(what.run.kb).resolve().name or "workspace"
    return what.run.keyed(f"{name}@answers:{route}")


class AnswersHarness(Harness):
    name: ClassVar[str] = "answers"

    def baseline_path(self, what: AnswersWhat) -> Path:
        from ragspine_eval.gated.own_workspace import default_baseline

        if what.baseline is not None:
            return Path(what.baseline)
        return default_baseline(what.run.kb, what.run.golden, "answers")

    def inputs(self, what: AnswersWhat) -> dict[Path, str]:
        config = what.run.engine_config
        return {Path(what.run.golden): f"gold file {what.run.golden}",
                Path(what.run.kb): f"workspace {what.run.kb}",
                **({Path(config.path): f"engine config {config.path}"} if config.path else {})}

    def check(self, what: AnswersWhat) -> AnswersWhat:
        from ragspine_eval.engines.workspace_answers import ROUTES
        from ragspine_eval.knowledge.workspace import read_workspace

        bad = [r for r in what.routes if r not in ROUTES]
        if bad:
            raise ValueError(f"unknown route {bad[0]!r}: one of {', '.join(ROUTES)}")
        return replace(what, run=replace(what.run, workspace=read_workspace(what.run.kb)))

    def keys(self, what: AnswersWhat) -> dict[str, str]:
        from ragspine_eval.gated.own_workspace import run_name

        named = run_name(what.run.kb, what.run.golden, what.name, what.run.workspace)
        return {route: baseline_key(what, route, named) for route in what.routes}

    def read(self, what: AnswersWhat, how: RunHow | None) -> AnswersWhat:
        from ragspine_eval.golden.nl_answers import answer_cases_of

        cases = tuple(answer_cases_of(what.run.golden))
        return replace(what, run=replace(what.run, cases=cases))

    def run(self, what: AnswersWhat, how: RunHow | None,
            stored: dict[str, dict[str, Any] | None], say: Echo) -> Any:
        from ragspine_eval.answers.report import report_of
        from ragspine_eval.answers.run import run_answers
        from ragspine_eval.provenance import Clock

        clock = Clock()
        answered = run_answers(what.run, how or RunHow(), what.languages,
                               allow_gold_errors=what.allow_gold_errors)
        report = report_of(answered, clock)
        model = what.run.model
        if model is not None and not model.is_default:  # what its calls used: `times.usage`
            report.provenance = replace(report.provenance, model=model.to_dict())
        return report

    def finish(self, run: GatedRun) -> list[str]:
        from ragspine_eval.outputs.answers_files import answers_table

        return [*answers_table(run.report, run.stored, run.keys),
                *run.report.provenance.lines()]

    def compare(self, report: Any, name: str, entry: dict[str, Any]
                ) -> ratchet.BaselineComparison:
        from ragspine_eval.answers.report import compare_answers

        return compare_answers(report, name, entry)

    def gate(self, run: GatedRun, name: str, options: ratchet.GateOptions, say: Echo
             ) -> ratchet.GateResult:
        from ragspine_eval.answers.report import make_answers_entry

        return gate_key(run, name, lambda: make_answers_entry(run.report, name), options, say)

    def writers(self, run: GatedRun, outputs: Any) -> list[tuple[str, Path | None, Any]]:
        from ragspine_eval.outputs.answers_files import write_answers_junit, write_answers_summary

        comparisons = {r: (g.comparison if (g := run.gates.get(r)) is not None else c)
                       for r, c in run.comparisons.items()}
        return [("junit", outputs.junit,
                 lambda p: write_answers_junit(p, run.report, comparisons, run.key)),
                ("summary", outputs.summary_md,
                 lambda p: write_answers_summary(p, run.report, run.stored, comparisons,
                                                 run.exit_code != 0, run.key, headline(run)))]

    def verdict_lines(self, run: GatedRun) -> list[str]:
        if run.status != "complete":
            return [run.verdict]
        word, gate, tail = verdict_parts(run)
        return [f"{word}: answers {run.key}{':' if gate.endswith('errors') else ''} {gate} · "
                f"{tail}"]


def verdict_parts(run: GatedRun) -> tuple[str, str, str]:
    """(PASS or FAIL, the gate per route or the engine errors, how many questions pass and
    whether an earlier run was compared: outputs/answers_files.py `pass_counts`)."""
    from ragspine_eval.outputs.answers_files import NOT_COMPARED, pass_counts

    report = run.report
    word = "PASS" if run.exit_code == 0 and not report.errors else "FAIL"
    tail = pass_counts(report)
    if all(c is None for c in run.comparisons.values()):
        recorded = any(g.status == "bootstrap" for g in run.gates.values())
        tail += f" · {NOT_COMPARED}" + (" (this run was recorded as the baseline)"
                                        if recorded else "")
    if report.errors:
        return word, f"{len(report.errors)} engine errors", tail
    status = ", ".join(f"{r} {g.status}" for r, g in run.gates.items()) or (
        "no baseline" if all(c is None for c in run.comparisons.values()) else
        "pass" if run.exit_code == 0 else "regression")
    return word, f"gate {status}", tail


def headline(run: GatedRun) -> str:
    """The verdict as a report's heading gives it beside its title: `PASS · gate ... · ...`;
    a run that did not finish says so first."""
    if run.status != "complete":
        return f"{run.status.upper()} · {' · '.join(verdict_parts(run)[1:])}"
    return " · ".join(verdict_parts(run))

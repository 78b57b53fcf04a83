"""The gated answer run: one call that the CLI (and, later, the notebook) share.

`run_gated_answers` checks, runs, writes and gates, in the order the retrieval run does:
1. the output paths, the gate options, the workspace, the gold file and every stored entry are
   checked before the engine is opened (exit 2, nothing written);
2. every question is asked and judged on each route (answers/run.py), the report built
   (answers/report.py) with its provenance;
3. the JSON report is written;
4. the ratchet, route by route, under the key `baseline_key`: the run's name (`name`; by
   default the workspace's folder name for a workspace inside the project, the gold file's
   stem for one outside it, then `@` and the workspace's fingerprint), `@answers:` and the
   route, `+` the engine configuration's label when one is given, and `~` the model's provider
   and name when it is not the MockProvider, so each workspace, route, configuration and model
   is gated against its own entry; without `options` the run is only compared. A run with
   engine errors never creates or changes a baseline. The baseline file is `baseline_path`, by
   default the project's data/golden/answers_baseline.json for a workspace inside the project
   (the committed set's, as `make run` gates it) and `<gold stem>.answers_baseline.json`
   beside the gold file for one outside it (gated/own_workspace.py), so a run over one's own
   workspace never writes into the project;
5. the JUnit and Markdown files; when one cannot be written, what the gate recorded is undone;
6. the run store keeps the report (kind "answers", the routes' keys joined by ", ").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragspine_eval import ratchet, runs
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.files import write_json_atomic
from ragspine_eval.files.output_paths import write_announced
from ragspine_eval.gated import steps
from ragspine_eval.gated.own_workspace import default_baseline, run_name
from ragspine_eval.gated.outputs import GatedOutputs
from ragspine_eval.outputs import escape

Echo = Callable[[str], None]


@dataclass
class AnswersGatedRun:
    report: Any  # answers.report.AnswerRunReport
    keys: dict[str, str]
    baseline_path: Path
    stored: dict[str, dict[str, Any] | None]
    comparisons: dict[str, ratchet.BaselineComparison | None]
    gates: dict[str, ratchet.GateResult] = field(default_factory=dict)
    written: list[tuple[str, Path]] = field(default_factory=list)
    kept: runs.RunSummary | None = None

    @property
    def exit_code(self) -> int:
        if self.report.errors:
            return 1
        if self.gates:
            return max(g.exit_code for g in self.gates.values())
        return 0 if all(c is None or c.passed for c in self.comparisons.values()) else 1

    def _verdict_parts(self) -> tuple[str, str, str]:
        """(PASS or FAIL, the gate per route or the engine errors, how many questions pass and
        whether an earlier run was compared: outputs/answers_files.py `pass_counts`)."""
        from ragspine_eval.outputs.answers_files import NOT_COMPARED, pass_counts

        word = "PASS" if self.exit_code == 0 and not self.report.errors else "FAIL"
        tail = pass_counts(self.report)
        if all(c is None for c in self.comparisons.values()):
            recorded = any(g.status == "bootstrap" for g in self.gates.values())
            tail += f" · {NOT_COMPARED}" + (" (this run was recorded as the baseline)"
                                            if recorded else "")
        if self.report.errors:
            return word, f"{len(self.report.errors)} engine errors", tail
        status = ", ".join(f"{r} {g.status}" for r, g in self.gates.items()) or (
            "no baseline" if all(c is None for c in self.comparisons.values()) else
            "pass" if self.exit_code == 0 else "regression")
        return word, f"gate {status}", tail

    @property
    def verdict(self) -> str:
        """The run's last line: `PASS: answers <keys> gate <status> · <counts>`."""
        word, gate, tail = self._verdict_parts()
        key = ", ".join(self.keys.values())
        return f"{word}: answers {key}{':' if gate.endswith('errors') else ''} {gate} · {tail}"

    @property
    def headline(self) -> str:
        """The verdict as a report's heading gives it beside its title: `PASS · gate ... · ...`."""
        return " · ".join(self._verdict_parts())


def baseline_key(workspace: str | Path, route: str, config: EngineConfig = DEFAULT,
                 model: Any = None, name: str | None = None) -> str:
    """`<name>@answers:<route>` (the name: `name`, else the workspace's folder name), then
    `+<label>` for a configuration, then `~<provider:model>` for a model other than the
    MockProvider (models/)."""
    from ragspine_eval.models.recorder import in_use

    name = name or Path(workspace).resolve().name or "workspace"
    key = f"{name}@answers:{route}"
    key = key if not config.settings() else f"{key}+{config.label}"
    model = in_use(model)
    return key if model is None or model.spec.is_default else f"{key}~{model.spec.label}"


def run_gated_answers(workspace: str | Path, gold: str | Path, *,
                      routes: Sequence[str] = ("ask", "narrative"),
                      languages: Sequence[str] | None = None, repeat: int = 1,
                      config: EngineConfig = DEFAULT,
                      baseline_path: str | Path | None = None, name: str | None = None,
                      outputs: GatedOutputs | None = None,
                      options: ratchet.GateOptions | None = None,
                      record_command: str | None = None, echo: Echo | None = None,
                      store: bool = True,
                      progress: Callable[[int, int, int], None] | None = None,
                      model: Any = None, allow_gold_errors: bool = False,
                      **run_options: Any) -> AnswersGatedRun:
    """Check, run, write, gate, write the CI files (see the module docstring). `model`
    (models.ModelRun; None: the MockProvider) is what the engine asks, named in the
    provenance; `baseline_path` and `name` as the module docstring says (None: the defaults);
    `allow_gold_errors` runs the cases the workspace cannot answer as gold errors
    (answers/run.py) instead of exit 2; `run_options` are run_answer_eval's (jobs, executor,
    scheduler, case_timeout, cache, ...)."""
    from ragspine_eval.answers.report import compare_answers, make_answers_entry, report_of
    from ragspine_eval.answers.run import run_answer_eval
    from ragspine_eval.golden.nl_answers import answer_cases_of
    from ragspine_eval.outputs.answers_files import answers_table
    from ragspine_eval.provenance import Clock
    from ragspine_eval.knowledge.workspace import read_workspace

    say = escape.escaped_echo(echo)
    outputs = outputs or GatedOutputs()
    workspace, gold = Path(workspace), Path(gold)
    baseline_path = Path(baseline_path) if baseline_path is not None else \
        default_baseline(workspace, gold, "answers")
    ratchet.check_outputs({"report": outputs.report, "junit": outputs.junit,
                           "summary": outputs.summary_md}, baseline=baseline_path,
                          inputs={gold: f"gold file {gold}", workspace: f"workspace {workspace}",
                                  **({Path(config.path): f"engine config {config.path}"}
                                     if config.path else {})})
    read_workspace(workspace)
    named = run_name(workspace, gold, name)
    keys = {route: baseline_key(workspace, route, config, model, named) for route in routes}
    options = steps.checked_options(options, record_command)
    answer_cases_of(gold)
    stored = steps.stored_entries(baseline_path, keys)

    clock = Clock()
    answered = run_answer_eval(workspace, gold, routes=routes, languages=languages,  # type: ignore[arg-type]
                               repeat=repeat, config=config, progress=progress, model=model,
                               allow_gold_errors=allow_gold_errors, **run_options)
    report = report_of(answered, clock)
    if model is not None and not model.is_default:  # what its calls used: `times.usage`
        report.provenance = replace(report.provenance, model=model.to_dict())
    for line in (*answers_table(report, stored, keys), *report.provenance.lines()):
        say(line)
    run = AnswersGatedRun(report, keys, baseline_path, stored,
                          {route: None if entry is None else compare_answers(report, route, entry)
                           for route, entry in stored.items()})
    write_announced(outputs.report, "report", lambda p: write_json_atomic(p, report.to_dict()),
                    run.written, say)
    with steps.undone_on_bad_output(baseline_path):
        if options is not None:
            for route, key in keys.items():
                run.gates[route] = steps.gate_key(
                    baseline_path, key, run.comparisons[route],
                    lambda route=route: make_answers_entry(report, route), len(report.errors),
                    options, say)
        _write_ci_files(run, outputs, say)
    run.kept = runs.keep(report.to_dict, kind="answers", key=", ".join(keys.values()),
                         store=store, echo=say, verdict=_store_verdict(run))
    if options is not None:
        say(run.verdict)
    return run


def _store_verdict(run: AnswersGatedRun) -> str:
    """The run's verdict as the run store lists it."""
    if run.report.errors:
        return "errors"
    if all(c is None for c in run.comparisons.values()) and not any(
            g.exit_code for g in run.gates.values()):
        return "no baseline"
    return "pass" if run.exit_code == 0 else "fail"


def _write_ci_files(run: AnswersGatedRun, outputs: GatedOutputs, say: Echo) -> None:
    from ragspine_eval.outputs.answers_files import write_answers_junit, write_answers_summary

    comparisons = {r: (g.comparison if (g := run.gates.get(r)) is not None else c)
                   for r, c in run.comparisons.items()}
    key = ", ".join(run.keys.values())
    write_announced(outputs.junit, "junit",
                    lambda p: write_answers_junit(p, run.report, comparisons, key),
                    run.written, say)
    write_announced(outputs.summary_md, "summary",
                    lambda p: write_answers_summary(p, run.report, run.stored, comparisons,
                                                    run.exit_code != 0, key, run.headline),
                    run.written, say)

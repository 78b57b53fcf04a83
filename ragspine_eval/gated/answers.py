"""The gated answer run: one call that the CLI (and, later, the notebook) share.

`run_gated_answers` checks, runs, writes and gates, in the order the retrieval run does:
1. the output paths, the gate options, the workspace, the gold file and every stored entry are
   checked before the engine is opened (exit 2, nothing written);
2. every question is asked and judged on each route (answers/run.py), the report built
   (answers/report.py) with its provenance;
3. the JSON report is written;
4. the ratchet, route by route, under the key `baseline_key`: the workspace's folder name,
   `@answers:` and the route, `+` the engine configuration's label when one is given, and `~`
   the model's provider and name when it is not the MockProvider, so each route, configuration
   and model is gated against its own entry; without `options` the run is only compared. A run with engine errors never creates or changes a baseline;
5. the JUnit and Markdown files; when one cannot be written, what the gate recorded is undone;
6. the run store keeps the report (kind "answers", the routes' keys joined by ", ").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragspine_eval import paths, ratchet, runs
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.files import write_json_atomic
from ragspine_eval.files.output_paths import write_announced
from ragspine_eval.gated import steps
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

    @property
    def verdict(self) -> str:
        key = ", ".join(self.keys.values())
        if self.report.errors:
            return f"FAIL: answers {key}: {len(self.report.errors)} engine errors"
        status = ", ".join(f"{r} {g.status}" for r, g in self.gates.items()) or (
            "no baseline" if all(c is None for c in self.comparisons.values()) else
            "pass" if self.exit_code == 0 else "regression")
        return f"{'PASS' if self.exit_code == 0 else 'FAIL'}: answers {key} gate {status}"


def baseline_key(workspace: str | Path, route: str, config: EngineConfig = DEFAULT,
                 model: Any = None) -> str:
    """`<workspace folder name>@answers:<route>`, then `+<label>` for a configuration, then
    `~<provider:model>` for a model other than the MockProvider (models/)."""
    from ragspine_eval.models.recorder import in_use

    name = Path(workspace).resolve().name or "workspace"
    key = f"{name}@answers:{route}"
    key = key if not config.settings() else f"{key}+{config.label}"
    model = in_use(model)
    return key if model is None or model.spec.is_default else f"{key}~{model.spec.label}"


def run_gated_answers(workspace: str | Path, gold: str | Path, *,
                      routes: Sequence[str] = ("ask", "narrative"),
                      languages: Sequence[str] | None = None, repeat: int = 1,
                      config: EngineConfig = DEFAULT,
                      baseline_path: str | Path = paths.ANSWERS_BASELINE,
                      outputs: GatedOutputs | None = None,
                      options: ratchet.GateOptions | None = None,
                      record_command: str | None = None, echo: Echo | None = None,
                      store: bool = True,
                      progress: Callable[[int, int, int], None] | None = None,
                      model: Any = None, **run_options: Any) -> AnswersGatedRun:
    """Check, run, write, gate, write the CI files (see the module docstring). `model`
    (models.ModelRun; None: the MockProvider) is what the engine asks, named in the
    provenance; `run_options` are run_answer_eval's (jobs, executor, scheduler, case_timeout,
    cache, ...)."""
    from ragspine_eval.answers.report import compare_answers, make_answers_entry, report_of
    from ragspine_eval.answers.run import run_answer_eval
    from ragspine_eval.golden.nl_answers import answer_cases_of
    from ragspine_eval.outputs.answers_files import answers_table
    from ragspine_eval.provenance import Clock
    from ragspine_eval.knowledge.workspace import read_workspace

    say = escape.escaped_echo(echo)
    outputs = outputs or GatedOutputs()
    workspace, gold, baseline_path = Path(workspace), Path(gold), Path(baseline_path)
    ratchet.check_outputs({"report": outputs.report, "junit": outputs.junit,
                           "summary": outputs.summary_md}, baseline=baseline_path,
                          inputs={gold: f"gold file {gold}", workspace: f"workspace {workspace}",
                                  **({Path(config.path): f"engine config {config.path}"}
                                     if config.path else {})})
    keys = {route: baseline_key(workspace, route, config, model) for route in routes}
    options = steps.checked_options(options, record_command)
    read_workspace(workspace)
    answer_cases_of(gold)
    stored = steps.stored_entries(baseline_path, keys)

    clock = Clock()
    answered = run_answer_eval(workspace, gold, routes=routes, languages=languages,  # type: ignore[arg-type]
                               repeat=repeat, config=config, progress=progress, model=model,
                               **run_options)
    report = report_of(answered, clock)
    if model is not None and not model.is_default:
        report.provenance = _with_model(report.provenance, model, answered)
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
                                                    run.exit_code != 0, key),
                    run.written, say)


def _with_model(provenance: Any, model: Any, answered: Any) -> Any:
    """The provenance naming the model, and what this run's computed answers used (calls,
    tokens per stage and by tag, cost) under `times.latency.model`: how many calls a question
    makes depends on what the engine's caches hold (answers/report.py), so they stay out of
    the report's deterministic part (`Provenance.model_used` joins them back for a reader)."""
    provenance = replace(provenance, model=model.to_dict())
    cases, outcomes, reused = answered.asked
    computed = [(c, o) for c, o, was in zip(cases, outcomes, reused) if not was]
    if provenance.times is None or provenance.times.latency is None:
        return provenance
    used = model.to_dict([o for _, o in computed], [dict(c.tags) for c, _ in computed])
    kept = {k: used[k] for k in ("calls", "stages", "by_tag", "cost", "paid") if k in used}
    return replace(provenance, times=replace(provenance.times, latency={
        **provenance.times.latency, "model": kept}))

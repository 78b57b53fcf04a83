"""The gated retrieval-only run: one call that the CLI and the retrieval notebook share.

`run_gated_retrieval` checks, runs, writes and gates, in this order, as the QA one does:
1. the output paths, the gate options, the workspace, the question file, the engine
   configuration and the stored entry are checked before the engine is opened (exit 2, nothing
   written);
2. the questions run (retrieval_only/run.py) and the provenance names the entry compared;
3. the JSON report is written;
4. the ratchet under the run's key (`baseline_key`: the workspace's folder name, `@k` and top_k,
   and `+` the engine configuration's label when one is given), so a configuration is gated
   against its own entry; without `options` (a notebook) the run is only compared. A run with
   engine errors never creates or changes a baseline;
5. the JUnit and Markdown files; when one cannot be written, what the gate recorded is undone;
6. the run store keeps the report (kind "retrieval", the same key).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import paths, ratchet, runs
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.files import write_json_atomic
from ragspine_eval.files.output_paths import write_announced
from ragspine_eval.gated import steps
from ragspine_eval.gated.base import GatedRun
from ragspine_eval.gated.outputs import GatedOutputs
from ragspine_eval.outputs import escape
from ragspine_eval.retrieval_only.report import (
    RetrievalRunReport,
    compare_retrieval,
    make_retrieval_entry,
)

Echo = Callable[[str], None]


RetrievalOutputs = GatedOutputs


@dataclass
class RetrievalGatedRun(GatedRun):
    """A gated retrieval-only run (gated/base.py: the fields and the exit rule)."""

    harness: ClassVar[str] = "retrieval"
    report: RetrievalRunReport


def baseline_key(workspace: str | Path, top_k: int, config: EngineConfig = DEFAULT,
                 model: Any = None) -> str:
    """`<workspace folder name>@k<top_k>`, then `+<label>` for a configuration with settings,
    then `~<provider:model>` for a model other than the MockProvider (models/)."""
    from ragspine_eval.models.recorder import in_use

    name = Path(os.path.realpath(workspace)).name or "workspace"  # a symlink loop: no raise
    key = f"{name}@k{top_k}"
    key = key if not config.settings() else f"{key}+{config.label}"
    model = in_use(model)
    return key if model is None or model.spec.is_default else f"{key}~{model.spec.label}"


def verdict_of(run: RetrievalGatedRun) -> str:
    """The run's verdict as the run store lists it."""
    if run.report.errors:
        return "errors"
    if run.gate is not None:
        return "fail" if run.gate.exit_code else ("no baseline" if run.comparison is None
                                                  else "pass")
    return "no baseline" if run.comparison is None else (
        "pass" if run.comparison.passed else "fail")


def run_gated_retrieval(workspace: str | Path, golden: str | Path, *, top_k: int | None = None,
                        config: EngineConfig = DEFAULT,
                        baseline_path: str | Path = paths.RETRIEVAL_BASELINE,
                        outputs: RetrievalOutputs | None = None,
                        options: ratchet.GateOptions | None = None,
                        record_command: str | None = None, echo: Echo | None = None,
                        store: bool = True,
                        progress: Callable[[int, int, int], None] | None = None,
                        model: Any = None, **run_options: Any) -> RetrievalGatedRun:
    """Check, run, write, gate, write the CI files, keep (see the module docstring).
    `model` (models.ModelRun; None: the MockProvider) is what the engine's query translation and
    listwise rerank ask; `run_options` are run_retrieval_eval's (jobs, executor, scheduler,
    cache, ...)."""
    from ragspine_eval.golden.question_files import load_question_file
    from ragspine_eval.outputs.retrieval_files import retrieval_table
    from ragspine_eval.knowledge.workspace import read_workspace
    from ragspine_eval.retrieval_only.run import run_retrieval_eval

    say = escape.escaped_echo(echo)
    outputs = outputs or RetrievalOutputs()
    workspace, golden, baseline_path = Path(workspace), Path(golden), Path(baseline_path)
    ratchet.check_outputs({"report": outputs.report, "junit": outputs.junit,
                           "summary": outputs.summary_md}, baseline=baseline_path,
                          inputs={golden: f"question file {golden}",
                                  workspace: f"workspace {workspace}",
                                  paths.PROJECT_ROOT / "notebooks": "notebooks",
                                  **({Path(config.path): f"engine config {config.path}"}
                                     if config.path else {})})
    top_k = top_k if top_k is not None else (config.top_k or 10)
    key = baseline_key(workspace, top_k, config, model)
    options = steps.checked_options(options, record_command)
    read_workspace(workspace)
    load_question_file(golden)
    stored = steps.stored_entries(baseline_path, {key: key})[key]

    report = run_retrieval_eval(workspace, golden, top_k=top_k, config=config, progress=progress,
                                model=model, **run_options)
    report.provenance = report.provenance.with_baseline(baseline_path, key, stored)
    for line in (*retrieval_table(report, stored, key), *report.provenance.lines()):
        say(line)
    run = RetrievalGatedRun(report, key, baseline_path, stored,
                            None if stored is None else compare_retrieval(report, stored))
    write_announced(outputs.report, "report", lambda p: write_json_atomic(p, report.to_dict()),
                    run.written, say)
    with steps.undone_on_bad_output(baseline_path):
        if options is not None:
            run.gate = steps.gate_key(baseline_path, key, run.comparison,
                                      lambda: make_retrieval_entry(report), len(report.errors),
                                      options, say)
        _write_ci_files(run, outputs, say)
    run.kept = runs.keep(report.to_dict, kind="retrieval", key=key, store=store, echo=say,
                         verdict=verdict_of(run))
    if options is not None:
        say(run.verdict)
    return run


def _write_ci_files(run: RetrievalGatedRun, outputs: RetrievalOutputs, say: Echo) -> None:
    from ragspine_eval.outputs.retrieval_files import (
        write_retrieval_junit,
        write_retrieval_summary,
    )

    comparison = run.gate.comparison if run.gate is not None else run.comparison
    write_announced(outputs.junit, "junit",
                    lambda p: write_retrieval_junit(p, run.report, comparison, run.key),
                    run.written, say)
    write_announced(outputs.summary_md, "summary",
                    lambda p: write_retrieval_summary(p, run.report, run.stored, run.gate,
                                                      run.key), run.written, say)

"""The gated QA run: one call that the CLI and the notebooks share.

`run_gated_qa` checks, runs, writes and gates, in this order, and returns a `QAGatedRun`:
1. every output path, the gate options, the engine spec, the golden set and the stored baseline
   entry are checked before the engine is called, so an error (a `RagspineEvalError`, exit 2)
   never follows a write;
2. the cases run and are scored (run.py); the provenance names the baseline entry compared;
3. the JSON report is written;
4. the ratchet: with `options` (the CLI) the gate compares and records where asked; without
   them (a notebook) the run is only compared and nothing is recorded. A run with engine errors
   never creates or changes a baseline;
5. the JUnit and Markdown files are written; when one cannot be (exit 2), what the gate recorded
   is undone, so exit 2 always leaves the baseline and its history as they were.
Ctrl-C while the cases run (run.py raises runner.RunInterrupted with the report of what ran)
goes through the same steps 2-5 with that report, marked interrupted: its unfinished cases are
not run, the gate only compares (never creates or changes a baseline, even had every case
finished), and the outputs are written whole (files/atomic.py); then the same RunInterrupted is
raised again, so the program still ends as interrupted (the CLI: exit 130). A second Ctrl-C
while writing ends it at once: each file is then written whole or not at all.
No output may land on an input: the golden set, the knowledge base, the baseline, its history,
the notebooks (exit 2 before the run).

`echo` receives each line a person should read, at the moment it is true (the gate table before
the report is written, the gate's lines after), so the CLI passes `print` and a notebook nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval import paths, ratchet, runs
from ragspine_eval.qa.report_file import write_report
from ragspine_eval.files.output_paths import write_announced
from ragspine_eval.gated import steps
from ragspine_eval.gated.base import GatedRun
from ragspine_eval.gated.outputs import GatedOutputs
from ragspine_eval.outputs import escape
from ragspine_eval.qa.baseline_entry import compare_to_baseline, entry_for_gate
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.execution.runner import RunInterrupted

Echo = Callable[[str], None]


QAOutputs = GatedOutputs


@dataclass
class QAGatedRun(GatedRun):
    """A gated QA run (gated/base.py: the fields and the exit rule)."""

    harness: ClassVar[str] = "qa"
    report: QAEvalReport

    def ungated_status(self) -> str:
        return "pass" if self.exit_code == 0 else "regression"


ENGINE_ERRORS = "engine errors"  # the gate's status for a run with engine errors
INTERRUPTED = "interrupted"  # the gate's status for a run Ctrl-C stopped


def interrupted_reason(report: QAEvalReport) -> str:
    """The stated reason an interrupted run (Ctrl-C, or its model budget spent) records
    nothing."""
    what = (f"STOPPED ({report.stopped_by})" if report.stopped_by
            else "INTERRUPTED (Ctrl-C)")
    return (f"{what} after {report.finished} of {report.n_cases} cases: the "
            f"cases not run have no verdict, so nothing was recorded and the baseline is as it "
            f"was; run the same command again for a verdict")


def engine_errors_reason(report: QAEvalReport) -> str:
    """The stated reason a run with engine errors fails, with the errored ids."""
    from ragspine_eval.outputs.console import short_ids

    n = len(report.errors)
    return (f"FAIL because of {n} engine error{'s' if n != 1 else ''} "
            f"({short_ids([c.id for c in report.errors])}): the engine raised, timed out or "
            f"answered malformed, so these cases are neither passes nor failures; a run with "
            f"engine errors never creates or changes a baseline. Fix the engine or its service "
            f"and run again")


def run_gated_qa(golden_path: str | Path = paths.QA_GOLDEN_SET, mode: str | None = None, *,
                 engine: str = "ragspine", kb_dir: str | Path = paths.KB_DIR,
                 baseline_path: str | Path = paths.QA_BASELINE,
                 outputs: QAOutputs | None = None,
                 options: ratchet.GateOptions | None = None,
                 record_command: Callable[[Any], str] | None = None,
                 echo: Echo | None = None, judge: Any = None, store: bool = True,
                 **run_options: Any) -> QAGatedRun:
    """Check, run, write the report, gate, write the CI files (see the module docstring).

    `record_command(spec)` builds the command that records this run (shown when it improved);
    `run_options` are run_qa_eval's (jobs, case_timeout, retries, fail_fast, progress);
    `judge` is the faithfulness judge: a registered name (judges.registry; None: lexical) or a judge.
    `store=False` keeps the run out of the run store (runs/; the CLI's --no-store).
    Raises RagspineEvalError (GoldenSetError, KnowledgeBaseError, BaselineError, OutputError,
    EngineSpecError, ...) for input the run cannot use.
    """
    from ragspine_eval.outputs.qa_files import gate_table
    from ragspine_eval.engines import parse_engine
    from ragspine_eval.execution.cache import cache_dir
    from ragspine_eval.execution.golden_memo import load_golden_set_cached
    from ragspine_eval.qa.run import run_qa_eval

    say = escape.escaped_echo(echo)
    outputs = outputs or QAOutputs()
    golden_path, baseline_path = Path(golden_path), Path(baseline_path)
    ratchet.check_outputs({"report": outputs.report, "junit": outputs.junit,
                           "summary": outputs.summary_md}, baseline=baseline_path,
                          inputs={golden_path: f"golden set {golden_path}",
                                  Path(kb_dir): f"knowledge base {kb_dir}",
                                  paths.PROJECT_ROOT / "notebooks": "notebooks"})
    spec = parse_engine(engine, mode)
    if judge is None or isinstance(judge, str):  # an unknown name fails here, before any run
        from ragspine_eval.judges import registry as judges

        judge = judges.get(judge or judges.DEFAULT_JUDGE)
    if options is not None:
        if record_command is not None:
            options = _with_record_command(options, record_command(spec))
        options.check()
    # fail on a bad line before any engine call (a set validated before is remembered)
    load_golden_set_cached(golden_path, None if run_options.get("cache") is False else cache_dir())
    config = run_options.get("engine_config")
    key = qa_key(spec.key, config, run_options.get("model"))
    stored = steps.stored_entries(baseline_path, {key: key})[key]
    from ragspine_eval.qa.retrieval_gate import stored_k

    run_options.setdefault("retrieval_k", stored_k(stored))  # the k the baseline records
    try:
        report = run_qa_eval(golden_path, spec.mode, kb_dir=kb_dir, engine=engine, judge=judge,
                             **run_options)
        stopped = None
    except RunInterrupted as exc:  # Ctrl-C while the cases ran: write what the run has
        if exc.report is None:
            raise
        report, stopped = exc.report, exc
    report.provenance = report.provenance.with_baseline(baseline_path, key, stored)
    for line in (*gate_table(report, stored), *report.provenance.lines()):
        say(line)
    run = QAGatedRun(report, key, baseline_path, stored,
                     None if stored is None else compare_to_baseline(report, stored))
    as_dict = functools.cache(report.to_dict)  # built once for the report file and the store
    write_announced(outputs.report, "report", lambda p: write_report(p, report, as_dict()),
                    run.written, say)

    with steps.undone_on_bad_output(baseline_path):
        if options is not None:
            entry = entry_for_gate(report, stored, options)
            if report.interrupted:
                run.gate = ratchet.check_without_recording(
                    baseline_path, key, run.comparison, interrupted_reason(report),
                    status=INTERRUPTED)
            elif report.errors:
                run.gate = ratchet.check_without_recording(
                    baseline_path, key, run.comparison, engine_errors_reason(report),
                    status=ENGINE_ERRORS)
            else:
                run.gate = ratchet.run_gate(baseline_path, key, entry, options)
            for line in run.gate.lines:
                say(line)
        _write_ci_files(run, outputs, say)
    run.kept = runs.keep(as_dict, kind="qa", key=key, store=store, echo=say,
                         verdict=runs.record.qa_verdict(report, run.comparison, run.gate))
    if options is not None:
        say(run.verdict)
    if stopped is not None:
        raise stopped  # still the Ctrl-C: the CLI exits 130, a notebook sees it as before
    return run


def qa_key(key: str, config: Any, model: Any = None) -> str:
    """The baseline key of a QA run: the engine's (`tool`, `agent@http`, ...), then `+` the
    engine configuration's label when one with settings is given, then `~` the model's
    provider and name when it is not the MockProvider (`agent~litellm:openai/gpt-4o`): each is
    gated against its own entry."""
    from ragspine_eval.models.recorder import in_use

    key = key if config is None or not config.settings() else f"{key}+{config.label}"
    model = in_use(model)
    return key if model is None or model.spec.is_default else f"{key}~{model.spec.label}"


def _with_record_command(options: ratchet.GateOptions, command: str) -> ratchet.GateOptions:
    from dataclasses import replace

    return replace(options, record_command=command)


def _write_ci_files(run: QAGatedRun, outputs: QAOutputs, say: Echo) -> None:
    from ragspine_eval.outputs.qa_files import write_qa_junit
    from ragspine_eval.outputs.qa_files import write_qa_summary

    comparison = run.gate.comparison if run.gate is not None else run.comparison
    write_announced(outputs.junit, "junit",
                    lambda p: write_qa_junit(p, run.report, comparison), run.written, say)
    write_announced(outputs.summary_md, "summary",
                    lambda p: write_qa_summary(p, run.report, run.stored, run.gate),
                    run.written, say)

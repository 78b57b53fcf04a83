"""The gated extraction run: one call that the CLI and the notebooks share.

`run_gated_extraction(targets, ...)` checks, runs, gates and writes, and returns an
`ExtractionGatedRun`:
1. every output path, the stored entry of each target and the gate options are checked before
   anything runs (a `RagspineEvalError`, exit 2, never follows a write);
2. facts come from the engine's extractors, or from a facts file, and are scored per target;
3. with `options` (the CLI) each target with a baseline file is gated and recorded where asked;
   without them (a notebook) each is only compared; `baseline_path=None` (a document of your own
   without --baseline) gates nothing;
4. the JSON report, the facts, the JUnit and Markdown files are written; when one cannot be
   (exit 2), what the gates recorded is undone, so exit 2 leaves the baseline as it was.
No output may land on an input (a ground truth, a document, the facts file, the baseline, its
history, the notebooks): exit 2 before the run. Every line for a person is escaped for the
terminal (outputs.escape).

`echo` receives each line a person should read, in order (the CLI passes `print`).

A document of one's own is read by the engine in a worker under `limits` (doc_worker.DocLimits).
One of several that fails there is kept apart (run.failures): it is neither scored nor gated,
its baseline entry is left as it is, the others are gated and written, and the run exits 2.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragspine_eval import paths, ratchet, runs
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.extraction.doc_worker import DocLimits
from ragspine_eval.extraction.report import compare_to_baseline, make_baseline_entry
from ragspine_eval.extraction.run import ExtractionRun, Target
from ragspine_eval.files import write_atomic, write_json_atomic
from ragspine_eval.files.output_paths import write_announced
from ragspine_eval.outputs import escape
from ragspine_eval.ratchet import baseline_file

Echo = Callable[[str], None]


@dataclass
class ExtractionOutputs:
    """The files a gated run writes (None: not asked for)."""

    report: Path | None = None
    save_facts: Path | None = None
    junit: Path | None = None
    summary_md: Path | None = None


@dataclass
class ExtractionGatedRun:
    """A gated extraction run: the run, the stored entries, a comparison per target (None where
    it has no baseline yet) and, when gated with options, the ratchet's verdict per target."""

    run: ExtractionRun
    targets: list[Target]
    baseline_path: Path | None
    stored: dict[str, Any]
    comparisons: dict[str, ratchet.BaselineComparison | None]
    gates: dict[str, ratchet.GateResult] = field(default_factory=dict)
    verdicts: list[str] = field(default_factory=list)
    written: list[tuple[str, Path]] = field(default_factory=list)
    kept: runs.RunSummary | None = None  # the run as the run store keeps it (None: not kept)

    @property
    def exit_code(self) -> int:
        if self.run.failures:  # a document the engine failed on is bad input, whatever passed
            return 2
        if self.gates:
            return max(g.exit_code for g in self.gates.values())
        return 0 if all(c is None or c.passed for c in self.comparisons.values()) else 1


def run_gated_extraction(targets: Sequence[Target], *, facts_path: str | Path | None = None,
                         baseline_path: str | Path | None,
                         outputs: ExtractionOutputs | None = None,
                         options: ratchet.GateOptions | None = None,
                         record_command: Callable[[str], str] | None = None,
                         echo: Echo | None = None, store: bool = True,
                         limits: DocLimits | None = None) -> ExtractionGatedRun:
    """Check, run, gate, write (see the module docstring). `record_command(key)` builds the
    command that records one target's run; `store=False` keeps the run out of the run store
    (runs/; the CLI's --no-store). Raises RagspineEvalError for input it cannot use."""
    from ragspine_eval.extraction.run import score_engine, score_facts_file
    from ragspine_eval.outputs.extraction_files import (
        extraction_table,
        mismatch_details,
        mismatch_examples,
    )

    say = escape.escaped_echo(echo)
    outputs = outputs or ExtractionOutputs()
    targets = list(targets)
    baseline_path = Path(baseline_path) if baseline_path is not None else None
    inputs = {paths.PROJECT_ROOT / "notebooks": "notebooks"}
    for t in targets:
        inputs[t.ground_truth] = f"ground truth {t.ground_truth}"
        if t.document is not None:
            inputs[t.document] = f"document {t.document}"
    if facts_path is not None:
        inputs[Path(facts_path)] = f"facts file {facts_path}"
    ratchet.check_outputs({"report": outputs.report, "facts": outputs.save_facts,
                           "junit": outputs.junit, "summary": outputs.summary_md},
                          baseline=baseline_path, inputs=inputs)
    gate_options: dict[str, ratchet.GateOptions] = {}
    if options is not None and baseline_path is not None:
        for t in targets:
            gate_options[t.key] = (replace(options, record_command=record_command(t.key))
                                   if record_command else options)
            gate_options[t.key].check()
    stored_all = ratchet.load_baselines(baseline_path) if baseline_path else {}
    stored = {t.key: ratchet.validate_entry(baseline_path, t.key, stored_all[t.key])
              for t in targets if t.key in stored_all}

    saved: dict[str, list] = {}
    run = (score_facts_file(Path(facts_path), targets) if facts_path
           else score_engine(targets, on_facts=saved.__setitem__, limits=limits))
    for failure in run.failures.values():
        say(f"error: engine failure on a document, kept apart (not scored, not gated, its "
            f"baseline entry unchanged): {failure['reason']}")
    targets = [t for t in targets if t.key not in run.failures]
    for t in targets:
        for line in extraction_table(t.key, run.reports[t.key], stored.get(t.key), run.engine):
            say(line)
        for line in mismatch_examples(run.reports[t.key]):
            say(line)
    run.baselines = {t.key: (stored.get(t.key) or {}).get("metrics") for t in targets}
    if baseline_path is not None:
        run.with_baseline(baseline_path, stored_all)
    for line in run.provenance.lines():
        say(line)
    gated = ExtractionGatedRun(run, targets, baseline_path, stored, {
        k: (compare_to_baseline(r, stored[k]) if k in stored else None)
        for k, r in run.reports.items()})

    before = (baseline_file.snapshot(baseline_path) if baseline_path is not None
              else (None, None))
    for t in targets:
        if baseline_path is None:
            gated.verdicts.append(f"no baseline gate for {t.key} (a document of your own): pass "
                                  f"--baseline FILE to keep one")
            continue
        if options is None:
            continue
        gate = ratchet.run_gate(baseline_path, t.key, make_baseline_entry(run.reports[t.key]),
                                gate_options[t.key])
        for line in gate.lines:
            say(line)
        if gate.comparison is not None:
            for line in mismatch_details(run.reports[t.key], gate.comparison.case_regressions):
                say(line)
        run.gate[t.key] = {"status": gate.status, "exit_code": gate.exit_code,
                           "lines": gate.lines}
        gated.gates[t.key] = gate
        gated.verdicts.append(f"{'PASS' if gate.exit_code == 0 else 'FAIL'}: extraction "
                              f"{t.key} gate {gate.status}")

    if run.failures and baseline_path is not None and (
            after := baseline_file.snapshot(baseline_path)) != before:
        # exit 2 leaves the baseline as it was, also for the documents that were scored
        baseline_file.undo(baseline_path, before, after)
        for entry in run.gate.values():
            entry["undone"] = "a document of the run was kept apart: nothing was recorded"
        gated.verdicts = [f"{v} (not recorded: a document was kept apart)" for v in gated.verdicts]
        say(f"baseline: {baseline_path} left as it was (what this run recorded was put back): "
            f"a document was kept apart; fix or drop it and run again")

    def save_facts(path: Path) -> str:
        lines = [json.dumps(f, ensure_ascii=False) for t in targets for f in saved.get(t.key, [])]
        write_atomic(path, "".join(line + "\n" for line in lines))
        return f"{len(lines)} facts"

    as_dict = functools.cache(run.to_dict)  # built once for the report file and the store
    try:
        write_announced(outputs.report, "report", lambda p: write_json_atomic(p, as_dict()),
                        gated.written, say)
        write_announced(outputs.save_facts, "facts", save_facts, gated.written, say)
        _write_ci_files(gated, outputs, say)
    except RagspineEvalError:
        # exit 2 means the baseline did not move: put back what the gates recorded
        if baseline_path is not None:
            baseline_file.undo(baseline_path, before, baseline_file.snapshot(baseline_path))
        raise
    gated.kept = runs.keep(as_dict, kind="extraction", key=",".join(t.key for t in targets),
                           store=store, echo=say, verdict=runs.record.extraction_verdict(
                               baseline_path, gated.comparisons, gated.gates))
    if options is not None:
        for line in gated.verdicts:
            say(line)
    if run.failures:
        say(f"FAIL: the engine failed on {len(run.failures)} document(s), kept apart: "
            f"{', '.join(run.failures)} (exit 2; the reason is above and in the report's "
            f"\"failures\")")
    return gated


def _write_ci_files(gated: ExtractionGatedRun, outputs: ExtractionOutputs, say: Echo) -> None:
    from ragspine_eval.outputs.extraction_files import (
        write_extraction_junit,
        write_extraction_summary,
    )

    comparisons = {key: gate.comparison for key, gate in gated.gates.items()}
    write_announced(outputs.junit, "junit",
                    lambda p: write_extraction_junit(p, gated.run, comparisons), gated.written, say)
    write_announced(outputs.summary_md, "summary",
                    lambda p: write_extraction_summary(p, gated.run, gated.gates),
                    gated.written, say)

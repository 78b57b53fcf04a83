"""The one gated run every harness goes through, the CLI's and the notebooks' alike:
`run(harness, what, how, outputs, gate)`, in this order:

1. check: every output path against the inputs and the baseline, then the harness's inputs,
   its keys, the gate options with the command that records each key, its cases read whole, the
   stored entries (a key no baseline may hold refused): all before the engine is opened, so an
   error (a `RagspineEvalError`, exit 2) never follows a write;
2. run: the harness's report, complete or interrupted (Ctrl-C, a spent model budget) with what
   ran; its table and provenance said;
3. the JSON report (after the gates for a harness whose report holds them);
4. the ratchet: with options each key is gated and recorded where asked; without them (a
   notebook) only compared. A run with engine errors, or one not complete, never creates or
   changes a baseline;
5. the JUnit and Markdown files; when one cannot be written (exit 2), what the gates recorded is
   put back (ratchet.baseline_file.undo), so exit 2 leaves the baseline and its history as the
   run found them;
6. the run store keeps the report with its one verdict (runs.record.verdict); the verdict lines.
An interrupted run goes through the same steps: its outputs are written whole, marked
interrupted; what follows is the caller's (cli/common.finish: exit 130; a notebook:
`GatedRun.or_interrupt`).

`gate.echo` receives each line a person should read, at the moment it is true, escaped for the
terminal (outputs.escape).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval import paths, ratchet, runs
from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.files import reading
from ragspine_eval.files.output_paths import write_announced
from ragspine_eval.gated.harness import Echo, Gate, GatedRun, Harness
from ragspine_eval.gated.outputs import GatedOutputs
from ragspine_eval.outputs import escape
from ragspine_eval.ratchet import baseline_file

INTERRUPTED = "interrupted"  # the gate's status for a run that did not finish
ENGINE_ERRORS = "engine errors"  # the gate's status for a run with engine errors


def run(harness: Harness, what: Any, how: Any = None, outputs: GatedOutputs | None = None,
        gate: Gate = Gate()) -> GatedRun:
    """Check, run, write, gate, keep (the module docstring); raises RagspineEvalError for input
    the run cannot use."""
    say = escape.escaped_echo(gate.echo)
    outputs = outputs or GatedOutputs()
    checked = check(harness, what, how, outputs, gate)
    gated = compared(harness, harness.run(checked.what, how, checked.stored, say), checked)
    for line in harness.finish(gated):
        say(line)
    as_dict = functools.cache(gated.report.to_dict)  # built once: the file's and the store's
    write_and_gate(gated, checked.options, outputs, as_dict, say)
    gated.kept = runs.keep(as_dict, kind=harness.name, key=harness.store_key(gated),
                           store=gate.store, echo=say, verdict=runs.record.verdict(gated))
    for line in harness.verdict_lines(gated) if gate.options is not None else ():
        say(line)
    for line in harness.closing_lines(gated):
        say(line)
    return gated


@dataclass(frozen=True)
class Checked:
    """A run's inputs checked: its what (with what was read in it), its baseline file and keys,
    the gate options per key (empty: only compared) and the stored entries."""

    what: Any
    baseline: Path | None
    keys: dict[str, str]
    options: dict[str, ratchet.GateOptions]
    stored: dict[str, dict[str, Any] | None]


def check(harness: Harness, what: Any, how: Any, outputs: GatedOutputs, gate: Gate) -> Checked:
    """Step 1: everything refused before the engine is opened, in this order."""
    baseline = harness.baseline_path(what)
    ratchet.check_outputs(outputs.named(), baseline=baseline,
                          inputs={**harness.inputs(what),
                                  paths.PROJECT_ROOT / "notebooks": "notebooks"})
    what = harness.check(what)
    keys = harness.keys(what)
    options = ({name: gate.options_for(key) for name, key in keys.items()}
               if gate.options is not None and baseline is not None else {})
    what = harness.read(what, how)
    stored = stored_entries(baseline, keys) if baseline is not None else {}
    return Checked(what, baseline, keys, options, stored)  # type: ignore[arg-type]


def compared(harness: Harness, report: Any, checked: Checked) -> GatedRun:
    """Step 2's end: the run, each key it scored compared with its stored entry."""
    gated = GatedRun(harness, report, checked.keys, checked.baseline, checked.stored)
    gated.comparisons = {name: None if entry is None else harness.compare(report, name, entry)
                         for name in checked.keys if harness.scored(report, name)
                         for entry in [checked.stored.get(name)]}
    return gated


def write_and_gate(gated: GatedRun, options: dict[str, ratchet.GateOptions],
                   outputs: GatedOutputs, as_dict: Any, say: Echo) -> None:
    """Steps 3 to 5: the report, the gates (a run not complete only compared), the other files;
    what the gates recorded put back when a file cannot be written."""
    harness, report = gated.harness, gated.report
    report_file = ("report", outputs.report,
                   lambda path: harness.write_report(path, gated, as_dict()))
    with undone_on_bad_output(gated.baseline_path) as before:
        if not harness.report_after_gate:
            write_announced(outputs.report, "report", report_file[2], gated.written, say)
        for name, chosen in options.items():
            if harness.scored(report, name):
                gated.gates[name] = (unrecorded(gated, name, say) if report.status != "complete"
                                     else harness.gate(gated, name, chosen, say))
        harness.after_gates(gated, before, say)
        files = harness.writers(gated, outputs)
        for label, path, write in [report_file, *files] if harness.report_after_gate else files:
            write_announced(path, label, write, gated.written, say)


run_gated = run  # the name ragspine_eval exports


def interrupted_reason(report: Any, unit: str = "cases") -> str:
    """The stated reason a run that did not finish (Ctrl-C, or its model budget spent) records
    nothing."""
    what = (f"STOPPED ({report.stopped_by})" if report.stopped_by
            else "INTERRUPTED (Ctrl-C)")
    return (f"{what} after {report.finished} of {report.n_cases} {unit}: the "
            f"{unit} not run have no verdict, so nothing was recorded and the baseline is as it "
            f"was; run the same command again for a verdict")


def unrecorded(run: GatedRun, name: str, say: Echo) -> ratchet.GateResult:
    """The gate of a run that did not finish: compared, never recorded."""
    gate = ratchet.check_without_recording(
        run.baseline_path, run.keys[name], run.comparisons[name],  # type: ignore[arg-type]
        interrupted_reason(run.report, run.harness.unit), status=INTERRUPTED)
    for line in gate.lines:
        say(line)
    return gate


def gate_key(run: GatedRun, name: str, entry: dict[str, Any] | Any, options: ratchet.GateOptions,
             say: Echo) -> ratchet.GateResult:
    """The ratchet's verdict on one key: a changed engine configuration said first, then the
    gate (recording where the options say; never with engine errors), its lines said. `entry`
    is the baseline entry or a function building it (not built for a run with errors)."""
    key, comparison, errors = run.keys[name], run.comparisons[name], len(run.report.errors)
    for drift in comparison.drift if comparison is not None else ():
        if drift["kind"] == "engine_config":
            say(f"DRIFT [{key}] {drift['text']}")
    if errors:
        gate = ratchet.check_without_recording(
            run.baseline_path, key, comparison,  # type: ignore[arg-type]
            f"FAIL because of {errors} engine error(s): a run with engine errors never creates "
            f"or changes a baseline", status=ENGINE_ERRORS)
    else:
        gate = ratchet.run_gate(run.baseline_path, key,  # type: ignore[arg-type]
                                entry() if callable(entry) else entry, options)
    for line in gate.lines:
        say(line)
    return gate


def stored_entries(baseline_path: Path, keys: Mapping[str, str]
                   ) -> dict[str, dict[str, Any] | None]:
    """Per name, the stored entry of its key (None: none yet), each checked (exit 2 naming the
    file and the key); a key no baseline file may hold (a control character, from a gold
    file's name or --name) is refused here, before the run, not after it wrote its report."""
    for key in keys.values():
        control = reading.forbidden_character(key)
        if control is not None:
            raise ratchet.BaselineError(
                f"{baseline_path}: the baseline key {reading.clip(key)} holds a control "
                f"character ({control}), which a baseline cannot hold; it comes from the input "
                f"file's name or --name: rename the file or give --name NAME")
    baselines = ratchet.load_baselines(baseline_path)
    stored = {name: baselines.get(key) for name, key in keys.items()}
    for name, entry in stored.items():
        if entry is not None:
            ratchet.validate_entry(baseline_path, keys[name], entry)
    return stored


@contextmanager
def undone_on_bad_output(baseline_path: Path | None) -> Iterator[Any]:
    """Gate and write the outputs inside, given the baseline as the run found it: when one
    cannot be written (RagspineEvalError, exit 2), what the gates recorded is put back, for
    exit 2 means the baseline did not move."""
    if baseline_path is None:
        yield None
        return
    before = baseline_file.snapshot(baseline_path)
    try:
        yield before
    except RagspineEvalError:
        baseline_file.undo(baseline_path, before, baseline_file.snapshot(baseline_path))
        raise

"""What produced a report, as the field/value table at the top of the qa and extraction notebooks.

`run_info(report, report_path)` for a QA report (its engine, mode, cases, engine errors and,
with repeats, its flaky verdicts), `extraction_run_info(run, report_path)` for an extraction run
(its source, document sets and the legend confirmed for each); both then show the report's
provenance (provenance.py: versions, the golden set and the knowledge base, facts file or
documents with their fingerprints, the model, the baseline entry, the commit, when it started
and how long it took) and where the report was written. frames.py re-exports both.

Invariants:
- a pure function of the report: nothing is read or run (the model's line is
  provenance.model_line's);
- two text columns, `field` and `value`, one row per field: the harness's own rows first, then
  the provenance's, the report's path last;
- a report without provenance shows its own rows and its path, never an error; a commit made
  with uncommitted changes says "(dirty tree)".
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ragspine_eval.extraction.run import ExtractionRun
from ragspine_eval.provenance import Provenance
from ragspine_eval.qa.report import QAEvalReport


def run_info(report: QAEvalReport, report_path: Any = None) -> pd.DataFrame:
    """What produced this report, as field/value rows for the top of a notebook: its provenance
    (versions, inputs and their fingerprints, baseline entry, commit, times) and where it is."""
    rows: list[tuple[str, Any]] = [("engine", report.engine), ("mode", report.mode),
                                   ("cases", report.n_cases), ("engine errors", len(report.errors))]
    if report.repeats > 1:
        flaky = sum(len(ids) for ids in report.flaky.values())
        rows.append(("repeats", f"{report.repeats} (flaky verdicts: {flaky})"))
    return _info_frame(rows, report.provenance, report_path)


def _info_frame(rows: list[tuple[str, Any]], prov: Provenance | None, report_path: Any
                ) -> pd.DataFrame:
    if prov is not None:
        rows = rows + [
            ("versions", f"{prov.engine} {prov.engine_version or '(unknown)'} · ragspine-eval "
                         f"{prov.tool_version} · Python {prov.python}"),
            ("golden set", f"{prov.golden.path} [{prov.golden.fingerprint}]"),
        ]
        for label, ref in (("knowledge base", prov.kb), ("facts file", prov.facts),
                           ("documents", prov.documents)):
            if ref is not None:
                rows.append((label, f"{ref.path} [{ref.fingerprint}]"))
        if prov.model is not None:  # which model answered, replayed or not, its calls and cost
            from ragspine_eval.provenance import model_line

            rows.append(("model", model_line(prov.model, prov.model_usage)
                         .removeprefix("model ")))
        if prov.baseline is not None:
            rows.append(("baseline", f"{prov.baseline.path} [{prov.baseline.key}: "
                                     f"{prov.baseline.fingerprint or 'no entry yet'}]"))
        dirty = " (dirty tree)" if prov.git_dirty else ""
        rows.append(("git commit", f"{prov.git_commit or 'unknown'}{dirty}"))
        if prov.times is not None:
            rows.append(("started", f"{prov.times.started_at} · {prov.times.duration_s:.1f} s"))
    if report_path is not None:
        rows.append(("report", str(report_path)))
    return pd.DataFrame([(k, str(v)) for k, v in rows], columns=["field", "value"])


def extraction_run_info(run: ExtractionRun, report_path: Any = None) -> pd.DataFrame:
    """What produced this extraction run (see run_info), with the legend the harness confirmed
    for each document set where the engine detected one."""
    rows: list[tuple[str, Any]] = [("source", run.source), ("document sets", ", ".join(run.reports))]
    for key, report in run.reports.items():
        legend = report.extraction.get("legend")
        if legend:
            rows.append((f"{key} legend", legend["statement"]))
    return _info_frame(rows, run.provenance, report_path)

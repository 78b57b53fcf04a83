"""What `ragspine-eval runs` prints: one line per stored run, and one run shown whole.

`runs_table(runs)` fits 120 columns: the id (it begins with the run's UTC time, so it is the
time column too), commit, key, engine, knowledge base, judge, cases, verdict, then one narrow
column per gate with its pass rate in whole percent, floored, so that 100 means every case
passed and 99 never hides a failure. Gate names are abbreviated to three letters in the header
and spelled out in a legend under the table. An extraction run over several document sets
shows, per channel, its lowest rate over the sets. QA and extraction runs listed together get
a table each, since their gates differ. Every field is escaped for the terminal.
`show_lines(ref)` prints one run: its summary as a header, then the same per-gate table the
run printed (outputs/<harness>_files.py), failing case ids included.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ragspine_eval.outputs.escape import terminal
from ragspine_eval.runs.summary import RunSummary, summarize

WIDTH = 120
ABBREVIATIONS = {
    "numeric_accuracy": "num", "citation_validity": "cit", "refusal_appropriateness": "ref",
    "clarification_appropriateness": "cla", "faithfulness": "fai", "answer_accuracy": "ans",
    "fabrication": "fab", "retrieval@5": "r@5", "cell_value": "val", "color_mapping": "col",
    "header_attribution": "hdr",
}
# (title, width) of the fixed columns; the rest of the 120 is the gates'
COLUMNS = (("RUN (UTC time-id)", 22), ("COMMIT", 8), ("KEY", 8), ("ENGINE", 16), ("KB", 6),
           ("JUDGE", 9), ("CASES", 5), ("VERDICT", 11))
RATE = 4  # a space and three digits


def display_rates(run: RunSummary) -> dict[str, float]:
    """The rates a line shows: a gate's rate, or per channel the lowest over document sets."""
    out: dict[str, float] = {}
    for name, rate in run.rates.items():
        gate = name.rsplit("/", 1)[-1]
        out[gate] = min(rate, out.get(gate, rate))
    return out


def runs_table(runs: Iterable[RunSummary], width: int = WIDTH) -> list[str]:
    """The listing (module docstring); an empty list when there are no runs."""
    runs = list(runs)
    lines: list[str] = []
    for kind in ("qa", "extraction", "retrieval", "answers"):
        of_kind = [r for r in runs if r.kind == kind]
        if of_kind:
            lines += ([""] if lines else []) + _table(of_kind, width)
    return lines


def _table(runs: list[RunSummary], width: int) -> list[str]:
    gates: list[str] = []
    for run in runs:
        gates += [g for g in display_rates(run) if g not in gates]
    # the retrieval gate (retrieval@k) after the six and fabrication: it is the first to give
    # way when the width runs out (the legend then names it; --json lists every rate)
    gates.sort(key=lambda g: g.startswith("retrieval@"))
    room = width - sum(w for _t, w in COLUMNS) - (len(COLUMNS) - 1)
    shown = gates[:max(0, room // RATE)]
    header = " ".join(_cell(t, w) for t, w in COLUMNS)
    header += "".join(f" {_abbr(g):>3}" for g in shown)
    lines = [header]
    for run in runs:
        rates = display_rates(run)
        commit = (run.commit or "-")[:7] + ("*" if run.dirty else "")
        values = (run.id, commit, run.key, run.engine or "-", (run.kb or "-")[:6], run.judge or "-",
                  f"{run.cases:>{COLUMNS[6][1]}}", run.verdict)
        line = " ".join(_cell(terminal(v), w) for v, (_t, w) in zip(values, COLUMNS))
        line += "".join(f" {_percent(rates.get(g)):>3}" for g in shown)
        lines.append(line.rstrip())
    legend = ", ".join(f"{_abbr(g)} {g}" for g in shown)
    lines += textwrap.wrap(f"rates in % (floored: 100 = every case passed, - = not scored): "
                           f"{legend}", width)
    if len(shown) < len(gates):
        lines.append(f"not shown for width: {', '.join(gates[len(shown):])} (--json lists "
                     f"every rate)")
    if any(r.dirty for r in runs):
        lines.append("* the commit had uncommitted changes")
    if any("/" in name for r in runs for name in r.rates):
        lines.append("a run over several document sets shows each channel's lowest rate")
    return [terminal(line) for line in lines]


def _abbr(gate: str) -> str:
    return ABBREVIATIONS.get(gate, gate[:3])


def _cell(text: str, width: int) -> str:
    return text[:width - 1] + "…" if len(text) > width else f"{text:<{width}}"


def _percent(rate: float | None) -> str:
    if rate is None:
        return "-"
    return str(int(rate * 100 + 1e-9)) if rate < 1 else "100"


# --- one run -----------------------------------------------------------------------------------


def show_lines(found: RunSummary | Path, report: dict[str, Any]) -> list[str]:
    """One run (or a report file) whole: header, per-gate table, failing ids."""
    if isinstance(found, RunSummary):
        run = found
        header = [f"run {run.id} · {run.kind} {run.key} · {run.verdict}",
                  f"created {_when(run.created)} · commit {run.commit or 'unknown'}"
                  f"{' (uncommitted changes)' if run.dirty else ''}",
                  f"stored {run.path} ({run.size / 1024:,.0f} KiB)"]
    else:
        kind = report.get("harness") if report.get("harness") in ("extraction", "retrieval",
                                                                  "answers") else "qa"
        key = (",".join(report.get("documents") or {}) if kind == "extraction"
               else str((report.get("provenance") or {}).get("mode"))
               if kind in ("retrieval", "answers")
               else str(report.get("mode")))
        values = summarize(report, kind=kind, key=key)
        header = [f"report {found} · {kind} {key}",
                  f"commit {values['commit'] or 'unknown'}"]
    return [terminal(line) for line in (*header, *_table_of(report))]


def _when(created: str) -> str:
    try:
        return datetime.fromisoformat(created).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return created


def _table_of(report: dict[str, Any]) -> list[str]:
    if report.get("harness") == "extraction":
        from ragspine_eval.extraction.run import ExtractionRun
        from ragspine_eval.outputs.extraction_files import extraction_table

        run = ExtractionRun.from_dict(report)
        lines = []
        for key, rep in run.reports.items():
            lines += extraction_table(key, rep, (run.baselines or {}).get(key) and
                                      {"metrics": run.baselines[key]}, run.engine)
        return lines
    if report.get("harness") == "retrieval":
        from ragspine_eval.outputs.retrieval_files import retrieval_table
        from ragspine_eval.retrieval_only.report import RetrievalRunReport

        rr = RetrievalRunReport.from_dict(report)
        return [*(rr.provenance.lines() if rr.provenance else []), *retrieval_table(rr)]
    if report.get("harness") == "answers":
        return _answers_lines(report)
    from ragspine_eval.outputs.qa_files import gate_table
    from ragspine_eval.qa.report import QAEvalReport

    qa = QAEvalReport.from_dict(report)
    return [*(qa.provenance.lines() if qa.provenance else []), *gate_table(qa)]


def _answers_lines(report: dict[str, Any]) -> list[str]:
    """An answer run's gates per route, read from its report (answers/report.py's shape)."""
    lines = []
    for route, r in (report.get("routes") or {}).items():
        lines.append(f"route {route}")
        for gate, m in (r.get("metrics") or {}).items():
            if "pass_rate" in m:
                lines.append(f"  {gate:<18} {m['pass_rate']:.4f}  {m['passed']}/{m['total']}")
            else:
                lines.append(f"  {gate:<18} {m.get('count')}")
    return lines

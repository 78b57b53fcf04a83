"""A short Markdown summary of a run for a CI step summary: verdict, provenance, the gate table
with intervals, drift (a QA run on another knowledge base or engine than its baseline entry, in
its own section above the regressions), the regressions, and the tags where most cases fail.

The writer takes plain rows (`GateRow`, `TagRow`, regression lines), so any harness can use it;
`qa_summary_markdown` makes them from a QA report and its gate result, and
`extraction_summary_markdown` from an extraction run (a row per document set and channel, a
`table_structure` row where the run scored table structure, as the console table does, the
sheets where most cells fail as its "tags"). Invariants: short by
construction (one line per gate, at most `TOP_TAGS` tag rows, at most `MAX_REGRESSIONS`
regression lines with a count of the rest), and pipes in ids or tag values never break a table.
Fabrication reads as in the CLI (QAEvalReport.fabrication_sentence): the rate of fabricating
refusal answers, lower is better, with the Wilson interval of that rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine_eval.extraction.structure import DEFINITION as STRUCTURE_DEFINITION
from ragspine_eval.extraction.structure import TABLE_STRUCTURE
from ragspine_eval.files import write_atomic
from ragspine_eval.outputs import escape
from ragspine_eval.stats import format_interval, wilson_interval
from ragspine_eval.ratchet import BaselineComparison, GateResult, describe

if TYPE_CHECKING:
    from ragspine_eval.extraction.run import ExtractionRun
    from ragspine_eval.qa.report import QAEvalReport

TOP_TAGS = 5
MAX_REGRESSIONS = 20


@dataclass(frozen=True)
class GateRow:
    """One gate: `value` is what the table shows as the result (a rate, or a count);
    `interval` replaces the pass rate's interval where the result is another rate (fabrication:
    the share of fabricating answers)."""

    gate: str
    passed: int
    total: int
    value: str
    baseline: str = "-"
    interval: tuple[float, float] | None = None
    proportion: bool = True  # False: the result is no share of passed/total (an F1), no CI


@dataclass(frozen=True)
class TagRow:
    """A gate's cases with one tag value; `lower_is_better` rows (fabrication) show the share
    of failing cases and its interval, as the gate table does."""

    gate: str
    tag: str
    value: str
    passed: int
    total: int
    lower_is_better: bool = False

    @property
    def failed(self) -> int:
        return self.total - self.passed

    def rate_and_interval(self) -> tuple[str, str]:
        if self.lower_is_better:
            return (f"{self.failed / self.total:.2f} fabricated",
                    format_interval(wilson_interval(self.failed, self.total)))
        return (f"{self.passed / self.total:.2f}",
                format_interval(wilson_interval(self.passed, self.total)))


def _cell(text: object) -> str:
    return escape.markdown(text)  # no live HTML, control character or broken table from data


def summary_markdown(title: str, verdict: str, provenance_lines: Sequence[str],
                     gates: Iterable[GateRow], regressions: Sequence[str],
                     tags: Iterable[TagRow], top_tags: int = TOP_TAGS,
                     notes: Sequence[str] = (), errors: Sequence[str] = (),
                     flaky: Sequence[str] = (), drift: Sequence[str] = ()) -> str:
    """The summary; `drift` (another knowledge base or engine than the baseline's) comes first
    under the table, above the regressions, since one of them may come from the data; `errors`
    are the cases with no verdict (engine errors), listed in their own section above the
    regressions, since they are neither; `flaky` the verdicts that differed between repeats, in
    a section after the regressions (they are never one)."""
    lines = [f"## {_cell(title)}: {verdict}", ""]
    lines += [f"{_cell(line)}  " for line in provenance_lines]
    lines += ["", "| gate | result | 95% CI | passed | baseline |", "|---|---:|---:|---:|---:|"]
    for g in gates:
        interval = (format_interval(g.interval) if g.interval is not None else
                    format_interval(wilson_interval(g.passed, g.total))
                    if g.total and g.proportion else "-")
        lines.append(f"| {_cell(g.gate)} | {_cell(g.value)} | {interval} | "
                     f"{g.passed}/{g.total} | {_cell(g.baseline)} |")
    if notes:
        lines += [""] + [_cell(note) for note in notes]
    if drift:  # above the regressions: one of them may come from the data, not the engine
        lines += ["", "### Drift", ""] + [f"- {_cell(d)}" for d in drift]
    if errors:
        lines += ["", f"### Engine errors ({len(errors)})", ""]
        lines += [f"- {_cell(e)}" for e in errors[:MAX_REGRESSIONS]]
        if len(errors) > MAX_REGRESSIONS:
            lines.append(f"- … and {len(errors) - MAX_REGRESSIONS} more (see the JSON report)")
    lines += ["", "### Regressions", ""]
    if regressions:
        lines += [f"- {_cell(r)}" for r in regressions[:MAX_REGRESSIONS]]
        if len(regressions) > MAX_REGRESSIONS:
            lines.append(f"- … and {len(regressions) - MAX_REGRESSIONS} more (see the JSON report)")
    else:
        lines.append("None.")
    if flaky:
        lines += ["", f"### Flaky verdicts ({len(flaky)})", ""]
        lines += [f"- {_cell(f)}" for f in flaky[:MAX_REGRESSIONS]]
        if len(flaky) > MAX_REGRESSIONS:
            lines.append(f"- … and {len(flaky) - MAX_REGRESSIONS} more (see the JSON report)")
    failing = sorted((t for t in tags if t.failed),
                     key=lambda t: (-t.failed, t.passed / t.total, t.gate, t.tag, t.value))
    lines += ["", "### Top failing tags", ""]
    if failing:
        lines += ["| gate | tag | failed | rate | 95% CI |", "|---|---|---:|---:|---:|"]
        for t in failing[:top_tags]:
            rate, interval = t.rate_and_interval()
            lines.append(f"| {_cell(t.gate)} | {_cell(t.tag)}={_cell(t.value)} | "
                         f"{t.failed}/{t.total} | {rate} | {interval} |")
    else:
        lines.append("No case fails.")
    return "\n".join(lines) + "\n"


# --- the QA report as rows ----------------------------------------------------------------------


def qa_summary_markdown(report: QAEvalReport, stored: dict[str, Any] | None = None,
                        result: GateResult | None = None) -> str:
    """The summary of a QA run; `stored` is the baseline entry, `result` what the gate said."""
    from ragspine_eval.qa.answered import baseline_shown
    from ragspine_eval.qa.gates import FABRICATION
    from ragspine_eval.qa.repeats import verdict_pattern

    stored, footnote = baseline_shown(report, stored)  # with engine errors: as the gate compares
    base = (stored or {}).get("metrics", {})
    rows = [GateRow(name, m.passed, m.total, f"{m.pass_rate:.4f}",
                    f"{base[name]:.4f}" if isinstance(base.get(name), int | float) else "-")
            for name, m in report.metrics.items()]
    fab = report.fabrication
    stored_fab = (stored or {}).get("fabrication_count")
    rows.append(GateRow(f"{FABRICATION} (lower is better)", fab.passed, fab.total,
                        f"{report.fabrication_rate:.4f} ({report.fabrication_count} of "
                        f"{fab.total} fabricated)",
                        "-" if stored_fab is None else f"{stored_fab} fabricated",
                        report.fabrication_interval))
    tags = [TagRow(gate, key, value, b["passed"], b["total"], gate == FABRICATION)
            for gate, metric in report.gates().items()
            for key, values in sorted(metric.by_tag.items())
            for value, b in sorted(values.items())]
    verdict = "not gated" if result is None else (
        f"{'PASS' if result.exit_code == 0 else 'FAIL'} ({result.status})")
    if report.interrupted:
        verdict = (f"STOPPED ({report.stopped_by})" if report.stopped_by
                   else "INTERRUPTED (Ctrl-C)") + ": no verdict, the baseline untouched"
    regressions = _regression_lines(result.comparison, report.mode) if result else []
    prov = report.provenance.lines() if report.provenance else []
    title = f"ragspine-eval qa · {report.mode} · {report.n_cases} cases"
    notes = ([report.interrupted_sentence() + "."] if report.interrupted else []) + [
        report.fabrication_sentence()] + ([footnote + "."] if footnote else [])
    flaky = [f"{gate}: {i} ({verdict_pattern(v)})"
             for gate, m in report.gates().items() for i, v in sorted(m.flaky.items())]
    if report.repeats > 1:
        title += f" · {report.repeats} repeats"
        notes.append(f"{len(flaky)} flaky verdict(s) in {report.repeats} repeats: a flaky case "
                     f"counts as passing and is never a regression; only a case that fails in "
                     f"every repeat is." if flaky else
                     f"No flaky case: every verdict was the same in all {report.repeats} repeats.")
    if report.errors:
        notes.append(f"ENGINE ERRORS: {report.errors_sentence()}.")
    drift = [d["text"] for d in result.comparison.drift] if result and result.comparison else []
    return summary_markdown(title, verdict, prov, rows, regressions, tags, notes=notes,
                            errors=[f"{c.id}: {c.error}" for c in report.errors], flaky=flaky,
                            drift=drift)


def _regression_lines(cmp: BaselineComparison | None, key: str) -> list[str]:
    if cmp is None:
        return []
    only = BaselineComparison(False, cmp.regressions, cmp.case_regressions, cmp.golden_changes)
    return describe(only, key)


def write_qa_summary(path: str | Path, report: QAEvalReport, stored: dict[str, Any] | None = None,
                     result: GateResult | None = None) -> None:
    write_atomic(path, qa_summary_markdown(report, stored, result))


# --- the extraction run as rows ---------------------------------------------------------------------


def extraction_summary_markdown(run: ExtractionRun, results: dict[str, GateResult]) -> str:
    """The summary of an extraction run; `results` is what the gate said per document set."""
    rows, tags, regressions, extracted = [], [], [], []
    for key, report in run.reports.items():
        stored = run.baselines.get(key) or {}
        for name, metric in report.channels.items():
            value = f"not scored: {metric.not_scored}" if metric.not_scored else f"{metric.accuracy:.4f}"
            base = stored.get(name)
            rows.append(GateRow(f"{key} · {name}", metric.correct, metric.total, value,
                                f"{base:.4f}" if isinstance(base, int | float) else "-"))
        cov, base = report.coverage, stored.get("coverage")
        rows.append(GateRow(f"{key} · coverage", cov.matched, cov.ground_truth_cells,
                            f"{cov.rate:.4f}", f"{base:.4f}" if isinstance(base, int | float) else "-"))
        if report.structure:  # as the console's row: matched of the ground truth's relations
            st, base = report.structure, stored.get(TABLE_STRUCTURE)
            rows.append(GateRow(f"{key} · {TABLE_STRUCTURE}", st["matched"], st["relations"],
                                f"{st['f1']:.4f}",
                                f"{base:.4f}" if isinstance(base, int | float) else "-",
                                proportion=False))
            extracted.append(f"{key}: {st['extracted']}")
        by_sheet: dict[tuple[str, str], list[bool]] = {}
        for cell in report.cells:
            by_sheet.setdefault((cell.channel, cell.sheet), []).append(cell.correct)
        tags += [TagRow(channel, "sheet", f"{key}:{sheet}", sum(ok), len(ok))
                 for (channel, sheet), ok in sorted(by_sheet.items())]
        if key in results:
            regressions += _regression_lines(results[key].comparison, key)
    verdicts = [r.exit_code for r in results.values()]
    verdict = "not gated" if not verdicts else ("PASS" if max(verdicts) == 0 else "FAIL")
    prov = run.provenance.lines() if run.provenance else []
    title = f"ragspine-eval extraction · {', '.join(run.reports)}"
    notes = [(f"{TABLE_STRUCTURE}: {STRUCTURE_DEFINITION}. Result: the F1; passed: the ground "
              f"truth's relations matched (relations extracted: {', '.join(extracted)}); no "
              f"interval, as an F1 is no share of cases.")] if extracted else []
    return summary_markdown(title, verdict, prov, rows, regressions, tags, notes=notes)


def write_extraction_summary(path: str | Path, run: ExtractionRun,
                             results: dict[str, GateResult]) -> None:
    write_atomic(path, extraction_summary_markdown(run, results))

"""What a QA run leaves: console lines, JUnit XML and a Markdown summary, from its report.

- console (`gate_table`): one line per gate (rate, its Wilson interval, passed/total, the
  baseline's rate, the failing case ids), bounded whatever the set's size; the retrieval line
  and the failing verdicts by stage; with repeats, the flaky verdicts and pass@n; the engine
  errors apart. The "95% CI" column informs and takes no part in the verdict. Fabrication is
  shown as every output shows it (QAEvalReport.fabrication_sentence): the rate of refusal
  answers that held an invented number (lower is better) with the Wilson interval of that rate,
  the refusal cases that passed, the stored count, and the one sentence under the table;
- JUnit (`qa_junit_cases`): one testcase per case and gate, fabrication included; a flaky case
  passes and carries a <flakyFailure> per failing repeat; a run Ctrl-C stopped carries the
  property interrupted=true;
- Markdown (`qa_summary_markdown`): the verdict, the provenance, the gate table, drift,
  regressions, flaky verdicts and the tags where most cases fail (summary_md.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine_eval.files import write_atomic
from ragspine_eval.outputs.console import MAX_IDS_SHOWN, short_ids
from ragspine_eval.outputs.junit import JUnitCase, regressed_cases, write_run_junit
from ragspine_eval.outputs.summary_md import (
    GateRow,
    Summary,
    TagRow,
    regression_lines,
    summary_markdown,
)
from ragspine_eval.qa.gates import FABRICATION
from ragspine_eval.qa.repeats import verdict_pattern
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.retrieval.metrics import KS
from ragspine_eval.retrieval.stages import STAGE_TEXT, STAGES
from ragspine_eval.stats import format_interval

if TYPE_CHECKING:
    from ragspine_eval.ratchet import BaselineComparison, GateResult


def gate_table(report: QAEvalReport, stored: dict[str, Any] | None = None) -> list[str]:
    """One line per gate: rate, passed/total, the baseline's rate and the failing case ids;
    with engine errors, an `errors` column (the gate's cases with no verdict), then the errors
    apart, each with its case id. A run Ctrl-C stopped says so under the header. With engine
    errors the baseline column is the baseline on the cases the gate compares (answered.py),
    and a footnote says so."""
    from ragspine_eval.qa.answered import baseline_shown

    stored, footnote = baseline_shown(report, stored)
    base_metrics = (stored or {}).get("metrics", {})
    errors = bool(report.errors)
    header = (f"QA eval · engine {report.engine} · mode {report.mode} · {report.n_cases} cases"
              + (f" · {report.repeats} repeats" if report.repeats > 1 else "")
              + (f" · {len(report.errors)} engine errors" if errors else ""))
    lines = [header, *filter(None, [report.interrupted_sentence()]),
             f"{'gate':<31} {'rate':>7} {'95% CI':>12} {'passed':>9} {'baseline':>9}  "
             + (f"{'errors':>6}  " if errors else "") + "failing cases"]

    def errored(metric: Any) -> str:
        return f"{len(metric.errors):>6}  " if errors else ""

    for name, metric in report.metrics.items():
        base = base_metrics.get(name)
        base_text = f"{base:.4f}" if isinstance(base, int | float) else "-"
        failing = short_ids([f.id for f in metric.failures]) or "-"
        lines.append(f"{name:<31} {metric.pass_rate:>7.4f} {format_interval(metric.interval):>12} "
                     f"{metric.passed:>4}/{metric.total:<4} {base_text:>9}  {errored(metric)}"
                     f"{failing}")
    fab = report.fabrication
    base_fab = (stored or {}).get("fabrication_count")
    base_text = "-" if base_fab is None else f"count {base_fab}"
    lines.append(f"{FABRICATION + ' (lower is better)':<31} {report.fabrication_rate:>7.4f} "
                 f"{format_interval(report.fabrication_interval):>12} "
                 f"{fab.passed:>4}/{fab.total:<4} {base_text:>9}  {errored(fab)}"
                 f"{short_ids([f.id for f in fab.failures]) or '-'}")
    lines.append(report.fabrication_sentence())
    lines += retrieval_lines(report)
    if footnote:
        lines.append(footnote)
    if errors:
        lines.append(f"ENGINE ERRORS: {report.errors_sentence()}")
    not_run = {c.id for c in report.not_run}  # one line for them all: they share one reason
    raised = [c for c in report.errors if c.id not in not_run]
    for case in raised[:MAX_IDS_SHOWN]:
        lines.append(f"  error {case.id}: {case.error}")
    if len(raised) > MAX_IDS_SHOWN:
        lines.append(f"  … and {len(raised) - MAX_IDS_SHOWN} more engine errors: "
                     f"{short_ids([c.id for c in raised[MAX_IDS_SHOWN:]], 40)} (each "
                     f"error in the JSON report)")
    if not_run:
        why = f"stopped: {report.stopped_by}" if report.stopped_by else "interrupted"
        lines.append(f"  not run ({len(not_run)}, the run was {why}): "
                     f"{short_ids([c.id for c in report.not_run], 40)}")
    return lines + flaky_lines(report)


def retrieval_lines(report: QAEvalReport) -> list[str]:
    """The run's retrieval in one line (hit@k with the gate's interval, MRR, nDCG@10), then the
    failing verdicts by stage: per stage the count and its cases, each with the gates that
    failed there (at most MAX_IDS_SHOWN cases per stage)."""
    figures = report.retrieval
    if not figures:
        return []
    lines = []
    k = figures["k"]
    if figures["measured"]:
        hits = " · ".join(f"hit@{n} {figures['hit'][str(n)]['rate']:.2f}" for n in KS)
        interval = (figures["hit"][str(k)]["ci_lo"], figures["hit"][str(k)]["ci_hi"]
                    ) if str(k) in figures["hit"] else None
        lines.append(f"retrieval: {figures['measured']} cases measured · {hits}"
                     + (f" (hit@{k} {format_interval(interval)})" if interval else "")
                     + f" · MRR {figures['mrr']:.2f} · nDCG@10 {figures['ndcg@10']:.2f}"
                     + (f" · {figures['not_observed']} not observed" if figures["not_observed"]
                        else ""))
    elif figures["not_observed"]:
        lines.append(f"retrieval: not observed on {figures['not_observed']} cases (the engine "
                     f"does not report its passages): no retrieval figure, no retrieval miss")
    by_stage: dict[str, dict[str, list[str]]] = {}
    for gate, metric in report.gates().items():
        for r in metric.failures:
            if r.stage:
                by_stage.setdefault(r.stage, {}).setdefault(r.id, []).append(gate)
    if by_stage:
        lines.append("failures by stage:")
    for stage in STAGES:
        cases = by_stage.get(stage)
        if not cases:
            continue
        shown = [f"{i} ({', '.join(g)})" for i, g in list(cases.items())[:MAX_IDS_SHOWN]]
        more = f", … +{len(cases) - MAX_IDS_SHOWN} more" if len(cases) > MAX_IDS_SHOWN else ""
        n = sum(len(g) for g in cases.values())
        text = STAGE_TEXT[stage].replace("the top k", f"the top {k}")
        lines.append(f"  {text}: {n} verdict{'s' if n != 1 else ''} · {'; '.join(shown)}{more}")
    return lines


def flaky_lines(report: QAEvalReport) -> list[str]:
    """With repeats: the verdicts that differed between them (qa/repeats.py), per gate, each
    with its verdict per repeat; or one line saying that none did."""
    if report.repeats < 2:
        return []
    flaky = {gate: m.flaky for gate, m in report.gates().items() if m.flaky}
    if not flaky:
        return [f"no flaky case: every verdict was the same in all {report.repeats} repeats"]
    return _flaky_named(report, flaky) + pass_at_k_lines(report)


def pass_at_k_lines(report: QAEvalReport) -> list[str]:
    """With repeats: per gate with a flaky case, pass@n and pass^n with their intervals and
    pass@1 (qa/repeats.pass_at_k)."""
    from ragspine_eval.qa.repeats import pass_at_k

    n = report.repeats
    lines = [f"pass@{n} (passed in at least one repeat) and pass^{n} (in every one), 95% "
             f"intervals, and pass@1, per gate with a flaky case:"]
    for gate, metric in report.gates().items():
        if metric.flaky:
            at, one = pass_at_k(metric, n), pass_at_k(metric, n, 1)
            (a, b), (c, d) = at["pass@k_ci"], at["pass^k_ci"]
            lines.append(f"  {gate}: pass@{n} {at['pass@k']:.2f} [{a:.2f}, {b:.2f}] · "
                         f"pass^{n} {at['pass^k']:.2f} [{c:.2f}, {d:.2f}] · "
                         f"pass@1 {one['pass@k']:.2f}")
    return lines


def _flaky_named(report: QAEvalReport, flaky: dict[str, dict[str, list[bool]]]) -> list[str]:
    n = sum(len(cases) for cases in flaky.values())
    head = (f"FLAKY: {n} verdict{'s' if n != 1 else ''} differed between the {report.repeats} "
            f"repeats; a flaky case counts as passing and is never a regression (only a case "
            f"that fails in every repeat is)")
    lines = [head]
    for gate, cases in flaky.items():
        shown = [f"{i} ({verdict_pattern(v)})"
                 for i, v in list(cases.items())[:MAX_IDS_SHOWN]]
        more = f", … +{len(cases) - MAX_IDS_SHOWN} more" if len(cases) > MAX_IDS_SHOWN else ""
        lines.append(f"  {gate}: {'; '.join(shown)}{more}")
    return lines


def qa_junit_cases(report: QAEvalReport, comparison: BaselineComparison | None = None
                   ) -> list[JUnitCase]:
    """One row per case and gate, fabrication included, in report order, then each gate's
    engine errors; with the baseline comparison, the case regressions it found are marked."""
    regressed = regressed_cases(comparison)
    return [JUnitCase(gate, r.id, f"qa.{report.mode}.{gate}", r.passed, r.expected, r.actual,
                      (gate, r.id) in regressed, r.explanation, r.error,
                      tuple(metric.flaky.get(r.id, ())), None if r.passed else r.stage)
            for gate, metric in report.gates().items()
            for r in (*metric.results, *metric.errors)]


def write_qa_junit(path: str | Path, report: QAEvalReport,
                   comparison: BaselineComparison | None = None) -> None:
    """The file of a QA run; one Ctrl-C stopped carries the property interrupted=true, and its
    cases not run are <error>s like any engine error."""
    write_run_junit(path, qa_junit_cases(report, comparison), f"ragspine-eval qa {report.mode}",
                    report.provenance, {"interrupted": "true"} if report.interrupted else None)


def qa_summary_markdown(report: QAEvalReport, stored: dict[str, Any] | None = None,
                        result: GateResult | None = None) -> str:
    """The summary of a QA run; `stored` is the baseline entry, `result` what the gate said."""
    from ragspine_eval.qa.answered import baseline_shown

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
    regressions = regression_lines(result.comparison, report.mode) if result else []
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
    return summary_markdown(Summary(title, verdict, prov, rows, regressions, tags, notes=notes,
                                    errors=[f"{c.id}: {c.error}" for c in report.errors],
                                    flaky=flaky, drift=drift))


def write_qa_summary(path: str | Path, report: QAEvalReport, stored: dict[str, Any] | None = None,
                     result: GateResult | None = None) -> None:
    write_atomic(path, qa_summary_markdown(report, stored, result))

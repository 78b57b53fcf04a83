"""What the CLI prints: the per-gate table of a QA report and the per-channel table of an
extraction report, bounded whatever the set's size, and the progress line a terminal shows
while cases run.

Pure functions from a report (and the stored baseline entry, when there is one) to lines of
text, so the table a CI log shows is the one a test checks. The "95% CI" column is each gate's
Wilson interval; it is shown to inform and takes no part in the verdict. Fabrication is shown
as every output shows it (QAEvalReport.fabrication_sentence): the rate of refusal answers that
held an invented number (lower is better) with the Wilson interval of that rate, the refusal
cases that passed, the stored count, and the one sentence under the table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragspine_eval.stats import format_interval
from ragspine_eval.qa.gates import FABRICATION
from ragspine_eval.qa.repeats import verdict_pattern
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.retrieval.metrics import KS
from ragspine_eval.retrieval.stages import STAGE_TEXT, STAGES

if TYPE_CHECKING:  # a QA run prints its table without importing the extraction side (pandas)
    from ragspine_eval.extraction.scoring import EvalReport

COVERAGE = "coverage"  # extraction.report.COVERAGE (a test keeps the two equal)

MAX_IDS_SHOWN = 8


def short_ids(ids: list[str], limit: int = MAX_IDS_SHOWN) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … +{len(ids) - limit} more" if len(ids) > limit else "")


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


def extraction_table(key: str, report: EvalReport, stored: dict[str, Any] | None = None,
                     engine: str | None = None) -> list[str]:
    """One line per channel and one for coverage: accuracy, correct/total, the baseline's
    value and the mismatching locators; then the legend the harness confirmed."""
    base = (stored or {}).get("metrics", {})
    cov = report.coverage
    source = f"{engine} (engine)" if report.source == "engine" and engine else report.source
    lines = [f"WARNING: {report.unreviewed_statement}"] if report.unreviewed else []
    lines += [f"extraction · {key} · {report.document or '?'} · {source} · "
              f"{cov.ground_truth_cells} ground-truth cells · {report.n_facts} facts"]
    lines += [f"WARNING: {w}" for w in report.warnings]
    lines.append(f"{'channel':<20} {'accuracy':>8} {'correct':>9} {'baseline':>9}  mismatches")

    def base_text(name: str) -> str:
        value = base.get(name)
        return f"{value:.4f}" if isinstance(value, int | float) else "-"

    for name, m in report.channels.items():
        if not report.n_facts and not m.total:
            lines.append(f"{name:<20} {'-':>8} {'0/0':>9} {base_text(name):>9}  "
                         f"not scored: no facts")
            continue
        if m.not_scored:
            lines.append(f"{name:<20} {'-':>8} {'0/0':>9} {base_text(name):>9}  "
                         f"not scored: {m.not_scored}")
            continue
        wrong = short_ids([x["locator"] for x in m.mismatches]) or "-"
        lines.append(f"{name:<20} {m.accuracy:>8.4f} {f'{m.correct}/{m.total}':>9} "
                     f"{base_text(name):>9}  {wrong}")
    lines.append(f"{COVERAGE:<20} {cov.rate:>8.4f} {f'{cov.matched}/{cov.ground_truth_cells}':>9} "
                 f"{base_text(COVERAGE):>9}  missing: {short_ids(cov.missing) or '-'}; "
                 f"facts with no ground truth: {short_ids(cov.unexpected) or '-'}")
    if report.structure:
        st, name = report.structure, "table_structure"
        below = short_ids([t["table"] for t in st["tables"] if t["f1"] < 1.0]) or "-"
        counts = f"{st['matched']}/{st['relations']}"
        lines.append(f"{name:<20} {st['f1']:>8.4f} {counts:>9} {base_text(name):>9}  "
                     f"cell-adjacency F1 ({st['extracted']} relations extracted); tables "
                     f"below 1: {below}")
    legend = report.extraction.get("legend")
    if legend:
        lines.append(f"legend: {legend['statement']}")
    return lines


def mismatch_examples(report: EvalReport, limit: int = 10) -> list[str]:
    """The first `limit` mismatches of a document, channel by channel, each with what the
    ground truth expects and what came back, then how many more there are."""
    wrong = [(name, x) for name, m in report.channels.items() for x in m.mismatches]
    lines = [f"  {x['locator']} {name}: expected {x['expected']!r}, got {x['actual']!r}"
             for name, x in wrong[:limit]]
    if len(wrong) > limit:
        lines.append(f"  … and {len(wrong) - limit} more mismatches (see the report)")
    return lines


def mismatch_details(report: EvalReport, case_regressions: list[dict[str, str]],
                     limit: int = MAX_IDS_SHOWN) -> list[str]:
    """Expected and actual of the cells that regressed, so a CI log shows what changed."""
    wrong = {(m, x["locator"]): x for m, metric in report.channels.items()
             for x in metric.mismatches}
    lines = []
    for case in case_regressions[:limit]:
        hit = wrong.get((case["metric"], case["id"]))
        if hit is not None:
            lines.append(f"  {case['id']} {case['metric']}: expected {hit['expected']!r}, "
                         f"got {hit['actual']!r}")
        elif case["metric"] == COVERAGE:
            lines.append(f"  {case['id']}: no fact for this ground-truth cell any more")
    if len(case_regressions) > limit:
        lines.append(f"  … and {len(case_regressions) - limit} more (see the report)")
    return lines


def progress_line(label: str, done: int, total: int, errors: int = 0, width: int = 24) -> str:
    """One terminal line: `label [#####-----] done/total`, and the errors so far when any."""
    filled = width * done // total if total else width
    bar = "#" * filled + "-" * (width - filled)
    return f"{label} [{bar}] {done}/{total}" + (f" · {errors} errors" if errors else "")

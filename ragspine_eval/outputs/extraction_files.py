"""What an extraction run leaves: console lines, JUnit XML and a Markdown summary, from its
reports (one per document set).

- console (`extraction_table`): one line per channel and one for coverage (accuracy,
  correct/total, the baseline's value, the mismatching locators), table structure where it was
  scored, the legend the harness confirmed; `mismatch_examples` and `mismatch_details` the
  expected and actual values of the cells that mismatch or regressed;
- JUnit (`extraction_junit_cases`): one testcase per scored cell and channel, grouped per
  channel, and one per ground-truth cell for coverage;
- Markdown (`extraction_summary_markdown`): a row per document set and channel, a
  `table_structure` row where the run scored table structure (as the console table does), the
  sheets where most cells fail as its "tags" (summary_md.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine_eval.extraction.report import COVERAGE, FILL
from ragspine_eval.extraction.scoring import CHANNELS
from ragspine_eval.extraction.structure import DEFINITION as STRUCTURE_DEFINITION
from ragspine_eval.extraction.structure import TABLE_STRUCTURE
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

if TYPE_CHECKING:
    from ragspine_eval.extraction.run import ExtractionRun
    from ragspine_eval.extraction.scoring import EvalReport
    from ragspine_eval.ratchet import BaselineComparison, GateResult


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


def extraction_junit_cases(run: ExtractionRun,
                           comparisons: Mapping[str, BaselineComparison | None] | None = None
                           ) -> list[JUnitCase]:
    """One row per scored cell and channel, grouped per channel across document sets, then one
    per ground-truth cell for coverage (failing where no fact was extracted for it). With a
    baseline comparison per document set, the cells it found regressed are marked."""
    regressed = {key: regressed_cases((comparisons or {}).get(key)) for key in run.reports}
    rows = [JUnitCase(channel, f"{key} {cell.locator}", f"extraction.{key}.{channel}",
                      cell.correct, repr(cell.expected), repr(cell.actual),
                      (channel, cell.locator) in regressed[key])
            for channel in (*CHANNELS, FILL) for key, report in run.reports.items()
            for cell in report.cells if cell.channel == channel]
    for key, report in run.reports.items():
        missing = set(report.coverage.missing)
        rows += [JUnitCase(COVERAGE, f"{key} {loc}", f"extraction.{key}.{COVERAGE}",
                           loc not in missing, "a fact for this ground-truth cell",
                           "no fact" if loc in missing else "a fact",
                           (COVERAGE, loc) in regressed[key])
                 for loc in sorted(report.golden)]
    return rows


def write_extraction_junit(path: str | Path, run: ExtractionRun,
                           comparisons: Mapping[str, BaselineComparison | None] | None = None
                           ) -> None:
    write_run_junit(path, extraction_junit_cases(run, comparisons),
                    f"ragspine-eval extraction {','.join(run.reports)}", run.provenance,
                    {"interrupted": "true"} if run.interrupted else None)


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
            regressions += regression_lines(results[key].comparison, key)
    verdicts = [r.exit_code for r in results.values()]
    verdict = "not gated" if not verdicts else ("PASS" if max(verdicts) == 0 else "FAIL")
    verdict = "INTERRUPTED" if run.interrupted else verdict
    prov = [*filter(None, [run.interrupted_line()]),
            *(run.provenance.lines() if run.provenance else [])]
    title = f"ragspine-eval extraction · {', '.join(run.reports)}"
    notes = [(f"{TABLE_STRUCTURE}: {STRUCTURE_DEFINITION}. Result: the F1; passed: the ground "
              f"truth's relations matched (relations extracted: {', '.join(extracted)}); no "
              f"interval, as an F1 is no share of cases.")] if extracted else []
    return summary_markdown(Summary(title, verdict, prov, rows, regressions, tags, notes=notes))


def write_extraction_summary(path: str | Path, run: ExtractionRun,
                             results: dict[str, GateResult]) -> None:
    write_atomic(path, extraction_summary_markdown(run, results))

"""What a retrieval-only run leaves: console lines, JUnit XML and a Markdown summary.

- console (`retrieval_table`): recall@k, page_recall@k with intervals and baseline, MRR and page
  MRR, the warnings of the engine configuration, latency p50/p95/max per run and the slowest
  tags, the questions not judged and the engine errors;
- JUnit (`retrieval_junit_cases`): one testsuite per recall gate (recall@k, page_recall@k), one
  testcase per judged question; a miss is a <failure> naming the rank it got, a case regression
  is type "Regression", an engine error an <error>;
- Markdown (`retrieval_summary_markdown`): the verdict, the provenance, the gate table, drift,
  regressions, and the tags with the most misses: the QA summary's shape (summary_md.py).
Every text from a question file or an engine answer goes through escape.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine_eval.execution import latency
from ragspine_eval.files import write_atomic
from ragspine_eval.outputs.junit import JUnitCase, write_run_junit
from ragspine_eval.outputs.summary_md import GateRow, Summary, TagRow, summary_markdown
from ragspine_eval.stats import format_interval

if TYPE_CHECKING:
    from ragspine_eval.ratchet import BaselineComparison, GateResult
    from ragspine_eval.retrieval_only.report import RetrievalRunReport


def _base(stored: dict[str, Any] | None, name: str) -> str:
    value = ((stored or {}).get("metrics") or {}).get(name)
    return "-" if value is None else f"{value:.4f}"


def retrieval_table(report: RetrievalRunReport, stored: dict[str, Any] | None = None,
                    key: str = "") -> list[str]:
    """The console lines of a run (see the module docstring)."""
    metrics = report.metrics()
    out = [f"retrieval {key or report.workspace} · top_k {report.top_k} · "
           f"{metrics['n_judged']} of {len(report.cases)} questions judged",
           *filter(None, [report.interrupted_line()])]
    out.append(f"  {'measure':<18} {'value':>7}  {'95% CI':<14} {'hits':>9}  baseline")
    for name, m in metrics.items():
        if isinstance(m, dict):
            out.append(f"  {name:<18} {m['pass_rate']:>7.4f}  "
                       f"{format_interval((m['ci_lo'], m['ci_hi'])):<14} "
                       f"{m['passed']:>4}/{m['total']:<4}  {_base(stored, name)}")
    for name in ("mrr", "page_mrr"):
        out.append(f"  {name:<18} {metrics[name]:>7.4f}  {'':<14} {'':>9}  "
                   f"{_base(stored, name)}")
    out += [f"warning: {w}" for w in report.warnings]
    if report.unjudged:
        out.append(f"not judged ({len(report.unjudged)}: neither pages nor an expected text): "
                   + ", ".join(c.id for c in report.unjudged[:20]))
    if report.errors:
        out.append(f"ENGINE ERRORS ({len(report.errors)}): "
                   + "; ".join(f"{c.id}: {c.error}" for c in report.errors[:10]))
    prov = report.provenance
    if prov is not None and prov.times is not None:  # the run's p50/p95 is a provenance line
        out += latency.lines(prov.times.latency, run_line=False)
    return out


def retrieval_junit_cases(report: RetrievalRunReport,
                          comparison: BaselineComparison | None = None) -> list[JUnitCase]:
    regressed = {(c["metric"], c["id"]) for c in comparison.case_regressions} \
        if comparison else set()
    rows = []
    for k in report.ks:
        for page in (False, True):
            gate = f"{'page_' if page else ''}recall@{k}"
            for case in report.cases:
                if case.basis == "none":
                    continue
                rank = case.page_rank if page else case.rank
                rows.append(JUnitCase(
                    gate, case.id, f"retrieval.{gate}", case.error is None and case.hit(k, page=page),
                    f"a relevant passage ({case.basis}) within the first {k}",
                    "none in the top " + str(report.top_k) if rank is None else f"rank {rank}",
                    (gate, case.id) in regressed, None, case.error))
    return rows


def write_retrieval_junit(path: str | Path, report: RetrievalRunReport,
                          comparison: BaselineComparison | None = None, key: str = "") -> None:
    prov = report.provenance
    if prov is not None and prov.times is not None and prov.times.latency:
        # the properties keep the run's latency summary, not every case's time
        from dataclasses import replace

        summary = {k: v for k, v in prov.times.latency.items() if k in ("unit", "run")}
        prov = replace(prov, times=replace(prov.times, latency=summary))
    write_run_junit(path, retrieval_junit_cases(report, comparison),
                    f"ragspine-eval retrieval {key}".strip(), prov,
                    {"interrupted": "true"} if report.interrupted else None)


def retrieval_summary_markdown(report: RetrievalRunReport, stored: dict[str, Any] | None,
                               result: GateResult | None, key: str) -> str:
    metrics = report.metrics()
    gates = [GateRow(name, m["passed"], m["total"], f"{m['pass_rate']:.4f}",
                     _base(stored, name), (m["ci_lo"], m["ci_hi"]))
             for name, m in metrics.items() if isinstance(m, dict)]
    tags = []
    main = f"recall@{report.top_k}"
    for key_name, values in {**{k: report.by(k) for k in report.tag_keys()},
                             "doc": report.by("doc")}.items():
        for value, m in values.items():
            tags.append(TagRow(main, key_name, value, m[main]["passed"], m[main]["total"]))
    comparison = result.comparison if result is not None else None
    regressions = [f"{c['metric']}: {c['id']} (hit at baseline time, missed now)"
                   for c in (comparison.case_regressions if comparison else [])]
    regressions = [f"{r['metric']}: {r['baseline']} -> {r['current']}"
                   for r in (comparison.regressions if comparison else [])] + regressions
    verdict = ("FAIL" if (result is not None and result.exit_code) or report.errors else "PASS")
    if report.interrupted:
        verdict = report.status.upper()
    prov = report.provenance
    lines = [*filter(None, [report.interrupted_line()]), *(prov.lines() if prov else [])]
    return summary_markdown(Summary(
        f"ragspine-eval retrieval {key}", verdict, lines, gates, regressions, tags,
        notes=[f"MRR {metrics['mrr']:.4f} (baseline {_base(stored, 'mrr')}), page MRR "
               f"{metrics['page_mrr']:.4f} (baseline {_base(stored, 'page_mrr')}), over "
               f"{metrics['n_judged']} judged questions"]
        + [f"warning: {w}" for w in report.warnings],
        errors=[f"{c.id}: {c.error}" for c in report.errors],
        drift=[d["text"] for d in (comparison.drift if comparison else [])]))


def write_retrieval_summary(path: str | Path, report: RetrievalRunReport,
                            stored: dict[str, Any] | None, result: GateResult | None,
                            key: str) -> None:
    write_atomic(path, retrieval_summary_markdown(report, stored, result, key))



"""What an answer run leaves: console lines, JUnit XML and a Markdown summary, route by route.

- console (`answers_table`): per route the gates with intervals and the baseline's values, the
  forbidden-number count, the route labels, the failing questions with reason and stage (known
  gaps apart), the skipped cases with their reason, the engine errors;
- JUnit (`answers_junit_cases`): one testsuite per route and gate; a question (or a claim for
  the claim gates) is a testcase; a failure names the reason and its stage, a case regression is
  type "Regression", an engine error an <error>;
- Markdown (`answers_summary_markdown`): the QA summary's shape (summary_md.py), one table of
  every route's gates, the tags, languages and documents with the most failures.
Every text from a gold file or an engine answer goes through escape.py where the format needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine_eval.files import write_atomic
from ragspine_eval.outputs.junit import JUnitCase, write_run_junit
from ragspine_eval.outputs.summary_md import GateRow, Summary, TagRow, summary_markdown
from ragspine_eval.retrieval.stages import STAGE_TEXT
from ragspine_eval.stats import format_interval

if TYPE_CHECKING:
    from ragspine_eval.answers.report import AnswerRunReport
    from ragspine_eval.ratchet import BaselineComparison

RATE_GATES = ("claim_content", "claim_citation", "abstention", "question_pass")
MAX_SHOWN = 20


def _base(stored: Mapping[str, Any] | None, name: str) -> str:
    if stored is None:
        return "-"
    value = stored.get(name) if name == "fabrication_count" else \
        (stored.get("metrics") or {}).get(name)
    return "-" if value is None else (str(value) if name == "fabrication_count"
                                      else f"{value:.4f}")


def answers_table(report: AnswerRunReport, stored: Mapping[str, Mapping[str, Any] | None],
                  keys: Mapping[str, str]) -> list[str]:
    """The console lines of a run; `stored` and `keys` per route."""
    out: list[str] = []
    for route in report.routes:
        m = report.metrics(route)
        results = report.results(route)
        out.append(f"answers {keys.get(route, route)} · route {route} · "
                   f"{sum(r.scored for r in results)} questions scored, "
                   f"{sum(not r.scored for r in results)} known gaps apart")
        out.append(f"  {'gate':<18} {'value':>7}  {'95% CI':<14} {'passed':>9}  baseline")
        for g in RATE_GATES:
            x = m[g]
            out.append(f"  {g:<18} {x['pass_rate']:>7.4f}  "
                       f"{format_interval((x['ci_lo'], x['ci_hi'])):<14} "
                       f"{x['passed']:>4}/{x['total']:<4}  {_base(stored.get(route), g)}")
        fab = m["fabrication_count"]
        out.append(f"  {'fabrication_count':<18} {fab['count']:>7}  {'(forbidden numbers)':<14} "
                   f"{'':>9}  {_base(stored.get(route), 'fabrication_count')}")
        labels = {}
        for r in results:
            labels[r.outcome.route_label] = labels.get(r.outcome.route_label, 0) + 1
        out.append("  routes taken: " + ", ".join(f"{k} {v}" for k, v in sorted(labels.items())))
        failing = [r for r in results if not r.verdict.passed and r.scored]
        for r in failing[:MAX_SHOWN]:
            out.append(f"  FAIL {r.id}: {r.verdict.reason} · stage: "
                       f"{STAGE_TEXT.get(r.stage or '', r.stage)}")
        if len(failing) > MAX_SHOWN:
            out.append(f"  … and {len(failing) - MAX_SHOWN} more failing questions")
        gaps = [r for r in results if not r.scored]
        if gaps:
            out.append("  known gaps (outside every rate): " + ", ".join(
                f"{r.id} {'pass' if r.verdict.passed else 'fail'}" for r in gaps))
    for s in report.run.skipped:
        out.append(f"skipped {s['case_id']} ({s['case_class']}): {s['reason']}")
    if report.errors:
        out.append(f"ENGINE ERRORS ({len(report.errors)}): " + "; ".join(
            f"{r.route} {r.id}: {r.outcome.error}" for r in report.errors[:10]))
    return out


def answers_junit_cases(report: AnswerRunReport,
                        comparisons: Mapping[str, BaselineComparison | None]) -> list[JUnitCase]:
    rows = []
    for route in report.routes:
        cmp = comparisons.get(route)
        regressed = {(c["metric"], c["id"]) for c in cmp.case_regressions} if cmp else set()
        for r in report.results(route):
            if not r.scored:
                continue
            v, err = r.verdict, r.outcome.error
            units = [("question_pass", r.id, v.passed, "a passing verdict", v.reason)]
            if v.kind == "abstain":
                units.append(("abstention", r.id, v.refused, "a refusal", v.reason))
            for n, c in enumerate(v.claims, start=1):
                what = " | ".join(c.anchors)
                units.append(("claim_content", f"{r.id}#{n}", c.content_hit,
                              f"in the answer: {what}", "not in the answer"))
                units.append(("claim_citation", f"{r.id}#{n}", c.page_hit,
                              f"a cited page: {what}", "page not cited"))
            for gate, name, ok, expected, actual in units:
                rows.append(JUnitCase(f"{route}.{gate}", name, f"answers.{route}.{gate}",
                                      err is None and ok, expected, actual,
                                      (gate, name) in regressed, None, err,
                                      stage=None if ok else r.stage))
    return rows


def write_answers_junit(path: str | Path, report: AnswerRunReport,
                        comparisons: Mapping[str, BaselineComparison | None], key: str) -> None:
    write_run_junit(path, answers_junit_cases(report, comparisons),
                    f"ragspine-eval answers {key}".strip(), report.provenance)


def answers_summary_markdown(report: AnswerRunReport,
                             stored: Mapping[str, Mapping[str, Any] | None],
                             comparisons: Mapping[str, BaselineComparison | None],
                             failed: bool, key: str) -> str:
    gates, tags, regressions, drift = [], [], [], []
    for route in report.routes:
        m = report.metrics(route)
        base = stored.get(route)
        for g in RATE_GATES:
            x = m[g]
            gates.append(GateRow(f"{route} {g}", x["passed"], x["total"], f"{x['pass_rate']:.4f}",
                                 _base(base, g), (x["ci_lo"], x["ci_hi"])))
        fab = m["fabrication_count"]
        n_abstain = m["abstention"]["total"]
        gates.append(GateRow(f"{route} fabrication_count", n_abstain - fab["count"], n_abstain,
                             str(fab["count"]), _base(base, "fabrication_count"),
                             proportion=False))
        for name, groups in report.breakdowns(route).items():
            for value, g in groups.items():
                q = g["question_pass"]
                tags.append(TagRow(f"{route} question_pass", name.removeprefix("by_"), value,
                                   q["passed"], q["total"]))
        cmp = comparisons.get(route)
        if cmp is not None:
            regressions += [f"{route} {r['metric']}: {r['baseline']} -> {r['current']}"
                            for r in cmp.regressions]
            regressions += [f"{route} {c['metric']}: {c['id']} (passed at baseline time, "
                            f"fails now)" for c in cmp.case_regressions]
            drift += [d["text"] for d in cmp.drift]
    prov = report.provenance
    return summary_markdown(Summary(
        f"ragspine-eval answers {key}", "FAIL" if failed else "PASS",
        list(prov.lines()) if prov else [], gates, regressions, tags,
        notes=[f"skipped {s['case_id']}: {s['reason']}" for s in report.run.skipped]
        + [f"known gap {g['case_id']}: {g['detail'] or '-'}" for g in report.run.known_gaps],
        errors=[f"{r.route} {r.id}: {r.outcome.error}" for r in report.errors], drift=drift))


def write_answers_summary(path: str | Path, report: AnswerRunReport,
                          stored: Mapping[str, Mapping[str, Any] | None],
                          comparisons: Mapping[str, BaselineComparison | None],
                          failed: bool, key: str) -> None:
    write_atomic(path, answers_summary_markdown(report, stored, comparisons, failed, key))

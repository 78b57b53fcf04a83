"""What an answer run leaves: console lines, JUnit XML and a Markdown summary, route by route.

- console (`answers_table`): per route the gates with intervals and the baseline's values (a
  gate the stored entry does not list yet said so: it is compared once a run records it), the
  forbidden-number count, the route labels, the failing questions with reason and stage (known
  gaps apart), the gold errors and doubts, the skipped cases with their reason, the engine
  errors;
- JUnit (`answers_junit_cases`): one testsuite per route and gate; a question (or a claim for
  the claim gates) is a testcase; a failure names the reason and its stage, a case regression is
  type "Regression", an engine error an <error>, and so is a gold error (question_pass);
- Markdown (`answers_summary_markdown`): the QA summary's shape (summary_md.py), one table of
  every route's gates, the tags, languages and documents with the most failures.
Every verdict line (console, Markdown, and the notebook's banner) carries `pass_counts`, how
many questions pass per route, beside the gate's verdict, and a run compared with nothing says
so (`NOT_COMPARED`): a first run is never read as an all-clear.
Every text from a gold file or an engine answer goes through escape.py where the format needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine_eval.answers.report import RATE_GATES
from ragspine_eval.files import write_atomic
from ragspine_eval.outputs.junit import JUnitCase, write_run_junit
from ragspine_eval.outputs.summary_md import GateRow, Summary, TagRow, summary_markdown
from ragspine_eval.retrieval.stages import STAGE_TEXT
from ragspine_eval.stats import format_interval

if TYPE_CHECKING:
    from ragspine_eval.answers.report import AnswerRunReport
    from ragspine_eval.ratchet import BaselineComparison

_W = max(len(g) for g in (*RATE_GATES, "fabrication_count")) + 1  # the gate column's width
MAX_SHOWN = 20
NOT_COMPARED = ("no earlier run was compared: the gates above are this run's own results, "
                "not a comparison")


def pass_counts(report: AnswerRunReport) -> str:
    """What the banners say beside the gate verdict: per route how many questions pass, of how
    many scored (`ask: 6 of 16 questions pass`), and the gold errors and engine errors apart."""
    parts = []
    for route in report.routes:
        results = report.results(route)
        scored = [r for r in results if r.scored and r.outcome.error is None]
        passed = sum(r.verdict.passed for r in scored)
        extra = [f"{n} {what}" for n, what in (
            (sum(r.gold_error is not None for r in results), "gold errors"),
            (sum(r.outcome.error is not None for r in results), "engine errors")) if n]
        parts.append(f"{route}: {passed} of {len(scored)} questions pass"
                     + (f" ({', '.join(extra)})" if extra else ""))
    return "; ".join(parts)


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
    out: list[str] = [*filter(None, [report.interrupted_line()])]
    for route in report.routes:
        m = report.metrics(route)
        results = report.results(route)
        out.append(f"answers {keys.get(route, route)} · route {route} · "
                   f"{sum(r.scored for r in results)} questions scored, "
                   f"{sum(not r.scored for r in results)} known gaps apart")
        out.append(f"  {'gate':<{_W}} {'value':>7}  {'95% CI':<14} {'passed':>9}  baseline")
        for g in RATE_GATES:
            x = m[g]
            out.append(f"  {g:<{_W}} {x['pass_rate']:>7.4f}  "
                       f"{format_interval((x['ci_lo'], x['ci_hi'])):<14} "
                       f"{x['passed']:>4}/{x['total']:<4}  {_base(stored.get(route), g)}")
        fab = m["fabrication_count"]
        out.append(f"  {'fabrication_count':<{_W}} {fab['count']:>7}  {'(forbidden numbers)':<14}"
                   f"{'':>9}  {_base(stored.get(route), 'fabrication_count')}")
        new = [g for g in RATE_GATES if stored.get(route) is not None
               and g not in (stored[route].get("metrics") or {})]
        if new:
            out.append(f"  not in the baseline entry yet: {', '.join(new)} (compared from the "
                       f"next run that records it: --update-baseline or --ratchet)")
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
        gaps = [r for r in results if not r.scored and r.gold_error is None]
        if gaps:
            out.append("  known gaps (outside every rate): " + ", ".join(
                f"{r.id} {'pass' if r.verdict.passed else 'fail'}" for r in gaps))
        wrong = [r for r in results if r.gold_error is not None]
        if wrong:
            out.append("  gold errors (outside every rate, never a pass): " + ", ".join(
                r.id for r in wrong[:MAX_SHOWN]))
    gold = report.run.gold_check
    for line in (gold.problem_lines() if gold is not None else [])[:MAX_SHOWN]:
        out.append(f"GOLD ERROR {line}")
    for line in (gold.doubt_lines() if gold is not None else [])[:MAX_SHOWN]:
        out.append(f"GOLD DOUBT {line}")
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
            if r.gold_error is not None and r.case_class != "known-gap":  # neither pass nor fail
                rows.append(JUnitCase(f"{route}.question_pass", r.id,
                                      f"answers.{route}.question_pass", False,
                                      error=f"gold error: {r.gold_error}", stage="gold"))
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
                strict = c.strict
                units.append(("claim_citation_strict", f"{r.id}#{n}",
                              bool(strict and strict.cited),
                              f"its page cited on its own document: {what}",
                              strict.reason if strict else "not placed"))
            for gate, name, ok, expected, actual in units:
                rows.append(JUnitCase(f"{route}.{gate}", name, f"answers.{route}.{gate}",
                                      err is None and ok, expected, actual,
                                      (gate, name) in regressed, None, err,
                                      stage=None if ok else r.stage))
    return rows


def write_answers_junit(path: str | Path, report: AnswerRunReport,
                        comparisons: Mapping[str, BaselineComparison | None], key: str) -> None:
    write_run_junit(path, answers_junit_cases(report, comparisons),
                    f"ragspine-eval answers {key}".strip(), report.provenance,
                    {"interrupted": "true"} if report.interrupted else None)


def answers_summary_markdown(report: AnswerRunReport,
                             stored: Mapping[str, Mapping[str, Any] | None],
                             comparisons: Mapping[str, BaselineComparison | None],
                             failed: bool, key: str, verdict: str | None = None) -> str:
    """The Markdown summary; `verdict` the heading's verdict (default PASS or FAIL, and the
    questions passing per route)."""
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
    compared = any(c is not None for c in comparisons.values())
    return summary_markdown(Summary(
        f"ragspine-eval answers {key}",
        verdict or f"{'FAIL' if failed else 'PASS'} · {pass_counts(report)}"
        + ("" if compared else f" · {NOT_COMPARED}"),
        [*filter(None, [report.interrupted_line()]), *(prov.lines() if prov else [])],
        gates, regressions, tags,
        notes=[f"skipped {s['case_id']}: {s['reason']}" for s in report.run.skipped]
        + [f"known gap {g['case_id']}: {g['detail'] or '-'}" for g in report.run.known_gaps],
        errors=[f"{r.route} {r.id}: {r.outcome.error}" for r in report.errors], drift=drift))


def write_answers_summary(path: str | Path, report: AnswerRunReport,
                          stored: Mapping[str, Mapping[str, Any] | None],
                          comparisons: Mapping[str, BaselineComparison | None],
                          failed: bool, key: str, verdict: str | None = None) -> None:
    write_atomic(path, answers_summary_markdown(report, stored, comparisons, failed, key,
                                                verdict))

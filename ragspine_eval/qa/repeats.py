"""Repeated runs of one golden set: flaky verdicts found, kept apart, and gated by one rule.

An engine behind a real LLM may answer a case differently each time. `--repeat N` runs every
case N times, scores each run on its own (evaluation.evaluate), and `combine_repeats` makes the one
report the gate reads. The rule, per gate and case, over the N repeats:

- an engine error in any repeat: the case is an engine error on the gates that apply (the first
  error met); errors are never averaged away, and the run fails as any run with errors does;
- passed in every repeat: pass; failed in every repeat: fail (the first repeat's verdict,
  explanation and evidence stand for all);
- otherwise the case is *flaky* on that gate: it counts as passing (in the rate, the counts, the
  by-tag buckets and the passed ids), so a flaky case is never a regression; only failing in
  every repeat is. It is listed apart in every output with its verdict per repeat, and its
  explanation is the first failing repeat's, so a reader sees how it fails when it does.

The combined report keeps every repeat's verdict: a stable case's is its one verdict, a flaky
case's list is in `GateMetric.flaky`. Its case records (answers, passages) are the first
repeat's, or the first erroring repeat's for a case with an error: the case's main row, which
every gate, count and baseline reads, so a run with repeats is gated as before. Each record
also keeps every repeat, side by side (`CaseRecord.repeats`, `repeat_rows`): its answer, route,
refusal and engine error, and its verdict on each gate ("pass", "fail" or "error") with the
explanation of each failing one; a run of one repeat keeps none (its report as before). The
baseline entry of a run with repeats records its flaky cases (baseline_entry.make_baseline_entry).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ragspine_eval.qa.report import CaseResult, GateMetric, QAEvalReport


def combine_repeats(reports: Sequence[QAEvalReport]) -> QAEvalReport:
    """One report from the reports of N repeats of the same cases (see the module rule)."""
    if not reports:
        raise ValueError("combine_repeats needs the report of at least one repeat")
    first = reports[0]
    if any([c.id for c in r.cases] != [c.id for c in first.cases] for r in reports):
        raise ValueError("the repeats were not runs of the same cases in the same order")
    if len(reports) == 1:
        return first
    indexes = [{gate: {v.id: v for v in (*m.results, *m.errors)} for gate, m in r.gates().items()}
               for r in reports]
    cases = [replace(next((r.cases[i] for r in reports if r.cases[i].error), case),
                     repeats=repeat_rows(reports, indexes, i))
             for i, case in enumerate(first.cases)]
    tags = {c.id: c.tags for c in cases}
    gates = {name: _combined_gate(name, [r.gates()[name] for r in reports], tags)
             for name in first.gates()}
    fabrication = gates.pop(first.fabrication.name)
    return replace(first, metrics=gates, fabrication=fabrication, cases=cases,
                   repeats=len(reports))


def repeat_rows(reports: Sequence[QAEvalReport],
                indexes: Sequence[dict[str, dict[str, CaseResult]]], i: int
                ) -> list[dict[str, Any]]:
    """Case i in each repeat (see the module docstring); `indexes` per repeat its verdicts by
    gate and case id."""
    rows = []
    for n, (report, index) in enumerate(zip(reports, indexes)):
        case = report.cases[i]
        verdicts, failing = {}, {}
        for gate, results in index.items():
            verdict = results.get(case.id)
            if verdict is None:
                continue
            verdicts[gate] = "error" if verdict.error else "pass" if verdict.passed else "fail"
            if verdicts[gate] == "fail":
                failing[gate] = verdict.explanation
        rows.append({"repeat": n, "answer": case.answer, "route": case.route,
                     "refused": case.refused, "error": case.error,
                     **({"narrative_answer": case.narrative_answer}
                        if case.narrative_answer else {}),
                     "verdicts": verdicts, "failing": failing})
    return rows


def _combined_gate(name: str, repeats: list[GateMetric], tags: dict[str, dict[str, str]]
                   ) -> GateMetric:
    verdicts: dict[str, list[CaseResult]] = {}
    errors: dict[str, CaseResult] = {}
    for metric in repeats:
        for r in metric.results:
            verdicts.setdefault(r.id, []).append(r)
        for r in metric.errors:
            errors.setdefault(r.id, r)
    combined = GateMetric(name)
    for case_id, results in verdicts.items():  # the first repeat's order
        if case_id in errors:
            continue
        passed = [r.passed for r in results]
        if all(passed) or not any(passed):
            verdict = results[0]
        else:
            failing = next(r for r in results if not r.passed)
            combined.flaky[case_id] = passed
            verdict = CaseResult(case_id, True, failing.expected, failing.actual,
                                 f"Flaky: passed in {sum(passed)} of {len(passed)} repeats "
                                 f"({verdict_pattern(passed)}), so it counts as passing and is no "
                                 f"regression; when it failed: {failing.explanation or '?'}")
        combined.results.append(verdict)
        combined.count_tags(tags[case_id].items(), verdict.passed)
    order = {case_id: i for i, case_id in enumerate(tags)}
    combined.errors = [errors[i] for i in sorted(errors, key=order.__getitem__)]
    return combined


def verdict_pattern(passed: list[bool]) -> str:
    """A case's verdict in each repeat as every output shows it: "pass, fail, pass"."""
    return ", ".join("pass" if p else "fail" for p in passed)


def pass_at_k(metric: GateMetric, repeats: int, k: int | None = None) -> dict[str, Any]:
    """pass@k and pass^k of one gate over a run of `repeats` repeats (k defaults to all of
    them): per case, the chance that at least one (pass@k) or every one (pass^k) of k repeats
    drawn from its n passes (stats.pass_at_k, over GateMetric.passes_per_case: a stable case
    passed all n or none, a flaky one what its verdicts say), averaged over the cases the gate
    applies to. At k = n both are shares of cases, each with its Wilson interval."""
    from ragspine_eval.stats import pass_at_k as estimated

    return estimated(metric.passes_per_case(repeats), repeats, k)

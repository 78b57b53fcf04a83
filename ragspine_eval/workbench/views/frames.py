"""Reports as tidy pandas DataFrames: everything a notebook table or chart shows.

Pure functions of a report (a QA report, or an extraction run) and the stored baseline entry
where a delta is wanted. The
notebooks only call these and display the result, so every table in a rendered report can be
computed in a test without a kernel. Rates are fractions in [0, 1]; presentation (percentages)
is the charts' and the notebook's business. What produced a report (`run_info`,
`extraction_run_info`) is provenance_view.py's, still importable from here.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ragspine_eval.extraction.report import compare_to_baseline as extraction_compare
from ragspine_eval.extraction.run import ExtractionRun
from ragspine_eval.outputs.diff import ReportDiff, diff_reports
from ragspine_eval.stats import wilson_interval
from ragspine_eval.qa.gates import FABRICATION
from ragspine_eval.qa.repeats import verdict_pattern
from ragspine_eval.qa.baseline_entry import compare_to_baseline
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.ratchet import (
    CHANGED_CASE,
    FAILED_THEN,
    NEW_CASE,
    PASSED_THEN,
    BaselineVerdicts,
)
from ragspine_eval.workbench.views.provenance_view import (  # noqa: F401 - re-exported
    extraction_run_info,
    run_info,
)

TAG_KEYS = ("topic", "scope", "qtype")
EXCERPT_CHARS = 160


def headline(report: QAEvalReport, stored: dict[str, Any] | None = None) -> pd.DataFrame:
    """One row per gate, fabrication last: measure ("pass rate" or "count"), current, baseline,
    delta, passed/total, status ("pass", "regression" or "no baseline"), the ids of cases
    that passed the gate at baseline time and fail now, and the gate's engine errors (cases
    with no verdict, left out of current and passed/total).

    The six metrics are rates (higher is better); fabrication is the count of refusal cases
    whose answer held a number (lower is better), read "0 of 13 fabricated", its interval that
    of the fabrication rate. A gate is a regression when its rate fell
    (its count rose) or when any of its cases regressed, as the baseline gate itself decides.
    """
    from ragspine_eval.qa.answered import baseline_shown

    cmp = None if stored is None else compare_to_baseline(report, stored)
    stored = baseline_shown(report, stored)[0]  # with engine errors: as the gate compares
    dropped = {r["metric"] for r in cmp.regressions} if cmp else set()
    flipped: dict[str, list[str]] = {}
    for c in cmp.case_regressions if cmp else ():
        flipped.setdefault(c["metric"], []).append(c["id"])
    base = {**(stored or {}).get("metrics", {}),
            FABRICATION: (stored or {}).get("fabrication_count")}
    current = {name: m.pass_rate for name, m in report.metrics.items()}
    current[FABRICATION] = report.fabrication_count
    rows = []
    for name, m in report.gates().items():
        b = base.get(name)
        # the 95% Wilson interval of the pass rate; for fabrication, of the fabrication rate
        lo, hi = (wilson_interval(current[name], m.total) if name == FABRICATION
                  else m.interval)
        metric_key = "fabrication_count" if name == FABRICATION else name
        status = ("no baseline" if b is None else
                  "regression" if metric_key in dropped or name in flipped else "pass")
        rows.append({
            "gate": name, "measure": "count" if name == FABRICATION else "pass rate",
            "current": current[name], "baseline": b,
            "delta": None if b is None else current[name] - b,
            "passed/total": (f"{current[name]} of {m.total} fabricated" if name == FABRICATION
                             else f"{m.passed}/{m.total}"), "status": status,
            "regressed cases": ", ".join(flipped.get(name, [])),
            "engine errors": len(m.errors),
            "ci_lo": lo, "ci_hi": hi,
        })
    return pd.DataFrame(rows)


def tag_rates(report: QAEvalReport, stored: dict[str, Any] | None = None) -> pd.DataFrame:
    """Pass rate per gate and tag value: columns gate, tag, value, bucket, total, passed,
    pass_rate, ci_lo, ci_hi, and, against the stored baseline entry, `regressed` (cases that
    passed the gate at baseline time and fail now: where a drop sits) and `baseline_rate` (the
    bucket's rate at baseline time over its cases the baseline knew; NaN without a baseline)."""
    then = BaselineVerdicts(stored)
    cases = {c.id: c for c in report.cases}
    rows = []
    for gate, m in report.gates().items():
        regressed: dict[tuple[str, str], int] = {}
        known: dict[tuple[str, str], list[int]] = {}  # bucket -> [cases known, passed then]
        for r in m.results:
            case = cases.get(r.id)
            verdict = then.at(gate, r.id, case.fingerprint) if case else None
            if verdict not in (PASSED_THEN, FAILED_THEN):  # no verdict, or not the same case
                continue
            for tag, value in case.tags.items():
                counts = known.setdefault((tag, value), [0, 0])
                counts[0] += 1
                counts[1] += verdict == PASSED_THEN
                if verdict == PASSED_THEN and not r.passed:
                    regressed[(tag, value)] = regressed.get((tag, value), 0) + 1
        for tag in TAG_KEYS:
            for value, counts in sorted(m.by_tag.get(tag, {}).items()):
                total, passed = counts["total"], counts["passed"]
                lo, hi = wilson_interval(passed, total)
                n_then, passed_then = known.get((tag, value), (0, 0))
                rows.append({"gate": gate, "tag": tag, "value": value, "bucket": f"{tag}={value}",
                             "total": total, "passed": passed,
                             "pass_rate": passed / total if total else 1.0,
                             "ci_lo": lo, "ci_hi": hi,
                             "regressed": regressed.get((tag, value), 0),
                             "baseline_rate": passed_then / n_then if n_then else None})
    return pd.DataFrame(rows, columns=["gate", "tag", "value", "bucket", "total", "passed",
                                       "pass_rate", "ci_lo", "ci_hi", "regressed",
                                       "baseline_rate"])


# How failure_table shows what the baseline said of a failing case (baseline.BaselineVerdicts)
AT_BASELINE = {PASSED_THEN: "passed (regression)", FAILED_THEN: "failed", NEW_CASE: "new case",
               CHANGED_CASE: "golden case changed", None: "not recorded"}


def engine_errors(report: QAEvalReport) -> pd.DataFrame:
    """One row per case whose engine call raised, timed out or answered malformed: id,
    question, the error, and the gates left without a verdict on it."""
    gates: dict[str, list[str]] = {}
    for gate, metric in report.gates().items():
        for r in metric.errors:
            gates.setdefault(r.id, []).append(gate)
    rows = [{"id": c.id, "question": _excerpt(c.question), "error": c.error,
             "gates without a verdict": ", ".join(gates.get(c.id, []))} for c in report.errors]
    return pd.DataFrame(rows, columns=["id", "question", "error", "gates without a verdict"])


def flaky_cases(report: QAEvalReport) -> pd.DataFrame:
    """One row per flaky verdict of a run with repeats (qa/repeats.py): gate, id, question,
    the verdict in each repeat, and how it failed when it did."""
    questions = {c.id: c.question for c in report.cases}
    rows = [{"gate": gate, "id": r.id, "question": _excerpt(questions.get(r.id, "")),
             "verdicts": verdict_pattern(m.flaky[r.id]),
             "explanation": r.explanation}
            for gate, m in report.gates().items() for r in m.results if r.id in m.flaky]
    return pd.DataFrame(rows, columns=["gate", "id", "question", "verdicts", "explanation"])


def failures_by(report: QAEvalReport, tag: str = "qtype") -> pd.DataFrame:
    """Failure counts per gate and tag value (only non-zero counts)."""
    frame = report.to_frame()
    failed = frame[~frame["passed"]]
    counts = failed.groupby(["gate", tag]).size().reset_index(name="failures")
    return counts.sort_values(["failures", "gate", tag], ascending=[False, True, True],
                              ignore_index=True)


def failure_table(report: QAEvalReport, stored: dict[str, Any] | None = None,
                  **filters: str | list[str]) -> pd.DataFrame:
    """The drill-down, one row per failing case and gate: id, gate, its stage (retrieval/
    stages.py: routing, refusal_guard, retrieval, answer, ...), the case's retrieval rank ("2",
    "none" when no relevant passage came back, "not observed", "" without relevance), "at
    baseline" (what the
    stored entry says of the case, as the gate reads it: "passed (regression)", "failed" for an
    old failure, "new case", "golden case changed", "not recorded", or "no baseline"), the
    tags to filter on, the question, expected, actual and an answer excerpt.

    Keyword filters keep rows whose column equals the value, or any of a list of values:
    `scope="ACME_HK"`, `gate=["numeric_accuracy", "citation_validity"]`.
    """
    cases = {c.id: c for c in report.cases}
    then = BaselineVerdicts(stored)
    frame = report.to_frame()
    failed = frame[~frame["passed"]].copy()
    failed["at baseline"] = [
        "no baseline" if stored is None else
        AT_BASELINE[then.at(g, i, cases[i].fingerprint if i in cases else None)]
        for g, i in zip(failed["gate"], failed["id"], strict=True)]
    failed["question"] = failed["id"].map(lambda i: cases[i].question if i in cases else "")
    failed["answer excerpt"] = failed["id"].map(
        lambda i: _excerpt(cases[i].answer) if i in cases else "")
    failed["stage"] = failed["stage"].fillna("")
    failed["rank"] = failed["id"].map(lambda i: _rank_text(cases.get(i)))
    columns = ["id", "gate", "stage", "rank", "at baseline", *TAG_KEYS, "case_type", "question",
               "expected", "actual", "answer excerpt"]
    return _filtered(failed[columns], filters).sort_values(["gate", "id"], ignore_index=True)


def _rank_text(case: Any) -> str:
    retrieval = getattr(case, "retrieval", None)
    if not retrieval:
        return ""
    if not retrieval.get("observed"):
        return "not observed"
    return "none" if retrieval.get("rank") is None else str(retrieval["rank"])


def stage_failures(report: QAEvalReport) -> pd.DataFrame:
    """Failing verdicts per gate and stage: columns gate, stage, failures (non-zero only), in
    stage order (retrieval/stages.STAGES)."""
    from ragspine_eval.retrieval.stages import STAGES

    frame = report.to_frame()
    failed = frame[~frame["passed"] & frame["stage"].notna()]
    counts = failed.groupby(["gate", "stage"]).size().reset_index(name="failures")
    order = {s: i for i, s in enumerate(STAGES)}
    return counts.sort_values(["stage", "gate"], key=lambda c: c.map(order) if c.name == "stage"
                              else c, ignore_index=True)


def retrieval_by_tag(report: QAEvalReport) -> pd.DataFrame:
    """The run's retrieval figures, the whole run first ("all") then per tag value: cases
    measured and not observed, hit@1/3/5/10 (the gate's k with its 95% Wilson interval), MRR and
    nDCG@10. Empty for a report without retrieval figures."""
    figures = report.retrieval
    columns = ["tag", "value", "measured", "not observed", "hit@1", "hit@3", "hit@5", "hit@10",
               "ci_lo", "ci_hi", "MRR", "nDCG@10"]
    if not figures:
        return pd.DataFrame(columns=columns)
    k = str(figures["k"])

    def row(tag: str, value: str, f: dict[str, Any]) -> dict[str, Any]:
        return {"tag": tag, "value": value, "measured": f["measured"],
                "not observed": f["not_observed"],
                **{f"hit@{n}": f["hit"][n]["rate"] for n in ("1", "3", "5", "10")},
                "ci_lo": f["hit"][k]["ci_lo"], "ci_hi": f["hit"][k]["ci_hi"],
                "MRR": f["mrr"], "nDCG@10": f["ndcg@10"]}

    rows = [row("all", "all", figures)]
    rows += [row(tag, value, f) for tag, values in figures.get("by_tag", {}).items()
             for value, f in values.items()]
    return pd.DataFrame(rows, columns=columns)


def _filtered(frame: pd.DataFrame, filters: dict[str, Any]) -> pd.DataFrame:
    """Rows whose column equals the value (or is one of a list of values); an unknown column
    raises a ValueError that lists the columns there are."""
    for column, value in filters.items():
        if column not in frame:
            raise ValueError(f"no column {column!r} to filter on; the columns are "
                             f"{', '.join(frame.columns)}")
        keep = (frame[column].isin(list(value)) if isinstance(value, list | tuple | set)
                else frame[column] == value)
        frame = frame[keep]
    return frame


def mode_diff(a: QAEvalReport, b: QAEvalReport) -> ReportDiff:
    """The paired comparison of two reports (e.g. tool vs agent), tool first when both are there."""
    first, second = (b, a) if (a.mode, b.mode) == ("agent", "tool") else (a, b)
    return diff_reports(first, second)


def mode_diff_table(diff: ReportDiff, first: str = "tool", second: str = "agent") -> pd.DataFrame:
    """diff.to_frame() with the two runs named: "tool rate", "agent rate", "tool → agent" ..."""
    return diff.to_frame().rename(columns={
        "old_rate": f"{first} rate", "new_rate": f"{second} rate", "rate_change": "change",
        "old_passed": f"{first} passed", "old_total": f"{first} total",
        "new_passed": f"{second} passed", "new_total": f"{second} total",
        "pass_to_fail": f"pass in {first}, fail in {second}",
        "fail_to_pass": f"fail in {first}, pass in {second}", "p_value": "McNemar p"})


def compared_runs(diff: ReportDiff, first: str = "tool", second: str = "agent") -> pd.DataFrame:
    """Which two runs a diff pairs (mode, engine, commit, start time) and what else differs
    between their inputs, as field/value rows: a report left over from an earlier run shows
    its own commit and time rather than passing for this run's."""
    rows = [(f"{first} run", diff.old_label), (f"{second} run", diff.new_label)]
    rows += [("note", note) for note in diff.notes]
    return pd.DataFrame(rows, columns=["field", "value"])


def flips(diff: ReportDiff, *reports: QAEvalReport) -> pd.DataFrame:
    """Each case whose verdict on a gate differs between the two runs, with its question."""
    questions = {c.id: c.question for r in reports for c in r.cases}
    table = diff.flips_frame()
    table.insert(2, "question", table["id"].map(questions))
    return table.sort_values(["gate", "id"], ignore_index=True)


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# --- extraction ----------------------------------------------------------------------------------


def channel_accuracy(run: ExtractionRun, stored: dict[str, Any] | None = None) -> pd.DataFrame:
    """One row per document set and channel, coverage last in each set: accuracy, baseline,
    delta, correct/total, status ("pass", "regression", "no baseline", or "not scored" with the
    reason), the cells that regressed, and the 95% interval. `stored` maps each document set to
    its baseline entry; a channel is a regression exactly when the baseline gate says so (its
    accuracy fell, or a cell that was right at baseline time is wrong now)."""
    table = run.summary_frame()
    if stored is not None:
        table["baseline"] = pd.to_numeric(pd.Series(
            [(stored.get(d) or {}).get("metrics", {}).get(c)
             for d, c in zip(table["doc_set"], table["channel"], strict=True)], dtype=object))
    flipped: dict[tuple[str, str], list[str]] = {}
    dropped: set[tuple[str, str]] = set()
    for key, report in run.reports.items():
        entry = (stored or {}).get(key)
        if entry is None:
            continue
        cmp = extraction_compare(report, entry)
        dropped |= {(key, r["metric"]) for r in cmp.regressions}
        for c in cmp.case_regressions:
            flipped.setdefault((key, c["metric"]), []).append(c["id"])
    status = []
    for row in table.itertuples():
        where = (row.doc_set, row.channel)
        if isinstance(row.not_scored, str):
            status.append("not scored")
        elif pd.isna(row.baseline):
            status.append("no baseline")
        else:
            status.append("regression" if where in dropped or where in flipped else "pass")
    unscored = table["not_scored"].map(lambda why: isinstance(why, str))
    table.loc[unscored, ["accuracy", "ci_lo", "ci_hi"]] = None  # nothing was measured
    table["delta"] = table["accuracy"] - table["baseline"]
    table["status"] = status
    table["correct/total"] = [f"{c}/{t}" for c, t in zip(table["correct"], table["total"],
                                                          strict=True)]
    table["regressed cells"] = [", ".join(flipped.get((d, c), []))
                                for d, c in zip(table["doc_set"], table["channel"], strict=True)]
    return table[["doc_set", "channel", "accuracy", "baseline", "delta", "correct/total", "status",
                  "regressed cells", "ci_lo", "ci_hi", "not_scored"]]


def feature_accuracy(run: ExtractionRun) -> pd.DataFrame:
    """Accuracy per document set, channel and the fixture feature a cell exercises (rgb_fill,
    theme_fill, legend, merged_header ...): where an aggregate hides what fails, e.g. a colour
    channel mostly made of untagged cells."""
    cells = run.to_frame()
    cells["feature"] = cells["feature"].fillna("(none)")
    grouped = cells.groupby(["doc_set", "channel", "feature"], sort=False)["correct"]
    table = grouped.agg(correct="sum", total="count").reset_index()
    table["correct"] = table["correct"].astype(int)
    table["accuracy"] = table["correct"] / table["total"]
    table["where"] = table["doc_set"] + " · " + table["feature"]
    return table


def mismatches_by_sheet(run: ExtractionRun) -> pd.DataFrame:
    """Mismatching cells per document set, sheet and channel (only non-zero counts)."""
    cells = run.to_frame()
    wrong = cells[~cells["correct"].astype(bool)]
    counts = wrong.groupby(["doc_set", "sheet", "channel"]).size().reset_index(name="mismatches")
    return counts.sort_values(["mismatches", "doc_set", "sheet"], ascending=[False, True, True],
                              ignore_index=True)


def mismatch_table(run: ExtractionRun, **filters: str | list[str]) -> pd.DataFrame:
    """Every mismatching cell: document set, locator, channel, expected, actual, the feature the
    fixture exercises; keyword filters as failure_table's (a value, or a list of values)."""
    cells = run.to_frame()
    wrong = _filtered(cells[~cells["correct"].astype(bool)].copy(), filters)
    wrong["expected"] = wrong["expected"].map(repr)
    wrong["actual"] = wrong["actual"].map(repr)
    return wrong[["doc_set", "locator", "channel", "expected", "actual", "feature"]].sort_values(
        ["doc_set", "channel", "locator"], ignore_index=True)

"""Reports as tidy pandas DataFrames: everything a notebook table or chart shows.

Pure functions of a report (and the stored baseline entry where a delta is wanted). The
notebooks only call these and display the result, so every table in a rendered report can be
computed in a test without a kernel. Rates are fractions in [0, 1]; presentation (percentages)
is the charts' and the notebook's business.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ragspine_eval.qa_eval import FABRICATION, QAEvalReport, compare_to_baseline

TAG_KEYS = ("topic", "scope", "qtype")
EXCERPT_CHARS = 160


def headline(report: QAEvalReport, stored: dict[str, Any] | None = None) -> pd.DataFrame:
    """One row per gate, fabrication last: measure ("pass rate" or "count"), current, baseline,
    delta, passed/total, status ("pass", "regression" or "no baseline") and the ids of cases
    that passed the gate at baseline time and fail now.

    The six metrics are rates (higher is better); fabrication is the count of refusal cases
    whose answer held a number (lower is better). A gate is a regression when its rate fell
    (its count rose) or when any of its cases regressed, as the baseline gate itself decides.
    """
    cmp = None if stored is None else compare_to_baseline(report, stored)
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
        metric_key = "fabrication_count" if name == FABRICATION else name
        status = ("no baseline" if b is None else
                  "regression" if metric_key in dropped or name in flipped else "pass")
        rows.append({
            "gate": name, "measure": "count" if name == FABRICATION else "pass rate",
            "current": current[name], "baseline": b,
            "delta": None if b is None else current[name] - b,
            "passed/total": f"{m.passed}/{m.total}", "status": status,
            "regressed cases": ", ".join(flipped.get(name, [])),
        })
    return pd.DataFrame(rows)


def tag_rates(report: QAEvalReport) -> pd.DataFrame:
    """Pass rate per gate and tag value: columns gate, tag, value, total, passed, pass_rate."""
    rows = []
    for gate, m in report.gates().items():
        for tag in TAG_KEYS:
            for value, counts in sorted(m.by_tag.get(tag, {}).items()):
                total, passed = counts["total"], counts["passed"]
                rows.append({"gate": gate, "tag": tag, "value": value, "bucket": f"{tag}={value}",
                             "total": total, "passed": passed,
                             "pass_rate": passed / total if total else 1.0})
    return pd.DataFrame(rows, columns=["gate", "tag", "value", "bucket", "total", "passed",
                                       "pass_rate"])


def failures_by(report: QAEvalReport, tag: str = "qtype") -> pd.DataFrame:
    """Failure counts per gate and tag value (only non-zero counts)."""
    frame = report.to_frame()
    failed = frame[~frame["passed"]]
    counts = failed.groupby(["gate", tag]).size().reset_index(name="failures")
    return counts.sort_values(["failures", "gate", tag], ascending=[False, True, True],
                              ignore_index=True)


def failure_table(report: QAEvalReport, **filters: str) -> pd.DataFrame:
    """The drill-down: id, question, gate, expected, actual, answer excerpt (+ tags to filter on).

    Keyword filters keep rows whose column equals the value, e.g. `scope="ACME_HK"`.
    """
    cases = {c.id: c for c in report.cases}
    frame = report.to_frame()
    failed = frame[~frame["passed"]].copy()
    failed["question"] = failed["id"].map(lambda i: cases[i].question if i in cases else "")
    failed["answer excerpt"] = failed["id"].map(
        lambda i: _excerpt(cases[i].answer) if i in cases else "")
    for column, value in filters.items():
        failed = failed[failed[column] == value]
    columns = ["id", "question", "gate", "expected", "actual", "answer excerpt", "case_type",
               *TAG_KEYS]
    return failed[columns].sort_values(["gate", "id"], ignore_index=True)


def verdict_differences(a: QAEvalReport, b: QAEvalReport) -> pd.DataFrame:
    """Cases whose verdict on some gate differs between two reports (e.g. tool vs agent)."""
    left = a.to_frame()[["id", "gate", "passed"]].rename(columns={"passed": a.mode})
    right = b.to_frame()[["id", "gate", "passed"]].rename(columns={"passed": b.mode})
    label_a, label_b = (a.mode, b.mode) if a.mode != b.mode else (f"{a.mode} (a)", f"{b.mode} (b)")
    left, right = left.rename(columns={a.mode: label_a}), right.rename(columns={b.mode: label_b})
    both = left.merge(right, on=["id", "gate"], how="inner")
    differ = both[both[label_a] != both[label_b]].copy()
    questions = {c.id: c.question for c in b.cases} | {c.id: c.question for c in a.cases}
    differ.insert(1, "question", differ["id"].map(questions))
    return differ.sort_values(["gate", "id"], ignore_index=True)


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def run_info(report: QAEvalReport, files: dict[str, Any] | None = None) -> pd.DataFrame:
    """What produced this report, as field/value rows for the top of a notebook."""
    rows = [("engine", report.engine), ("mode", report.mode), ("cases", report.n_cases),
            ("engine errors", len(report.errors))]
    rows += [(name, str(path)) for name, path in (files or {}).items()]
    return pd.DataFrame(rows, columns=["field", "value"])

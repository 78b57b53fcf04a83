"""One case whole, as a JSON-safe dict and as an HTML fragment (a minimal stand-in).

`case_detail(report, case_id, stored, other)` gathers what the QA report holds of one case;
`case_html(detail)` renders it. This is the minimal version the explorer is built and tested
against: it fills what today's report holds (question, tags, answer, route, each gate's
expected/actual and its status at baseline) and leaves the fields the evidence work adds
(reference_date, expected, tool_statuses, sources, retrieved_context, evidence) empty.
Invariants: every text is escaped; the fragment holds no script; its CSS classes start with
`rse-case`.
"""

from __future__ import annotations

from html import escape
from typing import Any

from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.ratchet import BaselineVerdicts


def _verdicts(report: QAEvalReport, case_id: str, stored: dict[str, Any] | None,
              fingerprint: str | None) -> list[dict[str, Any]]:
    then = BaselineVerdicts(stored) if stored is not None else None
    rows = []
    for gate, metric in report.gates().items():
        for r in metric.results:
            if r.id == case_id:
                rows.append({"gate": gate, "passed": r.passed, "expected": r.expected,
                             "actual": r.actual, "explanation": None, "evidence": {},
                             "at_baseline": then.at(gate, case_id, fingerprint) if then else None})
    return rows


def case_detail(report: QAEvalReport, case_id: str, stored: dict[str, Any] | None = None,
                other: QAEvalReport | None = None) -> dict[str, Any]:
    """The case `case_id` of `report` as a JSON-safe dict; KeyError when the report lacks it."""
    case = next((c for c in report.cases if c.id == case_id), None)
    if case is None:
        raise KeyError(f"no case {case_id!r} in the {report.mode} report")
    other_case = next((c for c in other.cases if c.id == case_id), None) if other else None
    return {
        "id": case.id, "question": case.question, "reference_date": None,
        "case_type": case.case_type, "tags": dict(case.tags), "expected": None,
        "answer": case.answer, "route": case.route, "tool_statuses": None, "sources": None,
        "retrieved_context": [], "error": case.error, "mode": report.mode,
        "verdicts": _verdicts(report, case_id, stored, case.fingerprint),
        "other": None if other_case is None else {
            "mode": other.mode, "answer": other_case.answer,
            "verdicts": _verdicts(other, case_id, None, None)},
    }


def case_html(detail: dict[str, Any]) -> str:
    """The case as an escaped HTML fragment: heading, question, tags, verdicts, answer."""
    tags = " · ".join(f"{escape(k)}={escape(str(v))}" for k, v in detail["tags"].items())
    rows = "".join(
        f'<tr class="rse-case-{"pass" if v["passed"] else "fail"}"><td>{escape(v["gate"])}</td>'
        f'<td>{"pass" if v["passed"] else "FAIL"}</td><td>{escape(str(v["expected"] or ""))}</td>'
        f'<td>{escape(str(v["actual"] or ""))}</td>'
        f'<td>{escape(str(v.get("at_baseline") or "–"))}</td></tr>'
        for v in detail["verdicts"])
    return (f'<div class="rse-case-view"><h4 class="rse-case-title">{escape(detail["id"])} '
            f'<small>({escape(detail["mode"])} mode, {escape(detail["case_type"])})</small></h4>'
            f'<p class="rse-case-question">{escape(detail["question"])}</p>'
            f'<p class="rse-case-tags">{tags}</p>'
            f'<table class="rse-case-verdicts"><thead><tr><th>gate</th><th>verdict</th>'
            f'<th>expected</th><th>actual</th><th>at baseline</th></tr></thead>'
            f'<tbody>{rows}</tbody></table>'
            f'<h5>Answer</h5><pre class="rse-case-answer">{escape(detail["answer"])}</pre></div>')

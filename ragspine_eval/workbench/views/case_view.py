"""The case view: one case whole, as a JSON-safe dict (`case_detail`) and as HTML (`case_html`).

`case_detail(report, case_id, stored=None, other=None)` gathers what a report knows of one case:
the question, reference date, tags and expected answer; what the engine did (answer, route,
tool statuses, sources, error); every gate's verdict with its explanation, its evidence and what
the stored baseline entry said of it (`ratchet.BaselineVerdicts`, the reading the gate itself
uses); the retrieved passages with the character spans of the words that support the narrative
answer's claims; the case's retrieval (`retrieval`: the ranked passages kept, each marked relevant
or not, the rank of the first relevant one, hit@k) and each failing verdict's stage; and, when
the other mode's report is given, that mode's answer and verdicts
(or another run's: `labels` name the two sides, e.g. "before" and "after"); and with
`--repeat N`, the case in each repeat (`repeats`: its answer, engine error and verdict per
gate, qa/repeats.py), which `case_html` shows side by side.

`case_html(detail)` renders such a dict as one self-contained HTML fragment: no script, its CSS
inline under classes prefixed `rse-case`, failing verdicts first and in the failing colour, and
every text from a case or an answer escaped (an answer holding "<script>" shows as text).

Invariants: both are pure functions of their arguments, so the notebook (`session.show_case`)
and the HTML report show the same thing a test checks; an unknown id raises `UnknownCaseError`
naming the id and the closest ids there are. A report read from JSON keeps evidence for its
failing verdicts only (see qa.report): a passing verdict shows its explanation where the
report holds one, and an empty evidence.
"""

from __future__ import annotations

import difflib
import html
import re
from typing import Any

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.judges.groundedness import split_claims, token_spans, tokens
from ragspine_eval.qa.report import CaseRecord, QAEvalReport
from ragspine_eval.ratchet import BaselineVerdicts
from ragspine_eval.retrieval.stages import STAGE_TEXT
from ragspine_eval.workbench.views import retrieval_view

CLOSEST_IDS = 5


class UnknownCaseError(RagspineEvalError, LookupError):
    """A case id the report does not hold; the message names the closest ids it does hold."""


def _as_report(report: QAEvalReport | dict[str, Any]) -> QAEvalReport:
    return report if isinstance(report, QAEvalReport) else QAEvalReport.from_dict(report)


class _Index:
    """One pass over a report: its cases by id and each gate's verdicts by id, so that the
    explorer's case views (up to thousands per page) cost a lookup each, not a scan."""

    def __init__(self, report: QAEvalReport) -> None:
        self.cases = {c.id: c for c in report.cases}
        self.results = {gate: {r.id: r for r in (*metric.results, *metric.errors)}
                        for gate, metric in report.gates().items()}
        self.flaky = {gate: metric.flaky for gate, metric in report.gates().items()}


_INDEXES: dict[int, tuple[QAEvalReport, _Index]] = {}


def _index(report: QAEvalReport) -> _Index:
    held = _INDEXES.get(id(report))
    if held is not None and held[0] is report:
        return held[1]
    if len(_INDEXES) >= 4:  # a notebook holds a few reports at a time
        _INDEXES.pop(next(iter(_INDEXES)))
    index = _Index(report)
    _INDEXES[id(report)] = (report, index)
    return index


_BASELINES: dict[int, tuple[dict[str, Any], BaselineVerdicts]] = {}


def _baseline_verdicts(stored: dict[str, Any]) -> BaselineVerdicts:
    """The stored entry read once (its sets of passed ids), however many cases are shown."""
    held = _BASELINES.get(id(stored))
    if held is not None and held[0] is stored:
        return held[1]
    if len(_BASELINES) >= 4:
        _BASELINES.pop(next(iter(_BASELINES)))
    verdicts = BaselineVerdicts(stored)
    _BASELINES[id(stored)] = (stored, verdicts)
    return verdicts


def _find(report: QAEvalReport, case_id: str) -> CaseRecord:
    case = _index(report).cases.get(case_id)
    if case is not None:
        return case
    ids = [c.id for c in report.cases]
    close = difflib.get_close_matches(case_id, ids, n=CLOSEST_IDS, cutoff=0.5)
    hint = (f"the closest ids are {', '.join(close)}" if close else
            f"it holds {len(ids)} cases" + (f", e.g. {', '.join(ids[:CLOSEST_IDS])}" if ids else ""))
    raise UnknownCaseError(f"case {case_id!r} is not in the {report.mode} report; {hint}")


def _verdicts(report: QAEvalReport, case: CaseRecord,
              baseline: BaselineVerdicts | None) -> list[dict[str, Any]]:
    rows = []
    for gate, results in _index(report).results.items():
        r = results.get(case.id)
        if r is None:
            continue
        explanation = r.explanation or ("Passed (the report keeps the evidence of failing "
                                        "verdicts only)." if r.passed else "Failed.")
        rows.append({
            "gate": gate, "passed": r.passed, "error": r.error,
            "flaky": _index(report).flaky[gate].get(case.id),
            "expected": r.expected, "actual": r.actual,
            "explanation": explanation, "evidence": _json_safe(r.evidence or {}),
            "stage": None if r.passed else r.stage,
            "at_baseline": (None if baseline is None
                            else baseline.at(gate, case.id, case.fingerprint)),
        })
    return rows


def _json_safe(value: Any) -> Any:
    """A deep copy holding only JSON types (a tuple becomes a list, anything else its str)."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _retrieval(case: CaseRecord) -> dict[str, Any] | None:
    """The record's retrieval with what is relevant in words (`rules`, from its expected)."""
    if not case.retrieval:
        return None
    from ragspine_eval.retrieval.relevance import rules_from_expected

    rules = [r.describe() for r in rules_from_expected(case.expected)]
    return _json_safe({**case.retrieval, "rules": case.retrieval.get("rules") or rules})


def support_marks(passage: str, claim_tokens: set[str]) -> list[list[int]]:
    """[start, end] spans of the passage's words that occur in the claims, touching spans
    merged (a run of CJK characters is one mark)."""
    marks: list[list[int]] = []
    for start, end, token in token_spans(passage):
        if token not in claim_tokens:
            continue
        if marks and marks[-1][1] == start:
            marks[-1][1] = end
        else:
            marks.append([start, end])
    return marks


def case_detail(report: QAEvalReport | dict[str, Any], case_id: str,
                stored: dict[str, Any] | None = None,
                other: QAEvalReport | dict[str, Any] | None = None,
                labels: tuple[str, str] | None = None, other_first: bool = False
                ) -> dict[str, Any]:
    """One case whole, JSON-safe (see the module docstring for the keys). `labels` name the
    two sides (e.g. ("after", "before") for two runs; default: each report's mode), and
    `other_first` puts the other report's side on the left."""
    report = _as_report(report)
    case = _find(report, case_id)
    baseline = _baseline_verdicts(stored) if stored is not None else None
    claimed = {t for claim in split_claims(case.narrative_answer) for t in tokens(claim)}
    detail = {
        "id": case.id, "question": case.question, "reference_date": case.reference_date,
        "case_type": case.case_type, "tags": dict(case.tags),
        "expected": _json_safe(case.expected), "answer": case.answer, "route": case.route,
        "tool_statuses": list(case.tool_statuses), "sources": _json_safe(case.sources),
        "retrieved_context": [{"text": p, "marks": support_marks(p, claimed)}
                              for p in case.retrieved_context],
        "retrieval": _retrieval(case),
        "error": case.error, "mode": report.mode,
        "verdicts": _verdicts(report, case, baseline), "other": None,
        "label": labels[0] if labels else f"{report.mode} mode",
        "repeats": _json_safe(list(case.repeats)),
    }
    if other is not None:
        other = _as_report(other)
        there = _index(other).cases.get(case.id)
        detail["other"] = {"mode": other.mode, "answer": there.answer if there else None,
                           "verdicts": _verdicts(other, there, None) if there else [],
                           "label": labels[1] if labels else f"{other.mode} mode",
                           "first": other_first}
    return detail


# --- HTML ------------------------------------------------------------------------------------------

_CSS = """
.rse-case{font:15px/1.5 system-ui,-apple-system,"Segoe UI","Noto Sans CJK SC","Noto Sans SC",
 "PingFang SC","Microsoft YaHei",sans-serif;color:#1a1a1a;background:#fff;text-align:left;
 max-width:1200px;padding:12px 16px;border:1px solid #ccc;border-radius:6px}
.rse-case h3{margin:0 0 4px;font-size:18px}
.rse-case h4{margin:14px 0 6px;font-size:15px}
.rse-case-meta{color:#444;margin:0 0 8px}
.rse-case-tag{display:inline-block;background:#eef;border:1px solid #ccd;border-radius:3px;
 padding:0 6px;margin:0 4px 2px 0;font-size:13px}
.rse-case-question{font-size:17px;margin:6px 0}
.rse-case dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:4px 0}
.rse-case dt{font-weight:600;color:#333}
.rse-case dd{margin:0;overflow-wrap:anywhere}
.rse-case-verdict{border-left:6px solid #2e7d32;background:#f3faf3;padding:6px 10px;margin:6px 0}
.rse-case-fail{border-left-color:#c62828;background:#fdf0f0}
.rse-case-status{font-weight:700}
.rse-case-fail .rse-case-status{color:#b71c1c}
.rse-case-pass .rse-case-status{color:#1b5e20}
.rse-case-answer{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;
 border:1px solid #ddd;padding:8px;margin:4px 0;font-size:14px}
.rse-case-passage{white-space:pre-wrap;border-left:3px solid #999;padding:4px 10px;margin:6px 0}
.rse-case mark{background:#ffe082;color:inherit;padding:0}
.rse-case-error{color:#b71c1c;font-weight:600}
.rse-case-sides{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.rse-case table{border-collapse:collapse;font-size:13px}
.rse-case th,.rse-case td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
.rse-case dl{grid-template-columns:fit-content(40%) minmax(0,1fr)}
.rse-case dl>dt,.rse-case dl>dd{float:none;width:auto;min-width:0;margin:0}
.rse-case dl>dt,.rse-case th{overflow-wrap:normal;word-break:normal;hyphens:none}
.rse-case table td,.rse-case table th{text-align:left !important}
.rse-case h4{font-weight:600}
.rse-case-repeats{display:grid;grid-auto-flow:column;grid-auto-columns:minmax(180px,1fr);
 gap:8px;overflow-x:auto}
.rse-case-repeat{border:1px solid #ddd;border-radius:4px;padding:4px 8px;min-width:0}
.rse-case-repeat .rse-case-answer{max-height:14em;overflow:auto;font-size:13px}
.rse-case-repeat ul{margin:4px 0;padding-left:16px;font-size:13px}
.rse-case-v-pass{color:#1b5e20}.rse-case-v-fail{color:#b71c1c;font-weight:600}
.rse-case-v-error{color:#b71c1c;font-style:italic}
"""
# Why the last four lines: JupyterLab's output CSS (also in the rendered HTML reports) floats
# every <dt> at 20% of its box and right-aligns table cells, so a nested key (Expected → source:
# doc, locator) was drawn one letter a line. Keys break only where _key puts a <wbr> (after an
# underscore, a dot or a slash), so expected_source reads as one word, or two halves at most.


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _key(key: Any) -> str:
    """A key escaped, with a line-break chance after each underscore, dot or slash only."""
    return re.sub(r"([_./])", r"\1<wbr>", _e(key))


def _scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "—"}[value]
    if isinstance(value, float):
        return _e(f"{value:g}")
    return _e(value)


def _evidence_html(value: Any) -> str:
    """Evidence as nested definition lists; a list of dicts as a table; a list of scalars as
    a comma-separated line."""
    if isinstance(value, dict):
        if not value:
            return "<span>—</span>"
        rows = "".join(f"<dt>{_key(k)}</dt><dd>{_evidence_html(v)}</dd>" for k, v in value.items())
        return f"<dl>{rows}</dl>"
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            keys = list(dict.fromkeys(k for v in value for k in v))
            head = "".join(f"<th>{_key(k)}</th>" for k in keys)
            body = "".join("<tr>" + "".join(f"<td>{_evidence_html(v.get(k))}</td>" for k in keys)
                           + "</tr>" for v in value)
            return f"<table><tr>{head}</tr>{body}</table>"
        return ", ".join(_scalar(v) for v in value) if value else "none"
    return _scalar(value)


def _verdict_html(v: dict[str, Any]) -> str:
    cls = "rse-case-pass" if v["passed"] else "rse-case-fail"
    status = ("ERROR" if v.get("error") else "FLAKY" if v.get("flaky") else
              "PASS" if v["passed"] else "FAIL")
    then = f" · at baseline: {_e(v['at_baseline'])}" if v.get("at_baseline") else ""
    if v.get("stage"):
        then += f" · stage: {_e(STAGE_TEXT.get(v['stage'], v['stage']))}"
    expected = (f"<dl><dt>expected</dt><dd>{_e(v['expected'])}</dd><dt>actual</dt>"
                f"<dd>{_e(v['actual'])}</dd></dl>" if v.get("expected") is not None else "")
    evidence = (f"<details{' open' if not v['passed'] else ''}><summary>evidence</summary>"
                f"{_evidence_html(v['evidence'])}</details>" if v.get("evidence") else "")
    return (f'<div class="rse-case-verdict {cls}"><span class="rse-case-status">{status}</span> '
            f"<b>{_e(v['gate'])}</b>{then}<p>{_e(v['explanation'])}</p>{expected}{evidence}</div>")


def _verdicts_html(verdicts: list[dict[str, Any]]) -> str:
    ordered = sorted(verdicts, key=lambda v: v["passed"])  # stable: failing first, gate order kept
    return "".join(_verdict_html(v) for v in ordered) or "<p>No gate applies to this case.</p>"


def _marked(text: str, marks: list[list[int]]) -> str:
    out, at = [], 0
    for start, end in marks:
        out.append(_e(text[at:start]) + f"<mark>{_e(text[start:end])}</mark>")
        at = end
    return "".join(out) + _e(text[at:])


def _expected_html(expected: dict[str, Any]) -> str:
    return _evidence_html(expected) if expected else "<span>— (not in this report)</span>"


def _label(side: dict[str, Any]) -> str:
    """How a side of the view is named: its label, or (a detail made before labels) its mode."""
    return side.get("label") or f"{side['mode']} mode"


def _repeats_html(repeats: list[dict[str, Any]]) -> str:
    """Each repeat side by side, one column a repeat: its answer (or engine error) and its
    verdict per gate, why each failing one failed on hover; "" for a run of one repeat."""
    if not repeats:
        return ""
    columns = []
    for r in repeats:
        verdicts = r.get("verdicts") or {}
        failing = r.get("failing") or {}
        word = ("ERROR" if r.get("error") else "FAIL" if "fail" in verdicts.values()
                else "PASS")
        items = "".join(
            f'<li class="rse-case-v-{_e(v)}" title="{_e(failing.get(gate) or "")}">'
            f"{_e(gate)}: {_e(v)}</li>" for gate, v in verdicts.items())
        said = (f'<p class="rse-case-error">Engine error: {_e(r["error"])}</p>' if r.get("error")
                else f'<div class="rse-case-answer">{_e(r.get("answer") or "(empty)")}</div>')
        columns.append(f'<div class="rse-case-repeat" data-repeat="{_e(r.get("repeat"))}">'
                       f"<b>repeat {int(r.get('repeat', 0)) + 1} · {word}</b>"
                       f"{said}<ul>{items}</ul></div>")
    return (f"<h4>Every repeat ({len(repeats)}; what the gates read above is the first "
            f"repeat's, or the first with an engine error)</h4>"
            f'<div class="rse-case-repeats">{"".join(columns)}</div>')


def case_html(detail: dict[str, Any]) -> str:
    """One case as a self-contained HTML fragment (see the module docstring)."""
    failing = sum(1 for v in detail["verdicts"] if not v["passed"])
    tags = "".join(f'<span class="rse-case-tag">{_e(k)}={_e(v)}</span>'
                   for k, v in detail["tags"].items())
    sources = ", ".join(f"{_e(s.get('doc'))} · {_e(s.get('locator'))}"
                        for s in detail["sources"]) or "none"
    context = "".join(f'<div class="rse-case-passage">{_marked(p["text"], p["marks"])}</div>'
                      for p in detail["retrieved_context"]) or "<p>No passage was retrieved.</p>"
    error = (f'<p class="rse-case-error">Engine error: {_e(detail["error"])}</p>'
             if detail.get("error") else "")
    mine = (f"<h4>Answer ({_e(_label(detail))})</h4>"
            f'<div class="rse-case-answer">{_e(detail["answer"])}</div>'
            f"<h4>Verdicts ({failing} of {len(detail['verdicts'])} failing)</h4>"
            f"{_verdicts_html(detail['verdicts'])}")
    other = detail.get("other")
    if other:
        theirs = (f"<h4>Answer ({_e(_label(other))})</h4>" + (
            f'<div class="rse-case-answer">{_e(other["answer"])}</div><h4>Verdicts</h4>'
            f"{_verdicts_html(other['verdicts'])}" if other.get("answer") is not None else
            f"<p>This case is not in the {_e(_label(other))} report.</p>"))
        sides = (theirs, mine) if other.get("first") else (mine, theirs)
        body = f'<div class="rse-case-sides"><div>{sides[0]}</div><div>{sides[1]}</div></div>'
    else:
        body = mine
    return (
        f"<style>{_CSS}{retrieval_view.CSS}</style>"
        f'<div class="rse-case" data-case-id="{_e(detail["id"])}">'
        f"<h3>{_e(detail['id'])} · {_e(detail['case_type'])} · "
        f"{'FAIL' if failing else 'PASS'}</h3>"
        f'<p class="rse-case-meta">reference date {_e(detail["reference_date"] or "—")} · '
        f"mode {_e(detail['mode'])} · route {_e(detail['route'] or '—')} · tool statuses "
        f"{_e(', '.join(detail['tool_statuses']) or '—')}</p>"
        f"<div>{tags}</div>"
        f'<p class="rse-case-question">{_e(detail["question"])}</p>'
        f"<h4>Expected</h4>{_expected_html(detail['expected'])}"
        f"{error}{body}{_repeats_html(detail.get('repeats') or [])}"
        f"<h4>Sources cited</h4><p>{sources}</p>"
        f"<h4>Retrieved context ({_count(len(detail['retrieved_context']), 'passage')}; words "
        f"that support a claim marked)</h4>{context}"
        f"{retrieval_view.ranked_html(detail.get('retrieval'))}</div>")

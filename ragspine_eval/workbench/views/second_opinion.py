"""The second opinion, as the qa notebook and its HTML report show it beside the gate's verdict.

`second_opinion_html(report, stored=None, other=None, judge="financial")` is one block: the
sentence of `judges.financial.disagreement` ("the gate (lexical) passed 3 claims the financial
judge rejects ..."), a table of the claims the two judges see differently (case, claim, what the
gate's judge said, what the other said, its deciding rule, the passage and why), and the case
view of each such case (workbench.case_view, the one the failure explorer opens), hidden until
its row is clicked; the case view is preceded by the other judge's verdict on each of the
case's claims. Everything runs in the page, so it works offline in the HTML report.
Invariants: every text from a case or an answer is escaped; the gate's verdicts, the report and
the baselines are read, never changed.
"""

from __future__ import annotations

from html import escape
from typing import Any

from ragspine_eval.judges.financial.disagreement import SecondOpinion, case_date, second_opinion
from ragspine_eval.judges.groundedness import check_claim, split_claims
from ragspine_eval.workbench.views import case_view, embed

STYLE = """<style>
.rse-second{font-family:system-ui,sans-serif;max-width:100%;margin:6px 0 12px}
.rse-second-head{padding:8px 12px;border-left:6px solid #4575b4;background:#eef2f8;font-weight:600}
.rse-second-head.rse-second-warn{border-left-color:#d73027;background:#fdeeee}
table.rse-second-table{table-layout:fixed;width:100%;border-collapse:collapse;font-size:12.5px;
 margin-top:6px}
table.rse-second-table th,table.rse-second-table td{text-align:left !important;vertical-align:top;
 padding:4px 6px;border-bottom:1px solid #ddd;overflow-wrap:anywhere;white-space:normal}
table.rse-second-table th{background:#f3f3f3}
table.rse-second-table tr.rse-second-row{cursor:pointer}
table.rse-second-table tr.rse-second-row:hover{background:#f5f8ff}
table.rse-second-table tr.rse-selected{background:#e4ecff}
.rse-second-no{color:#b2182b;font-weight:700}
.rse-second-yes{color:#1a9850;font-weight:700}
.rse-second-slot{border:1px solid #bbb;border-radius:6px;padding:8px 12px;margin-top:10px;
 background:#fcfcfc}
</style>"""
COLUMNS = [("case", 10), ("claim", 30), ("gate", 8), ("second opinion", 10), ("rule", 12),
           ("passage", 6), ("why", 24)]


def _said(entailed: bool) -> str:
    return ('<span class="rse-second-yes">entailed</span>' if entailed else
            '<span class="rse-second-no">rejected</span>')


def _claims_html(report: Any, case_id: str, judge_name: str) -> str:
    """The other judge's verdict on every claim of one case, with its rule and detail."""
    from ragspine_eval.judges import registry as judges

    judge = judges.get(judge_name)
    case = next(c for c in report.cases if c.id == case_id)
    rows = []
    for claim in split_claims(case.narrative_answer):
        check = check_claim(judge, claim, case.retrieved_context, case_date(case))
        rows.append(f"<tr><td>{escape(claim)}</td><td>{_said(check.entailed)}</td>"
                    f"<td>{escape(check.rule or '')}</td><td>{escape(str(check.passage or '–'))}"
                    f"</td><td>{escape(check.detail)}</td></tr>")
    return (f"<h4>Second opinion ({escape(judge_name)} judge), claim by claim</h4>"
            f'<table class="rse-second-table"><tr><th>claim</th><th>verdict</th><th>rule</th>'
            f"<th>passage</th><th>why</th></tr>{''.join(rows)}</table>")


def second_opinion_html(report: Any, stored: dict[str, Any] | None = None, other: Any = None,
                        judge: str = "financial", opinion: SecondOpinion | None = None) -> str:
    """The second opinion block (see the module docstring)."""
    opinion = opinion or second_opinion(report, judge)
    warn = " rse-second-warn" if opinion.passed_rejected else ""
    root = embed.element_id({"second": report.mode, "n": len(opinion.disagreements)},
                            "rse-second")
    head = f'<div class="rse-second-head{warn}">{escape(opinion.sentence())}</div>'
    if not opinion.disagreements:
        return f'{STYLE}<div class="rse-second" id="{root}">{head}</div>'
    ordered = opinion.passed_rejected + opinion.failed_accepted
    rows = []
    for d in ordered:
        rows.append(
            f'<tr class="rse-second-row" data-id="{escape(d.case_id)}">'
            f"<td><b>{escape(d.case_id)}</b></td><td>{escape(d.claim)}</td>"
            f"<td>{_said(d.gate_entailed)}</td><td>{_said(d.other_entailed)}</td>"
            f"<td>{escape(d.rule or '')}</td><td>{escape(str(d.passage or '–'))}</td>"
            f"<td>{escape(d.detail)}</td></tr>")
    slots = []
    for case_id in dict.fromkeys(d.case_id for d in ordered):
        detail = case_view.case_detail(report, case_id, stored, other)
        slots.append(f'<div class="rse-second-slot" data-case="{escape(case_id)}" hidden>'
                     f"{_claims_html(report, case_id, opinion.other_judge['name'])}"
                     f"{case_view.case_html(detail)}</div>")
    cols = "".join(f'<col style="width:{w}%">' for _, w in COLUMNS)
    names = "".join(f"<th>{escape(n)}</th>" for n, _ in COLUMNS)
    return (f'{STYLE}<div class="rse-second" id="{root}">{head}'
            f"<p>The gate's verdicts are unchanged; click a row for the whole case.</p>"
            f'<table class="rse-second-table"><colgroup>{cols}</colgroup><thead><tr>{names}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>{''.join(slots)}</div>"
            + _SCRIPT.replace("ROOT_ID", root))


_SCRIPT = """<script>(function () {
  var root = document.getElementById("ROOT_ID");
  if (!root) { return; }
  root.querySelector("tbody").addEventListener("click", function (event) {
    var row = event.target.closest("tr.rse-second-row");
    if (!row) { return; }
    root.querySelectorAll("tr.rse-second-row").forEach(function (r) {
      r.classList.toggle("rse-selected", r === row);
    });
    root.querySelectorAll(".rse-second-slot").forEach(function (s) {
      s.hidden = s.dataset.case !== row.dataset.id;
      if (!s.hidden) { s.scrollIntoView({block: "nearest"}); }
    });
  });
})();</script>"""


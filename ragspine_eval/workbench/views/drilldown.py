"""The failure explorer and the verdict banner: what a reader of a QA run sees first.

`verdict_html` is the banner a report opens with: PASS or FAIL, mode and engine, each regressed
gate (baseline → current) and how many cases flipped, with a link that lists them.
`explorer_html` is one block: the pass-rate heatmap, the failure bars and the "failures by stage
and gate" bars (all clickable), the failure table under them (with each verdict's stage and the
case's retrieval rank), and the case view of every failing case, hidden until its row is
clicked. Clicking a heatmap cell or a bar keeps exactly the failing verdicts of that gate whose
case carries that tag value; a stage bar, those of that gate at that stage; double-clicking the
chart or "Show all" clears it. All of it runs
in the page (no kernel), so it works the same in JupyterLab and in the offline HTML report.
Invariants: every text from a golden case or an answer is escaped; the table's default columns
fit a 1,280 px window (fixed layout, text wrapped, long text clamped and whole on demand);
regressions come first and are marked; fields the case view may lack are optional.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

import pandas as pd

from ragspine_eval import ratchet as bl
from ragspine_eval.outputs.console import short_ids
from ragspine_eval.provenance import Provenance
from ragspine_eval.qa.gates import FABRICATION
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.workbench.views import case_view, charts, embed, frames, linked
from ragspine_eval.workbench.views.tables import MAX_EMBEDDED_ROWS
from ragspine_eval.workbench.views.model_usage import answered_by

REGRESSION = frames.AT_BASELINE[bl.PASSED_THEN]
STYLE = """<style>
.rse-verdict{font-family:system-ui,sans-serif;border-radius:6px;padding:10px 14px;margin:4px 0 12px;
 border:2px solid}
.rse-verdict-pass{background:#edf8f0;border-color:#1a9850}
.rse-verdict-fail{background:#fdeeee;border-color:#d73027}
.rse-verdict-none{background:#eef2f8;border-color:#4575b4}
.rse-verdict h2{margin:0 0 4px !important;font-size:1.6em !important;font-weight:800 !important}.rse-verdict ul{margin:4px 0 0 1.2em;padding:0}
.rse-model{margin:0 0 4px;font-weight:600}
.rse-drift{margin:2px 0 6px;padding:4px 8px;background:#fff6e0;border-left:4px solid #e08a00;font-weight:600}
.rse-tags{color:#555;font-size:11.5px;overflow-wrap:normal}
.rse-case-view pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12.5px}
.rse-case-view tr.rse-case-fail td{color:#b2182b;font-weight:600}
.rse-case-view table{border-collapse:collapse;font-size:12.5px;table-layout:fixed;width:100%}
.rse-case-view td,.rse-case-view th{text-align:left !important;vertical-align:top;padding:3px 6px;
 border-bottom:1px solid #ddd;overflow-wrap:anywhere}
</style>"""
# a heatmap cell or a bar selects (gate, bucket), a stage bar (gate, stage); a row carries its
# gate, its tag buckets and its stage
LINK = linked.Link({"gate": "gate", "bucket": "buckets", "stage": "stage"}, lists=("buckets",),
                   noun="failing verdicts", signal=charts.SELECTION)
# (header, width) of the default columns: fixed widths that add up to 100%
COLUMNS = [("id", 9), ("gate", 12), ("stage", 8), ("at baseline", 8), ("tags", 13),
           ("question", 16), ("expected", 10), ("actual", 9), ("answer", 15)]


def _fmt(value: Any, gate: str) -> str:
    if value is None or pd.isna(value):
        return "–"
    return f"{value:.0f}" if gate == FABRICATION else f"{value:.1%}"


def verdict_html(report: QAEvalReport, stored: dict[str, Any] | None,
                 comparison: bl.BaselineComparison | None, key: str) -> str:
    """The banner: PASS / FAIL / NO BASELINE, mode and engine, each regressed gate with
    baseline → current and a link that lists the cases that flipped."""
    prov = report.provenance
    where = (f"{escape(report.mode)} mode · engine {escape(report.engine)} · "
             f"{report.n_cases} cases{_repeats(report)} · baseline key {escape(key)}"
             f"{_latency(report)}")
    if report.errors:
        return _errors_banner(report, comparison, key, where, prov)
    if comparison is None:
        return banner_html("none", "NO BASELINE", f"<div>{where}. Nothing to compare with; "
                                                  f"record a baseline with the CLI.</div>",
                           provenance=prov)
    if comparison.passed:
        return banner_html("pass", "PASS", f"<div>{where}. No gate regressed against the "
                                           f"baseline.</div>", comparison, provenance=prov)
    head = frames.headline(report, stored)
    items = []
    for row in head[head["status"] == "regression"].to_dict("records"):
        gate = row["gate"]
        ids = [i for i in row["regressed cases"].split(", ") if i]
        failing = [r.id for r in report.gates()[gate].failures]
        change = f"{_fmt(row['baseline'], gate)} → {_fmt(row['current'], gate)}"
        if gate == FABRICATION:
            change += " fabricated (lower is better)"
        what = (f"{len(ids)} case{'s' if len(ids) != 1 else ''} flipped (passed at baseline, "
                f"fail now)" if ids else
                f"no case flipped (each failing case failed at baseline too, or is new); "
                f"{len(failing)} failing case{'s' if len(failing) != 1 else ''}")
        flipped = linked.show_link(
            what, {"gate": [gate], "id": ids or failing}, f"{gate}, the cases the banner names",
            attrs=f' data-gate="{escape(gate)}" data-ids=\'{escape(json.dumps(ids or failing))}\'')
        items.append(f"<li><b>{escape(gate)}</b>: {change} · {flipped}</li>")
    if not items:  # the gate failed on something else: a golden change, a missing metric
        items = [f"<li>{escape(line)}</li>" for line in _described(comparison, key)]
    return banner_html("fail", "FAIL", f"<div>{where}. The baseline gate failed:</div>"
                                       f"<ul>{''.join(items)}</ul>", comparison,
                       provenance=prov)


def _latency(report: QAEvalReport) -> str:
    """" · latency per case p50 … · p95 … · max …" from the provenance (execution/latency.py),
    or "" where the run timed no case (every answer reused from the cache)."""
    prov = report.provenance
    run = ((prov.times.latency or {}).get("run") or {}) if prov and prov.times else {}
    if not run.get("n"):
        return ""
    return (f" · latency per case p50 {run['p50'] * 1000:.1f} ms · p95 {run['p95'] * 1000:.1f} "
            f"ms · max {run['max'] * 1000:.1f} ms ({run['n']} timed)")


def _described(comparison: bl.BaselineComparison, key: str) -> list[str]:
    """The gate's lines for a banner's list (at most 10 of each kind), without the drift lines:
    drift_html shows those once, under the heading."""
    return [line for line in bl.describe(comparison, key, 10) if not line.startswith("DRIFT ")]


def _repeats(report: QAEvalReport) -> str:
    """With repeats: how many, and the flaky cases (never regressions), for the banner."""
    if report.repeats < 2:
        return ""
    ids = sorted({i for ids in report.flaky.values() for i in ids})
    if not ids:
        return f" · {report.repeats} repeats, no flaky case"
    shown = ", ".join(escape(i) for i in ids[:10]) + (f", … +{len(ids) - 10}" if len(ids) > 10
                                                       else "")
    return (f" · {report.repeats} repeats, <b>{len(ids)} flaky case{'s' if len(ids) != 1 else ''}"
            f"</b> (counted as passing, never a regression): {shown}")


def _errors_banner(report: QAEvalReport, comparison: bl.BaselineComparison | None, key: str,
                   where: str, prov: Provenance | None = None) -> str:
    """FAIL for a run with engine errors: the errors first (they are the stated reason), with
    their ids, then what the comparison on the answered cases found."""
    ids = [c.id for c in report.errors]
    shown = escape(short_ids(ids, 20))
    found = ("" if comparison is None else
             "<div>On the answered cases: " + (
                 "no gate regressed against the baseline." if comparison.passed else
                 "the baseline gate failed:</div><ul>" + "".join(
                     f"<li>{escape(line)}</li>" for line in _described(comparison, key))
                 + "</ul><div>") + "</div>")
    return banner_html("fail", f"FAIL: {len(ids)} ENGINE ERROR{'S' if len(ids) != 1 else ''}",
                       f"<div>{where}. {escape(report.errors_sentence())}.</div>"
                       f"<div>Cases: {shown}</div>{found}", comparison, script=False,
                       provenance=prov)


def banner_html(kind: str, heading: str, body: str,
                comparison: bl.BaselineComparison | None = None, script: bool = True,
                provenance: Provenance | None = None) -> str:
    """A verdict box: `kind` "pass", "fail" or "none" (its colour), `heading` (text), which
    model answered (the `provenance`'s; nothing for the MockProvider without a cassette), the
    comparison's drift lines, then `body` (HTML, escaped by the caller); `script` wires its
    links that filter an explorer (linked.show_link)."""
    answered = answered_by(provenance.model, provenance.model_usage, html=True,
                           cache=provenance.cache) if provenance is not None else None
    said = f'<div class="rse-model">{answered}</div>' if answered else ""
    return (f'{STYLE}<div class="rse-verdict rse-verdict-{kind}"><h2>{escape(heading)}</h2>'
            f"{said}{drift_html(comparison)}{body}</div>"
            + (linked.BANNER_SCRIPT if script and kind == "fail" else ""))


def drift_html(comparison: bl.BaselineComparison | None) -> str:
    """The banner's drift lines (another knowledge base or engine than the baseline's), shown
    under its heading, above any regression; "" when the run drifted from nothing."""
    return "".join(f'<div class="rse-drift">⚠ {escape(d["text"])}</div>'
                   for d in (comparison.drift if comparison is not None else ()))


def _rows(table: pd.DataFrame, answers: dict[str, str]) -> list[str]:
    rows = []
    for r in table.to_dict("records"):
        tags = {t: r[t] for t in frames.TAG_KEYS if isinstance(r.get(t), str)}
        buckets = [f"{t}={v}" for t, v in tags.items()]
        regressed = r["at baseline"] == REGRESSION
        at = ('<span class="rse-badge">▼ regression</span>' if regressed
              else escape(str(r["at baseline"])))
        answer = answers.get(r["id"], "")
        cells = [
            f"<b>{escape(r['id'])}</b>", escape(r["gate"]).replace("_", "_<wbr>"),
            escape(r["stage"]).replace("_", "_<wbr>")
            + (f'<br><span class="rse-tags">rank {escape(r["rank"])}</span>' if r["rank"]
               else ""), at,
            f'<span class="rse-tags">{"<br>".join(escape(b) for b in buckets)}</span>',
            f'<div class="rse-clamp" title="{escape(r["question"])}">{escape(r["question"])}</div>',
            f'<div class="rse-clamp">{escape(str(r["expected"] or ""))}</div>',
            f'<div class="rse-clamp">{escape(str(r["actual"] or ""))}</div>',
            (f"<details><summary>{escape(frames._excerpt(answer, 40))}</summary>"
             f"{escape(answer)}</details>" if answer else ""),
        ]
        rows.append(linked.row_html(r["id"], {"gate": r["gate"], "buckets": buckets,
                                              "stage": r["stage"]}, cells, regressed))
    return rows


def failure_rows(report: QAEvalReport, stored: dict[str, Any] | None) -> pd.DataFrame:
    """frames.failure_table with the regressions first (then by gate and id)."""
    table = frames.failure_table(report, stored)
    first = (table["at baseline"] != REGRESSION).astype(int)
    return table.assign(_order=first).sort_values(["_order", "gate", "id"], kind="stable",
                                                  ignore_index=True).drop(columns="_order")


def explorer_html(report: QAEvalReport, stored: dict[str, Any] | None = None,
                  other: QAEvalReport | None = None, max_rows: int = MAX_EMBEDDED_ROWS) -> str:
    """Heatmap and failure bars that filter the failure table under them; a row opens its case."""
    rates = frames.tag_rates(report, stored)
    heatmap = charts.pass_rate_heatmap(rates, select=True).to_dict()
    bars = charts.failure_bars(frames.failures_by(report, "qtype"), select=True).to_dict()
    stages = charts.stage_bars(frames.stage_failures(report), select=True).to_dict()
    table = failure_rows(report, stored)
    shown = table.head(max_rows)
    root = embed.element_id({"report": report.mode, "n": len(table)}, "rse-explorer")
    listen = linked.listen(root)
    answers = {c.id: c.answer for c in report.cases}
    slots = [linked.slot_html(case_id, case_view.case_html(
        case_view.case_detail(report, case_id, stored, other)))
        for case_id in dict.fromkeys(shown["id"])]
    cut = ("" if len(shown) == len(table) else
           f'<p class="rse-note"><b>Showing the first {max_rows:,} of {len(table):,} failing '
           f"verdicts; the JSON report holds every one "
           f"(frames.failure_table(run.report, run.stored)).</b></p>")
    table = linked.Table(COLUMNS, _rows(shown, answers),
                         empty="No failing verdict: every gate passed every case.", note=cut)
    return STYLE + linked.explorer_block(
        root, LINK, [embed.chart_html(heatmap, on_view=listen),
                     embed.chart_html(bars, on_view=listen),
                     embed.chart_html(stages, on_view=listen)], table, slots,
        hint="Regressions first. Click a row for the whole case; click an answer to read it "
             "whole.")


def mode_comparison(report: QAEvalReport, other: QAEvalReport | None,
                    report_path: Any = None) -> str:
    """Tool vs agent as HTML: which runs are paired, per gate the rates, the cases whose
    verdict differs and McNemar's p, then each differing case; a sentence when the other
    mode's report is not there."""
    from ragspine_eval.workbench.views import tables

    if other is None:
        return (f'<p class="ragspine-eval-note">No report of the other mode next to '
                f"{escape(str(report_path))}: run the other mode to compare.</p>")
    diff = frames.mode_diff(report, other)
    return "\n".join([
        tables.static(frames.compared_runs(diff)).to_html(),
        tables.static(frames.mode_diff_table(diff), percent=["tool rate", "agent rate"],
                      signed=["change"]).to_html(),
        tables.interactive(frames.flips(diff, report, other),
                           rest="frames.flips(frames.mode_diff(run.report, other), ...)",
                           empty="No case has a different verdict in the two modes.").data])

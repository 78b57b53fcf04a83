"""Two QA runs compared, as HTML: the verdict banner, the per-tag change chart linked to the table
of flipped cases, each flipped case's two-run view, and the cases kept apart.

`verdict_html(pair)` is the banner compare.ipynb opens with, in the QA banner's look (drilldown
STYLE, class rse-verdict, so notebooks.for_readers lifts it to the top of the HTML): PASS or
FAIL by the pass → fail flips, what differs between the two runs' inputs, and each gate that
moved with both rates, the flips each way and McNemar's exact p. `flips_html(pair)` is the
change chart (gate × tag value, coloured by the change of the pass rate over the paired cases,
labelled ▼ pass → fail and ▲ fail → pass) above the flip table: a click on a cell keeps the
flips of that gate and tag value, a row opens the case with both runs side by side. The
filtering is the failure explorer's own page script (drilldown), not a copy: the rows carry
the same data-gate / data-buckets attributes and the chart the same selection.
Invariants: every text from a case or an answer is escaped (word_diff escapes before marking);
the table fits 1,280 px (fixed layout, wrapped, long answers clamped and whole on demand); a
pair with no flip still shows its chart and says so.
"""

from __future__ import annotations

from html import escape
from typing import Any

import altair as alt
import pandas as pd

from ragspine_eval.workbench.views import case_view, charts, drilldown, embed, linked
from ragspine_eval.workbench.views.changed_words import word_diff
from ragspine_eval.workbench.fronts.compare import (
    ARROWS,
    FAIL_TO_PASS,
    PASS_TO_FAIL,
    Pair,
    apart,
    failed,
    flip_table,
    tag_changes,
)

LINK = linked.Link({"gate": "gate", "bucket": "buckets"}, lists=("buckets",),
                   noun="flipped verdicts", signal=charts.SELECTION)
CHANGE_SCALE = alt.Scale(domain=[-1, 0, 1], range=["#d73027", "#f7f7f7", "#1a9850"])
STYLE = """<style>
.rse-compare del{background:#fdd;color:#8b0000;text-decoration:line-through}
.rse-compare ins{background:#d9f2dc;color:#0b5d1e;text-decoration:none;font-weight:600}
.rse-compare .rse-answer{white-space:pre-wrap;overflow-wrap:anywhere}
.rse-compare .rse-side-verdict{margin-top:4px;font-size:12px}
.rse-compare .rse-side-verdict .rse-case-verdict{padding:2px 6px;margin:2px 0}
.rse-compare .rse-p2f{color:#b2182b;font-weight:700}
.rse-compare .rse-f2p{color:#1a7a3a;font-weight:700}
</style>"""
CONTEXT = 24  # characters of unchanged answer shown either side of a change in a row
# (header, width %) of the flip table: fixed widths that add up to 100
COLUMNS = [("id", 9), ("gate", 11), ("flip", 7), ("tags", 10), ("question", 15),
           ("before", 24), ("after", 24)]


def _pct(rate: float | None) -> str:
    return "–" if rate is None or pd.isna(rate) else f"{rate:.1%}"


def verdict_html(pair: Pair) -> str:
    """The banner (see the module docstring)."""
    diff = pair.diff
    n = len(pair.regressed)
    fixed = sorted({i for g in diff.gates for i in g.fail_to_pass})
    errors = diff.new_errors
    head = "; ".join(
        [f"FAIL: {n} case{'s' * (n != 1)} went from pass to fail"] * bool(n)
        + [f"{'' if n else 'FAIL: '}{len(errors)} engine error{'s' * (len(errors) != 1)} in "
           f"the after run"] * bool(errors)) or "PASS: no case went from pass to fail"
    items = []
    for g in diff.gates:
        if not (g.pass_to_fail or g.fail_to_pass or (g.rate_change or 0) != 0):
            continue
        change = ("" if g.rate_change is None else f" ({g.rate_change * 100:+.1f} points)")
        link = (" · " + linked.show_link(
            "list them", {"gate": [g.gate], "id": g.pass_to_fail + g.fail_to_pass},
            f"{g.gate}, the flips the banner names") if g.pass_to_fail or g.fail_to_pass else "")
        items.append(
            f"<li><b>{escape(g.gate)}</b>: {_pct(g.old_rate)} → {_pct(g.new_rate)}{change} · "
            f"{len(g.pass_to_fail)} pass → fail ({escape(', '.join(g.pass_to_fail)) or 'none'}),"
            f" {len(g.fail_to_pass)} fail → pass · McNemar exact p = {g.p_value:.3g} "
            f"over {g.paired} paired cases{link}</li>")
    moved = (f"<div>Gates that moved:</div><ul>{''.join(items)}</ul>" if items else
             "<div>No gate moved: every paired case has the same verdicts in both runs.</div>")
    kept = apart(pair)
    apart_line = (f"<div>{kept['id'].nunique()} case(s) kept apart, never counted as flips "
                  f"(edited golden case, in one run only, or an engine error): listed below."
                  f"</div>" if len(kept) else "")
    drift = "".join(f'<div class="rse-drift">⚠ {escape(w)}</div>' for w in pair.warnings)
    look = "fail" if failed(pair) else "pass"
    return (f'{drilldown.STYLE}<div class="rse-verdict rse-verdict-{look}">'
            f"<h2>{head}</h2>{drift}"
            f"<div><b>before</b>: {escape(diff.old_label)}<br><b>after</b>: "
            f"{escape(diff.new_label)}</div>"
            f"<div>{n} pass → fail ({escape(', '.join(pair.regressed)) or 'none'}) · "
            f"{len(fixed)} fail → pass ({escape(', '.join(fixed)) or 'none'})</div>"
            f"{moved}{apart_line}</div>{linked.BANNER_SCRIPT}")


def change_chart(changes: pd.DataFrame, select: bool = True) -> alt.Chart:
    """changes: compare.tag_changes(). One cell per gate and tag value, coloured by the change
    of its pass rate, labelled ▼n (pass → fail) ▲m (fail → pass); `select`: a click selects
    (gate, bucket) as charts.SELECTION, which the flip table listens to."""
    title = "Change of the pass rate per gate and tag value (paired cases)"
    if changes.empty:
        return charts._empty(title, "no paired case to compare")
    data = changes.assign(
        label=[(f"▼{p}" if p else "") + (" " if p and f else "") + (f"▲{f}" if f else "")
               for p, f in zip(changes[PASS_TO_FAIL], changes[FAIL_TO_PASS], strict=True)],
        flipped=(changes[PASS_TO_FAIL] + changes[FAIL_TO_PASS]) > 0)
    tooltip = ["gate", alt.Tooltip("bucket:N", title="tag value"),
               alt.Tooltip("cases:Q", title="paired cases"),
               alt.Tooltip("before rate:Q", format=".1%"),
               alt.Tooltip("after rate:Q", format=".1%"),
               alt.Tooltip("change:Q", format="+.1%"),
               alt.Tooltip(f"{PASS_TO_FAIL}:Q", title="pass → fail"),
               alt.Tooltip(f"{FAIL_TO_PASS}:Q", title="fail → pass")]
    base = alt.Chart().encode(
        x=alt.X("gate:N", title="gate", sort=list(dict.fromkeys(changes["gate"])),
                axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("bucket:N", title="tag value", sort=sorted(set(changes["bucket"]))))
    cells = base.mark_rect(cursor="pointer" if select else "default").encode(
        color=alt.Color("change:Q", title="pass rate change", scale=CHANGE_SCALE,
                        legend=alt.Legend(format="+.0%")), tooltip=tooltip)
    if select:
        pick = charts._selection()
        cells = cells.add_params(pick).encode(
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.35)))
    frames_ = base.transform_filter(alt.datum.flipped).mark_rect(
        filled=False, stroke="black", strokeWidth=2, style="rse-frame")
    labels = base.mark_text(fontSize=10).encode(text="label:N", tooltip=tooltip)
    notes = ["▼n: n cases went pass → fail; ▲m: m went fail → pass (framed: cells with flips)"]
    if select:
        notes.append("click a cell to list its flipped cases below; double-click to clear")
    return alt.layer(cells, frames_, labels, data=data).properties(
        title=alt.Title(title, subtitle=notes), width=alt.Step(70), height=alt.Step(18))


def _side(report_detail: dict[str, Any], gate: str, changes: str, answer_html: str) -> str:
    """One run's side of a row: the changed words in their context, and under "whole answer
    and evidence" its answer (changed words marked) and its verdict on the gate."""
    verdict = next((v for v in report_detail["verdicts"] if v["gate"] == gate), None)
    block = case_view._verdict_html(verdict) if verdict else ""
    return (f'<div class="rse-clamp rse-answer">{changes}</div>'
            f"<details><summary>whole answer and evidence</summary>"
            f'<div class="rse-answer">{answer_html}</div>'
            f'<div class="rse-side-verdict">{block}</div></details>')


def _rows(pair: Pair, table: pd.DataFrame) -> list[str]:
    rows = []
    for r in table.to_dict("records"):
        old, new = word_diff(r["before answer"], r["after answer"])
        if r["before answer"] == r["after answer"]:
            old_changes = new_changes = f"<i>same answer</i>: {old}"
        else:
            old_changes, new_changes = word_diff(r["before answer"], r["after answer"],
                                                 CONTEXT)
        before = case_view.case_detail(pair.before, r["id"])
        after = case_view.case_detail(pair.after, r["id"])
        regressed = r["direction"] == PASS_TO_FAIL
        flip = (f'<span class="{"rse-p2f" if regressed else "rse-f2p"}">'
                f"{'▼' if regressed else '▲'} {ARROWS[r['direction']]}</span>")
        if r["rank before"] or r["rank after"]:
            flip += (f'<br><span class="rse-tags rse-rank">retrieval rank '
                     f'{escape(r["rank before"] or "–")} → {escape(r["rank after"] or "–")}'
                     f"</span>")
        cells = [f"<b>{escape(r['id'])}</b>", escape(r["gate"]).replace("_", "_<wbr>"), flip,
                 f'<span class="rse-tags">{"<br>".join(escape(b) for b in r["buckets"])}</span>',
                 f'<div class="rse-clamp">{escape(r["question"])}</div>',
                 _side(before, r["gate"], old_changes, old),
                 _side(after, r["gate"], new_changes, new)]
        rows.append(linked.row_html(r["id"], {"gate": r["gate"], "buckets": r["buckets"]},
                                    cells, regressed))
    return rows


def flips_html(pair: Pair) -> str:
    """The change chart over the flip table and each flipped case's two-run view."""
    table = flip_table(pair)
    spec = change_chart(tag_changes(pair)).to_dict()
    root = embed.element_id({"compare": pair.diff.new_label, "n": len(table)}, "rse-compare")
    slots = [linked.slot_html(i, case_view.case_html(case_view.case_detail(
        pair.after, i, other=pair.before, labels=("after", "before"), other_first=True)))
        for i in dict.fromkeys(table["id"])]
    return drilldown.STYLE + STYLE + '<div class="rse-compare">' + linked.explorer_html(
        root, LINK, [embed.chart_html(spec, on_view=linked.listen(root))], COLUMNS,
        _rows(pair, table), slots,
        empty="No flip: every paired case has the same verdict under every gate in both runs.",
        hint="Pass → fail first. Changed words: <del>only before</del> <ins>only after</ins>. "
             "Click a row for the case with both runs; open a side for its whole answer and "
             "the gate's evidence.") + "</div>"


def apart_html(pair: Pair) -> str:
    """The cases kept out of the flips, as a table with why; a sentence when there is none."""
    from ragspine_eval.workbench.views import tables

    kept = apart(pair)
    if kept.empty:
        return ('<p class="ragspine-eval-note">No case kept apart: both runs scored the same '
                "golden cases, unedited, with no engine error.</p>")
    return ("<h4>Kept apart, never counted as flips</h4>"
            + tables.static(kept).to_html())

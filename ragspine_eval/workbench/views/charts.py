"""Altair charts built from the frames module's DataFrames.

Every chart has a title and axis labels, shows pass rates as percentages, and colours pass
rate on one fixed scale (0% red to 100% green) so two reports read alike; a gate that regressed
is drawn in the failing colour whatever its rate. Fabrication is a rate where lower is better
("0 of 13 fabricated", with its interval), never a 100% pass rate. The heatmap and the failure
bars carry a click selection named `SELECTION` over (gate, bucket) that the explorer listens to.
`enable_offline()` registers a renderer that displays each chart as HTML: its static SVG drawn
by vl-convert in the kernel, replaced by a live vega-embed view (tooltips, clicks) when the page
runs scripts (see embed.py); nothing is loaded from the network.
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt
import pandas as pd

from ragspine_eval.qa.gates import FABRICATION
from ragspine_eval.workbench.views import embed

PASS_RATE_SCALE = alt.Scale(domain=[0, 1], range=["#d73027", "#fee08b", "#1a9850"])
STATUS_SCALE = alt.Scale(domain=["pass", "regression", "no baseline"],
                         range=["#1a9850", "#d73027", "#4575b4"])
PERCENT = ".0%"
SELECTION = "pick"
SMALL_BUCKET = 5  # fewer cases than this: one case moves the rate by 20 points or more
_TAG_ORDER = {"topic": 0, "scope": 1, "qtype": 2}


def _empty(title: str, note: str = "nothing to show: no failure") -> alt.Chart:
    """A titled placeholder the size of a small chart, so a clean run still reads as a chart."""
    return alt.Chart(pd.DataFrame({"note": [note]}), title=title).mark_text(
        size=14, color="#1a9850").encode(text="note:N").properties(width=300, height=80)


def _zoomed(*columns: pd.Series, pad: float = 0.02) -> alt.Scale:
    """A rate scale from just below the lowest value shown (to a 5-point step) up to 100%."""
    values = pd.concat([pd.to_numeric(c, errors="coerce") for c in columns]).dropna()
    low = 0.0 if values.empty else max(0.0, math.floor((values.min() - pad) * 20) / 20)
    return alt.Scale(domain=[min(low, 0.9), 1], clamp=True, zero=False)


def _selection() -> alt.Parameter:
    return alt.selection_point(name=SELECTION, fields=["gate", "bucket"], on="click",
                               clear="dblclick", toggle=False)


def _picked(mark: alt.Chart, *fields: str) -> alt.Chart:
    """`mark` with a click selection named SELECTION over `fields`, the rest dimmed."""
    pick = alt.selection_point(name=SELECTION, fields=list(fields), on="click", clear="dblclick",
                               toggle=False)
    return mark.add_params(pick).encode(opacity=alt.condition(pick, alt.value(1.0),
                                                              alt.value(0.3)))


def pass_rate_heatmap(rates: pd.DataFrame, title: str = "Pass rate per gate by tag value",
                      select: bool = False, compared: bool | None = None) -> alt.Chart:
    """rates: frames.tag_rates(). One cell per gate and tag=value, coloured by pass rate and
    labelled passed/total (fabrication: "fabricated of total"); a cell holding cases that
    passed at baseline time and fail now is framed in black and labelled "▼n", so a drop shows
    where it sits; a bucket of fewer than SMALL_BUCKET cases is labelled in italics and says so
    in its tooltip. `select`: clicking a cell selects (gate, bucket) as `SELECTION`.
    `compared`: whether a baseline was compared with (None: where some cell has a
    `baseline_rate`; a harness whose baseline keeps no rate per bucket says so itself)."""
    if rates.empty:
        return _empty(title)
    buckets = rates.drop_duplicates("bucket").sort_values(
        ["tag", "value"], key=lambda col: col.map(_TAG_ORDER) if col.name == "tag" else col)
    base = alt.Chart().encode(
        x=alt.X("gate:N", title="gate", sort=list(dict.fromkeys(rates["gate"])),
                axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("bucket:N", title="tag value", sort=buckets["bucket"].tolist()),
    )
    tooltip = _heatmap_tooltip(rates)
    cells = base.mark_rect(cursor="pointer" if select else "default").encode(
        color=alt.Color("pass_rate:Q", title="pass rate", scale=PASS_RATE_SCALE,
                        legend=alt.Legend(format=PERCENT)),
        tooltip=tooltip,
    )
    if select:
        pick = _selection()
        cells = cells.add_params(pick).encode(
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.3)))
    outlines = base.transform_filter(alt.datum.dropped).mark_rect(
        filled=False, stroke="black", strokeWidth=2.5, style="rse-frame")
    labels = alt.layer(*(base.transform_filter(keep).mark_text(
        fontSize=10, fontStyle=style).encode(text="label:N", tooltip=tooltip)
        for keep, style in ((~alt.datum.small, "normal"), (alt.datum.small, "italic"))))
    return alt.layer(cells, outlines, labels, data=_heatmap_cells(rates)).properties(
        title=alt.Title(title, subtitle=_heatmap_notes(rates, select, compared)),
        width=alt.Step(70), height=alt.Step(18))


def _regressed(rates: pd.DataFrame) -> pd.Series:
    """Per cell, the cases that passed at baseline time and fail now (0 without the column)."""
    return rates["regressed"] if "regressed" in rates else pd.Series(0, index=rates.index)


def _heatmap_cells(rates: pd.DataFrame) -> pd.DataFrame:
    """What each heatmap cell says: its label ("passed/total", fabrication's "fabricated of
    total", "▼n" for a drop), whether it is framed (dropped) or italic (small), and the
    tooltip's reading and note."""
    regressed = _regressed(rates)
    fabrication = rates["gate"] == FABRICATION
    failed = rates["total"] - rates["passed"]
    counts = [f"{f} of {t}" if fab else f"{p}/{t}" for p, f, t, fab in
              zip(rates["passed"], failed, rates["total"], fabrication, strict=True)]
    return rates.assign(
        label=[c + (f" ▼{n}" if n else "") for c, n in zip(counts, regressed, strict=True)],
        dropped=regressed > 0, small=rates["total"] < SMALL_BUCKET,
        reads=[f"{c} fabricated a number (lower is better)" if fab else f"{c} passed"
               for c, fab in zip(counts, fabrication, strict=True)],
        note=["small bucket: one case moves it by 20+ points" if t < SMALL_BUCKET else ""
              for t in rates["total"]],
        **{"passed/total": [f"{p}/{t}" for p, t in zip(rates["passed"], rates["total"],
                                                       strict=True)]})


def _heatmap_tooltip(rates: pd.DataFrame) -> list[Any]:
    return ["gate", alt.Tooltip("bucket:N", title="tag value"), "passed/total",
            alt.Tooltip("reads:N", title="reads"),
            alt.Tooltip("pass_rate:Q", format=".1%", title="pass rate"),
            alt.Tooltip("ci_lo:Q", format=".1%", title="95% CI low"),
            alt.Tooltip("ci_hi:Q", format=".1%", title="95% CI high"),
            *([alt.Tooltip("regressed:Q", title="regressed since baseline")]
              if "regressed" in rates else []),
            alt.Tooltip("note:N", title="note")]


def _heatmap_notes(rates: pd.DataFrame, select: bool, compared: bool | None) -> list[str]:
    """The heatmap's subtitle: what the baseline says (none, the drops framed, or no drop),
    how a cell reads, and how to select one."""
    if compared is None:
        compared = "baseline_rate" in rates and bool(rates["baseline_rate"].notna().any())
    subtitle = ("no baseline to compare with" if not compared else
                "▼n, framed: n cases that passed at baseline time fail now"
                if _regressed(rates).any() else "no case fails that passed at baseline time")
    notes = [subtitle, f"cells: passed/total (fabrication: fabricated of total); italic: fewer "
                       f"than {SMALL_BUCKET} cases"]
    if select:
        notes.append("click a cell to list its failing cases below; double-click to clear")
    return notes


def failure_bars(failures: pd.DataFrame, by: str = "qtype",
                 title: str = "Failures per gate and question type",
                 select: bool = False) -> alt.Chart:
    """failures: frames.failures_by(report, by). Stacked bars of failure counts. `select`:
    clicking a bar segment selects (gate, bucket "by=value") as `SELECTION`."""
    if failures.empty:
        return _empty(title)
    data = failures.assign(bucket=[f"{by}={v}" for v in failures[by]])
    chart = alt.Chart(data, title=title).mark_bar(
        cursor="pointer" if select else "default").encode(
        x=alt.X(f"{by}:N", title=by, sort="-y", axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("failures:Q", title="failing cases", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("gate:N", title="gate"),
        tooltip=["gate", alt.Tooltip("bucket:N", title="tag value"), "failures"],
    ).properties(width=420, height=220)
    if select:
        pick = _selection()
        chart = chart.add_params(pick).encode(
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.3)))
    return chart


STAGE_COLOURS = alt.Scale(
    domain=["engine_error", "routing", "refusal_guard", "retrieval", "answer", "unobserved"],
    range=["#7f3b08", "#e08214", "#8073ac", "#d73027", "#4575b4", "#999999"])


def stage_bars(stages: pd.DataFrame, title: str = "Failures by stage and gate",
               select: bool = False) -> alt.Chart:
    """stages: frames.stage_failures(report). One bar per gate, stacked by stage (where the
    failing verdicts went wrong). `select`: clicking a segment selects (gate, stage) as
    `SELECTION`, which the explorer reads as the rows' gate and stage."""
    if stages.empty:
        return _empty(title)
    from ragspine_eval.retrieval.stages import STAGE_TEXT, STAGES

    data = stages.assign(reads=[STAGE_TEXT.get(s, s) for s in stages["stage"]],
                         order=[STAGES.index(s) if s in STAGES else len(STAGES)
                                for s in stages["stage"]])
    chart = alt.Chart(data, title=alt.Title(title, subtitle=(
        ["click a segment to list its failing verdicts below; double-click to clear"]
        if select else []))).mark_bar(cursor="pointer" if select else "default").encode(
        y=alt.Y("gate:N", title="gate", sort=list(dict.fromkeys(stages["gate"]))),
        x=alt.X("failures:Q", title="failing verdicts", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("stage:N", title="stage", scale=STAGE_COLOURS),
        order=alt.Order("order:Q"),
        tooltip=["gate", "stage", alt.Tooltip("reads:N", title="reads"), "failures"],
    ).properties(width=360, height=alt.Step(22))
    return _picked(chart, "gate", "stage") if select else chart


def gate_bars(head: pd.DataFrame, title: str = "Pass rate per gate vs baseline") -> alt.Chart:
    """head: frames.headline(). One bar per rate gate on an axis zoomed to the data, coloured by
    its status (a regressed gate in the failing colour), its 95% interval as a line through the
    bar's end, and a black tick at the baseline. Fabrication, a count where lower is better,
    is stated in the subtitle ("0 of 13 fabricated") rather than drawn as a rate."""
    data = head[head["measure"] == "pass rate"]
    if data.empty:
        return _empty(title)
    scale = _zoomed(data["current"], data["baseline"], data["ci_lo"])
    y = alt.Y("gate:N", title="gate", sort=None)
    bars = alt.Chart(data).mark_bar(clip=True).encode(
        y=y,
        x=alt.X("current:Q", title="pass rate (axis zoomed to the data)", scale=scale,
                axis=alt.Axis(format=PERCENT)),
        color=alt.Color("status:N", scale=STATUS_SCALE, title="status",
                        legend=alt.Legend(orient="bottom", direction="horizontal")),
        tooltip=["gate", alt.Tooltip("current:Q", format=".1%", title="pass rate"),
                 alt.Tooltip("ci_lo:Q", format=".1%", title="95% CI low"),
                 alt.Tooltip("ci_hi:Q", format=".1%", title="95% CI high"),
                 alt.Tooltip("baseline:Q", format=".1%"), "passed/total", "status"],
    )
    # the 95% Wilson interval: it informs, the verdict stays the baseline's exact comparison
    errors = alt.Chart(data).mark_rule(color="#333333", strokeWidth=1.5, clip=True).encode(
        y=y, x="ci_lo:Q", x2="ci_hi:Q")
    ticks = alt.Chart(data.dropna(subset=["baseline"])).mark_tick(
        color="black", thickness=3, size=22, clip=True).encode(
        y=y, x="baseline:Q",
        tooltip=["gate", alt.Tooltip("baseline:Q", format=".1%", title="baseline")])
    verdicts = alt.Chart(data[data["status"] == "regression"]).mark_text(
        align="left", dx=6, color="#b2182b", fontWeight="bold").encode(
        y=y, x=alt.value(420), text=alt.value("▼ regression"))
    notes = ["line: 95% Wilson interval · black tick: baseline"]
    fab = head[head["gate"] == FABRICATION]
    if not fab.empty:
        row = fab.iloc[0]
        notes.append(f"fabrication (lower is better): {row['passed/total']}"
                     + (f", 95% CI {row['ci_lo']:.0%}–{row['ci_hi']:.0%}"
                        if pd.notna(row["ci_lo"]) else "")
                     + (f" · baseline {row['baseline']:.0f}" if pd.notna(row["baseline"]) else "")
                     + (" · REGRESSION" if row["status"] == "regression" else ""))
    return (bars + errors + ticks + verdicts).properties(
        title=alt.Title(title, subtitle=notes), width=420)


def tag_intervals(rates: pd.DataFrame,
                  title: str = "Pass rate by tag value, with 95% Wilson intervals") -> alt.Chart:
    """rates: frames.tag_rates(). One panel per rate gate (fabrication, a count, is in the
    heatmap): a dot per tag value, its interval as a line, on an axis zoomed to the intervals.
    Three panels a row, so six gates leave no empty panel.

    On a golden set this small one case moves a bucket by many points; the lines show which
    differences are more than noise.
    """
    rates = rates[rates["gate"] != FABRICATION]
    if rates.empty:
        return _empty(title)
    order = rates.drop_duplicates("bucket").sort_values(
        ["tag", "value"], key=lambda col: col.map(_TAG_ORDER) if col.name == "tag" else col)
    y = alt.Y("bucket:N", title="tag value", sort=order["bucket"].tolist())
    x_scale = _zoomed(rates["ci_lo"], rates["pass_rate"])
    axis = alt.Axis(format=PERCENT, tickCount=4, labelOverlap=True, labelSeparation=6)
    rules = alt.Chart().mark_rule(color="#777777", clip=True).encode(
        y=y, x=alt.X("ci_lo:Q", title="pass rate", scale=x_scale, axis=axis), x2="ci_hi:Q")
    dots = alt.Chart().mark_point(filled=True, size=45).encode(
        y=y, x=alt.X("pass_rate:Q", scale=x_scale, axis=axis),
        color=alt.Color("pass_rate:Q", scale=PASS_RATE_SCALE, legend=None),
        tooltip=["gate", alt.Tooltip("bucket:N", title="tag value"), "passed", "total",
                 alt.Tooltip("pass_rate:Q", format=".1%", title="pass rate"),
                 alt.Tooltip("ci_lo:Q", format=".1%", title="95% CI low"),
                 alt.Tooltip("ci_hi:Q", format=".1%", title="95% CI high")])
    gates = list(dict.fromkeys(rates["gate"]))
    return alt.layer(rules, dots, data=rates).properties(width=190, height=alt.Step(14)).facet(
        facet=alt.Facet("gate:N", title=None, sort=gates),
        columns=3, title=title)


def channel_bars(accuracy: pd.DataFrame,
                 title: str = "Extraction accuracy per channel and document set",
                 select: bool = False) -> alt.Chart:
    """accuracy: frames.channel_accuracy(). A panel per document set: a bar per scored channel
    (coverage included) on the fixed scale, its 95% interval as a line, the baseline as a tick;
    a channel the extractor cannot do for the set reads "not scored" instead of an empty row.
    `select`: clicking a bar selects (doc_set, channel) as `SELECTION`."""
    if accuracy["accuracy"].isna().all():
        return _empty(title, "nothing scored")
    data = accuracy.assign(unscored=accuracy["status"] == "not scored")
    y = alt.Y("channel:N", title="channel", sort=list(dict.fromkeys(accuracy["channel"])))
    x = alt.X("accuracy:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]),
              axis=alt.Axis(format=PERCENT))
    scored = alt.Chart().transform_filter(~alt.datum.unscored)
    bars = scored.mark_bar().encode(
        y=y, x=x, color=alt.Color("accuracy:Q", scale=PASS_RATE_SCALE, legend=None),
        tooltip=["doc_set", "channel", alt.Tooltip("accuracy:Q", format=".1%"), "correct/total",
                 alt.Tooltip("baseline:Q", format=".1%"), "status"])
    if select:
        bars = _picked(bars.mark_bar(cursor="pointer"), "doc_set", "channel")
    errors = scored.mark_rule(color="#333333", strokeWidth=1.5).encode(
        y=y, x="ci_lo:Q", x2="ci_hi:Q")
    ticks = scored.mark_tick(color="black", thickness=2, size=16).encode(
        y=y, x="baseline:Q")
    unscored = alt.Chart().transform_filter(alt.datum.unscored).mark_text(
        align="left", dx=4, color="#555555", fontStyle="italic").encode(
        y=y, x=alt.value(0), text=alt.value("not scored"), tooltip=["doc_set", "channel",
                                                                    "not_scored"])
    return alt.layer(bars, errors, ticks, unscored, data=data).properties(width=220).facet(
        column=alt.Column("doc_set:N", title=None, sort=list(dict.fromkeys(accuracy["doc_set"]))),
        title=alt.Title(title, subtitle="line: 95% Wilson interval · tick: baseline · the "
                                        "table says why a channel is not scored"))


def feature_heatmap(features: pd.DataFrame,
                    title: str = "Accuracy per channel and fixture feature",
                    select: bool = False) -> alt.Chart:
    """features: frames.feature_accuracy(). One cell per channel and document set · feature,
    labelled correct/total. `select`: clicking a cell selects (channel, where) as
    `SELECTION`."""
    if features.empty:
        return _empty(title, "nothing scored")
    data = features.assign(label=[f"{c}/{t}" for c, t in zip(features["correct"],
                                                              features["total"], strict=True)])
    # the layers take their data from alt.layer: a chart given data of its own would keep it
    base = alt.Chart().encode(
        x=alt.X("channel:N", title="channel", axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("where:N", title="document set · feature", sort=None))
    cells = base.mark_rect().encode(
        color=alt.Color("accuracy:Q", title="accuracy", scale=PASS_RATE_SCALE,
                        legend=alt.Legend(format=PERCENT)),
        tooltip=["doc_set", "channel", "feature", "correct", "total",
                 alt.Tooltip("accuracy:Q", format=".1%")])
    if select:
        cells = _picked(cells.mark_rect(cursor="pointer"), "channel", "where")
    labels = base.mark_text(fontSize=10).encode(text=alt.Text("label:N"))
    return alt.layer(cells, labels, data=data).properties(
        title=title, width=alt.Step(110), height=alt.Step(18))


def mismatch_bars(by_sheet: pd.DataFrame, title: str = "Mismatching cells per sheet",
                  select: bool = False) -> alt.Chart:
    """by_sheet: frames.mismatches_by_sheet(). Bars of mismatches per sheet, by channel.
    `select`: clicking a bar segment selects (channel, where) as `SELECTION`."""
    if by_sheet.empty:
        return _empty(title)
    data = by_sheet.assign(where=by_sheet["doc_set"] + " · " + by_sheet["sheet"])
    chart = alt.Chart(data, title=title).mark_bar(
        cursor="pointer" if select else "default").encode(
        y=alt.Y("where:N", title="document set · sheet", sort="-x"),
        x=alt.X("mismatches:Q", title="mismatching cells", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("channel:N", title="channel"),
        tooltip=["doc_set", "sheet", "channel", "mismatches"],
    ).properties(width=420)
    return _picked(chart, "channel", "where") if select else chart


# --- rendering ---------------------------------------------------------------------------------


def offline_bundle(spec: dict[str, Any]) -> dict[str, Any]:
    """A display bundle: the chart as HTML (static SVG swapped for a live view, see embed.py)."""
    return {"text/html": embed.chart_html(spec), "text/plain": "<Altair chart>"}


def svg(spec: dict[str, Any]) -> str:
    """The chart's static SVG, as a reader with scripts off sees it."""
    return embed.static_svg(spec)


def enable_offline() -> None:
    """Make Altair display charts as live HTML with a static fallback (see module docstring)."""
    alt.renderers.register("ragspine_offline", offline_bundle)
    alt.renderers.enable("ragspine_offline")

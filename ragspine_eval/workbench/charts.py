"""Altair charts built from the frames module's DataFrames.

Every chart has a title and axis labels, shows pass rates as percentages, and colours pass
rate on one fixed scale (0% red to 100% green) so two reports read alike. `enable_offline()`
registers a renderer that emits both the Vega-Lite spec (interactive in JupyterLab) and an
inline SVG drawn by vl-convert inside the kernel (what nbconvert puts in the HTML report), so a
rendered report loads nothing from the network.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

PASS_RATE_SCALE = alt.Scale(domain=[0, 1], range=["#d73027", "#fee08b", "#1a9850"])
PERCENT = ".0%"
_TAG_ORDER = {"topic": 0, "scope": 1, "qtype": 2}


def _empty(title: str, note: str = "nothing to show: no failure") -> alt.Chart:
    """A titled placeholder the size of a small chart, so a clean run still reads as a chart."""
    return alt.Chart(pd.DataFrame({"note": [note]}), title=title).mark_text(
        size=14, color="#1a9850").encode(text="note:N").properties(width=300, height=80)


def pass_rate_heatmap(rates: pd.DataFrame, title: str = "Pass rate per gate by tag value"
                      ) -> alt.Chart:
    """rates: frames.tag_rates(). One cell per gate and tag=value, coloured by pass rate and
    labelled with it; a cell holding cases that passed at baseline time and fail now is framed
    in black and labelled "▼n", so a drop shows where it sits."""
    if rates.empty:
        return _empty(title)
    buckets = rates.drop_duplicates("bucket").sort_values(
        ["tag", "value"], key=lambda col: col.map(_TAG_ORDER) if col.name == "tag" else col)
    regressed = rates["regressed"] if "regressed" in rates else pd.Series(0, index=rates.index)
    data = rates.assign(label=[f"{r:.0%}" + (f" ▼{n}" if n else "")
                               for r, n in zip(rates["pass_rate"], regressed, strict=True)],
                        dropped=regressed > 0)
    base = alt.Chart().encode(
        x=alt.X("gate:N", title="gate", sort=list(dict.fromkeys(rates["gate"])),
                axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("bucket:N", title="tag value", sort=buckets["bucket"].tolist()),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("pass_rate:Q", title="pass rate", scale=PASS_RATE_SCALE,
                        legend=alt.Legend(format=PERCENT)),
        tooltip=["gate", "tag", "value", "passed", "total",
                 alt.Tooltip("pass_rate:Q", format=".1%", title="pass rate"),
                 alt.Tooltip("ci_lo:Q", format=".1%", title="95% CI low"),
                 alt.Tooltip("ci_hi:Q", format=".1%", title="95% CI high"),
                 *([alt.Tooltip("regressed:Q", title="regressed since baseline")]
                   if "regressed" in rates else [])],
    )
    outlines = base.transform_filter(alt.datum.dropped).mark_rect(
        filled=False, stroke="black", strokeWidth=2.5)
    labels = base.mark_text(fontSize=10).encode(text="label:N")
    compared = "baseline_rate" in rates and rates["baseline_rate"].notna().any()
    subtitle = ("no baseline to compare with" if not compared else
                "▼n, framed: n cases that passed at baseline time fail now" if regressed.any()
                else "no case fails that passed at baseline time")
    return alt.layer(cells, outlines, labels, data=data).properties(
        title=alt.Title(title, subtitle=subtitle), width=alt.Step(70), height=alt.Step(18))


def failure_bars(failures: pd.DataFrame, by: str = "qtype",
                 title: str = "Failures per gate and question type") -> alt.Chart:
    """failures: frames.failures_by(report, by). Stacked bars of failure counts."""
    if failures.empty:
        return _empty(title)
    return alt.Chart(failures, title=title).mark_bar().encode(
        x=alt.X(f"{by}:N", title=by, sort="-y", axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("failures:Q", title="failing cases", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("gate:N", title="gate"),
        tooltip=["gate", by, "failures"],
    ).properties(width=420, height=220)


def gate_bars(head: pd.DataFrame, title: str = "Pass rate per gate vs baseline") -> alt.Chart:
    """head: frames.headline(). One bar per rate gate, its 95% interval as a line through the
    bar's end, and a black tick at the baseline."""
    data = head[head["measure"] == "pass rate"]
    if data.empty:
        return _empty(title)
    bars = alt.Chart(data).mark_bar().encode(
        y=alt.Y("gate:N", title="gate", sort=None),
        x=alt.X("current:Q", title="pass rate", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format=PERCENT)),
        color=alt.Color("current:Q", scale=PASS_RATE_SCALE, legend=None),
        tooltip=["gate", alt.Tooltip("current:Q", format=".1%", title="pass rate"),
                 alt.Tooltip("ci_lo:Q", format=".1%", title="95% CI low"),
                 alt.Tooltip("ci_hi:Q", format=".1%", title="95% CI high"),
                 alt.Tooltip("baseline:Q", format=".1%"), "passed/total", "status"],
    )
    # the 95% Wilson interval: it informs, the verdict stays the baseline's exact comparison
    errors = alt.Chart(data).mark_rule(color="#333333", strokeWidth=1.5).encode(
        y=alt.Y("gate:N", sort=None), x="ci_lo:Q", x2="ci_hi:Q")
    ticks = alt.Chart(data.dropna(subset=["baseline"])).mark_tick(
        color="black", thickness=2, size=18).encode(y=alt.Y("gate:N", sort=None),
                                                    x="baseline:Q")
    # a regressed gate can still be a long green bar: say so beside it
    verdicts = alt.Chart(data[data["status"] == "regression"]).mark_text(
        align="left", dx=6, color="#b2182b", fontWeight="bold").encode(
        y=alt.Y("gate:N", sort=None), x=alt.value(420), text=alt.value("▼ regression"))
    return (bars + errors + ticks + verdicts).properties(
        title=alt.Title(title, subtitle="line: 95% Wilson interval · tick: baseline"), width=420)


def tag_intervals(rates: pd.DataFrame,
                  title: str = "Pass rate by tag value, with 95% Wilson intervals") -> alt.Chart:
    """rates: frames.tag_rates(). One panel per gate: a dot per tag value, its interval as a line.

    On a golden set this small one case moves a bucket by many points; the lines show which
    differences are more than noise.
    """
    if rates.empty:
        return _empty(title)
    order = rates.drop_duplicates("bucket").sort_values(
        ["tag", "value"], key=lambda col: col.map(_TAG_ORDER) if col.name == "tag" else col)
    y = alt.Y("bucket:N", title="tag value", sort=order["bucket"].tolist())
    x_scale = alt.Scale(domain=[0, 1])
    rules = alt.Chart().mark_rule(color="#777777").encode(
        y=y, x=alt.X("ci_lo:Q", title="pass rate", scale=x_scale, axis=alt.Axis(format=PERCENT)),
        x2="ci_hi:Q")
    dots = alt.Chart().mark_point(filled=True, size=45).encode(
        y=y, x=alt.X("pass_rate:Q", scale=x_scale),
        color=alt.Color("pass_rate:Q", scale=PASS_RATE_SCALE, legend=None),
        tooltip=["gate", "bucket", "passed", "total",
                 alt.Tooltip("pass_rate:Q", format=".1%", title="pass rate"),
                 alt.Tooltip("ci_lo:Q", format=".1%", title="95% CI low"),
                 alt.Tooltip("ci_hi:Q", format=".1%", title="95% CI high")])
    return alt.layer(rules, dots, data=rates).properties(width=150, height=alt.Step(14)).facet(
        facet=alt.Facet("gate:N", title=None, sort=list(dict.fromkeys(rates["gate"]))),
        columns=4, title=title)


def channel_bars(accuracy: pd.DataFrame,
                 title: str = "Extraction accuracy per channel and document set") -> alt.Chart:
    """accuracy: frames.channel_accuracy(). A panel per document set: a bar per scored channel
    (coverage included) on the fixed scale, its 95% interval as a line, the baseline as a tick;
    a channel the extractor cannot do for the set reads "not scored" instead of an empty row."""
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
                    title: str = "Accuracy per channel and fixture feature") -> alt.Chart:
    """features: frames.feature_accuracy(). One cell per channel and document set · feature,
    labelled correct/total."""
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
    labels = base.mark_text(fontSize=10).encode(text=alt.Text("label:N"))
    return alt.layer(cells, labels, data=data).properties(
        title=title, width=alt.Step(110), height=alt.Step(18))


def mismatch_bars(by_sheet: pd.DataFrame, title: str = "Mismatching cells per sheet") -> alt.Chart:
    """by_sheet: frames.mismatches_by_sheet(). Bars of mismatches per sheet, by channel."""
    if by_sheet.empty:
        return _empty(title)
    data = by_sheet.assign(where=by_sheet["doc_set"] + " · " + by_sheet["sheet"])
    return alt.Chart(data, title=title).mark_bar().encode(
        y=alt.Y("where:N", title="document set · sheet", sort="-x"),
        x=alt.X("mismatches:Q", title="mismatching cells", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("channel:N", title="channel"),
        tooltip=["doc_set", "sheet", "channel", "mismatches"],
    ).properties(width=420)


# --- rendering ---------------------------------------------------------------------------------


def offline_bundle(spec: dict[str, Any]) -> dict[str, Any]:
    """A display bundle with the interactive spec and an inline SVG, and no HTML that loads JS."""
    import vl_convert as vlc

    svg = vlc.vegalite_to_svg(spec)
    major = alt.SCHEMA_VERSION.split(".")[0]
    return {f"application/vnd.vegalite.{major}+json": spec, "image/svg+xml": svg,
            "text/plain": "<Altair chart>"}


def enable_offline() -> None:
    """Make Altair display charts as spec + inline SVG (see module docstring)."""
    alt.renderers.register("ragspine_offline", offline_bundle)
    alt.renderers.enable("ragspine_offline")

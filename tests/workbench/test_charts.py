"""Charts are readable (titles, axis labels, percentages, one fixed pass-rate scale) and render
offline to an SVG that carries their marks."""

from __future__ import annotations

import altair as alt
from builders import frames_report as report

from ragspine_eval.qa.report import make_baseline_entry
from ragspine_eval.workbench import charts, frames


def spec(chart: alt.TopLevelMixin) -> dict:
    return chart.to_dict()


def encodings(s: dict) -> list[dict]:
    layers = s.get("layer", [s])
    return [layer.get("encoding", {}) for layer in layers] + [s.get("encoding", {})]


def test_heatmap_has_titles_percent_labels_and_the_fixed_scale():
    s = spec(charts.pass_rate_heatmap(frames.tag_rates(report(num2_right=False))))
    assert s["title"] == {"text": "Pass rate per gate by tag value",
                          "subtitle": "no baseline to compare with"}
    enc = [e for e in encodings(s) if e]
    color = next(e["color"] for e in enc if "color" in e)
    assert color["scale"]["domain"] == [0, 1] and color["legend"]["format"] == ".0%"
    x = next(e["x"] for e in enc if "x" in e)
    y = next(e["y"] for e in enc if "y" in e)
    assert (x["title"], y["title"]) == ("gate", "tag value")
    svg = charts.offline_bundle(s)["image/svg+xml"]
    assert ">50%<" in svg and "▼" not in svg  # numeric_accuracy over all: 1 of 2


def test_heatmap_frames_and_marks_the_cells_where_a_drop_sits():
    rates = frames.tag_rates(report(num2_right=False), make_baseline_entry(report()))
    s = spec(charts.pass_rate_heatmap(rates))
    assert s["title"]["subtitle"] == "▼n, framed: n cases that passed at baseline time fail now"
    svg = charts.offline_bundle(s)["image/svg+xml"]
    assert ">0% ▼1<" in svg  # numeric_accuracy at qtype=relative_period (and scope=ACME_CN)


def test_heatmap_rows_are_grouped_topic_scope_qtype():
    s = spec(charts.pass_rate_heatmap(frames.tag_rates(report())))
    order = next(e["y"]["sort"] for e in encodings(s) if "y" in e)
    kinds = [b.split("=")[0] for b in order]
    assert kinds == sorted(kinds, key=["topic", "scope", "qtype"].index)


def test_failure_bars_count_failures_per_qtype_coloured_by_gate():
    s = spec(charts.failure_bars(frames.failures_by(report(num2_right=False), "qtype")))
    assert s["title"] == "Failures per gate and question type"
    assert (s["encoding"]["x"]["title"], s["encoding"]["y"]["title"]) == ("qtype", "failing cases")
    assert s["encoding"]["color"]["field"] == "gate"


def test_gate_bars_plot_rates_as_percent_on_the_fixed_scale():
    head = frames.headline(report(), None)
    s = spec(charts.gate_bars(head))
    assert s["title"]["text"] == "Pass rate per gate vs baseline"
    bars = s["layer"][0]["encoding"]
    assert bars["x"]["axis"]["format"] == ".0%" and bars["x"]["scale"]["domain"] == [0, 1]
    assert bars["color"]["scale"]["domain"] == [0, 1]
    assert "regression" not in charts.offline_bundle(s)["image/svg+xml"]


def test_a_regressed_gate_is_marked_beside_its_bar_however_high_its_rate():
    head = frames.headline(report(num2_right=False), make_baseline_entry(report()))
    svg = charts.offline_bundle(spec(charts.gate_bars(head)))["image/svg+xml"]
    assert svg.count("▼ regression") == 1  # numeric_accuracy only


def test_an_empty_frame_gives_a_titled_placeholder_not_an_error():
    s = spec(charts.failure_bars(frames.failures_by(report(), "qtype")))
    assert s["title"] == "Failures per gate and question type" and s["mark"]["type"] == "text"


def test_offline_bundle_carries_the_spec_and_an_svg_with_marks():
    chart = charts.pass_rate_heatmap(frames.tag_rates(report()))
    bundle = charts.offline_bundle(chart.to_dict())
    assert any(k.startswith("application/vnd.vegalite") for k in bundle)
    svg = bundle["image/svg+xml"]
    assert svg.lstrip().startswith("<svg") and "mark-rect" in svg and "<path" in svg


def test_gate_bars_draw_each_gates_interval():
    s = spec(charts.gate_bars(frames.headline(report(num2_right=False), None)))
    rule = next(layer for layer in s["layer"] if layer["mark"]["type"] == "rule")
    assert (rule["encoding"]["x"]["field"], rule["encoding"]["x2"]["field"]) == ("ci_lo", "ci_hi")
    assert "95% Wilson interval" in s["title"]["subtitle"]


def test_tag_intervals_facet_per_gate_with_a_line_per_bucket():
    s = spec(charts.tag_intervals(frames.tag_rates(report())))
    assert s["facet"]["field"] == "gate" and "Wilson" in s["title"]
    marks = [layer["mark"]["type"] for layer in s["spec"]["layer"]]
    assert marks == ["rule", "point"]
    assert s["spec"]["layer"][0]["encoding"]["x"]["axis"]["format"] == ".0%"

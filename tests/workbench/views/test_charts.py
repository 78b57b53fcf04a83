"""Charts are readable (titles, axis labels, percentages, one fixed pass-rate scale) and render
offline to an SVG that carries their marks."""

from __future__ import annotations

import re

import altair as alt
from builders import frames_report as report

from ragspine_eval.qa.baseline_entry import make_baseline_entry
from ragspine_eval.workbench.views import charts, frames


def spec(chart: alt.TopLevelMixin) -> dict:
    return chart.to_dict()


def encodings(s: dict) -> list[dict]:
    layers = s.get("layer", [s])
    return [layer.get("encoding", {}) for layer in layers] + [s.get("encoding", {})]


def test_heatmap_has_titles_percent_labels_and_the_fixed_scale():
    s = spec(charts.pass_rate_heatmap(frames.tag_rates(report(num2_right=False))))
    assert s["title"]["text"] == "Pass rate per gate by tag value"
    assert s["title"]["subtitle"][0] == "no baseline to compare with"
    enc = [e for e in encodings(s) if e]
    color = next(e["color"] for e in enc if "color" in e)
    assert color["scale"]["domain"] == [0, 1] and color["legend"]["format"] == ".0%"
    x = next(e["x"] for e in enc if "x" in e)
    y = next(e["y"] for e in enc if "y" in e)
    assert (x["title"], y["title"]) == ("gate", "tag value")
    svg = charts.svg(s)
    assert ">1/2<" in svg and "▼" not in svg  # numeric_accuracy over all: 1 of 2, n in the cell


def test_heatmap_frames_and_marks_the_cells_where_a_drop_sits():
    rates = frames.tag_rates(report(num2_right=False), make_baseline_entry(report()))
    s = spec(charts.pass_rate_heatmap(rates))
    assert s["title"]["subtitle"][0] == "▼n, framed: n cases that passed at baseline time fail now"
    svg = charts.svg(s)
    assert ">0/1 ▼1<" in svg  # numeric_accuracy at qtype=relative_period (and scope=ACME_CN)


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


def test_gate_bars_zoom_the_rate_axis_to_the_data_and_colour_by_status():
    head = frames.headline(report(num2_right=False), make_baseline_entry(report()))
    s = spec(charts.gate_bars(head))
    assert s["title"]["text"] == "Pass rate per gate vs baseline"
    bars = s["layer"][0]["encoding"]
    low = head.loc[head["measure"] == "pass rate", ["current", "baseline", "ci_lo"]].min().min()
    domain = bars["x"]["scale"]["domain"]
    assert bars["x"]["axis"]["format"] == ".0%" and domain[1] == 1 and 0 <= domain[0] <= low
    # the regressed gate (numeric_accuracy, 100% -> 50%) is drawn in the failing colour
    assert bars["color"]["field"] == "status"
    assert dict(zip(*bars["color"]["scale"].values(), strict=True))["regression"] == "#d73027"
    svg = charts.svg(s)
    assert 'fill="#d73027"' in svg.replace("rgb(215, 48, 39)", "#d73027")


def test_gate_bars_zoom_in_when_every_rate_is_high():
    head = frames.headline(report(), make_baseline_entry(report()))
    domain = spec(charts.gate_bars(head))["layer"][0]["encoding"]["x"]["scale"]["domain"]
    assert domain[0] >= 0  # 88% and 98% must not look alike on a 0-100% axis
    rates = head[head["measure"] == "pass rate"]
    assert domain[0] <= rates["ci_lo"].min()


def test_fabrication_reads_as_fabricated_of_total_never_as_a_pass_rate():
    head = frames.headline(report())
    s = spec(charts.gate_bars(head))
    assert "fabrication (lower is better): 0 of 1 fabricated, 95% CI 0%–79%" in s["title"]["subtitle"]
    heat = charts.svg(spec(charts.pass_rate_heatmap(frames.tag_rates(report()))))
    assert ">0 of 1<" in heat  # the fabrication cells: how many fabricated, of how many


def test_a_regressed_gate_is_marked_beside_its_bar_however_high_its_rate():
    head = frames.headline(report(num2_right=False), make_baseline_entry(report()))
    svg = charts.svg(spec(charts.gate_bars(head)))
    assert svg.count("▼ regression") == 1  # numeric_accuracy only


def test_an_empty_frame_gives_a_titled_placeholder_not_an_error():
    s = spec(charts.failure_bars(frames.failures_by(report(), "qtype")))
    assert s["title"] == "Failures per gate and question type" and s["mark"]["type"] == "text"


def test_offline_bundle_is_html_with_the_static_svg_and_a_live_view_script():
    chart = charts.pass_rate_heatmap(frames.tag_rates(report()))
    bundle = charts.offline_bundle(chart.to_dict())
    assert set(bundle) == {"text/html", "text/plain"}  # no v6 mime type JupyterLab cannot show
    html = bundle["text/html"]
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert "mark-rect" in svg and "<path" in svg  # what shows with scripts off
    assert "window.vegaEmbed(" in html and '"$schema"' in html  # the live view
    # the only address is the spec's $schema, a name vega-embed reads and never fetches
    addresses = set(re.findall(r"https?://[^\s\"'<>)]+", html)) - {chart.to_dict()["$schema"]}
    assert {a for a in addresses if not a.startswith("http://www.w3.org/")} == set()


def test_gate_bars_draw_each_gates_interval():
    s = spec(charts.gate_bars(frames.headline(report(num2_right=False), None)))
    rule = next(layer for layer in s["layer"] if layer["mark"]["type"] == "rule")
    assert (rule["encoding"]["x"]["field"], rule["encoding"]["x2"]["field"]) == ("ci_lo", "ci_hi")
    assert "95% Wilson interval" in s["title"]["subtitle"][0]


def test_tag_intervals_facet_per_gate_with_a_line_per_bucket():
    s = spec(charts.tag_intervals(frames.tag_rates(report())))
    assert s["facet"]["field"] == "gate" and "Wilson" in s["title"]
    assert s["columns"] == 3  # six rate gates: two full rows, no empty panel
    marks = [layer["mark"]["type"] for layer in s["spec"]["layer"]]
    assert marks == ["rule", "point"]
    assert s["spec"]["layer"][0]["encoding"]["x"]["axis"]["format"] == ".0%"

"""Tables escape what engines and golden cases write, and format rates as percentages."""

from __future__ import annotations

import pandas as pd

from ragspine_eval import tables

EVIL = "<script>alert('x')</script>"


def test_static_escapes_cell_text():
    html = tables.static(pd.DataFrame({"answer": [EVIL]})).to_html()
    assert EVIL not in html and "&lt;script&gt;" in html


def test_static_formats_rates_and_counts_row_by_row():
    frame = pd.DataFrame({"gate": ["numeric_accuracy", "fabrication"], "current": [0.974, 1.0],
                          "delta": [-0.026, 1.0]})
    html = tables.static(frame, percent=["current"], signed=["delta"],
                         percent_rows=frame["gate"] != "fabrication").to_html()
    assert "97.4%" in html and "-2.6%" in html
    assert ">1<" in html.replace(" ", "") and "+1" in html and "100.0%" not in html


def test_static_marks_regression_rows_and_blanks_missing_values():
    frame = pd.DataFrame({"status": ["regression", "pass"], "baseline": [0.5, None]})
    html = tables.static(frame, percent=["baseline"], highlight="status").to_html()
    assert html.count("font-weight: bold") == 1 and "–" in html


def test_interactive_table_escapes_cell_text():
    html = tables.interactive(pd.DataFrame({"answer": [EVIL, "plain answer"]})).data
    assert "plain answer" in html
    assert EVIL not in html and "&lt;script&gt;" in html

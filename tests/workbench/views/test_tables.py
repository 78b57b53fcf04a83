"""Tables escape what engines and golden cases write, and format rates as percentages."""

from __future__ import annotations

import pandas as pd

from ragspine_eval.workbench.views import tables

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
    bold = [rule.split("{")[0] for rule in html.split("</style>")[0].split("}")
            if "font-weight: bold" in rule]
    assert bold and all("_row0_" in sel and "_row1_" not in sel for sel in bold)  # one row
    assert "–" in html


def test_interactive_table_escapes_cell_text():
    html = tables.interactive(pd.DataFrame({"answer": [EVIL, "plain answer"]})).data
    assert "plain answer" in html
    assert EVIL not in html and "&lt;script&gt;" in html


def test_a_long_table_embeds_its_first_rows_under_a_note_that_says_where_the_rest_are():
    frame = pd.DataFrame({"id": [f"case-{i:05d}" for i in range(tables.MAX_EMBEDDED_ROWS + 500)],
                          "gate": "faithfulness"})
    html = tables.interactive(frame, rest='frames.failure_table(run.report, gate="faithfulness")').data
    last_shown, first_left_out = tables.MAX_EMBEDDED_ROWS - 1, tables.MAX_EMBEDDED_ROWS
    assert f"case-{last_shown:05d}" in html and f"case-{first_left_out:05d}" not in html
    assert f"Showing the first {tables.MAX_EMBEDDED_ROWS:,} of {len(frame):,} rows" in html
    assert "frames.failure_table(run.report, gate=&quot;faithfulness&quot;)" in html


def test_an_empty_table_says_so_in_a_sentence_when_given_one():
    html = tables.interactive(pd.DataFrame({"id": []}), empty="No case <differs>.").data
    assert html == '<p class="ragspine-eval-note">No case &lt;differs&gt;.</p>'
    assert "<table" in tables.interactive(pd.DataFrame({"id": []})).data


def test_a_table_within_the_cap_embeds_every_row_and_no_note():
    frame = pd.DataFrame({"id": [f"case-{i}" for i in range(30)]})
    html = tables.interactive(frame, max_rows=30).data
    assert "case-29" in html and "Showing the first" not in html


def test_the_failure_drill_down_of_a_large_run_is_bounded_and_its_json_report_is_not():
    from conftest import make_case, right_numeric_outcome

    from ragspine_eval.qa.evaluation import evaluate
    from ragspine_eval.workbench.views import frames

    n = tables.MAX_EMBEDDED_ROWS + 100
    cases = [make_case(f"num-{i:05d}") for i in range(n)]
    wrong = right_numeric_outcome(found_value=1.0)  # right source, wrong value: one failure each
    report = evaluate(cases, [wrong] * n, "tool", reference_texts={})
    html = tables.interactive(frames.failure_table(report), rest="frames.failure_table(run.report)")
    assert f"Showing the first {tables.MAX_EMBEDDED_ROWS:,} of {n:,} rows" in html.data
    assert len(report.to_dict()["metrics"]["numeric_accuracy"]["failures"]) == n


def test_text_columns_read_left_aligned_and_numbers_stay_right():
    import re

    import pandas as pd

    from ragspine_eval.workbench.views import tables

    frame = pd.DataFrame({"id": ["num-001"], "question": ["香港FY2024的REVENUE是多少"],
                          "rate": [0.5], "passed": [True]})
    html = tables.static(frame, percent=["rate"]).to_html()
    css = html.split("</style>")[0]
    left_cells = set(re.findall(r"_row0_(col\d)", css))
    assert left_cells == {"col0", "col1"}  # id and question; not rate, not the bool
    assert "th.col_heading.col0" in css and "th.col_heading.col2" not in css

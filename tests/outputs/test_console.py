"""What the CLI prints: the gate table (every gate with its rate, 95% interval, counts and
baseline) and the progress line a terminal shows."""

from __future__ import annotations

from builders import sample_report
from hypothesis import given
from hypothesis import strategies as st

from ragspine_eval.outputs.console import progress_line
from ragspine_eval.outputs.qa_files import gate_table
from ragspine_eval.stats import format_interval, wilson_interval


def test_gate_table_shows_each_gates_wilson_interval():
    report = sample_report()
    lines = gate_table(report, {"metrics": {"numeric_accuracy": 0.5}, "fabrication_count": 1})
    assert "95% CI" in lines[1]
    numeric = next(l for l in lines if l.startswith("numeric_accuracy"))
    assert f"0.5000 {format_interval(wilson_interval(1, 2))}    1/2" in numeric
    assert numeric.rstrip().endswith("num-002")
    fab = next(l for l in lines if l.startswith("fabrication"))  # one refusal case, fabricated
    assert f"fabrication (lower is better)    1.0000 {format_interval(wilson_interval(1, 1))}" \
           "    0/1      count 1  ref-1" in fab
    assert fab.rstrip().endswith("ref-1")
    assert lines[lines.index(fab) + 1] == report.fabrication_sentence()
    untouched = next(l for l in lines if l.startswith("faithfulness"))
    assert "[0.00, 1.00]" in untouched and "0/0" in untouched


def test_progress_line_shows_the_bar_the_count_and_errors():
    assert progress_line("qa agent@http", 10, 40, 0, width=8) == "qa agent@http [##------] 10/40"
    assert progress_line("qa tool", 40, 40, 3, width=8) == "qa tool [########] 40/40 · 3 errors"


@given(total=st.integers(1, 10_000), data=st.data())
def test_progress_bar_keeps_its_width_and_fills_monotonically(total, data):
    done = data.draw(st.integers(0, total))
    bar = progress_line("x", done, total, width=20).split("[")[1].split("]")[0]
    later = progress_line("x", min(total, done + 1), total, width=20).split("[")[1].split("]")[0]
    assert len(bar) == 20 and bar.count("#") <= later.count("#")
    assert (bar.count("#") == 20) == (done == total)

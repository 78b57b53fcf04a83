"""The CLI's gate table: every gate with its rate, 95% interval, counts and baseline."""

from __future__ import annotations

from test_qa_eval import sample_report

from ragspine_eval.console import gate_table
from ragspine_eval.stats import format_interval, wilson_interval


def test_gate_table_shows_each_gates_wilson_interval():
    report = sample_report()
    lines = gate_table(report, {"metrics": {"numeric_accuracy": 0.5}, "fabrication_count": 1})
    assert "95% CI" in lines[1]
    numeric = next(l for l in lines if l.startswith("numeric_accuracy"))
    assert f"0.5000 {format_interval(wilson_interval(1, 2))}    1/2" in numeric
    assert numeric.rstrip().endswith("num-002")
    fab = next(l for l in lines if l.startswith("fabrication"))
    assert format_interval(wilson_interval(0, 1)) in fab and "0/1" in fab
    untouched = next(l for l in lines if l.startswith("faithfulness"))
    assert "[0.00, 1.00]" in untouched and "0/0" in untouched

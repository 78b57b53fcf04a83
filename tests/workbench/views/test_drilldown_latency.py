"""The QA report's banner (console, Markdown and HTML alike) states the latency per case."""

from __future__ import annotations

from ragspine_eval.qa.run import run_qa_eval
from ragspine_eval.workbench.views.drilldown import verdict_html


def test_the_banner_and_the_provenance_lines_give_p50_p95_and_max(tiny_golden):
    report = run_qa_eval(tiny_golden, "tool", cache=False)
    run = report.provenance.times.latency["run"]
    assert run["n"] == report.n_cases and 0 < run["p50"] <= run["p95"] <= run["max"]
    assert any(line.startswith("latency per case: p50 ") for line in report.provenance.lines())
    assert f"latency per case p50 {run['p50'] * 1000:.1f} ms" in verdict_html(
        report, None, None, "tool")
    again = run_qa_eval(tiny_golden, "tool")  # warm: every answer reused, nothing timed
    again = run_qa_eval(tiny_golden, "tool")
    assert again.provenance.times.latency["run"]["n"] == 0
    assert "latency per case" not in verdict_html(again, None, None, "tool")

"""The verdict banner, the failure explorer's HTML and the report as readers see it, computed
without a kernel or a browser (the browser tests click the same HTML)."""

from __future__ import annotations

import json
import re
from html import unescape

import nbformat
from builders import frames_report as report

from ragspine_eval.qa.baseline_entry import compare_to_baseline, make_baseline_entry
from ragspine_eval.workbench.views import case_view, drilldown
from ragspine_eval.workbench.rendering.notebooks import PAPERMILL_ERROR_TAG, for_readers


def regressed():
    """numeric_accuracy 100% -> 50%: num-002 passed at baseline and fails now."""
    stored = make_baseline_entry(report())
    current = report(num2_right=False)
    return current, stored, compare_to_baseline(current, stored)


def test_a_failing_run_opens_with_fail_each_regressed_gate_and_its_flipped_cases():
    current, stored, cmp = regressed()
    html = drilldown.verdict_html(current, stored, cmp, "tool")
    text = unescape(re.sub(r"<[^>]+>", " ", html.split("</style>")[-1]))
    assert re.search(r"FAIL\s+tool mode · engine ragspine · 3 cases", text)
    assert "numeric_accuracy : 100.0% → 50.0%" in " ".join(text.split())
    assert "1 case flipped (passed at baseline, fail now)" in text
    link = re.search(r"class=\"rse-show-cases\" data-gate=\"numeric_accuracy\" data-ids='([^']*)'",
                     html)
    assert json.loads(unescape(link.group(1))) == ["num-002"]


def test_a_passing_run_and_a_run_without_baseline_say_so_first():
    stored = make_baseline_entry(report())
    passing = drilldown.verdict_html(report(), stored, compare_to_baseline(report(), stored), "tool")
    assert "<h2>PASS</h2>" in passing and "No gate regressed" in passing
    assert 'class="rse-verdict rse-verdict-fail"' not in passing
    assert "<h2>NO BASELINE</h2>" in drilldown.verdict_html(report(), None, None, "tool")


def rows(html: str) -> list[dict]:
    return [{"id": unescape(i), "gate": g, "buckets": json.loads(unescape(b)), "regressed": bool(r),
             "stage": s}
            for r, i, g, b, s in re.findall(
                r'<tr class="rse-row( rse-regressed)?" data-id="([^"]*)" data-gate="([^"]*)" '
                r"data-buckets='([^']*)' data-stage=\"([^\"]*)\">", html)]


def test_the_table_holds_every_failing_verdict_regressions_first_with_its_buckets():
    current, stored, _ = regressed()
    html = drilldown.explorer_html(current, stored)
    table = rows(html)
    failing = {(r.id, g) for g, m in current.gates().items() for r in m.failures}
    assert {(r["id"], r["gate"]) for r in table} == failing
    assert table[0] == {"id": "num-002", "gate": "numeric_accuracy", "regressed": True,
                        "buckets": [f"{k}={v}" for k, v in current.cases[1].tags.items()],
                        "stage": "answer"}
    assert [r["regressed"] for r in table] == sorted((r["regressed"] for r in table), reverse=True)
    # a hidden case view for each failing case, opened by its row
    slots = re.findall(r'<div class="rse-case-slot" data-case="([^"]*)" hidden>', html)
    assert sorted(slots) == sorted({i for i, _ in failing})


def test_the_explorer_embeds_clickable_charts_and_a_clean_run_says_there_is_nothing_to_explore():
    current, stored, _ = regressed()
    html = drilldown.explorer_html(current, stored)
    # the heatmap, the failure bars and the stage bars, each with its click selection
    assert html.count('class="rse-chart"') == 3 and html.count('"name": "pick"') == 3
    clean = drilldown.explorer_html(report(), make_baseline_entry(report()))
    assert rows(clean) == [] and "No failing verdict: every gate passed every case." in clean


def test_a_long_run_embeds_the_first_rows_and_says_so():
    current, stored, _ = regressed()
    assert len(rows(drilldown.explorer_html(current, stored))) == 1
    html = drilldown.explorer_html(current, stored, max_rows=0)
    assert rows(html) == [] and "Showing the first 0 of 1 failing verdicts" in html


def test_the_case_view_has_the_agreed_fields_and_escapes_text():
    current, stored, _ = regressed()
    detail = case_view.case_detail(current, "num-002", stored, other=report())
    assert {"id", "question", "reference_date", "case_type", "tags", "expected", "answer",
            "route", "tool_statuses", "sources", "retrieved_context", "error", "mode",
            "verdicts", "other"} <= set(detail)
    numeric = next(v for v in detail["verdicts"] if v["gate"] == "numeric_accuracy")
    assert numeric["passed"] is False and numeric["at_baseline"] == "passed"
    assert detail["other"]["mode"] == "tool" and json.dumps(detail)  # JSON-safe
    html = case_view.case_html({**detail, "answer": "<script>x()</script>"})
    assert "<script>" not in html and "&lt;script&gt;x()&lt;/script&gt;" in html
    assert all(c.startswith("rse-case") for c in re.findall(r'class="([^"]+)"', html))


def failed_notebook(ename: str) -> nbformat.NotebookNode:
    v4 = nbformat.v4
    banner = v4.new_markdown_cell("An Exception was encountered at 'In [3]'.")
    banner.metadata["tags"] = [PAPERMILL_ERROR_TAG]
    first = v4.new_code_cell("run = ...", outputs=[
        v4.new_output("display_data", data={"text/html": '<div class="rse-verdict x">FAIL</div>'}),
        v4.new_output("display_data", data={"text/html": "<table>info</table>"})])
    last = v4.new_code_cell("workbench.assert_gate(...)", outputs=[v4.new_output(
        "error", ename=ename, evalue="tool: the baseline gate failed", traceback=["Traceback…"])])
    return v4.new_notebook(cells=[banner, first, last])


def test_a_failed_gate_reads_as_its_message_under_the_banner_without_papermills_traceback():
    nb = for_readers(failed_notebook("AssertionError"))
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert "rse-verdict" in outputs[0]["data"]["text/html"]  # the banner first
    assert all(c.source != "An Exception was encountered at 'In [3]'." for c in nb.cells)
    assert outputs[-1] == nbformat.v4.new_output("stream", name="stdout",
                                                 text="tool: the baseline gate failed")
    assert not any(o["output_type"] == "error" for o in outputs)


def test_any_other_error_keeps_papermills_banner_and_traceback():
    nb = for_readers(failed_notebook("KeyError"))
    assert any(PAPERMILL_ERROR_TAG in c.metadata.get("tags", []) for c in nb.cells)
    assert nb.cells[-1].outputs[0]["output_type"] == "error"
    original = failed_notebook("AssertionError")
    for_readers(original)
    assert original.cells[-1].outputs[0]["output_type"] == "error"  # the .ipynb is untouched


def test_a_run_with_engine_errors_opens_with_them_not_with_pass():
    from builders import TAGS_CN
    from conftest import make_case, right_numeric_outcome

    from ragspine_eval.engines.base import CaseOutcome
    from ragspine_eval.qa.evaluation import evaluate
    from ragspine_eval.workbench.views import frames

    stored = make_baseline_entry(report())
    cases = [make_case("num-001"), make_case("num-002", tags=TAGS_CN),
             make_case("ref-001", "refusal", refuse=True)]
    down = CaseOutcome(error="ConnectionError: <staging> down")
    errored = evaluate(cases, [down, right_numeric_outcome(), down], "tool", reference_texts={})
    html = drilldown.verdict_html(errored, stored, compare_to_baseline(errored, stored), "tool")
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html.split("</style>")[-1])).split())
    assert "FAIL: 2 ENGINE ERRORS" in text and "Cases: num-001, ref-001" in text
    assert "On the answered cases: no gate regressed" in text
    assert "<staging>" not in html  # the error text is escaped
    table = frames.engine_errors(errored)
    assert list(table["id"]) == ["num-001", "ref-001"]
    assert table.loc[1, "gates without a verdict"] == (
        "refusal_appropriateness, clarification_appropriateness, fabrication")


KB_THEN = {"fingerprint": "0123abcd00000000", "files": {"facts.csv": "aaaa000000000000"}}
KB_NOW = {"fingerprint": "4567ef0100000000", "files": {"facts.csv": "cccc000000000000"}}


def banner_text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html.split("</style>")[-1])).split())


def test_the_banner_names_drift_under_its_heading_above_the_regressions():
    from ragspine_eval.ratchet import compare

    stored = {**make_baseline_entry(report()), "kb": KB_THEN}
    current = report(num2_right=False)
    cmp = compare({**make_baseline_entry(current), "kb": KB_NOW}, stored)
    text = banner_text(drilldown.verdict_html(current, stored, cmp, "tool"))
    drift = ("knowledge base changed since the baseline was recorded: facts.csv differs "
             "(kb 0123abcd… -> 4567ef01…)")
    assert text.startswith(f"FAIL ⚠ {drift}")
    assert text.index(drift) < text.index("numeric_accuracy : 100.0% → 50.0%")
    passing = compare({**make_baseline_entry(report()), "kb": KB_NOW}, stored)
    assert passing.passed
    assert banner_text(drilldown.verdict_html(report(), stored, passing, "tool")).startswith(
        f"PASS ⚠ {drift}")


def test_a_banner_without_drift_has_no_drift_line():
    stored = {**make_baseline_entry(report()), "kb": KB_THEN}
    cmp = compare_to_baseline(report(), stored)  # a run naming no KB: nothing to compare
    assert cmp.drift == [] and drilldown.drift_html(cmp) == ""
    assert "rse-drift\"" not in drilldown.verdict_html(report(), stored, cmp, "tool")


def test_the_banner_says_which_model_answered_and_nothing_for_the_mock_provider():
    from dataclasses import replace

    from ragspine_eval.provenance import InputRef, RunInputs, collect

    plain = report()
    plain.provenance = collect(RunInputs(harness="qa", mode="tool", golden=InputRef("g", "f")))
    assert 'class="rse-model"' not in drilldown.verdict_html(plain, None, None, "tool")
    model = {"provider": "litellm", "model": "openai/loop-1",
             "calls": {"calls": 128, "input_tokens": 1, "output_tokens": 1, "misses": 2,
                       "failed": 0},
             "cassette": {"path": "c", "mode": "replay", "models": "litellm openai/loop-1",
                          "recorded": "2026-12-06T19:26:14+00:00"}}
    replayed = report()
    replayed.provenance = replace(plain.provenance, model=model)
    html = drilldown.verdict_html(replayed, None, None, "tool")
    said = re.search(r'<div class="rse-model">(.*?)</div>', html).group(1)
    assert unescape(re.sub(r"<[^>]+>", "", said)) == (
        "model litellm openai/loop-1 · 128 calls replayed, recorded 2026-12-06 with litellm "
        "openai/loop-1; 2 misses")
    assert '<b style="color:#b2182b">2 misses</b>' in said


def test_a_widget_reads_as_a_note_and_its_state_never_reaches_the_report():
    v4 = nbformat.v4
    widget = v4.new_output("display_data", data={
        "text/plain": "VBox(children=(...))",
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2}})
    nb = v4.new_notebook(cells=[v4.new_code_cell("labels.widget()", outputs=[widget])])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    shown = for_readers(nb)
    assert "widgets" not in shown.metadata  # with it nbconvert loads a widget manager from a CDN
    [out] = shown.cells[0].outputs
    assert set(out["data"]) == {"text/html"} and "open the notebook in JupyterLab" in \
        out["data"]["text/html"]

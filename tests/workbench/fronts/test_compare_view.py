"""The compare notebook's HTML without a kernel: the banner says the verdict and the moved gates,
the flip table's rows carry what the chart's selection filters on, each flipped case opens with
both runs (before on the left), and the case view's own labels stay as they were."""

from __future__ import annotations

import json

from builders import compare_pair, compare_report

from ragspine_eval.workbench.views import case_view

from ragspine_eval.workbench.fronts import compare_view


def test_a_regression_banner_names_the_case_gate_and_both_rates(tmp_path):
    banner = compare_view.verdict_html(compare_pair(tmp_path, compare_report(), compare_report(wrong="num-002")))
    assert '<div class="rse-verdict rse-verdict-fail">' in banner
    assert "<h2>FAIL: 1 case went from pass to fail</h2>" in banner
    assert "<b>numeric_accuracy</b>: 100.0% → 50.0% (-50.0 points)" in banner
    assert "1 pass → fail (num-002), 0 fail → pass · McNemar exact p = 1" in banner


def test_a_clean_pair_opens_with_pass_and_no_moved_gate(tmp_path):
    data = compare_report()
    banner = compare_view.verdict_html(compare_pair(tmp_path, data, data))
    assert "<h2>PASS: no case went from pass to fail</h2>" in banner
    assert "No gate moved" in banner and "rse-verdict-pass" in banner


def test_different_modes_show_a_warning_under_the_heading(tmp_path):
    banner = compare_view.verdict_html(compare_pair(tmp_path, compare_report(), compare_report(mode="agent")))
    assert banner.index("</h2>") < banner.index('class="rse-drift">⚠ mode differs: tool vs agent')


def test_kept_apart_cases_are_counted_apart_in_the_banner(tmp_path):
    pair = compare_pair(tmp_path, compare_report(), compare_report(edit="num-002"))
    banner = compare_view.verdict_html(pair)
    assert "<h2>PASS" in banner and "1 case(s) kept apart" in banner
    assert "golden case edited between the runs" in compare_view.apart_html(pair)


def test_flip_rows_carry_gate_and_buckets_and_open_a_two_run_case(tmp_path):
    page = compare_view.flips_html(compare_pair(tmp_path, compare_report(), compare_report(wrong="num-002")))
    assert 'data-id="num-002" data-gate="numeric_accuracy"' in page
    buckets = json.dumps(["topic=FIN", "scope=ACME_CN", "qtype=relative_period"])
    assert f"data-buckets='{buckets}'" in page.replace("&quot;", '"')
    assert "<del>1702" in page and "<ins>1872.2</ins>" in page
    slot = page[page.index('class="rse-case-slot" data-case="num-002"'):]
    assert slot.index("Answer (before)") < slot.index("Answer (after)")
    assert '"signal": "pick"' not in page and "pick_store" in page  # the shared controller


def test_a_pair_without_flips_says_so_under_its_chart(tmp_path):
    data = compare_report()
    page = compare_view.flips_html(compare_pair(tmp_path, data, data))
    assert "No flip: every paired case has the same verdict" in page
    assert 'class="rse-chart"' in page


def test_an_answer_with_markup_stays_text(tmp_path):
    after = compare_report(wrong="num-002")
    for case in after["cases"]:
        if case["id"] == "num-002":
            case["answer"] = "<img src=x onerror=alert(1)> 1872.2"
    page = compare_view.flips_html(compare_pair(tmp_path, compare_report(), after))
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_case_view_keeps_mode_labels_unless_told(tmp_path):
    pair = compare_pair(tmp_path, compare_report(), compare_report(mode="agent"))
    plain = case_view.case_html(case_view.case_detail(pair.before, "num-001", other=pair.after))
    assert plain.index("Answer (tool mode)") < plain.index("Answer (agent mode)")
    named = case_view.case_html(case_view.case_detail(
        pair.after, "num-001", other=pair.before, labels=("after", "before"), other_first=True))
    assert named.index("Answer (before)") < named.index("Answer (after)")


def test_engine_errors_in_the_after_run_make_the_banner_fail(tmp_path):
    after = compare_report(error="ref-001")
    banner = compare_view.verdict_html(compare_pair(tmp_path, compare_report(), after))
    assert "<h2>FAIL: 1 engine error in the after run</h2>" in banner
    assert "rse-verdict-fail" in banner

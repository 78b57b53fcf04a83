"""The second opinion block of the qa notebook and its HTML report, on the real engine's agent
run with one narrative answer made to invent a cause (as story 13's engine does)."""

from __future__ import annotations

import copy

import pytest
from browser import offline_page
from builders import real_run

from ragspine_eval.judges import registry as judges
from ragspine_eval.qa.evaluation import evaluate
from ragspine_eval.qa.report import QAEvalReport
from ragspine_eval.workbench.views.case_view import case_detail, case_html
from ragspine_eval.workbench.views.second_opinion import second_opinion_html

INVENTED = "香港 REVENUE 同比走弱，主要原因是 MCV 客群萎缩。\n香港收入同比走弱，主要因为利率<上升>。"


def _report(judge: str = "lexical") -> tuple[QAEvalReport, str]:
    cases, outcomes, refs = real_run("agent")
    outcomes = [copy.deepcopy(o) for o in outcomes]
    victim = next(i for i, c in enumerate(cases) if c.id.startswith("nar-")
                  and any("香港" in p for p in outcomes[i].retrieved_context))
    outcomes[victim].narrative_answer = INVENTED
    return (evaluate(cases, outcomes, "agent", reference_texts=refs, judge=judges.get(judge)),
            cases[victim].id)


@pytest.fixture(scope="module")
def lexical_run():
    return _report()


def test_it_says_what_the_financial_judge_would_change_and_lists_the_claim(lexical_run):
    report, victim = lexical_run
    html = second_opinion_html(report)
    assert "The gate (lexical) passed 1 claim the financial judge rejects" in html
    assert f'data-id="{victim}"' in html and f'data-case="{victim}"' in html
    assert "direction flipped" in html
    assert "利率&lt;上升&gt;" in html and "利率<上升>" not in html  # escaped


def test_the_case_it_opens_is_the_case_view_with_each_claims_rule(lexical_run):
    report, victim = lexical_run
    html = second_opinion_html(report)
    slot = html[html.index(f'data-case="{victim}"'):]
    assert f'data-case-id="{victim}"' in slot  # workbench.case_view's fragment
    assert "Second opinion (financial judge), claim by claim" in slot
    assert slot.count("supported") >= 1 and "direction flipped" in slot


def test_a_run_where_the_judges_agree_says_so_in_one_line():
    cases, outcomes, refs = real_run("agent")
    report = evaluate(cases, outcomes, "agent", reference_texts=refs)
    html = second_opinion_html(report)
    assert "agrees with the gate&#x27;s lexical judge on all" in html
    assert "<table" not in html


def test_a_gate_on_the_financial_judge_shows_the_deciding_rule_in_the_case_view():
    report, victim = _report("financial")
    detail = case_detail(report, victim)
    verdict = next(v for v in detail["verdicts"] if v["gate"] == "faithfulness")
    assert not verdict["passed"]
    rules = [c["rule"] for c in verdict["evidence"]["claims"]]
    assert rules == ["supported", "direction flipped"]
    html = case_html(detail)
    assert "<th>rule</th>" in html and "direction flipped" in html and "<th>detail</th>" in html


def test_a_row_opens_its_case_in_a_real_browser(lexical_run, tmp_path):
    report, victim = lexical_run
    page_file = tmp_path / "second.html"
    page_file.write_text(f"<html><body>{second_opinion_html(report)}</body></html>",
                         encoding="utf-8")
    with offline_page(page_file) as seen:
        page = seen.page
        assert page.locator(f'.rse-second-slot[data-case="{victim}"]').is_hidden()
        page.locator(f'tr.rse-second-row[data-id="{victim}"]').first.click()
        assert page.locator(f'.rse-second-slot[data-case="{victim}"]').is_visible()
        page.screenshot(path=str(tmp_path / "second.png"), full_page=True)
        assert not seen.errors and not seen.network

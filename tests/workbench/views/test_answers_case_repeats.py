"""The answers case view with `--repeat N`: per route every repeat side by side, its verdict,
reason and answer (or engine error), the gates reading the first; one repeat shows none."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval.answers.report import report_of
from ragspine_eval.answers.run import run_answer_eval
from ragspine_eval.workbench.views import answers_case

GOLD = Path(__file__).resolve().parents[2] / "fixtures" / "answers" / "realdocs_answers_v1.json"
QUESTION = "value-hit:en"


@pytest.fixture(scope="module")
def repeated(realdocs_workspace):  # noqa: F811
    run = run_answer_eval(realdocs_workspace.workspace.path, GOLD, routes=("narrative",),
                          repeat=3, allow_gold_errors=True, cache=False)
    # the MockProvider answers the same each time: the second repeat's answer made an error,
    # as a model that timed out once would
    run.results = [replace(r, outcome=replace(r.outcome, error="TimeoutError: 30 s"))
                   if r.id == QUESTION and r.repeat == 1 else r for r in run.results]
    return report_of(run)


@needs_realdocs
def test_each_route_shows_every_repeat_side_by_side(repeated):
    results = [r for r in repeated.run.results if r.id == QUESTION and r.repeat == 0]
    case = next(c for c in repeated.run.cases if c.case_id == QUESTION.split(":")[0])
    html = answers_case.case_html(repeated, results, case)
    assert "<b>narrative</b>, every repeat (3; the gates read the first)" in html
    columns = re.findall(r'<div class="rse-ans-repeat" data-repeat="(\d)"><b>repeat (\d)</b>',
                         html)
    assert columns == [("0", "1"), ("1", "2"), ("2", "3")]
    second = html.split('data-repeat="1">')[1].split('data-repeat="2">')[0]
    assert "engine error:</b> TimeoutError: 30 s" in second and ">ERROR</span>" in second
    assert "<mark>15.34</mark>" in html.split('data-repeat="2">')[1]  # its claim marked


@needs_realdocs
def test_one_repeat_shows_no_repeats(realdocs_workspace):  # noqa: F811
    run = run_answer_eval(realdocs_workspace.workspace.path, GOLD, routes=("narrative",),
                          allow_gold_errors=True)
    report = report_of(run)
    results = [r for r in report.run.results if r.id == QUESTION]
    case = next(c for c in report.run.cases if c.case_id == QUESTION.split(":")[0])
    assert "every repeat" not in answers_case.case_html(report, results, case)

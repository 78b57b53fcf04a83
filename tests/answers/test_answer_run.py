"""The answer run: routes, languages and repeats as asked, in the engine judge's order, and the
repeat statistics (deterministic with the MockProvider: no unstable question)."""

from __future__ import annotations

from pathlib import Path

import pytest
from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval.answers.report import report_of, repeat_stats
from ragspine_eval.answers.run import run_answer_eval

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "answers" / "realdocs_answers_v2.json"


@needs_realdocs
def test_repeats_give_per_question_rates_and_the_gates_use_the_first_run(realdocs_workspace):
    ws = realdocs_workspace.workspace.path
    run = run_answer_eval(ws, GOLD, routes=("narrative",), repeat=3)
    assert [r.repeat for r in run.results] == [0] * 5 + [1] * 5 + [2] * 5
    assert {(r.route, r.case_id, r.language) for r in run.results} == {
        ("narrative", c, lang) for c, lang in [("kerala-normal", "en"), ("kerala-normal", "zh"),
                                               ("odisha-departure", "en"), ("mars", "en"),
                                               ("mars", "zh")]}
    stats = repeat_stats(run.results)
    assert stats["repeats"] == 3 and stats["std"] == 0.0 and stats["unstable"] == []
    assert all(c["total"] == 3 and c["rate"] in (0.0, 1.0) for c in stats["per_case"])
    report = report_of(run)
    assert report.metrics("narrative")["question_pass"]["total"] == 5


@needs_realdocs
def test_only_the_languages_asked_and_a_bad_route_is_refused(realdocs_workspace):
    ws = realdocs_workspace.workspace.path
    run = run_answer_eval(ws, GOLD, routes=("ask",), languages=("zh",))
    assert {r.language for r in run.results} == {"zh"} and {r.route for r in run.results} == {
        "ask"}
    with pytest.raises(ValueError, match="unknown route 'fast'"):
        run_answer_eval(ws, GOLD, routes=("fast",))


def test_unstable_questions_are_named_without_a_majority_vote():
    from types import SimpleNamespace as NS

    def result(i, n, ok):
        return NS(id=i, repeat=n, scored=True, verdict=NS(passed=ok),
                  outcome=NS(route_label="narrative"))

    stats = repeat_stats([result("a", 0, True), result("b", 0, True),
                          result("a", 1, False), result("b", 1, True)])
    assert stats["main_rates"] == [1.0, 0.5] and stats["mean"] == 0.75
    assert stats["std"] == pytest.approx(0.3536, abs=1e-4)
    assert stats["unstable"] == ["a"]


@needs_realdocs
def test_a_batch_question_file_is_scored_on_its_expected_text_alone(realdocs_workspace):
    questions = GOLD.parents[1] / "realdocs_questions" / "questions.jsonl"
    run = run_answer_eval(realdocs_workspace.workspace.path, questions, routes=("narrative",))
    by_id = {r.case_id: r for r in run.results}
    kerala = by_id["kerala-rain"]  # expected "777.5": the Kerala row is in the answer
    assert kerala.verdict.kind == "content" and kerala.verdict.passed
    assert kerala.verdict.reason == "expected text in the answer"
    assert "777.5" in kerala.outcome.answer_plain
    skipped = {s["case_id"]: s["reason"] for s in run.skipped}
    assert "rice-balasore" in skipped and "no expected text" in skipped["rice-balasore"]
    assert "rice-balasore" not in by_id


def test_content_alone_ignores_pages_and_reads_numbers_as_the_retrieval_runs_do():
    from ragspine_eval.answers.verdicts import judge
    from ragspine_eval.golden.nl_answers import AnswerCase

    case = AnswerCase("q", "positive", (("en", "q"),), expected_text="Kerala got 777.5 mm")
    assert judge(case, "rain: 777.5 (Kerala)", []).passed  # every number it states is there
    missed = judge(case, "rain: 777.55", ["a.pdf@page=1"])
    assert (missed.passed, missed.reason) == (False, "expected text missing from answer")

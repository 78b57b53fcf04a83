"""The refusal guard's text shown: where the engine's number guard replaced a model's answer (a
loopback model on 127.0.0.1 that leads with a figure no passage holds), the outcome, the JSON
report and the case view show what the model said and the figure the guard objected to; a
replay of the recording shows the recorded text, with no model at all."""

from __future__ import annotations

import importlib.util
import json

import pytest
from loopback_llm import LoopbackModel
from realdocs_workspace import needs_realdocs, realdocs_workspace  # noqa: F401

from ragspine_eval.answers.report import report_of
from ragspine_eval.answers.run import run_answer_eval
from ragspine_eval.models.options import model_run
from ragspine_eval.paths import GOLDEN_DIR

GOLD = GOLDEN_DIR / "realdocs_answers_gold.json"
pytestmark = pytest.mark.skipif(importlib.util.find_spec("litellm") is None,
                                reason="the models extra (pip install -e '.[models]')")


def ask(workspace, url, cassette, mode):
    model = model_run("litellm", "openai/loopback", url, cassette, mode)
    return run_answer_eval(workspace, GOLD, routes=("narrative",), languages=("en",),
                           model=model, cache=False)


@needs_realdocs
def test_the_models_text_and_the_objected_figure_are_kept_and_a_replay_shows_them(
        realdocs_workspace, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("OPENAI_API_KEY", "sk-guard-test")
    workspace = realdocs_workspace.workspace.path
    server = LoopbackModel(seed=3, invent="12.5%").start()
    cassette, url = tmp_path / "guard.cassette", server.base_url
    try:
        recorded = ask(workspace, url, cassette, "record")
    finally:
        server.stop()
    guarded = [r for r in recorded.results if r.outcome.guard]
    assert guarded, [r.outcome.answer_plain[:80] for r in recorded.results]
    for r in guarded:
        o = r.outcome
        assert o.model_answer.startswith("The answer is 12.5%, up from last year.")
        assert o.guard["objected"] == ["12.5%"] and o.guard["rewritten"] == 1
        assert "12.5%" not in o.answer_plain  # the engine removed it ...
        assert o.answer_plain.startswith("资料中没有直接给出该数值")  # ... behind its notice
    # a question the guard let through keeps nothing of the kind
    assert all(r.outcome.model_answer is None for r in recorded.results if not r.outcome.guard)

    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = ask(workspace, url, cassette, "replay")  # the server is stopped
    assert not [r.outcome.error for r in replayed.results if r.outcome.error]
    assert [(r.id, r.outcome.model_answer, r.outcome.guard) for r in replayed.results] == \
        [(r.id, r.outcome.model_answer, r.outcome.guard) for r in recorded.results]

    report = report_of(replayed)
    case = next(c for c in json.loads(json.dumps(report.to_dict()))["cases"]
                if c["id"] == guarded[0].id)
    assert case["model_answer"] == guarded[0].outcome.model_answer
    assert case["guard"]["objected"] == ["12.5%"]

    from ragspine_eval.workbench.views.answers_case import case_html

    results = [r for r in report.run.results if r.id == guarded[0].id]
    gold_case = next(c for c in report.run.cases if c.case_id == results[0].case_id)
    html = case_html(report, results, gold_case)
    assert "what the model said</b>, before the engine's number guard replaced it" in html
    assert '<mark class="rse-ans-guard">12.5%</mark>' in html

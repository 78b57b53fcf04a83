"""The answer harness: an engine workspace, an nl-answers-gold file, the engine's answers judged claim by claim.

questions (`AnswerQuestion`: one question of a gold case, in one language, on one route: the
case of the run path, pipeline/; the engine answering it over the workspace is
engines/workspace_answers.py, a refusal is judges/refusal.py), claims (a claim's content, fragment
and page hits), verdicts (`judge`: the verdict and reason per question, per claim its hits, the
engine judge's rules), run (`run_answer_eval`: every question, language, route and repeat, on the
run path), report (the gates kept
apart by tag, language and document, each failing question's stage, the baseline entries),
faithfulness (a faithfulness judge on each claim of an answer, for the case view's labels:
never a gate), harness (`AnswersHarness`, `AnswersWhat`: the harness as gated.run takes it, on
the gated run's floor).
It sits at the harness floor, beside qa/ and retrieval_only/, because it runs the engine (engines/).

The names below are imported on first use.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "run_answer_eval": "run",
    "AnswerRun": "run",
    "AnswerResult": "run",
    "judge": "verdicts",
    "AnswerVerdict": "verdicts",
    "ClaimVerdict": "verdicts",
    "AnswerQuestion": "questions",
    "AnswerRunReport": "report",
    "report_of": "report",
    "make_answers_entry": "report",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)

"""The answer harness: an engine workspace, an nl-answers-gold file, the engine's answers judged claim by claim.

engine (the engine opened on a workspace, one question answered on a route: the ask route or
pinned to the narrative channel, with its cited sources and ranked passages), questions_engine
(the engine over the workspace as an engine of the run path, pipeline/), refusal (whether
an answer refuses, as the engine's nl-gold judge decides), claims (a claim's content, fragment
and page hits), verdicts (`judge`: the verdict and reason per question, per claim its hits, the
engine judge's rules), run (`run_answer_eval`: every question, language, route and repeat, on the
run path), report (the gates kept
apart by tag, language and document, each failing question's stage, the baseline entries).
It sits at the harness floor, beside qa/ and retrieval_only/, because it calls the engine.

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
    "is_refusal": "refusal",
    "WorkspaceAnswerer": "engine",
    "AnswerRunReport": "report",
    "report_of": "report",
    "make_answers_entry": "report",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)

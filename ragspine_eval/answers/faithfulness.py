"""A faithfulness judge's verdict on each claim of an answer, against the passages the engine's
synthesis was given: what the answers case view shows beside the engine judge's verdict, and
what an analyst confirms or marks wrong (the labels of judges/labels.py).

- `judge_context(outcome)`: the context, each retrieved passage in rank as the synthesis was
  given it (`prompt_text`: its whole page with the engine's page parents on; else its text);
- `answer_checks(outcome, judge)`: each claim of the answer's plain text
  (judges/groundedness.split_claims: the unit the QA harness's faithfulness gate and `judge
  check` judge) checked against that context (`check_claim`: a `ClaimCheck` with the judge's
  coverage, missing words or deciding rule); [] for an engine error or a refusal (its sentences
  claim nothing to judge);
- `judged_by(judge)`: what a label records of the judge: its registered name, its threshold and
  the version of ragspine-eval it ran in;
- `judged_answer(result, judge)`: one answered question on one route with all of that, as the
  case view shows it (`JudgedAnswer`); `run_reference(report, report_path)`: the run a label
  was read from (the report's path, when it started, the gold file and workspace with their
  fingerprints, the engine's and ragspine-eval's versions, the commit).

The answer's own text is judged, as the reader saw it: where the engine's number guard replaced
what the model said, the guard's text. No reference date reaches a judge that reads dates (the
answer outcome keeps none), so the financial judge leaves 去年 / last year unchecked here.
Never a gate and never part of a verdict: the harness's verdicts are the engine judge's
(verdicts.py). Invariants: pure and deterministic (a registered judge needs no model).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval import __version__
from ragspine_eval.judges.groundedness import ClaimCheck, EntailmentJudge, check_claim, split_claims
from ragspine_eval.judges.refusal import is_refusal
from ragspine_eval.judges.registry import describe
from ragspine_eval.provenance import TOOL_DIST, dist_version


def judge_context(outcome: Any) -> list[str]:
    """The passages the synthesis was given, in rank (module docstring)."""
    return [str(p.get("prompt_text") or p.get("text") or "") for p in outcome.passages]


def answer_checks(outcome: Any, judge: EntailmentJudge) -> list[ClaimCheck]:
    """Each claim of the answer judged against `judge_context` (module docstring)."""
    if outcome.error or not outcome.answer_plain.strip() or is_refusal(outcome.answer_plain):
        return []
    context = judge_context(outcome)
    return [check_claim(judge, claim, context) for claim in split_claims(outcome.answer_plain)]


def judged_by(judge: EntailmentJudge) -> dict[str, Any]:
    """{"name", "threshold", "version"} of the judge (judges/registry.describe), for a label."""
    return {**describe(judge), "version": f"ragspine-eval {dist_version(TOOL_DIST) or __version__}"}


@dataclass(frozen=True)
class JudgedAnswer:
    """One answer's claims as a faithfulness judge decided them (module docstring)."""

    question: str  # the `case:lang` id
    case_id: str
    route: str
    lang: str
    context: list[str]
    checks: list[ClaimCheck]
    judge: dict[str, Any]  # judged_by(judge)


def judged_answer(result: Any, judge: EntailmentJudge) -> JudgedAnswer:
    """`answer_checks` of one answer (an answers.run.AnswerResult), with what a label names."""
    return JudgedAnswer(result.id, result.case_id, result.route, result.language,
                        judge_context(result.outcome), answer_checks(result.outcome, judge),
                        judged_by(judge))


def run_reference(report: Any, report_path: str | Path | None = None) -> dict[str, Any]:
    """What names the run a label was read from (module docstring); None values left out."""
    prov = report.provenance
    ref: dict[str, Any] = {"report": str(report_path) if report_path else None}
    if prov is not None:
        ref |= {"started_at": prov.times.started_at if prov.times else None,
                "golden": f"{prov.golden.path} [{prov.golden.fingerprint}]",
                "workspace": f"{prov.kb.path} [{prov.kb.fingerprint}]" if prov.kb else None,
                "engine_version": prov.engine_version, "tool_version": prov.tool_version,
                "git_commit": prov.git_commit}
    else:
        ref |= {"golden": str(report.run.gold), "workspace": str(report.run.workspace)}
    return {k: v for k, v in ref.items() if v is not None}

"""An answer run: every question of an nl-answers-gold file, in each language, on each route.

`run_answer_eval(workspace, gold, routes=..., languages=..., repeat=...)` reads the gold
(`golden.nl_answers`: an nl-answers-gold file, or a batch question file judged on content), opens the engine over the workspace once (`answers.engine`), and for each
route, repeat, case and language asks the engine (`answer_one`) and judges the outcome
(`score`); what it returns is an `AnswerRun`: a typed `AnswerResult` per question, language,
route and repeat, the skipped cases with their reason, the known gaps. The two steps are apart
on purpose, so the shared run path (plan, answer, score, keep, report) takes them as they are.

Invariants: the order is the engine judge's (route, then repeat, then case in file order, then
language en before zh); a skipped case (adversarial, offline_only) is never asked; a known gap
is asked and judged like any case, its class tells the report to keep it outside the rates; an
engine error is the question's verdict (its reason starts with "error: "), the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.answers.engine import ROUTES, AnswerOutcome, Route, WorkspaceAnswerer
from ragspine_eval.answers.verdicts import AnswerVerdict, judge
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.golden.nl_answers import AnswerCase, answer_cases_of


@dataclass
class AnswerResult:
    """One question, in one language, on one route (and repeat): what the engine did, the
    verdict, and (set by the report) the stage a failure sits at."""

    case_id: str
    language: str
    route: str
    question: str
    case_class: str
    outcome: AnswerOutcome
    verdict: AnswerVerdict
    tags: tuple[str, ...] = ()
    repeat: int = 0
    stage: str | None = None

    @property
    def id(self) -> str:
        return f"{self.case_id}:{self.language}"

    @property
    def scored(self) -> bool:
        """Counted in the rates: positive and abstain cases (known gaps are reported apart)."""
        return self.case_class in ("positive", "abstain")


@dataclass
class AnswerRun:
    """A whole answer run: its inputs, its results, and the cases it did not ask."""

    workspace: Path
    gold: Path
    routes: tuple[str, ...]
    cases: tuple[AnswerCase, ...]
    results: list[AnswerResult] = field(default_factory=list)
    repeat: int = 1
    config: EngineConfig = DEFAULT
    preset: dict[str, Any] = field(default_factory=dict)

    @property
    def skipped(self) -> list[dict[str, str]]:
        return [{"case_id": c.case_id, "case_class": c.case_class, "reason": c.skip_reason}
                for c in self.cases if c.skip_reason]

    @property
    def known_gaps(self) -> list[dict[str, str | None]]:
        return [{"case_id": c.case_id, "detail": c.known_gap_detail}
                for c in self.cases if c.case_class == "known-gap"]


def score(case: AnswerCase, outcome: AnswerOutcome) -> AnswerVerdict:
    """The scorer: a case and the engine's outcome in, the verdict that says why out."""
    return judge(case, outcome.answer_plain, outcome.locators, passages=outcome.passages,
                 error=outcome.error)


def answer_one(engine: WorkspaceAnswerer, question: str, route: Route, case_id: str = "",
               repeat: int = 0) -> AnswerOutcome:
    """The engine call: one question over the open workspace on one route (a model's calls
    filed under `case_id` and `repeat`)."""
    return engine.answer(question, route, case_id, repeat)


def questions_of(cases: Sequence[AnswerCase], languages: Sequence[str] | None
                 ) -> list[tuple[AnswerCase, str, str]]:
    """(case, language, question) to ask, in order; skipped cases left out."""
    return [(case, lang, text) for case in cases if not case.skip_reason
            for lang, text in case.questions if languages is None or lang in languages]


def run_answer_eval(workspace: str | Path, gold: str | Path, *,
                    routes: Sequence[Route] = ROUTES, languages: Sequence[str] | None = None,
                    repeat: int = 1, config: EngineConfig = DEFAULT,
                    progress: Callable[[int, int, int], None] | None = None,
                    model: Any = None) -> AnswerRun:
    """Ask and judge every question of `gold` over `workspace` (module docstring);
    `progress(done, total, errors)` after each answer, as every run of the project reports;
    `model` (models.ModelRun; None: the MockProvider) what the engine asks, behind its
    cassette, checked before any question (exit 2) and its recording completed after."""
    from ragspine_eval.models.recorder import in_use

    model = in_use(model)
    cases = answer_cases_of(gold)
    bad = [r for r in routes if r not in ROUTES]
    if bad:
        raise ValueError(f"unknown route {bad[0]!r}: one of {', '.join(ROUTES)}")
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    run = AnswerRun(Path(workspace), Path(gold), tuple(routes), cases, repeat=repeat,
                    config=config)
    todo = questions_of(cases, languages)
    total, errors = len(routes) * repeat * len(todo), 0
    if model is not None:
        model.check()
    with WorkspaceAnswerer(workspace, config, model) as engine:
        run.preset = dict(engine.preset)
        for route in routes:
            for n in range(repeat):
                for case, lang, text in todo:
                    outcome = answer_one(engine, text, route,
                                         f"{case.case_id}:{lang}@{route}", n)
                    result = AnswerResult(case.case_id, lang, route, text, case.case_class,
                                          outcome, score(case, outcome), case.tags, n)
                    run.results.append(result)
                    errors += outcome.error is not None
                    if progress is not None:
                        progress(len(run.results), total, errors)
    if model is not None:  # a recording's calls folded into its cassette
        model.finish(complete=True)
    return run

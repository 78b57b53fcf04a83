"""An answer run: every question of an nl-answers-gold file, in each language, on each route.

`run_answer_eval(workspace, gold, routes=..., languages=..., repeat=..., jobs=..., ...)` is the
run path of ragspine_eval/pipeline/ with the answer harness's parts: the gold's questions
(`golden.nl_answers`: an nl-answers-gold file, or a batch question file judged on content), one
per language and route (`AnswerQuestion`, questions.py), the engine answering over the
workspace as an engine (engines/workspace_answers.AnswersEngine, whose `AnswerOutcome` the
runner, the outcome cache and the pipeline carry as it is), and the engine judge's rules as the
scorer (`score`, after the last answer). So an answer run has what a retrieval run has: `jobs` (auto by default from the CLI),
worker processes or Dask, progress, a time limit per question, and the outcome cache: each
answer stored as it comes, so a run killed part-way resumes where it was. What it returns is an
`AnswerRun`: a typed `AnswerResult` per question, language, route and repeat, the skipped cases
with their reason, the known gaps, and how it ran (the cache's share, each answer's wall time).

Before any question the gold is checked against the workspace (answers/gold_check.py): a case
naming a document the workspace lacks, or a page past its document's pages, stops the run
(GoldError, exit 2, nothing asked) unless `allow_gold_errors`, which asks and judges such a case
as any other but marks it a gold error: outside every rate, never a pass, its stage "gold".
Each claim's alternatives are judged with their places (the strict citation).

Invariants: the order is the engine judge's (route, then repeat, then case in file order, then
language en before zh), whatever the executor or `jobs`; a skipped case (adversarial,
offline_only) is never asked; a known gap is asked and judged like any case, its class tells
the report to keep it outside the rates; an engine error (a time limit, a crashed worker) is the
question's verdict (its reason starts with "error: "), the run goes on and the answer is never
stored; the results are the same byte for byte whatever the executor, `jobs` or the share the
cache answered (engines/workspace_answers.py), outside the provenance's times and cache; the
engine's effective preset is a fact of the outcome cache (`_preset`), so a re-run the cache
answers wholly never opens the engine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragspine_eval.answers.gold_check import GoldCheck
from ragspine_eval.answers.questions import AnswerQuestion
from ragspine_eval.answers.verdicts import AnswerVerdict, judge
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.engines.workspace_answers import ROUTES, AnswerOutcome, Route
from ragspine_eval.execution.runner import RunInterrupted
from ragspine_eval.golden.nl_answers import AnswerCase, answer_cases_of
from ragspine_eval.models.usage import ModelUsage
from ragspine_eval.pipeline.answer import Answers, answer, run_options
from ragspine_eval.pipeline.plan import outcome_cache, plan
from ragspine_eval.pipeline.report import with_latency, with_usage
from ragspine_eval.pipeline.spec import RunHow, RunWhat


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
    gold_error: str | None = None  # the gold does not fit the workspace (gold_check.py)

    @property
    def id(self) -> str:
        return f"{self.case_id}:{self.language}"

    @property
    def scored(self) -> bool:
        """Counted in the rates: positive and abstain cases (known gaps and gold errors are
        reported apart)."""
        return self.case_class in ("positive", "abstain") and self.gold_error is None


@dataclass
class AnswerRun:
    """A whole answer run: its inputs, its results, the cases it did not ask, and how it ran
    (the outcome cache's summary; per question asked, its outcome and whether it was reused)."""

    workspace: Path
    gold: Path
    routes: tuple[str, ...]
    cases: tuple[AnswerCase, ...]
    results: list[AnswerResult] = field(default_factory=list)
    repeat: int = 1
    config: EngineConfig = DEFAULT
    preset: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] | None = None
    asked: tuple[list, list, list] = field(default=([], [], []), repr=False)
    # what the model calls of every repeat used (models/usage.py ModelUsage; None: no model
    # and no call), set by the run, kept in the provenance by `how_it_ran`
    usage: Any = field(default=None, repr=False)
    gold_check: GoldCheck | None = None  # the gold against the workspace (gold_check.py)
    interrupted: bool = False  # Ctrl-C stopped it: the unfinished questions are not run
    read: Any = field(default=None, repr=False, compare=False)  # the workspace as read, once

    @property
    def skipped(self) -> list[dict[str, str]]:
        return [{"case_id": c.case_id, "case_class": c.case_class, "reason": c.skip_reason}
                for c in self.cases if c.skip_reason]

    @property
    def known_gaps(self) -> list[dict[str, str | None]]:
        return [{"case_id": c.case_id, "detail": c.known_gap_detail}
                for c in self.cases if c.case_class == "known-gap"]

    def how_it_ran(self, provenance: Any) -> Any:
        """The provenance with the cache's share, each answer's wall time and what the model
        calls used (pipeline/report.py)."""
        if self.cache is not None:
            provenance = replace(provenance, cache=self.cache)
        return with_usage(with_latency(provenance, *self.asked), self.usage)


def score(case: AnswerCase, outcome: AnswerOutcome, gold: GoldCheck | None = None
          ) -> AnswerVerdict:
    """The scorer: a case and the engine's outcome in, the verdict that says why out; `gold`
    places each claim's alternatives (the strict citation)."""
    places = gold.places.get(case.case_id) if gold is not None else None
    return judge(case, outcome.answer_plain, outcome.locators, passages=outcome.passages,
                 error=outcome.error, places=places)


def questions_of(cases: Sequence[AnswerCase], languages: Sequence[str] | None
                 ) -> list[tuple[AnswerCase, str, str]]:
    """(case, language, question) to ask, in order; skipped cases left out."""
    return [(case, lang, text) for case in cases if not case.skip_reason
            for lang, text in case.questions if languages is None or lang in languages]


def run_answer_eval(workspace: str | Path, gold: str | Path, *,
                    routes: Sequence[Route] = ROUTES, languages: Sequence[str] | None = None,
                    config: EngineConfig = DEFAULT, model: Any = None, **how: Any) -> AnswerRun:
    """Ask and judge every question of `gold` over `workspace` (module docstring); `model`
    (models.ModelRun; None: the MockProvider) what the engine asks, behind its cassette,
    checked before any question (exit 2) and its recording completed after; `how` are
    pipeline.spec.RunHow's fields (jobs, executor, scheduler, case_timeout, cache, repeat,
    `progress(done, total, errors)` as answers come ...; `jobs` 1 unless given), and
    `allow_gold_errors=True` runs the cases the workspace cannot answer as gold errors (module
    docstring)."""
    allow_gold_errors = bool(how.pop("allow_gold_errors", False))
    bad = [r for r in routes if r not in ROUTES]
    if bad:
        raise ValueError(f"unknown route {bad[0]!r}: one of {', '.join(ROUTES)}")
    what = RunWhat(Path(gold), Path(workspace), "ragspine", "+".join(routes), None, config,
                   model=model)
    run = run_answers(what, RunHow(**how), languages,
                      allow_gold_errors=allow_gold_errors)
    if run.interrupted:  # a library call ends as Ctrl-C does
        raise RunInterrupted.of(run.asked[1])
    return run


def run_answers(what: RunWhat, how: RunHow, languages: Sequence[str] | None = None,
                cases: Sequence[AnswerCase] | None = None, allow_gold_errors: bool = False
                ) -> AnswerRun:
    """The answer run of `what` (its `mode`: the routes joined by "+"), run as `how` says: the
    pipeline's steps in turn, after the gold is checked against the workspace; `cases` (None:
    read from `what.golden`) are asked instead of the file's, as a gold draft asks a question
    file's questions (drafting/questions.py): those have no gold to check."""
    if what.model is not None:  # what the provider or the cassette needs: exit 2 first
        what.model.check()
    if what.workspace is None:  # read once for the gold's check, the cache's key, the report
        what = replace(what, workspace=what.read_workspace())
    cases, gold = checked_gold(what, allow_gold_errors, cases)
    cache = outcome_cache(_identity, "answers", _cache_kb(what), what.cache_policy(how),
                          AnswerQuestion.fingerprint, AnswerOutcome)
    run = _answer_run(what, how.repeat, cache, cases)
    run.gold_check = gold
    questions = [AnswerQuestion(case, lang, text, route) for route in run.routes
                 for case, lang, text in questions_of(run.cases, languages)]
    planned = plan(questions, cache)
    options = run_options(how, planned.to_run, True, True)
    answers = answer(planned, how, options, lambda: _opened(what))
    if what.model is not None:  # a recording's calls folded into its cassette
        what.model.finish(complete=not answers.interrupted)
    run.results = _scored(questions, answers, gold)
    run.cache = None if cache is None else cache.summary(len(questions))
    run.asked = (questions, answers.outcomes, answers.reused)
    run.usage = ModelUsage.of(questions, answers.runs, what.model)
    run.interrupted = answers.interrupted  # the report's status (gated/ decides what follows)
    return run


def checked_gold(what: RunWhat, allow_gold_errors: bool = False,
                 cases: Sequence[AnswerCase] | None = None
                 ) -> tuple[tuple[AnswerCase, ...], GoldCheck | None]:
    """The gold file's cases and their check against the workspace (gold_check.py); GoldError
    (exit 2) for a case the workspace cannot answer, unless `allow_gold_errors`."""
    from ragspine_eval.answers.gold_check import check_gold

    if cases is not None:  # a draft's questions: no gold file to check them against
        return tuple(cases), None
    cases = what.cases if what.cases is not None else answer_cases_of(what.golden)
    gold = check_gold(what.golden, cases, what.read_workspace())
    if not allow_gold_errors:
        gold.raise_errors(Path(what.kb))
    return cases, gold


def _answer_run(what: RunWhat, repeat: int, cache: Any, cases: tuple[AnswerCase, ...]
                ) -> AnswerRun:
    """The run's inputs read and checked before a question is asked: the engine configuration
    (exit 2 where its settings cannot take effect), and the engine's effective preset
    (`_preset`)."""
    from ragspine_eval.engines.engine_config import check_effective

    check_effective(what.engine_config)
    return AnswerRun(Path(what.kb), Path(what.golden), tuple(str(what.mode).split("+")), cases,
                     repeat=repeat, config=what.engine_config, preset=_preset(what, cache),
                     read=what.workspace)


# the outcome cache's fact of the engine's effective preset (execution/cache.OutcomeCache.fact)
PRESET_FACT = "effective preset"


def _preset(what: RunWhat, cache: Any) -> dict[str, Any]:
    """The engine's effective retrieval preset under the configuration: a fact of the outcome
    cache (its key names the engine, the workspace and the configuration), else the workspace
    opened once (refused here: exit 2, none asked) and the preset kept. Why: opening the engine
    is most of a warm re-run whose answers all come from the cache (3 of 4 s at 40 questions)."""
    import json

    from ragspine_eval.engines.workspace_retriever import WorkspaceRetriever

    known = cache.fact(PRESET_FACT) if cache is not None else None
    if isinstance(known, dict):
        return known
    with WorkspaceRetriever(what.kb, what.engine_config) as opened:
        # as JSON values: the preset read back from the cache is the same value
        preset = json.loads(json.dumps(dict(opened.preset), default=str))
    if cache is not None:
        cache.keep_fact(PRESET_FACT, preset)
    return preset


def _scored(questions: list[AnswerQuestion], answers: Answers, gold: GoldCheck | None = None
            ) -> list[AnswerResult]:
    """Each answer judged (after the last one), in the engine judge's order: route, repeat,
    case, language (the run path gives each repeat's answers in question order); a case with
    a gold error carries it."""
    errors = gold.errors if gold is not None else {}
    results = []
    routes = list(dict.fromkeys(q.route for q in questions))
    for route in routes:
        for n, (outcomes, _) in enumerate(answers.runs):
            for q, out in zip(questions, outcomes, strict=True):
                if q.route == route and out is not None:
                    wrong = errors.get(q.case.case_id)
                    results.append(AnswerResult(q.case.case_id, q.language, route, q.question,
                                                q.case.case_class, out, score(q.case, out, gold),
                                                q.case.tags, n,
                                                gold_error="; ".join(wrong) if wrong else None))
    return results


def _identity() -> Any:
    from importlib.metadata import version

    from ragspine_eval.execution.cache import EngineIdentity, installed_engine_fingerprint

    return EngineIdentity("ragspine", "rag-spine", version("rag-spine"),
                          installed_engine_fingerprint())


def _cache_kb(what: RunWhat) -> str:
    """The workspace part of the cache's key: another configuration or model, other answers."""
    return what.model_keyed(f"{what.read_workspace().fingerprint}+"
                            f"{what.engine_config.fingerprint}")


@contextmanager
def _opened(what: RunWhat) -> Iterator[Any]:
    from ragspine_eval.engines.workspace_answers import AnswersEngine

    engine = AnswersEngine(what.kb, what.engine_config, what.model)
    try:
        yield engine
    finally:
        engine.close()

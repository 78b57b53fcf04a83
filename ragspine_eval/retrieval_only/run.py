"""`run_retrieval_eval`: every question of a question file asked of the engine's retriever over a
workspace, judged under the question file's rules, timed, into a `RetrievalRunReport`.

It is the run path of ragspine_eval/pipeline/ with the retrieval harness's parts: the questions
(golden/question_files.py), the engine's retriever as an engine (engines/workspace_retrieval.py,
whose `Retrieved` outcomes the runner, the outcome cache and the pipeline carry as they are),
and the question file's rules as the scorer. So a retrieval run has what a QA run has: `jobs` (auto by
default from the CLI), worker processes or Dask, progress, and the outcome cache: each answer
stored as it comes, so a run killed part-way resumes where it was.

Invariants:
- everything is checked before a question is asked: the workspace is one (knowledge/workspace.py),
  the question file reads whole (golden/question_files.py), `top_k` is at least 1, the engine
  configuration's settings can take effect here (engines/engine_config.py: exit 2 otherwise),
  and the engine opens its retriever on the workspace (engines/workspace_retriever.py);
- each question is asked unfiltered for its top `top_k` (what `ragspine batch --retrieval-only
  --top-k K` asks); relevance is decided on each passage's full text (relevance.question_file_rules,
  metrics.question_file_ranks), the report keeps the first passages.KEEP_PASSAGES, clipped to
  passages.TEXT_CLIP characters;
- the report is the same byte for byte whatever the executor, `jobs`, or the share the cache
  answered (execution/runner.py: outcomes in question order; engines/workspace_retrieval.py: a
  passage reads back the same from the cache); outside `provenance.times` and
  `provenance.cache`;
- what the run's answers show had no effect (a vector channel that scored nothing, a `top_k`
  above what the engine returns) is a warning in the report and its provenance, never silent;
- the wall time per question, and the LLM calls the engine's trace reported, go under
  `provenance.times.latency` only, so two runs of the same inputs differ only there;
- with a model (models.ModelRun in `RunWhat.model`: the engine's query translation and listwise
  rerank ask it, behind its cassette, each call filed under the question's id), its fingerprint
  is part of the outcome cache's key, a recording reads no stored outcome (each question's calls
  reach the cassette), the cassette is completed after the last answer, and the model is named
  in the provenance; without one nothing of the run changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.engines.workspace_retriever import Retrieved
from ragspine_eval.execution.runner import RunInterrupted
from ragspine_eval.golden.question_case import QuestionCase
from ragspine_eval.models.usage import ModelUsage
from ragspine_eval.pipeline.answer import Answers, answer, run_options
from ragspine_eval.pipeline.plan import outcome_cache, plan
from ragspine_eval.pipeline.report import with_cache, with_latency, with_usage
from ragspine_eval.pipeline.spec import RunHow, RunWhat
from ragspine_eval.fingerprints import golden_fingerprint
from ragspine_eval.provenance import Clock, InputRef, RunInputs, collect, display_path
from ragspine_eval.retrieval.metrics import question_file_ranks
from ragspine_eval.retrieval.passages import kept, passages_from
from ragspine_eval.retrieval.relevance import question_file_rules
from ragspine_eval.knowledge.workspace import WorkspaceError, chunking_of, read_workspace
from ragspine_eval.retrieval_only.report import RetrievalCase, RetrievalRunReport


def run_retrieval_eval(workspace: str | Path, golden: str | Path, *, top_k: int | None = None,
                       config: EngineConfig = DEFAULT,
                       progress: Callable[[int, int, int], None] | None = None,
                       model: Any = None, **how: Any) -> RetrievalRunReport:
    """Run every question (see the module docstring). `top_k` defaults to the configuration's,
    else 10; `model` (models.ModelRun; None: the MockProvider) is what the engine's query
    translation and listwise rerank ask; `how` are pipeline.spec.RunHow's fields (jobs,
    executor, scheduler, cache, ...; `jobs` 1 unless given). Raises RagspineEvalError for input
    the run cannot use."""
    what = RunWhat(Path(golden), Path(workspace), "ragspine", None, None, config, top_k, model)
    report = run_retrieval(what, RunHow(progress=progress, **how))
    if report.interrupted:  # a library call ends as Ctrl-C does, carrying what ran
        raise RunInterrupted(report.cases, report.finished, report)
    return report


def run_retrieval(what: RunWhat, how: RunHow) -> RetrievalRunReport:
    """The retrieval run of `what`, run as `how` says: the pipeline's steps in turn."""
    clock = Clock()
    run = RetrievalRun.of(what)
    cache = outcome_cache(run.identity, run.mode, run.cache_kb, what.cache_policy(how),
                          QuestionCase.fingerprint, Retrieved)
    planned = plan(run.questions, cache)
    options = run_options(how, planned.to_run, True, True)
    answers = answer(planned, how, options, run.open)
    if what.model is not None:  # a recording's calls folded into its cassette
        what.model.finish(complete=not answers.interrupted)
    report = _scored(run, answers)
    report.provenance = with_usage(with_latency(
        with_cache(_provenance(run, report, clock), cache, len(run.questions)),
        run.questions, answers.outcomes, answers.reused),
        ModelUsage.of(run.questions, answers.runs, what.model))
    report.interrupted = answers.interrupted  # its status says so (gated/ decides what follows)
    return report


@dataclass
class RetrievalRun:
    """A retrieval run's inputs read and checked: the workspace, its questions, top_k, the
    configuration, and what the engine said when its retriever opened (its effective retrieval
    preset and the vector channel's trace)."""

    what: RunWhat
    workspace: Any
    questions: list[Any]
    top_k: int
    preset: dict[str, Any]
    channel: dict[str, Any] | None

    @classmethod
    def of(cls, what: RunWhat) -> RetrievalRun:
        from ragspine_eval.engines.engine_config import check_effective
        from ragspine_eval.golden.question_files import load_question_file
        from ragspine_eval.knowledge.workspace import is_workspace
        from ragspine_eval.engines.workspace_retriever import WorkspaceRetriever

        config = what.engine_config
        top_k = what.k if what.k is not None else (config.top_k or 10)
        if top_k < 1:
            raise WorkspaceError(f"top_k must be at least 1, got {top_k}")
        if not is_workspace(what.kb):
            read_workspace(what.kb)  # raises naming what is missing
            raise WorkspaceError(f"{what.kb}: not an engine workspace (its knowledge.db holds "
                                 f"no narrative chunks)")
        questions = what.cases if what.cases is not None else load_question_file(what.golden)
        check_effective(config)
        if what.model is not None:  # what the provider or the cassette needs: exit 2 first
            what.model.check()
        ws = what.read_workspace()
        with WorkspaceRetriever(what.kb, config) as opened:  # refused here: exit 2, none asked
            preset, channel = opened.preset, opened.vector_channel
        return cls(what, ws, questions, top_k, preset, channel)

    @property
    def mode(self) -> str:
        return f"retrieval@k{self.top_k}"

    @property
    def cache_kb(self) -> str:
        """The workspace part of the cache's key: another configuration or model, other
        passages."""
        return self.what.model_keyed(
            f"{self.workspace.fingerprint}+{self.what.engine_config.fingerprint}")

    def identity(self) -> Any:
        from importlib.metadata import version

        from ragspine_eval.execution.cache import EngineIdentity, installed_engine_fingerprint

        return EngineIdentity("ragspine", "rag-spine", version("rag-spine"),
                              installed_engine_fingerprint())

    @contextmanager
    def open(self) -> Iterator[Any]:
        from ragspine_eval.engines.workspace_retrieval import RetrievalEngine

        engine = RetrievalEngine(self.what.kb, self.what.engine_config, self.top_k,
                                 self.what.model)
        try:
            yield engine
        finally:
            engine.close()


def _judged(question: Any, hits: list[dict]
            ) -> tuple[str, int | None, int | None, list[bool], list[str]]:
    """The question's basis, rank, page rank and relevant flags under the question file's rules
    (retrieval/relevance.py, metrics.py), judged on each passage's full text and the text the
    engine puts in the prompt for it, as the engine's batch judges them."""
    basis, rules = question_file_rules(question)
    judging = passages_from({**h, "text": f"{h.get('text') or ''}\n{h.get('prompt_text') or ''}"}
                            for h in hits)
    rank, page_rank, flags = question_file_ranks(basis, rules, judging)
    return basis, rank, page_rank, flags, [r.describe() for r in rules]


def _kept(hits: list[dict], flags: list[bool]) -> list[dict]:
    """The passages a report keeps (passages.kept: the first KEEP_PASSAGES, text clipped), each
    marked relevant or not."""
    top = kept(passages_from(hits))
    return [{**p.to_dict(), "relevant": flag} for p, flag in zip(top, flags)]


def _scored(run: RetrievalRun, answers: Answers) -> RetrievalRunReport:
    """Each question judged from its passages (after the last answer), and the run's warnings."""
    from ragspine_eval.engines.engine_config import observed_warnings

    cases: list[RetrievalCase] = []
    vector_scores: list[float | None] = []
    for question, out in zip(run.questions, answers.outcomes, strict=True):
        hits = [] if out.error else out.hits
        basis, rank, page_rank, flags, rules = _judged(question, hits)
        for hit in hits:
            scores = hit.get("scores")
            vector_scores.append(scores.get("vector") if isinstance(scores, dict) else None)
        cases.append(RetrievalCase(
            question.id, question.question, basis, rank, page_rank,
            list(question.docs), dict(question.tags), _kept(hits, flags),
            len(hits), out.error, question.fingerprint(), question.line, rules,
            next((d.doc_id for name in question.docs if (d := run.workspace.doc(name))), None)))
    config, channel, preset = run.what.engine_config, run.channel, run.preset
    warnings = observed_warnings(config, run.top_k, [c.n_returned for c in cases], vector_scores)
    if channel and channel.get("vector_channel") not in (None, "hybrid") and \
            preset.get("retrieval_mode") == "hybrid":
        warnings.append(f"the engine's vector channel is {channel.get('vector_channel')} "
                        f"({channel.get('vector_reason')}, {channel.get('n_vectors')} vectors) "
                        f"although the retrieval mode is hybrid: no vector contributed")
    return RetrievalRunReport(display_path(run.what.kb), display_path(run.what.golden),
                              run.top_k, cases, warnings=sorted(set(warnings), key=warnings.index))


def _provenance(run: RetrievalRun, report: RetrievalRunReport, clock: Clock) -> Any:
    what, ws = run.what, run.workspace
    engine_config = {**what.engine_config.to_dict(), "effective": run.preset,
                     **({"vector_channel": run.channel} if run.channel else {}),
                     **({"warnings": report.warnings} if report.warnings else {})}
    fingerprints = {c.id: c.fingerprint for c in report.cases}
    return collect(RunInputs(
        harness="retrieval", mode=run.mode,
        golden=InputRef(display_path(what.golden), golden_fingerprint(fingerprints),
                        len(report.cases)),
        kb=InputRef(display_path(what.kb), ws.fingerprint), kb_files=dict(ws.files),
        engine_config=engine_config, workspace={"chunking": chunking_of(ws)},
        model=what.model.to_dict() if what.model is not None else None), clock)

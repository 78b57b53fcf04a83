"""`run_retrieval_eval`: every question of a question file asked of the engine's retriever over a
workspace, judged under the question file's rules, timed, into a `RetrievalRunReport`.

Invariants:
- everything is checked before the engine is opened: the workspace is one (retrieval/workspace.py),
  the question file reads whole (golden/question_files.py), `top_k` is at least 1, and the engine
  configuration's settings can take effect here (engines/engine_config.py: exit 2 otherwise);
- the questions are asked one after another in file order, each unfiltered for its top `top_k`
  (what `ragspine batch --retrieval-only --top-k K` asks); relevance is decided on each passage's
  full text (relevance.question_file_rules, metrics.question_file_ranks), the report keeps the
  first passages.KEEP_PASSAGES, clipped to passages.TEXT_CLIP characters;
- what the run's answers show had no effect (a vector channel that scored nothing, a `top_k`
  above what the engine returns) is a warning in the report and its provenance, never silent;
- the wall time per question, and the LLM calls the engine's trace reported, go under
  `provenance.times.latency` only, so two runs of the same inputs differ only there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragspine_eval.engines.engine_config import (
    DEFAULT,
    EngineConfig,
    check_effective,
    observed_warnings,
)
from ragspine_eval.execution import latency
from ragspine_eval.golden.question_files import load_question_file
from ragspine_eval.provenance import Clock, InputRef, collect, display_path, golden_fingerprint
from ragspine_eval.retrieval.metrics import question_file_ranks
from ragspine_eval.retrieval.passages import kept, passages_from
from ragspine_eval.retrieval.relevance import question_file_rules
from ragspine_eval.retrieval.workspace import (
    WorkspaceError,
    chunking_of,
    is_workspace,
    read_workspace,
)
from ragspine_eval.retrieval_only.report import RetrievalCase, RetrievalRunReport

def _judged(question, hits: list[dict]
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


def run_retrieval_eval(workspace: str | Path, golden: str | Path, *, top_k: int | None = None,
                       config: EngineConfig = DEFAULT,
                       progress: Callable[[int, int, int], None] | None = None,
                       model: Any = None) -> RetrievalRunReport:
    """Run every question (see the module docstring). `top_k` defaults to the configuration's,
    else 10; `model` (models.ModelRun; None: the MockProvider) is what the engine's query
    translation and listwise rerank ask. Raises RagspineEvalError for input the run cannot
    use."""
    from ragspine_eval.models.recorder import in_use

    model = in_use(model)
    workspace, golden = Path(workspace), Path(golden)
    top_k = top_k if top_k is not None else (config.top_k or 10)
    if top_k < 1:
        raise WorkspaceError(f"top_k must be at least 1, got {top_k}")
    if not is_workspace(workspace):
        read_workspace(workspace)  # raises naming what is missing
        raise WorkspaceError(f"{workspace}: not an engine workspace (its knowledge.db holds no "
                             f"narrative chunks)")
    questions = load_question_file(golden)
    check_effective(config)
    if model is not None:
        model.check()
    ws = read_workspace(workspace)
    clock = Clock()
    from ragspine_eval.retrieval_only.engine import WorkspaceRetriever

    cases: list[RetrievalCase] = []
    timings = []
    vector_scores: list[float | None] = []
    with WorkspaceRetriever(workspace, config, model) as engine:
        for n, question in enumerate(questions, start=1):
            got = engine.retrieve(question.question, top_k, question.id)
            basis, rank, page_rank, flags, rules = _judged(question, got.hits)
            for hit in got.hits:
                scores = hit.get("scores")
                vector_scores.append(scores.get("vector") if isinstance(scores, dict) else None)
            cases.append(RetrievalCase(
                question.id, question.question, basis, rank, page_rank,
                list(question.docs), dict(question.tags), _kept(got.hits, flags),
                len(got.hits), got.error, question.fingerprint(), question.line, rules,
                next((d.doc_id for name in question.docs if (d := ws.doc(name))), None)))
            timings.append((question.id, question.tags, got.seconds, got.error is not None))
            if progress:
                progress(n, len(questions), sum(1 for c in cases if c.error))
        channel, preset, llm = engine.vector_channel, engine.preset, engine.trace.totals()
    if model is not None:  # a recording's calls folded into its cassette
        model.finish(complete=True)
    warnings = observed_warnings(config, top_k, [c.n_returned for c in cases], vector_scores)
    if channel and channel.get("vector_channel") not in (None, "hybrid") and \
            preset.get("retrieval_mode") == "hybrid":
        warnings.append(f"the engine's vector channel is {channel.get('vector_channel')} "
                        f"({channel.get('vector_reason')}, {channel.get('n_vectors')} vectors) "
                        f"although the retrieval mode is hybrid: no vector contributed")
    report = RetrievalRunReport(display_path(workspace), display_path(golden), top_k, cases,
                                warnings=sorted(set(warnings), key=warnings.index))
    times = clock.times()
    from dataclasses import replace

    times = replace(times, latency=latency.summarize(timings, llm))
    engine_config = {**config.to_dict(), "effective": preset,
                     **({"vector_channel": channel} if channel else {}),
                     **({"warnings": report.warnings} if report.warnings else {})}
    fingerprints = {c.id: c.fingerprint for c in cases}
    report.provenance = replace(collect(
        harness="retrieval", mode=f"retrieval@k{top_k}",
        golden=InputRef(display_path(golden), golden_fingerprint(fingerprints), len(cases)),
        kb=InputRef(display_path(workspace), ws.fingerprint), kb_files=dict(ws.files),
        engine_config=engine_config, workspace={"chunking": chunking_of(ws)},
        model=model.to_dict() if model is not None else None), times=times)
    return report

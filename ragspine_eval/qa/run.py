"""One call that runs the QA harness: load the golden set, plan, answer, score, keep, report.

`run_qa_eval` is the run path of ragspine_eval/pipeline/ with the QA harness's parts: the
golden set (golden/, remembered by execution/golden_memo.py), the KB's stores built in a
scratch folder and the engine opened on them (engines/), the gates and a faithfulness judge
(report.py's `evaluate`, streaming.py as answers arrive, repeats.py over repeats), the case
list's text kept with the whole-run entry (report_file.py). The report carries its provenance,
the judge included (no baseline yet: qa/harness.py adds it). Nothing is written here.
With a model (`RunWhat.model`, models.ModelRun: the in-process agent's provider behind its
cassette) its fingerprint joins the outcome cache's key, a recording reads no stored outcome,
each repeat's calls are keyed apart (the answer step sets the engine's `repeat_index`), the
cassette is completed after the answers, the provenance names the model, and what every
repeat's calls used is counted once (`times.usage`).
Ctrl-C while the cases run (runner.RunInterrupted) still scores what the run has: `run_qa`
returns the report marked `interrupted` (its `status`), holding every case (the unfinished ones
as not run), for the gated run to write (gated/runner.py); `run_qa_eval`, the library's call,
raises RunInterrupted carrying it. With repeats, the repeats finished so far and the
interrupted one are combined as usual. Ctrl-C anywhere else is a plain KeyboardInterrupt.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragspine_eval.execution.collector import gc_paused
from ragspine_eval.execution.runner import RunInterrupted
from ragspine_eval.paths import KB_DIR
from ragspine_eval.models.usage import ModelUsage
from ragspine_eval.pipeline.answer import Answers, answer, run_options
from ragspine_eval.pipeline.keep import keep, scored_saver, streamed_saver
from ragspine_eval.pipeline.plan import Plan, outcome_cache, plan
from ragspine_eval.pipeline.report import with_cache, with_latency, with_usage, workspace_of
from ragspine_eval.pipeline.spec import RunHow, RunWhat
from ragspine_eval.fingerprints import golden_fingerprint
from ragspine_eval.provenance import Clock, InputRef, Provenance, display_path
from ragspine_eval.qa.repeats import combine_repeats
from ragspine_eval.qa.evaluation import Reuse, evaluate
from ragspine_eval.qa.report import QAEvalReport


@gc_paused()  # the engine runs with it on (pipeline/answer.py); the rest builds trees of plain
# objects, whose young collections would each walk everything made since (0.1 s a warm run)
def run_qa_eval(golden_path: str | Path, mode: str | None = None, *, kb_dir: str | Path = KB_DIR,
                engine: Any = "ragspine", judge: Any = None, **options: Any) -> QAEvalReport:
    """Load the golden set, build the KB's stores in a scratch folder, run and score every case.

    What is run (pipeline.spec.RunWhat; `engine_config`, `retrieval_k` and `model` among
    `options`): `engine` is an --engine string ("ragspine",
    "http://HOST:PORT", "module:callable"; engines.factory) or an Engine object; `mode` defaults
    to the engine's first; `judge` a registered name (judges.registry; None: the default) or an
    object with `entails(claim, context)`; `engine_config` (engines/engine_config.py) sets the
    in-process engine's retriever (a setting it cannot apply is exit 2 before anything runs);
    `retrieval_k` the retrieval gate's k (None: retrieval.metrics.GATE_K); `model`
    (models.ModelRun; None: the engine's MockProvider) the in-process agent's model and its
    cassette (models/recorder.py): like `engine_config`, its fingerprint is part of the outcome
    cache's key, it is named in the provenance, and a recording reads no stored outcome.

    How (the other `options`, pipeline.spec.RunHow's fields): jobs, executor, scheduler,
    case_timeout, retries, repeat, cache, cache_key, fail_fast, progress. The report is the
    same whatever they are, save repeats (combined, repeats.py) and fail_fast. Reused outcomes
    are marked in the case records (`reused`) and counted in the provenance (`cache`).
    This is the library's one call; the gated run (qa/harness.py) builds its RunWhat and
    RunHow and calls `run_qa`.
    """
    what = RunWhat(golden_path, kb_dir, engine, mode, judge, options.pop("engine_config", None),
                   options.pop("retrieval_k", None), options.pop("model", None))
    report = run_qa(what, RunHow(**options))
    if report.interrupted:  # a library call ends as Ctrl-C does, carrying what ran
        raise RunInterrupted(report.cases, report.finished, report)
    return report


def run_qa(what: RunWhat, how: RunHow) -> QAEvalReport:
    """The QA run of `what`, run as `how` says: the pipeline's steps, one after another."""
    from ragspine_eval.qa.scored import ScoredCase, scoring_fingerprint
    from ragspine_eval.knowledge.kb import kb_fingerprints

    clock = Clock()
    qa = QARun.of(what, how)
    kb_fp, kb_files = kb_fingerprints(what.kb)
    cache = outcome_cache(qa.identity, qa.mode, qa.cache_kb(kb_fp), what.cache_policy(how))
    scoring = scoring_fingerprint(qa.judge) if cache is not None else None
    planned = plan(qa.cases, cache, scoring, ScoredCase.many, ScoredCase.from_run)
    options = run_options(how, planned.to_run, qa.in_process, qa.forkable)
    opened = OpenedEngine(qa, options.case_timeout, how.retries)
    answers = answer(planned, how, options, opened.open, lambda: opened.streamer(planned))
    if what.model is not None:  # a recording's calls folded into its cassette
        what.model.finish(complete=not answers.interrupted)
    # a run the whole-run entry answered: what its report derives from the records may be
    # kept too (report_file.py), read before scoring
    slot = _case_text_slot(cache, qa.cases, what.k) if planned.answered else None
    report = _scored(qa, planned, answers, opened.texts(planned), slot)
    keep(planned, answers.outcomes, answers.interrupted)
    report.provenance = _provenance(report, qa, (kb_fp, kb_files), clock)
    report.provenance = with_usage(with_latency(
        with_cache(report.provenance, cache, len(qa.cases)), qa.cases, answers.outcomes,
        answers.reused), ModelUsage.of(qa.cases, answers.runs, what.model))
    slot = slot or (_case_text_slot(cache, qa.cases, what.k, read=False)
                    if not answers.interrupted else None)
    if slot is not None:  # the case list's text can be kept with the entry (report_file.py)
        report.case_text = replace(slot, records=report.cases)
    report.interrupted = answers.interrupted  # its status says so (gated/ decides what follows)
    return report


@dataclass
class QARun:
    """A QA run's inputs read and checked: the judge, the engine's spec (None: an Engine
    object), its mode, whether an engine configuration applies, the golden cases."""

    what: RunWhat
    judge: Any
    spec: Any
    mode: str | None
    configured: bool
    cases: list[Any]
    cache_key: str | None = None

    @classmethod
    def of(cls, what: RunWhat, how: RunHow) -> QARun:
        """Check what can be checked before anything runs, then read the golden set."""
        from ragspine_eval.engines.factory import parse_engine
        from ragspine_eval.execution.cache import cache_dir
        from ragspine_eval.execution.golden_memo import load_golden_set_cached
        from ragspine_eval.judges import registry as judges

        judge = what.judge
        if judge is None or isinstance(judge, str):
            judge = judges.get(judge or judges.DEFAULT_JUDGE)
        spec = what.spec if what.spec is not None else (
            parse_engine(what.engine, what.mode) if isinstance(what.engine, str) else None)
        configured = what.engine_config is not None and bool(what.engine_config.settings())
        if configured:
            from ragspine_eval.engines.engine_config import EngineConfigError, check_for_qa

            check_for_qa(what.engine_config)
            if spec is None or spec.kind != "ragspine":
                raise EngineConfigError("--engine-config sets the in-process engine's retriever; "
                                        "this engine is not in process, so it cannot take effect")
        from ragspine_eval.models.recorder import check_for_engine

        check_for_engine(what.model, spec.kind if spec is not None else None,
                         spec.mode if spec is not None else what.mode)
        cases = what.cases if what.cases is not None else load_golden_set_cached(
            what.golden, None if how.cache is False else cache_dir())
        mode = spec.mode if spec is not None else what.mode or what.engine.mode
        return cls(what, judge, spec, mode, configured, cases, how.cache_key)

    @property
    def in_process(self) -> bool:
        """Parallel cases run in worker processes: the in-process engine, or an object that
        says so."""
        if self.spec is not None:
            return self.spec.kind == "ragspine"
        return getattr(self.what.engine, "parallel", "threads") == "processes"

    @property
    def forkable(self) -> bool:
        if self.spec is not None:
            return self.spec.kind == "ragspine"
        return getattr(self.what.engine, "forkable", False)

    @property
    def name(self) -> str:
        engine = self.what.engine
        return self.spec.name if self.spec is not None else getattr(engine, "name", engine.label)

    def cache_kb(self, kb_fp: str) -> str:
        """The KB part of the cache's key: another configuration or model, other answers."""
        key = f"{kb_fp}+{self.what.engine_config.fingerprint}" if self.configured else kb_fp
        return self.what.model_keyed(key)

    def identity(self) -> Any:
        """What names the engine in the cache's keys, or None: an HTTP or callable engine
        without a --cache-key (nothing we can see says what is deployed), an Engine object."""
        from ragspine_eval.execution.cache import EngineIdentity, installed_engine_fingerprint

        spec = self.spec
        if spec is None:
            return None
        if spec.kind == "ragspine":
            from importlib.metadata import version

            return EngineIdentity("ragspine", "rag-spine", version("rag-spine"),
                                  installed_engine_fingerprint())
        if self.cache_key:
            return EngineIdentity(spec.kind, spec.name, None, self.cache_key)
        return None


class OpenedEngine:
    """The KB's stores built in a scratch folder and the engine opened on them, only when some
    case must reach the engine (`open`, the answer step's context manager); `kb` once built."""

    def __init__(self, qa: QARun, case_timeout: float, retries: int | None = None):
        self.qa, self.case_timeout, self.retries = qa, case_timeout, retries
        self.kb: Any = None

    @contextmanager
    def open(self) -> Iterator[Any]:
        import tempfile

        from ragspine_eval.engines.engine_config import retriever_options
        from ragspine_eval.engines.factory import build_engine
        from ragspine_eval.knowledge.kb import build_eval_kb

        qa = self.qa
        with tempfile.TemporaryDirectory(prefix="ragspine-eval-kb-") as scratch:
            self.kb = build_eval_kb(qa.what.kb, scratch)
            if qa.spec is None:
                yield qa.what.engine
                return
            engine = build_engine(qa.spec, self.kb, case_timeout=self.case_timeout,
                                  retries=self.retries,
                                  retriever_options=retriever_options(qa.what.engine_config)
                                  if qa.configured else None, model=qa.what.model)
            try:
                yield engine
            finally:
                close = getattr(engine, "close", None)
                if callable(close):
                    close()

    def streamer(self, planned: Plan) -> Any:
        """The scorer of each case as its answer arrives (streaming.py)."""
        from ragspine_eval.qa.streaming import Streamer

        return Streamer(planned.cases, self.kb.narrative_texts(), self.qa.judge,
                        streamed_saver(planned))

    def texts(self, planned: Plan) -> dict[str, str]:
        """The KB's narrative texts for the gates: the built KB's, else read (without the
        engine) only when some case is to be scored (a run whose every case is reused with its
        verdicts calls no gate)."""
        if self.kb is not None:
            return self.kb.narrative_texts()
        if planned.scored is not None and all(entry is not None for entry in planned.scored):
            return {}
        from ragspine_eval.knowledge.kb import load_narrative_docs, workspace_docs
        from ragspine_eval.knowledge.workspace import is_workspace

        kb_dir = self.qa.what.kb
        docs = workspace_docs(kb_dir) if is_workspace(kb_dir) else load_narrative_docs(kb_dir)
        return {doc.doc_id: doc.text for doc in docs}


def _scored(qa: QARun, planned: Plan, answers: Answers, texts: dict[str, str],
            slot: Any) -> QAEvalReport:
    """Every repeat scored (evaluation.evaluate: the first one with the stored and streamed results
    and the verdicts kept as scored) and the repeats combined (repeats.py); reused cases
    marked in their records."""
    streamed = answers.scorer.streamed if answers.scorer is not None else None
    save = scored_saver(planned, answers.outcomes)
    k = {} if qa.what.k is None else {"retrieval_k": qa.what.k}
    first = Reuse(planned.scored, streamed, slot.kept if slot is not None else None, save)
    reports = [evaluate(qa.cases, outcomes, qa.mode, reference_texts=texts, judge=qa.judge,
                        engine=qa.name, reuse=first if n == 0 else None, **k)
               for n, (outcomes, _) in enumerate(answers.runs)]
    report = combine_repeats(reports)
    reused = answers.reused
    if any(reused):
        report.cases = [replace(record, reused=True) if was_reused and not record.reused
                        else record
                        for record, was_reused in zip(report.cases, reused, strict=True)]
    return report


def _provenance(report: QAEvalReport, qa: QARun, kb: tuple[str, Any], clock: Clock
                ) -> Provenance:
    """What produced the report: the in-process engine is the installed rag-spine; any other
    is named by what it is; the model by its provider, name and cassette (what its calls
    used is `times.usage`: pipeline/report.py `with_usage`)."""
    from ragspine_eval.judges import registry as judges

    kb_fp, kb_files = kb
    config, model = qa.what.engine_config, qa.what.model
    return qa_provenance(
        report, qa.what.golden, InputRef(display_path(qa.what.kb), kb_fp), clock,
        judge=judges.describe(qa.judge), kb_files=dict(kb_files), **workspace_of(qa.what.kb),
        **({"engine_config": config.to_dict()} if qa.configured else {}),
        **({"model": model.to_dict()} if model is not None else {}),
        **({} if qa.in_process else {"engine": qa.name, "engine_version": None}))


def _case_text_slot(cache: Any, cases: list, retrieval_k: int | None, read: bool = True) -> Any:
    """The run's CaseTextSlot (qa/report_file.py) when it has a whole-run entry, with what the
    cache kept for it (`read`), else None."""
    entry = cache.run_entry() if cache is not None else None
    if entry is None:
        return None
    from ragspine_eval.qa.report_file import CaseTextSlot, read_kept
    from ragspine_eval.retrieval.metrics import GATE_K

    slot = CaseTextSlot(cache.folder, *entry, cases, GATE_K if retrieval_k is None else retrieval_k)
    return replace(slot, kept=read_kept(slot)) if read else slot


def qa_provenance(report: QAEvalReport, golden_path: str | Path, kb: InputRef | None,
                  clock: Clock | None = None, **engine: Any) -> Provenance:
    """The provenance of a QA report; `engine` may name engine=, engine_version=, judge= and
    kb_files=."""
    from ragspine_eval.provenance import RunInputs, collect

    fps = {c.id: c.fingerprint for c in report.cases}
    golden = InputRef(display_path(golden_path), golden_fingerprint(fps), report.n_cases)
    return collect(RunInputs(harness="qa", mode=report.mode, golden=golden, kb=kb, **engine), clock)

"""One call that runs the QA harness: load the golden set, build the KB, run, score.

`run_qa_eval` loads the golden set, builds the KB's stores in a scratch folder, runs the cases
on an engine (runner.py) and evaluates them (report.py) with a faithfulness judge (judges.py);
the report carries its provenance, the judge included (no baseline yet: gated.qa adds it). Nothing is written here.
Ctrl-C while the cases run (runner.RunInterrupted) still scores what the run has: the report,
marked `interrupted`, holds every case (the unfinished ones as not run) and travels on the
RunInterrupted raised again, for the caller that writes it (gated/qa.py); with repeats, the
repeats finished so far and the interrupted one are combined as usual. Ctrl-C anywhere else is
a plain KeyboardInterrupt.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragspine_eval.provenance import (
    Clock,
    InputRef,
    Provenance,
    display_path,
    golden_fingerprint,
)
from ragspine_eval.paths import KB_DIR
from ragspine_eval.engines.base import Engine
from ragspine_eval.execution.collector import gc_paused, gc_running
from ragspine_eval.execution.golden_memo import load_golden_set_cached
from ragspine_eval.judges.groundedness import EntailmentJudge
from ragspine_eval.qa.repeats import combine_repeats
from ragspine_eval.qa.report import QAEvalReport, evaluate
from ragspine_eval.qa.streaming import Streamer
from ragspine_eval.execution.runner import RunInterrupted


@gc_paused()  # the engine runs with it on (_interruptible); the rest builds trees of plain
# objects, whose young collections would each walk everything made since (0.1 s a warm run)
def run_qa_eval(
    golden_path: str | Path,
    mode: str | None = None,
    *,
    kb_dir: str | Path = KB_DIR,
    engine: str | Engine = "ragspine",
    jobs: int | str = 1,
    case_timeout: float | None = None,
    retries: int | None = None,
    fail_fast: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    cache: bool | None = None,
    cache_key: str | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    judge: str | EntailmentJudge | None = None,
    repeat: int = 1,
    engine_config: Any = None,
    retrieval_k: int | None = None,
    model: Any = None,
) -> QAEvalReport:
    """Load the golden set, build the KB's stores in a scratch folder, run and score every case.

    `engine` is an --engine string ("ragspine", "http://HOST:PORT", "module:callable"; see
    engines.factory) or an Engine object; `mode` defaults to the engine's first mode. `progress`
    is called with (cases done, cases in total, errors so far). The report carries its
    provenance (no baseline yet: the caller that gates adds it). `judge` is the faithfulness
    judge: a registered name (judges.registry; None: the default, lexical) or an object with
    `entails(claim, context)`; the provenance names it. `retrieval_k` is the retrieval gate's k
    (None: retrieval.metrics.GATE_K; a gated run passes its stored baseline's).

    The outcome cache (cache.py): `cache=None` uses it for the in-process engine, and for an HTTP
    or callable engine only when `cache_key` names what is deployed; `cache=False` never uses
    it. Reused outcomes are marked in the case records (`reused`) and counted in the
    provenance (`cache`); the report is otherwise the same as a run that called the engine.

    `jobs`: cases run at once, or "auto" (jobs.py: the usable cores for the in-process engine
    when enough cases are to reach it, else 1); the report is the same whatever it is.
    `executor`: "local" (runner.py: threads, or worker processes with `jobs`) or "dask"
    (dask_executor.py: a LocalCluster of `jobs` workers, or the cluster at `scheduler`).

    `repeat`: run every case that many times and combine the verdicts (repeats.py: a verdict
    that differs between repeats is flaky). Repeats never use the outcome cache: a stored
    answer would make every repeat the same.

    `engine_config` (engines/engine_config.py; None: the engine's defaults) sets the in-process
    engine's retriever; a setting it cannot apply is exit 2 before anything runs. Its
    fingerprint is part of the outcome cache's key and its settings of the provenance.

    `model` (models.ModelRun; None: the engine's MockProvider) is the agent's model and its
    cassette (models/recorder.py); like `engine_config`, its fingerprint is part of the outcome
    cache's key and it is named in the provenance.
    """
    from ragspine_eval.judges import registry as judges
    from ragspine_eval.execution.cache import cache_dir
    from ragspine_eval.engines.factory import build_engine, parse_engine
    from ragspine_eval.execution.jobs import own_process, resolve_jobs
    from ragspine_eval.execution.workers import forks_here
    from ragspine_eval.retrieval.kb import build_eval_kb, kb_fingerprints
    from ragspine_eval.execution.runner import DEFAULT_CASE_TIMEOUT, RunOptions
    from ragspine_eval.qa.scored import ScoredCase, scoring_fingerprint

    if judge is None or isinstance(judge, str):
        judge = judges.get(judge or judges.DEFAULT_JUDGE)
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    clock = Clock()
    # the options checked before anything is read; the number of jobs is chosen below
    RunOptions(resolve_jobs(jobs, 0, False), case_timeout or DEFAULT_CASE_TIMEOUT, fail_fast)
    spec = parse_engine(engine, mode) if isinstance(engine, str) else None
    configured = engine_config is not None and bool(engine_config.settings())
    if configured:
        from ragspine_eval.engines.engine_config import EngineConfigError, check_for_qa

        check_for_qa(engine_config)
        if spec is None or spec.kind != "ragspine":
            raise EngineConfigError("--engine-config sets the in-process engine's retriever; "
                                    "this engine is not in process, so it cannot take effect")
    from ragspine_eval.models.recorder import check_for_engine, in_use

    model = in_use(model)
    check_for_engine(model, spec.kind if spec is not None else None, spec.mode if spec else mode)
    cases = load_golden_set_cached(golden_path, None if cache is False else cache_dir())
    kb_fp, kb_files = kb_fingerprints(kb_dir)
    if spec is not None:
        mode = spec.mode
    # another configuration, other answers: the cache keys them apart
    cache_kb = f"{kb_fp}+{engine_config.fingerprint}" if configured else kb_fp
    cache_kb += f"+{model.fingerprint()}" if model is not None else ""
    # a recording asks the model for every case: an outcome reused would leave its calls out
    reuse = repeat == 1 and (model is None or model.mode != "record")
    store = _outcome_cache(spec, mode, cache_kb, cache if reuse else False, cache_key)
    scoring = scoring_fingerprint(judge) if store is not None else None
    known, scored = (store.get_scored(cases, scoring, ScoredCase.many, ScoredCase.from_run)
                     if store is not None else (None, None))
    to_run = len(cases) if known is None else sum(
        o is None and s is None for o, s in zip(known, scored, strict=True))
    in_process = (spec.kind == "ragspine" if spec is not None
                  else getattr(engine, "parallel", "threads") == "processes")
    forked = executor == "local" and forks_here() and (
        spec.kind == "ragspine" if spec is not None else getattr(engine, "forkable", False))
    n_jobs = resolve_jobs(jobs, to_run, in_process or executor == "dask", forked)
    options = RunOptions(n_jobs, case_timeout or DEFAULT_CASE_TIMEOUT, fail_fast,
                         own_process=in_process and own_process(n_jobs, to_run, forked))
    runs = []
    interrupted = False
    kb = streamer = None
    eng: Any = engine
    if known is None or any(o is None and s is None for o, s in zip(known, scored)):
        # some case must reach the engine: only now are its stores built and the engine opened
        with tempfile.TemporaryDirectory(prefix="ragspine-eval-kb-") as scratch:
            kb = build_eval_kb(kb_dir, scratch)
            if spec is not None:
                from ragspine_eval.engines.engine_config import retriever_options

                eng = build_engine(spec, kb, case_timeout=options.case_timeout, retries=retries,
                                   retriever_options=retriever_options(engine_config)
                                   if configured else None, model=model)
            else:
                mode = mode or eng.mode
            # one run of worker processes: each case scored as it comes back (streaming.py)
            streams = repeat == 1 and executor == "local" and (options.jobs > 1
                                                               or options.own_process)
            streamer = Streamer(cases, kb.narrative_texts(), judge,
                                _saver(store, scoring, cases)) if streams else None
            try:
                runner = _runner(executor, scheduler)
                for k in range(repeat):
                    if model is not None:  # a cassette keeps each repeat's answers apart
                        eng.repeat_index = k
                    outcomes, reused, interrupted = _run_with_cache(
                        runner, eng, cases, options, _nth_repeat(progress, k, repeat, len(cases)),
                        store, known, scored, streamer)
                    runs.append((outcomes, reused))
                    if interrupted:
                        break
            finally:
                close = getattr(eng, "close", None)
                if spec is not None and callable(close):
                    close()
    else:  # every case known and scored: the engine is neither imported nor started
        if progress:
            progress(len(cases), len(cases), 0)
        runs.append((known, [True] * len(cases)))
    if model is not None:  # a recording's calls folded into its cassette
        model.finish(complete=not interrupted)
    # a run the whole-run entry answered: what its report derives from the records may be
    # kept too (report_file.py), read before scoring
    slot = _case_text_slot(store, cases, retrieval_k) if runs[0][0] is known else None
    name = spec.name if spec is not None else getattr(eng, "name", eng.label)
    texts = kb.narrative_texts() if kb is not None else _narrative_texts(kb_dir, scored)
    save = _scored_saver(store, scoring, cases, runs[0][0]) if scoring else None
    k = {} if retrieval_k is None else {"retrieval_k": retrieval_k}
    reports = [evaluate(cases, outcomes, mode, reference_texts=texts, judge=judge,
                        engine=name, scored=scored if n == 0 else None,
                        on_scored=save if n == 0 else None,
                        streamed=streamer.streamed if streamer and n == 0 else None,
                        kept_run=slot.kept if slot is not None and n == 0 else None, **k)
               for n, (outcomes, _) in enumerate(runs)]
    if store is not None and scoring:
        store.flush("verdicts")
        if not interrupted:
            store.keep_run(cases, runs[0][0])  # the next identical run reads one entry
    report = combine_repeats(reports)
    reused = runs[0][1]
    if any(reused):
        report.cases = [replace(record, reused=True) if was_reused and not record.reused
                        else record
                        for record, was_reused in zip(report.cases, reused, strict=True)]
    # the in-process engine is the installed rag-spine; any other is named by what it is
    report.provenance = qa_provenance(
        report, golden_path, InputRef(display_path(kb_dir), kb_fp), clock,
        judge=judges.describe(judge), kb_files=dict(kb_files), **_workspace_of(kb_dir),
        **({"engine_config": engine_config.to_dict()} if configured else {}),
        **({"model": model.to_dict([o for outs, _ in runs for o in outs],
                                   [dict(c.tags) for _ in runs for c in cases])}
           if model is not None else {}),
        **({} if in_process else {"engine": name, "engine_version": None}))
    if store is not None:
        report.provenance = replace(report.provenance, cache=store.summary(len(cases)))
    report.provenance = _with_latency(report.provenance, cases, runs[0][0], reused)
    slot = slot or (_case_text_slot(store, cases, retrieval_k, read=False)
                    if not interrupted else None)
    if slot is not None:  # the case list's text can be kept with the entry (report_file.py)
        report.case_text = replace(slot, records=report.cases)
    if interrupted:
        report.interrupted = True
        raise RunInterrupted(runs[-1][0], report.finished, report)
    return report


def _case_text_slot(store: Any, cases: list, retrieval_k: int | None, read: bool = True) -> Any:
    """The run's CaseTextSlot (qa/report_file.py) when it has a whole-run entry, with what the
    cache kept for it (`read`), else None."""
    entry = store.run_entry() if store is not None else None
    if entry is None:
        return None
    from ragspine_eval.qa.report_file import CaseTextSlot, read_kept
    from ragspine_eval.retrieval.metrics import GATE_K

    slot = CaseTextSlot(store.folder, *entry, cases, GATE_K if retrieval_k is None else retrieval_k)
    return replace(slot, kept=read_kept(slot)) if read else slot


def _with_latency(provenance: Any, cases: list, outcomes: list, reused: list) -> Any:
    """The provenance with each case's wall time (the first repeat's; a reused or unrun case
    has none) and its p50/p95/max per run and by tag under `times.latency`."""
    from ragspine_eval.execution import latency

    if provenance.times is None:
        return provenance
    timings = [(c.id, dict(c.tags), None if was_reused else latency.seconds_of(o),
                bool(getattr(o, "error", None))) for c, o, was_reused in
               zip(cases, outcomes, reused)]
    computed = [o for o, was_reused in zip(outcomes, reused) if not was_reused]
    return replace(provenance, times=replace(provenance.times, latency=latency.summarize(
        timings, latency.llm_totals(computed))))


def _workspace_of(kb_dir: str | Path) -> dict[str, Any]:
    """{"workspace": {"chunking": ...}} for an engine workspace as the KB, else nothing."""
    from ragspine_eval.retrieval.workspace import chunking_of, is_workspace, read_workspace

    return ({"workspace": {"chunking": chunking_of(read_workspace(kb_dir))}}
            if is_workspace(kb_dir) else {})


def _narrative_texts(kb_dir: str | Path, scored: list | None) -> dict[str, str]:
    """The KB's narrative texts for the gates, read (without the engine) only when some case is
    to be scored: a run whose every case is reused with its verdicts calls no gate."""
    if scored is not None and all(entry is not None for entry in scored):
        return {}
    from ragspine_eval.retrieval.kb import load_narrative_docs, workspace_docs
    from ragspine_eval.retrieval.workspace import is_workspace

    docs = workspace_docs(kb_dir) if is_workspace(kb_dir) else load_narrative_docs(kb_dir)
    return {doc.doc_id: doc.text for doc in docs}


def _scored_saver(store: Any, scoring: str, cases: list, outcomes: list) -> Any:
    """evaluate's on_scored: each case scored now goes to the verdict cache."""
    def save(i: int, entry: Any) -> None:
        store.put_scored(cases[i], outcomes[i], entry, scoring)
    return save


def _saver(store: Any, scoring: str | None, cases: list) -> Any:
    """The Streamer's save: each case scored as it arrives goes to the verdict cache."""
    if store is None or not scoring:
        return None
    return lambda i, out, entry: store.put_scored(cases[i], out, entry, scoring)


def _outcome_cache(spec: Any, mode: str, kb_fingerprint: str,
                   cache: bool | None, cache_key: str | None):  # noqa: ANN202
    """The run's OutcomeCache, or None when this run does not use one (see run_qa_eval)."""
    from ragspine_eval.execution.cache import (
        EngineIdentity,
        OutcomeCache,
        cache_dir,
        installed_engine_fingerprint,
    )

    if cache is False or spec is None:
        return None
    if spec.kind == "ragspine":
        from importlib.metadata import version

        identity = EngineIdentity("ragspine", "rag-spine", version("rag-spine"),
                                  installed_engine_fingerprint())
    elif cache_key:
        identity = EngineIdentity(spec.kind, spec.name, None, cache_key)
    else:
        return None  # an HTTP or callable engine: nothing we can see says what is deployed
    return OutcomeCache(cache_dir(), identity, mode, kb_fingerprint)


def _nth_repeat(progress: Any, k: int, repeat: int, n: int) -> Any:
    """The progress callback of repeat k: one bar over every repeat's cases."""
    if progress is None or repeat == 1:
        return progress
    return lambda done, total, errors: progress(k * n + done, repeat * n, errors)


EXECUTORS = ("local", "dask")


def _runner(executor: str, scheduler: str | None) -> Callable[..., list]:
    """run_cases(engine, cases, options, progress) of the chosen executor."""
    from ragspine_eval.execution.runner import run_cases

    if executor == "local":
        return run_cases
    if executor == "dask":
        from ragspine_eval.execution.dask_executor import run_cases_dask

        # Dask's workers hand their outcomes back at the end: nothing to stream
        return lambda engine, cases, options, progress, on_outcome=None: run_cases_dask(
            engine, cases, options, progress, scheduler=scheduler)
    raise ValueError(f"unknown executor {executor!r}; expected one of {', '.join(EXECUTORS)}")


def _run_with_cache(run_cases: Callable[..., list], eng: Engine, cases: list, options: Any,
                    progress: Any, store: Any, known: list | None = None,
                    scored: list | None = None, streamer: Streamer | None = None
                    ) -> tuple[list, list[bool], bool]:
    """Outcomes in case order, per case whether it was reused, and whether Ctrl-C stopped the
    run (the unfinished cases then hold runner's not-run error). Only the cases the cache
    cannot answer reach the engine; each answer is stored as soon as it comes, so that a run
    killed part-way resumes from where it was."""
    from ragspine_eval.execution.cache import StoringEngine

    if store is None:
        outcomes, interrupted = _interruptible(
            run_cases, eng, cases, options, progress,
            streamer.at(range(len(cases))) if streamer else None)
        return outcomes, [False] * len(cases), interrupted
    if known is None:
        known, scored = store.get_many(cases), None
    # a case whose verdicts are reused (scored) is known too, with no outcome read
    have = known if scored is None else [o if s is None else s for o, s in zip(known, scored)]
    todo = [case for case, out in zip(cases, have, strict=True) if out is None]
    reused = len(cases) - len(todo)

    def ticked(done: int, total: int, errors: int) -> None:
        progress(done + reused, len(cases), errors)

    if progress and reused:
        progress(reused, len(cases), 0)
    positions = [i for i, out in enumerate(have) if out is None]
    on_outcome = streamer.at(positions, [] if scored is None else [
        (i, s) for i, s in enumerate(scored) if s is not None]) if streamer else None
    if options.own_process and on_outcome is not None:
        # the one worker only answers: this process, a core of its own, stores each answer
        # as it arrives, before scoring it (and whatever arrived unreported, after the run)
        answers, interrupted = _stored_here(run_cases, eng, store, todo, options,
                                            ticked if progress else None, on_outcome)
    else:
        answers, interrupted = _interruptible(run_cases, StoringEngine(eng, store), todo,
                                              options, ticked if progress else None, on_outcome)
    fresh = iter(answers)
    outcomes = [next(fresh) if have_i is None else out for out, have_i in zip(known, have)]
    return outcomes, [out is not None for out in have], interrupted


def _stored_here(run_cases: Callable[..., list], eng: Engine, store: Any, todo: list,
                 options: Any, progress: Any, on_outcome: Callable[[int, Any], None]
                 ) -> tuple[list, bool]:
    """_interruptible over the bare engine, each answer stored in this process as it arrives
    (then handed to on_outcome), the rest once the run ends or stops; committed before return."""
    stored = [False] * len(todo)

    def put(j: int, out: Any) -> None:
        store.put(todo[j], out)
        stored[j] = True
        on_outcome(j, out)

    try:
        answers, interrupted = _interruptible(run_cases, eng, todo, options, progress, put)
        for j, out in enumerate(answers):
            if not stored[j]:
                store.put(todo[j], out)  # an error or an interrupted case is never stored
    finally:
        store.flush()
    return answers, interrupted


def _interruptible(run_cases: Callable[..., list], *args: Any) -> tuple[list, bool]:
    """run_cases(*args) and False; after Ctrl-C, every outcome it had and True. The cyclic
    collector runs meanwhile: an engine's objects may hold cycles."""
    try:
        with gc_running():
            return run_cases(*args), False
    except RunInterrupted as stopped:
        return stopped.outcomes, True


def qa_provenance(report: QAEvalReport, golden_path: str | Path, kb: InputRef | None,
                  clock: Clock | None = None, **engine: Any) -> Provenance:
    """The provenance of a QA report; `engine` may name engine=, engine_version=, judge= and
    kb_files=."""
    from ragspine_eval.provenance import collect

    fps = {c.id: c.fingerprint for c in report.cases}
    golden = InputRef(display_path(golden_path), golden_fingerprint(fps), report.n_cases)
    return collect(harness="qa", mode=report.mode, golden=golden, kb=kb, clock=clock, **engine)

"""QA measurements, each run in its own process by child.run: our harness, the engine-only
floor, and the engine's own harness (the peer), over the same cases and the same KB.

Engine time is the wall time spent inside calls into `ragspine` on the per-case path:
parse_intent, clarify_scope, expand_subtasks, execute_query_metric, the narrative retriever's
retrieve, MockProvider(), answer_question, and opening the two stores (SqliteFactStore,
build_narrative_retriever). `EngineClock` wraps exactly those names in the module that calls
them (ragspine_eval.engines.inprocess for ours, ragspine.eval.qa_eval for the peer) and counts
only the outermost call, so the retriever answer_question calls internally is not counted
twice. Everything else is harness: loading and validating the golden set, building the KB
stores, the runner, turning engine results into a CaseOutcome and an answer text, scoring, the
report and writing it as JSON. Harness overhead = (total - engine) / total.

The floor makes the same engine calls as ragspine_eval/engines/inprocess.py, case by case in a
plain loop, over stores built beforehand and cases loaded beforehand (neither timed), and keeps
nothing: no outcome, no scoring, no report.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragspine_eval.paths import KB_DIR

ENGINE_CALLS = ("parse_intent", "clarify_scope", "expand_subtasks", "execute_query_metric",
                "MockProvider", "answer_question", "SqliteFactStore")


class EngineClock:
    """Accumulates the wall time of the outermost engine call in progress, in this process and
    in any process forked from it (shared memory: `--jobs 1` may run its engine in a forked
    worker, jobs.own_process; the figures are read once the run is over)."""

    def __init__(self) -> None:
        from multiprocessing.sharedctypes import RawValue

        self._seconds, self._calls = RawValue("d", 0.0), RawValue("q", 0)
        self._depth = 0

    @property
    def seconds(self) -> float:
        return self._seconds.value

    @property
    def calls(self) -> int:
        return self._calls.value

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return fn(*args, **kwargs)
            self._depth += 1
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._seconds.value += time.perf_counter() - started
                self._calls.value += 1
                self._depth -= 1
        return timed

    def instrument(self, module: Any) -> None:
        """Time every engine call `module` makes by name, and its retrievers' retrieve()."""
        for name in ENGINE_CALLS:
            if hasattr(module, name):
                setattr(module, name, self.wrap(getattr(module, name)))
        build = module.build_narrative_retriever

        def build_timed(*args: Any, **kwargs: Any) -> Any:
            retriever, chunks = build(*args, **kwargs)
            return _TimedRetriever(retriever, self), chunks

        module.build_narrative_retriever = self.wrap(build_timed)


class _TimedRetriever:
    def __init__(self, retriever: Any, clock: EngineClock):
        self._retriever = retriever
        self.retrieve = clock.wrap(retriever.retrieve)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._retriever, name)


def _result(n_cases: int, total_s: float, engine_s: float | None, **extra: Any) -> dict[str, Any]:
    out = {"n_cases": n_cases, "total_s": round(total_s, 4),
           "ms_per_case": round(1000 * total_s / n_cases, 4),
           "cases_per_s": round(n_cases / total_s, 1)}
    if engine_s is not None:
        out["engine_s"] = round(engine_s, 4)
        out["overhead"] = round((total_s - engine_s) / total_s, 4)
    return {**out, **extra}


# --- ours ----------------------------------------------------------------------------------------


def ours(golden: str, mode: str, jobs: int | str = 1, instrument: bool = True,
         executor: str = "local", cache: bool | None = None) -> dict[str, Any]:
    """run_qa_eval over the golden set, then its JSON report written as the CLI writes it
    (qa/report_file.write_report). Total = both. With instrument, the engine calls are timed
    (jobs 1 only, in this process or the worker forked from it: spawned worker processes
    import their own, untimed, engine). A cold run, as a user's first: the outcome cache is on,
    as by default, in a fresh empty folder, so every outcome is computed and stored
    (`cache=False`: the cache off, to measure what storing outcomes and verdicts costs)."""
    from ragspine_eval.engines import inprocess
    from ragspine_eval.qa.report_file import write_report
    from ragspine_eval.qa.run import run_qa_eval

    clock = EngineClock()
    if instrument and jobs == 1:
        clock.instrument(inprocess)
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-report-") as scratch:
        report_path = Path(scratch) / "report.json"
        os.environ["RAGSPINE_EVAL_CACHE_DIR"] = str(Path(scratch) / "cache")
        started = time.perf_counter()
        report = run_qa_eval(golden, mode, jobs=jobs, executor=executor, cache=cache)
        write_report(report_path, report)
        total = time.perf_counter() - started
        size = report_path.stat().st_size
    return _result(report.n_cases, total, clock.seconds if clock.calls else None,
                   engine_errors=len(report.errors), report_mib=round(size / 2**20, 2),
                   pass_rates={n: round(m.pass_rate, 4) for n, m in report.metrics.items()})


# --- the engine-only floor -----------------------------------------------------------------------


def floor(golden: str, mode: str) -> dict[str, Any]:
    """The engine calls of engines/inprocess.py, bare, in a loop (see the module docstring)."""
    from ragspine.agent.agent import answer_question
    from ragspine.agent.intent import (
        CLARIFY_ASK_FIRST,
        CLARIFY_OUT_OF_SCOPE_ENTITY,
        ROUTE_COMPOSITE,
        ROUTE_NARRATIVE,
        ROUTE_STRUCTURED,
        clarify_scope,
        expand_subtasks,
        parse_intent,
    )
    from ragspine.agent.llm_provider import MockProvider
    from ragspine.agent.query_tools import execute_query_metric
    from ragspine.retrieval.link.narrative_link import build_narrative_retriever
    from ragspine.storage.fact_store import SqliteFactStore

    from ragspine_eval.engines.inprocess import NARRATIVE_TOP_K
    from ragspine_eval.golden.cases import load_golden_set
    from ragspine_eval.knowledge.kb import build_eval_kb

    def filters(intent: Any) -> dict[str, str] | None:
        found = {"entity": intent.entity} if intent.entity else {}
        if intent.period:
            found["period"] = intent.period[1]
        return found or None

    def period(p: tuple[str, str] | None) -> str:
        return "" if p is None else (f"FY{p[1]}" if p[0] == "FY" else p[1])

    cases = load_golden_set(golden)
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-kb-") as scratch:
        kb = build_eval_kb(KB_DIR, scratch)
        started = time.perf_counter()
        facts = SqliteFactStore(kb.fact_db)
        retriever, chunks = build_narrative_retriever(kb.chunk_db)
        for case in cases:
            q, ref = case.question, case.reference_date
            if mode == "agent":
                result = answer_question(q, facts, MockProvider(reference_date=ref),
                                         reference_date=ref, narrative_retriever=retriever)
                if result.route in (ROUTE_NARRATIVE, ROUTE_COMPOSITE):
                    intent = parse_intent(q, reference_date=ref)
                    retriever.retrieve(q, filters=filters(intent), top_k=NARRATIVE_TOP_K)
                continue
            intent = parse_intent(q, reference_date=ref)
            clar = clarify_scope(intent, reference_date=ref)
            if clar.mode in (CLARIFY_OUT_OF_SCOPE_ENTITY, CLARIFY_ASK_FIRST):
                continue
            if intent.route in (ROUTE_STRUCTURED, ROUTE_COMPOSITE):
                for task in expand_subtasks(intent, default_entity=clar.assumed_slots.get("entity"),
                                            default_period=clar.assumed_slots.get("period")):
                    execute_query_metric(facts, metric=task.metric or "", entity=task.entity or "",
                                         period=period(task.period),
                                         channel=task.channel or "TOTAL")
            if intent.route in (ROUTE_NARRATIVE, ROUTE_COMPOSITE):
                retriever.retrieve(q, filters=filters(intent), top_k=NARRATIVE_TOP_K)
        total = time.perf_counter() - started
        facts.close()
        chunks.close()
    return _result(len(cases), total, total)


# --- the engine's own harness ------------------------------------------------------------------


def peer(golden: str, mode: str) -> dict[str, Any]:
    """ragspine.eval.qa_eval on the same cases and over the same KB stores as ours: its loader,
    its per-case runner (run_case_tool_direct or run_case_agent), its evaluate, and its report
    written as its CLI writes it (json.dumps(indent=2)). Its run_qa_eval makes the same calls
    but over the engine's built-in KB, which differs from data/kb, so it is not used as is."""
    from ragspine.eval import qa_eval as peer_eval

    from ragspine_eval.knowledge.kb import build_eval_kb

    clock = EngineClock()
    clock.instrument(peer_eval)
    runner = peer_eval.run_case_tool_direct if mode == "tool" else peer_eval.run_case_agent
    with tempfile.TemporaryDirectory(prefix="ragspine-bench-peer-") as scratch:
        report_path = Path(scratch) / "report.json"
        started = time.perf_counter()
        cases = peer_eval.load_golden_set(golden)
        kb = build_eval_kb(KB_DIR, Path(scratch) / "kb")
        store = peer_eval.SqliteFactStore(kb.fact_db)
        retriever, chunks = peer_eval.build_narrative_retriever(kb.chunk_db)
        try:
            outcomes = {c.id: runner(c, store, retriever) for c in cases}
        finally:
            store.close()
            chunks.close()
        report = peer_eval.evaluate(cases, outcomes, mode=mode,
                                    reference_texts=kb.narrative_texts())
        report_path.write_text(json.dumps(report.to_dict(), ensure_ascii=False, indent=2),
                               encoding="utf-8")
        total = time.perf_counter() - started
    return _result(report.n_cases, total, clock.seconds,
                   pass_rates={n: round(m.pass_rate, 4) for n, m in report.metrics.items()})

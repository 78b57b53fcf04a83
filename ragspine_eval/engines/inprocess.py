"""The RAGSpine engine run in this process, in the two modes of `EVAL_MODES`.

- tool: no LLM at all. Parse the intent, run the clarification gateway, call query_metric
  and/or the narrative retriever directly, and compose an answer that cites its sources.
  This scores the deterministic pipeline on its own.
- agent: the engine's `answer_question` with its deterministic MockProvider, or the model a
  `models.ModelRun` names (a real provider, behind its cassette: models/recorder.py). The engine's
  answer path is left byte-for-byte untouched: the retrieved context that groundedness needs is
  observed on our side by re-running the retriever with the same query and filters the engine uses.

Both modes record the ranked passages the retriever returned (`CaseOutcome.passages`: doc,
locator, chunk id, the engine's bm25/vector/fused scores, text, in its order), [] on a route
that retrieves nothing; in agent mode they are the re-run's, the same query and filters.

Both modes read the same stores built by `kb.build_eval_kb`. An out-of-scope ruling (a
competitor entity) is recorded as a refusal with clarification_mode "none", never as a
clarification. SQLite handles are per thread (the engine's stores are bound to their thread), and
a pickled engine carries only its KB paths and mode, so each worker process of a parallel run
opens its own handles.
"""

from __future__ import annotations

import math
import threading
from typing import Any

from ragspine.agent.agent import answer_question
from ragspine.agent.intent import (
    CLARIFY_ASK_FIRST,
    CLARIFY_NONE,
    CLARIFY_OUT_OF_SCOPE_ENTITY,
    ROUTE_COMPOSITE,
    ROUTE_NARRATIVE,
    ROUTE_STRUCTURED,
    ParsedIntent,
    clarify_scope,
    expand_subtasks,
    parse_intent,
)
from ragspine.agent.llm_provider import MockProvider
from ragspine.agent.query_tools import execute_query_metric
from ragspine.retrieval.link.narrative_link import build_narrative_retriever
from ragspine.storage.fact_store import SqliteFactStore

from ragspine_eval.engines.base import EVAL_MODES, CaseOutcome, error_outcome
from ragspine_eval.golden.cases import GoldenCase
from ragspine_eval.knowledge.kb import EvalKB

# The engine's own narrative path asks its retriever for this many snippets; tool mode asks for
# the same so the two modes see the same evidence.
NARRATIVE_TOP_K = 50
# The engine's agent joins the numeric part and the narrative part of a composite answer with
# this header; the text after it is the narrative answer that groundedness scores.
_COMPOSITE_NARRATIVE_HEADER = "归因分析：\n"
_REFUSING_STATUSES = ("not_found", "unrecognized_param")


class RagspineEngine:
    """The in-process engine over a built KB, in mode "tool" or "agent"."""

    name = "ragspine"
    # CPU-bound Python: parallel cases run in worker processes, not threads; forked where that
    # is safe (workers.py): a fresh engine holds no handle, each process opens its own
    parallel = "processes"
    forkable = True

    def __init__(self, kb: EvalKB, mode: str = "tool",
                 retriever_options: dict[str, str] | None = None, model: Any = None):
        if mode not in EVAL_MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(EVAL_MODES)}")
        self.kb, self.mode = kb, mode
        self.label = mode  # the committed baseline's keys: "tool" and "agent"
        # an engine configuration's retriever settings (engine_config.retriever_options)
        self.retriever_options = dict(retriever_options or {})
        # the agent's model (models.ModelRun; None: the MockProvider) and which repeat of the
        # run this is (a cassette keeps each repeat's answers apart)
        self.model, self.repeat_index = model, 0
        self._local = threading.local()

    def __getstate__(self) -> dict[str, Any]:
        return {"kb": self.kb, "mode": self.mode, "options": self.retriever_options,
                "model": self.model, "repeat": self.repeat_index}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["kb"], state["mode"], state.get("options"),  # type: ignore[misc]
                      state.get("model"))
        self.repeat_index = state.get("repeat", 0)

    def run_case(self, case: GoldenCase) -> CaseOutcome:
        try:
            if self.mode == "tool":
                return self._run_tool(case)
            return self._run_agent(case)
        except Exception as exc:  # an engine fault is the case's error, never the run's end
            return error_outcome(exc)

    # --- per-thread engine handles ----------------------------------------------------------

    def _stores(self) -> tuple[SqliteFactStore, Any]:
        local = self._local
        if not hasattr(local, "facts"):
            local.facts = SqliteFactStore(self.kb.fact_db)
            local.retriever, local.chunks = build_narrative_retriever(
                self.kb.chunk_db, **self.retriever_options)
        return local.facts, local.retriever

    def close(self) -> None:
        local = self._local
        if hasattr(local, "facts"):
            local.facts.close()
            local.chunks.close()
            del local.facts, local.retriever, local.chunks

    # --- tool mode ---------------------------------------------------------------------------

    def _run_tool(self, case: GoldenCase) -> CaseOutcome:
        facts, retriever = self._stores()
        intent = parse_intent(case.question, reference_date=case.reference_date)
        clar = clarify_scope(intent, reference_date=case.reference_date)
        out = CaseOutcome(route=intent.route, clarification_mode=clar.mode, passages=[])
        if clar.mode == CLARIFY_OUT_OF_SCOPE_ENTITY:
            out.clarification_mode, out.refused, out.answer = CLARIFY_NONE, True, clar.question or ""
            return out
        if clar.mode == CLARIFY_ASK_FIRST:
            out.answer = clar.question or ""
            return out

        lines: list[str] = []
        if clar.assumption_note:
            lines.append(f"[assumption] {clar.assumption_note}")
        if intent.route in (ROUTE_STRUCTURED, ROUTE_COMPOSITE):
            lines.extend(self._tool_numeric(intent, clar, facts, out))
        if intent.route in (ROUTE_NARRATIVE, ROUTE_COMPOSITE):
            snippets = retriever.retrieve(
                case.question, filters=_narrative_filters(intent), top_k=NARRATIVE_TOP_K
            )
            cited = [f"{_snippet_text(s)}（来源：{_doc(s)} {_locator(s)}）" for s in snippets]
            out.sources.extend({"doc": _doc(s), "locator": _locator(s)} for s in snippets)
            out.retrieved_context = [_snippet_text(s) for s in snippets]
            out.passages = [_passage(s) for s in snippets]
            out.narrative_answer = "\n".join(cited)
            if snippets:
                lines.extend(cited)
            else:
                lines.append("未检索到与该问题相关的资料，无法基于现有知识库作答。")
                out.refused = out.refused or intent.route == ROUTE_NARRATIVE
        out.answer = "\n".join(lines)
        return out

    @staticmethod
    def _tool_numeric(intent: ParsedIntent, clar: Any, facts: SqliteFactStore,
                      out: CaseOutcome) -> list[str]:
        lines: list[str] = []
        subtasks = expand_subtasks(
            intent,
            default_entity=clar.assumed_slots.get("entity"),
            default_period=clar.assumed_slots.get("period"),
        )
        for task in subtasks:
            result = execute_query_metric(
                facts,
                metric=task.metric or "",
                entity=task.entity or "",
                period=_period_param(task.period),
                channel=task.channel or "TOTAL",
            )
            status = str(result["status"])
            out.tool_statuses.append(status)
            if status == "found":
                source = {"doc": result["source"]["doc"], "locator": result["source"]["locator"]}
                if out.found_value is None:
                    out.found_value, out.found_unit = result["value"], result["unit"]
                    out.found_source = source
                out.sources.append(source)
                channel = f" ({result['channel']})" if result["channel"] != "TOTAL" else ""
                lines.append(
                    f"{result['entity']} {_period_label(result)} {result['metric_code']}{channel}: "
                    f"{result['value']:g} {result['unit']}"
                    f"（来源：{source['doc']} · {source['locator']}）"
                )
            elif status == "not_found":
                norm = result["normalized"]
                lines.append(
                    f"查不到：{norm['metric_code']} / {norm['entity']} / {norm['period']}"
                    f"（渠道 {norm['channel']}）不在事实表中，不提供推测数字。"
                )
            else:
                lines.append(f"无法识别参数 {result.get('param')}：{result.get('raw')!r}。")
        if out.found_value is None and any(s in _REFUSING_STATUSES for s in out.tool_statuses):
            out.refused = True
        return lines

    # --- agent mode --------------------------------------------------------------------------

    def _run_agent(self, case: GoldenCase) -> CaseOutcome:
        facts, retriever = self._stores()
        provider = (MockProvider(reference_date=case.reference_date) if self.model is None
                    else self.model.provider_for(case.id, case.reference_date, self.repeat_index))
        result = answer_question(
            case.question,
            facts,
            provider,
            reference_date=case.reference_date,
            narrative_retriever=retriever,
        )
        if self.model is not None:  # a cassette miss the engine caught is still this case's error
            from ragspine_eval.models.recorder import RecordedProvider

            if isinstance(provider, RecordedProvider):  # behind a cassette, known by its type
                provider.raise_swallowed()
        mode = result.clarification.mode if result.clarification else CLARIFY_NONE
        out = CaseOutcome(
            route=result.route,
            clarification_mode=mode,
            answer=result.answer,
            sources=[{"doc": s.get("doc", ""), "locator": s.get("locator", "")}
                     for s in result.sources],
            tool_statuses=[str(r.get("status", "")) for r in result.tool_results],
            passages=[],
        )
        found = [r for r in result.tool_results if r.get("status") == "found"]
        if found:
            first = found[0]
            out.found_value, out.found_unit = first["value"], first["unit"]
            out.found_source = {"doc": first["source"]["doc"], "locator": first["source"]["locator"]}

        if mode == CLARIFY_OUT_OF_SCOPE_ENTITY:
            out.clarification_mode, out.refused = CLARIFY_NONE, True
        elif mode != CLARIFY_ASK_FIRST:
            numeric_refusal = (
                result.route in (ROUTE_STRUCTURED, ROUTE_COMPOSITE)
                and not found
                and any(s in _REFUSING_STATUSES for s in out.tool_statuses)
            )
            out.refused = numeric_refusal or (result.route == ROUTE_NARRATIVE and not result.sources)

        if result.route in (ROUTE_NARRATIVE, ROUTE_COMPOSITE):
            intent = parse_intent(case.question, reference_date=case.reference_date)
            snippets = retriever.retrieve(
                case.question, filters=_narrative_filters(intent), top_k=NARRATIVE_TOP_K
            )
            out.retrieved_context = [_snippet_text(s) for s in snippets]
            out.passages = [_passage(s) for s in snippets]
            if result.route == ROUTE_NARRATIVE:
                out.narrative_answer = result.answer
            else:
                out.narrative_answer = result.answer.partition(_COMPOSITE_NARRATIVE_HEADER)[2]
        return out


# --- small helpers shared by both modes ------------------------------------------------------


def _narrative_filters(intent: ParsedIntent) -> dict[str, str] | None:
    """The metadata filters the engine's narrative path derives from the intent."""
    filters: dict[str, str] = {}
    if intent.entity:
        filters["entity"] = intent.entity
    if intent.period:
        filters["period"] = intent.period[1]
    return filters or None


def _period_param(period: tuple[str, str] | None) -> str:
    if period is None:
        return ""
    period_type, value = period
    return f"FY{value}" if period_type == "FY" else value


def _period_label(result: dict[str, Any]) -> str:
    return f"FY{result['period']}" if result["period_type"] == "FY" else str(result["period"])


def _snippet_text(snippet: dict[str, Any]) -> str:
    return str(snippet.get("text") or snippet.get("content") or "")


def _doc(snippet: dict[str, Any]) -> str:
    return str(snippet.get("doc_id") or snippet.get("doc") or "")


def _locator(snippet: dict[str, Any]) -> str:
    return str(snippet.get("source_locator") or snippet.get("locator") or "")


def _passage(snippet: dict[str, Any]) -> dict[str, Any]:
    """A snippet as `CaseOutcome.passages` holds it: doc, locator, chunk id, the engine's scores
    that are given (a channel that did not run scores None and is left out), text."""
    passage: dict[str, Any] = {"doc": _doc(snippet), "locator": _locator(snippet)}
    if snippet.get("chunk_id") not in (None, ""):
        passage["chunk_id"] = str(snippet["chunk_id"])
    scores = snippet.get("scores")
    if isinstance(scores, dict):
        given = {k: float(v) for k, v in scores.items()
                 if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}
        if given:
            passage["scores"] = given
    passage["text"] = _snippet_text(snippet)
    return passage

"""One question answered by the engine over a workspace, on a route: the answer and its evidence.

`WorkspaceAnswerer(workspace, config, model)` opens the engine on a scratch copy of the
workspace, the way the retrieval runs do (`retrieval_only.engine.WorkspaceRetriever`: the facade
with the MockProvider or the model a `models.ModelRun` names behind its cassette, the
configuration's preset, its narrative retriever), plus the workspace's fact store;
`answer(question, route, case_id, repeat)` calls the engine's `answer_question` with that store,
the provider, the facade's reference date and the narrative retriever, on one of two routes:

- `ask`: the engine's ask route as is (its rule-based intent parser: structured, clarifying,
  narrative or composite);
- `narrative`: the same call with an intent parser that takes the rule parser's slots and pins
  the route to the narrative channel (the raw question is kept, so the engine's safety gates
  still check it), so a user sees whether routing or the narrative channel lost an answer.

What comes back (`AnswerOutcome`): the answer and its plain text (without the inline sources),
the cited sources, the passages of the engine's first retrieval for the question in their rank
(the narrative path retrieves once per question; each with the text the synthesis was given for
it where that is not its own, `prompt_text`: its whole page when the engine's page parents are
on), the engine's route and the route label the
engine's judge would give it (structured, narrative, composite, clarify, not_found,
out_of_scope, fallback, error), the wall time, the LLM calls, and the error if it raised; where
the engine's number guard replaced the model's answer, what the model said (`model_answer`) and
the guard's account (`guard`: the figures it objected to; answers/guard.py).

Invariants: the workspace given is only read; a question whose answer raises is that question's
error (`error` is "<type>: <message>"), the run goes on; nothing here judges. With a model, each
question's calls are filed under `case_id` and `repeat` in its cassette (models/recorder.py), and
a replay miss or a failed call is that question's error even where the engine caught it (its
rerank and synthesis fall back on any exception): never a degraded answer judged as the model's.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, Literal

from ragspine_eval.answers.guard import GuardTrace, SaidProvider, guarded
from ragspine_eval.answers.refusal import is_refusal
from ragspine_eval.engines.base import error_text
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.execution.latency import listening
from ragspine_eval.retrieval_only.engine import WorkspaceRetriever

Route = Literal["ask", "narrative"]
ROUTES: tuple[Route, ...] = ("ask", "narrative")
ROUTE_TEXT = {"ask": "the engine's ask route (its intent parser routes the question)",
              "narrative": "pinned to the narrative channel (the same call, route forced)"}


@dataclass
class AnswerOutcome:
    """What the engine did with one question on one route (module docstring)."""

    route: str
    answer: str = ""
    answer_plain: str = ""
    agent_route: str = ""
    route_label: str = ""
    sources: list[dict[str, Any]] = field(default_factory=list)
    passages: list[dict[str, Any]] = field(default_factory=list)
    clarification: str | None = None
    fallback: str | None = None
    seconds: float = 0.0
    llm_calls: int = 0
    error: str | None = None
    model_answer: str | None = None  # the model's text, where the number guard replaced it
    guard: dict[str, Any] | None = None  # the guard's account (answers/guard.py)

    @property
    def locators(self) -> list[str]:
        """The cited sources' locators, in the engine's order."""
        return [source_locator(s) for s in self.sources]


def source_locator(source: dict[str, Any]) -> str:
    return str(source.get("locator") or source.get("source_locator") or "")


class _FirstRetrieval:
    """The engine's retriever, passed through; the passages of its first call are kept."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.first: list[dict[str, Any]] | None = None

    def retrieve(self, query: str, *, filters: dict[str, str] | None = None,
                 top_k: int = 50) -> list[dict[str, object]]:
        found = self._inner.retrieve(query, filters=filters, top_k=top_k)
        if self.first is None:
            self.first = [dict(p) for p in found]
        return found


class _NarrativeOnly:
    """An intent parser: the engine's rule parser's reading, its route pinned to narrative."""

    def __init__(self) -> None:
        from ragspine.agent.intent import RuleIntentParser

        self._inner = RuleIntentParser()

    def parse(self, question: str, *, reference_date: date | None = None) -> Any:
        from ragspine.agent.intent import ROUTE_NARRATIVE

        return replace(self._inner.parse(question, reference_date=reference_date),
                       route=ROUTE_NARRATIVE)


def route_label(result: Any) -> str:
    """The route label the engine's judge gives an `AgentResult` (module docstring)."""
    from ragspine.agent.intent import (CLARIFY_ASK_FIRST, CLARIFY_OUT_OF_SCOPE_ENTITY,
                                       ROUTE_NARRATIVE, ROUTE_STRUCTURED)

    if result.fallback is not None:
        return "fallback"
    mode = getattr(result.clarification, "mode", None)
    if mode == CLARIFY_ASK_FIRST:
        return "not_found" if is_refusal(result.answer) else "clarify"
    if mode == CLARIFY_OUT_OF_SCOPE_ENTITY:
        return "out_of_scope"
    if result.route == ROUTE_STRUCTURED:
        found = any(r.get("status") == "found" for r in result.tool_results)
        return ROUTE_STRUCTURED if found else "not_found"
    if result.route == ROUTE_NARRATIVE and not result.sources:
        return "not_found"
    return str(result.route)


def _passage(rank: int, hit: dict[str, Any]) -> dict[str, Any]:
    """A retrieved passage as kept: rank, locator, text, document, and the text the synthesis
    was given for it where that is another (`prompt_text`: its page, with page parents on)."""
    keep = {"rank": rank, "locator": source_locator(hit), "text": str(hit.get("text") or "")}
    for key in ("score", "doc", "chunk_id"):
        if key in hit:
            keep[key] = hit[key]
    if "doc" not in keep and hit.get("doc_id"):
        keep["doc"] = str(hit["doc_id"])
    prompt = hit.get("prompt_text")
    if prompt and str(prompt) != keep["text"]:
        keep["prompt_text"] = str(prompt)
    return keep


class WorkspaceAnswerer:
    """A context manager: the engine answering over a copy of `workspace` (module docstring)."""

    def __init__(self, workspace: str | Path, config: EngineConfig = DEFAULT, model: Any = None):
        self.workspace, self.config = Path(workspace), config
        self._opened = WorkspaceRetriever(workspace, config, model)  # model: models.ModelRun
        self._store: Any = None
        self._guard = GuardTrace()
        self._listen: Any = None

    @property
    def preset(self) -> dict[str, Any]:
        return self._opened.preset

    def __enter__(self) -> WorkspaceAnswerer:
        from ragspine.storage.fact_store import SqliteFactStore

        self._opened.__enter__()
        self._store = SqliteFactStore(self._opened.rag.db_path)
        self._store.init_schema()
        self._listen = listening(self._guard)
        self._listen.__enter__()
        return self

    def answer(self, question: str, route: Route = "ask", case_id: str = "",
               repeat: int = 0) -> AnswerOutcome:
        """The engine's answer to `question` on `route`, with its evidence; a model's calls
        meanwhile are filed under `case_id` and `repeat` in its cassette."""
        from ragspine.agent.agent import answer_question

        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r}: one of {', '.join(ROUTES)}")
        rag = self._opened.rag
        recorded = hasattr(rag.provider, "raise_swallowed")  # behind a cassette (models/)
        if recorded:
            rag.provider.case_id, rag.provider.repeat = case_id, repeat
            rag.provider.failures.clear()
        recorder = _FirstRetrieval(self._opened.narrative)
        out = AnswerOutcome(route=route)
        said = SaidProvider(rag.provider)
        self._guard.take()  # nothing left from an earlier question of this thread
        with self._opened.trace.case() as calls:
            started = time.perf_counter()
            try:
                result = answer_question(
                    question, self._store, said, reference_date=rag.reference_date,
                    narrative_retriever=recorder,
                    intent_parser=_NarrativeOnly() if route == "narrative" else None)
                if recorded:  # a miss or failure the engine swallowed is still this error
                    rag.provider.raise_swallowed()
            except Exception as exc:  # noqa: BLE001 - one question's failure is its error
                out.error = error_text(exc)  # a spent budget: not run (base.py)
                result = None
            out.seconds = time.perf_counter() - started
        out.llm_calls = len(calls)
        out.passages = [_passage(i, h) for i, h in enumerate(recorder.first or [], start=1)]
        if result is None:
            out.route_label = out.agent_route = "error"
            return out
        out.answer, out.answer_plain = result.answer, result.answer_plain or result.answer
        out.agent_route, out.route_label = str(result.route), route_label(result)
        out.sources = [dict(s) for s in result.sources]
        out.clarification = getattr(result.clarification, "mode", None)
        out.fallback = result.fallback
        out.model_answer, out.guard = guarded(said.said, self._guard.take(), question,
                                              recorder.first or [])
        return out

    def close(self) -> None:
        if self._listen is not None:
            self._listen.__exit__(None, None, None)
            self._listen = None
        if self._store is not None:
            try:
                self._store.close()
            except sqlite3.ProgrammingError:
                # closed from another thread than the runner's that opened it (the engine's
                # handles belong to their thread): its finalizer is spent, the connection goes
                # with the object, as the retriever's own stores do (retrieval_only/engine.py)
                pass
            self._store = None
        self._opened.close()

    def __exit__(self, *exc: object) -> None:
        self.close()

"""One question answered by the engine over a workspace, on a route: the answer and its evidence,
and the engine answering the answer harness's questions as an engine of the run path.

`WorkspaceAnswerer(workspace, config, model)` opens the engine on a scratch copy of the
workspace, the way the retrieval runs do (`workspace_retriever.WorkspaceRetriever`: the facade
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
(the narrative path retrieves once per question), the engine's route and the route label the
engine's judge would give it (structured, narrative, composite, clarify, not_found,
out_of_scope, fallback, error), the wall time, the LLM calls, and the error if it raised. It is
the answer harness's outcome type (engines/base.Outcome): what the outcome cache keeps of it is
everything but the wall time and the LLM calls (the runner's to measure).

`AnswersEngine(workspace, config, model)` answers a case of the answer harness (its
`AnswerQuestion`: `question`, `route`, `id`) with that `AnswerOutcome`, and says so
(`outcome_type`), so the runner (execution/runner.py) makes a time limit, a crashed worker or a
case not run an `AnswerOutcome` too (`AnswerOutcome.failed`: the error on the case's route); the
runner then runs it as it runs a retrieval run's questions: threads, forked or spawned worker
processes, a Dask cluster, each answer kept in the outcome cache as it comes.

Invariants: the workspace given is only read; a question whose answer raises is that question's
error (`error` is "<type>: <message>"), the run goes on; nothing here judges (the route label
is the engine judge's reading of the route, judges/refusal.py). With a model, each
question's calls are filed under `case_id` and `repeat` in its cassette (models/recorder.py), and
a replay miss or a failed call is that question's error even where the engine caught it (its
rerank and synthesis fall back on any exception): never a degraded answer judged as the model's.
AnswersEngine: each process and thread opens its own `WorkspaceAnswerer` on first use and
closes only what it opened (per_process.py), so a forked worker never touches its parent's
handles and a pickled engine carries only the workspace, the configuration and the model; the
outcome is made plain JSON values before it leaves the engine (to JSON and back), so an answer
made now and one read from the outcome cache are the same value and the report is the same
byte for byte whether the question was asked or reused.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field, fields, replace
from datetime import date
from pathlib import Path
from typing import Any, ClassVar, Literal

from ragspine_eval.engines.base import error_text
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.engines.per_process import PerProcess
from ragspine_eval.engines.workspace_retriever import WorkspaceRetriever
from ragspine_eval.judges.refusal import is_refusal

Route = Literal["ask", "narrative"]
ROUTES: tuple[Route, ...] = ("ask", "narrative")
ROUTE_TEXT = {"ask": "the engine's ask route (its intent parser routes the question)",
              "narrative": "pinned to the narrative channel (the same call, route forced)"}


@dataclass
class AnswerOutcome:
    """What the engine did with one question on one route (module docstring)."""

    # the outcome cache's format of an AnswerOutcome (engines/base.Outcome)
    FORMAT: ClassVar[str] = "answer-1"
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

    @property
    def locators(self) -> list[str]:
        """The cited sources' locators, in the engine's order."""
        return [source_locator(s) for s in self.sources]

    def to_dict(self) -> dict[str, Any]:
        """What the outcome cache keeps: every field but the runner's (`seconds`, `llm_calls`:
        their count depends on what the engine's caches hold, so on which worker asked the
        question after which)."""
        return {name: getattr(self, name) for name in _KEPT}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerOutcome:
        return cls(**data)

    @classmethod
    def failed(cls, case: Any, error: str) -> AnswerOutcome:
        """The outcome of a question the runner ended (a time limit, a crashed worker, a case
        not run): `error` on the case's route."""
        return cls(route=case.route, agent_route="error", route_label="error", error=error)


_KEPT = tuple(f.name for f in fields(AnswerOutcome) if f.name not in ("seconds", "llm_calls"))


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
    keep = {"rank": rank, "locator": source_locator(hit), "text": str(hit.get("text") or "")}
    for key in ("score", "doc", "chunk_id"):
        if key in hit:
            keep[key] = hit[key]
    return keep


class WorkspaceAnswerer:
    """A context manager: the engine answering over a copy of `workspace` (module docstring)."""

    def __init__(self, workspace: str | Path, config: EngineConfig = DEFAULT, model: Any = None):
        self.workspace, self.config = Path(workspace), config
        self._opened = WorkspaceRetriever(workspace, config, model)  # model: models.ModelRun
        self._store: Any = None

    @property
    def preset(self) -> dict[str, Any]:
        return self._opened.preset

    def __enter__(self) -> WorkspaceAnswerer:
        from ragspine.storage.fact_store import SqliteFactStore

        self._opened.__enter__()
        self._store = SqliteFactStore(self._opened.rag.db_path)
        self._store.init_schema()
        return self

    def answer(self, question: str, route: Route = "ask", case_id: str = "",
               repeat: int = 0) -> AnswerOutcome:
        """The engine's answer to `question` on `route`, with its evidence; a model's calls
        meanwhile are filed under `case_id` and `repeat` in its cassette."""
        from ragspine.agent.agent import answer_question

        if route not in ROUTES:
            raise ValueError(f"unknown route {route!r}: one of {', '.join(ROUTES)}")
        rag, recorded = self._opened.rag, self._opened.recorded  # behind a cassette: models/
        if recorded is not None:
            recorded.case_id, recorded.repeat = case_id, repeat
            recorded.failures.clear()
        recorder = _FirstRetrieval(self._opened.narrative)
        out = AnswerOutcome(route=route)
        with self._opened.trace.case() as calls:
            started = time.perf_counter()
            try:
                result = answer_question(
                    question, self._store, rag.provider, reference_date=rag.reference_date,
                    narrative_retriever=recorder,
                    intent_parser=_NarrativeOnly() if route == "narrative" else None)
                if recorded is not None:  # a miss or failure the engine swallowed: an error
                    recorded.raise_swallowed()
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
        return out

    def close(self) -> None:
        if self._store is not None:
            try:
                self._store.close()
            except sqlite3.ProgrammingError:
                # closed from another thread than the runner's that opened it (the engine's
                # handles belong to their thread): its finalizer is spent, the connection goes
                # with the object, as the retriever's own stores do (workspace_retriever.py)
                pass
            self._store = None
        self._opened.close()

    def __exit__(self, *exc: object) -> None:
        self.close()


class AnswersEngine:
    """The engine answering the run's questions over the workspace (module docstring)."""

    name = "ragspine"
    label = "answers"
    mode = "answers"
    outcome_type = AnswerOutcome
    # CPU-bound Python over SQLite handles: parallel questions in worker processes, forked
    # where that is safe (execution/workers.py); each process opens its own answerer
    parallel = "processes"
    forkable = True

    def __init__(self, workspace: str | Path, config: EngineConfig = DEFAULT, model: Any = None):
        self.workspace, self.config = Path(workspace), config
        self.model = model  # models.ModelRun, or None: the MockProvider
        self.repeat_index = 0  # set by the answer step: a cassette keeps each repeat apart
        self._answerers = PerProcess(lambda: WorkspaceAnswerer(self.workspace, self.config,
                                                               self.model))

    def __getstate__(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "config": self.config, "model": self.model,
                "repeat": self.repeat_index}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["workspace"], state["config"],  # type: ignore[misc]
                      state.get("model"))
        self.repeat_index = state.get("repeat", 0)

    def run_case(self, case: Any) -> AnswerOutcome:
        got = self._answerers.get().answer(case.question, case.route, case.id, self.repeat_index)
        plain = json.loads(json.dumps(got.to_dict(), ensure_ascii=False, default=str))
        return AnswerOutcome.from_dict(plain)

    def close(self) -> None:
        """Close the answerers this process opened (never a parent's, after a fork)."""
        self._answerers.close()

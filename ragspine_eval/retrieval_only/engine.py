"""The engine opened on a workspace, as its own retrieval-only evaluation opens it.

`WorkspaceRetriever(workspace, config)` opens the engine's facade on a scratch copy of the
workspace (`RAGSpine.local` creates missing stores and schemas in the folder it opens, and an
input is never written to) with the MockProvider (no model, no network) or the model a
`models.ModelRun` names (its query translation and listwise rerank then ask it, behind its
cassette, each call filed under the question's id), the configuration's
profile, graph mode and reranker, and its contextual index, query translation and page parent
as overrides of the retrieval preset, then asks the facade for its narrative retriever
(`open_retriever`: the same guards and assembly as the engine's `ask`, with no intent filters).
`retrieve(question, top_k)` returns the engine's passages, at most `top_k`, in its order, with
the wall time of the call and the LLM calls its trace reported meanwhile.

Invariants: the workspace folder given is only read (copied); the engine's vector-channel trace
at assembly is kept (`vector_channel`), so a profile that asks for vectors and gets none is
named, never silent; a question whose retrieval raises is that question's error, the run goes on.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig
from ragspine_eval.execution.latency import LLMTrace, listening
from ragspine_eval.retrieval.workspace import WorkspaceError


@dataclass
class Retrieved:
    """One question's retrieval: the engine's passages (full dicts), time, error, LLM calls."""

    hits: list[dict[str, Any]] = field(default_factory=list)
    seconds: float | None = None
    error: str | None = None
    llm_calls: list[dict[str, Any]] = field(default_factory=list)


class _VectorChannel(logging.Handler):
    """The engine's `narrative.vector_channel` trace at assembly (counts and a reason code)."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.fields: dict[str, Any] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "op", None) == "narrative.vector_channel":
            self.fields = {k: getattr(record, k, None)
                           for k in ("vector_channel", "vector_reason", "n_vectors")}


class WorkspaceRetriever:
    """A context manager: the engine's retriever over a copy of `workspace` (module docstring)."""

    def __init__(self, workspace: str | Path, config: EngineConfig = DEFAULT, model: Any = None):
        self.workspace, self.config = Path(workspace), config
        self.model = model  # models.ModelRun, or None: the MockProvider
        self._provider: Any = None
        self.vector_channel: dict[str, Any] | None = None
        self.preset: dict[str, Any] = {}
        self.trace = LLMTrace()
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._retriever: Any = None
        self._stack: list[Any] = []
        self.rag: Any = None  # the engine's facade on the scratch copy, once entered

    def __enter__(self) -> WorkspaceRetriever:
        from ragspine.agent.llm_provider import MockProvider
        from ragspine.session import RAGSpine

        self._scratch = tempfile.TemporaryDirectory(prefix="ragspine-eval-ws-")
        copy = Path(self._scratch.name) / self.workspace.name
        shutil.copytree(self.workspace, copy)
        cfg = self.config
        overrides = {"retrieval": {"reranker": cfg.reranker}} if cfg.reranker else None
        self._provider = (MockProvider() if self.model is None
                          else self.model.provider_for("", None))
        try:
            rag = RAGSpine.local(copy, provider=self._provider, preset=cfg.profile,
                                 graph=cfg.graph, config=overrides)
        except ValueError as exc:
            self.close()
            raise WorkspaceError(f"{cfg.describe()}: the engine refuses it: {exc}") from None
        rag.retrieval = rag.retrieval.with_overrides(
            contextual_index=cfg.contextual_index, query_translation=cfg.query_translation,
            page_parent=cfg.page_parent)
        r = rag.retrieval
        self.preset = {k: getattr(r, k) for k in (
            "retrieval_mode", "embedding", "reranker", "postprocessor", "page_parent",
            "contextual_index", "query_translation")}
        capture = _VectorChannel()
        opened = rag.open_retriever()
        try:
            with listening(capture):
                self._retriever = opened.__enter__()
        except Exception as exc:  # noqa: BLE001 - assembly failing is bad input, not a case error
            self.close()
            raise WorkspaceError(f"{self.workspace}: the engine could not open its retriever "
                                 f"({type(exc).__name__}: {exc})") from None
        self._stack = [opened, rag]
        self.rag = rag
        self.vector_channel = capture.fields
        if self._retriever is None:
            self.close()
            raise WorkspaceError(f"{self.workspace}: the engine has no narrative retriever for "
                                 f"this workspace (no narrative chunks?)")
        self._listen = listening(self.trace)
        self._listen.__enter__()
        return self

    @property
    def narrative(self) -> Any:
        """The engine's narrative retriever itself (what `ask` hands its agent), once entered."""
        return self._retriever

    def retrieve(self, question: str, top_k: int, case_id: str = "") -> Retrieved:
        """The engine's top `top_k` passages for `question`, unfiltered, in its order; a model's
        calls meanwhile are filed under `case_id` in its cassette."""
        if hasattr(self._provider, "case_id"):
            self._provider.case_id = case_id
            self._provider.failures.clear()
        out = Retrieved()
        with self.trace.case() as calls:
            started = time.perf_counter()
            try:
                out.hits = [dict(h) for h in self._retriever.retrieve(
                    question, filters=None, top_k=top_k)][:top_k]
                swallowed = getattr(self._provider, "raise_swallowed", None)
                if swallowed is not None:  # the engine's rerank falls back on any error:
                    swallowed()  # a cassette miss it caught is still this question's error
            except Exception as exc:  # noqa: BLE001 - one question's failure is its error
                out.error = f"{type(exc).__name__}: {exc}"
                out.hits = []
                if not str(exc):
                    out.error += " " + traceback.format_exc(limit=1).strip().splitlines()[-1]
            out.seconds = time.perf_counter() - started
        out.llm_calls = list(calls)
        return out

    def close(self) -> None:
        listen = getattr(self, "_listen", None)
        if listen is not None:
            listen.__exit__(None, None, None)
            self._listen = None
        for item in self._stack:
            try:
                item.__exit__(None, None, None)
            except Exception:  # noqa: BLE001, S110 - closing a scratch copy
                pass
        self._stack = []
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def __exit__(self, *exc: object) -> None:
        self.close()

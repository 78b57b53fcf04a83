"""The engine opened on a workspace, as its own retrieval-only evaluation opens it.

`WorkspaceRetriever(workspace, config, model, case_timeout=None)` opens the engine's facade on a
private copy of the workspace (`RAGSpine.local` creates missing stores and schemas in the folder
it opens, and an input is never written to) with the MockProvider (no model, no network) or the
model a `models.ModelRun` names (its query translation and listwise rerank then ask it, behind
its cassette, each call filed under the question's id), the configuration's profile, graph mode
and reranker, and its contextual index, query translation and page parent as overrides of the
retrieval preset, then asks the facade for its narrative retriever (`open_retriever`: the same
guards and assembly as the engine's `ask`, with no intent filters). `retrieve(question, top_k)`
returns the engine's passages, at most `top_k`, in its order, with the wall time of the call and
the LLM calls its trace reported meanwhile: a `Retrieved`, which is also the retrieval harness's
outcome type (engines/base.Outcome: what the outcome cache keeps of it is its passages and its
error; the wall time and the LLM calls are the runner's to measure). Used by the retrieval
harness's engine (workspace_retrieval.py), by the answer harness's (workspace_answers.py) and by
both harnesses to read the engine's effective preset.

Invariants:
- the workspace folder given is only read: its regular files are copied
  (workspace.private_copy) and the engine opens the copy;
- the engine's vector-channel trace at assembly is kept (`vector_channel`), so a profile that
  asks for vectors and gets none is named, never silent;
- a question whose retrieval raises is that question's error, and so is a question past
  `case_timeout` seconds (qa's `--case-timeout`, the same meaning): with a limit the engine runs
  in a daemon thread of its own, on its own copy; a question past the limit is abandoned with
  its thread and copy (a thread cannot be stopped), and the next question gets a fresh engine.
  Without a limit (None) the engine is opened in the caller's thread, and `rag` (the facade)
  and `narrative` (its narrative retriever) are the caller's to use (the answers harness: the
  engine's SQLite handles belong to the thread that opened them);
- nothing the engine raises while it opens is a crash: an error the configuration causes is an
  `EngineConfigError` naming the configuration's file and key (the engine's words kept), any
  other a `WorkspaceError` naming the workspace (both exit 2, before any question).
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import tempfile
import threading
import time
import traceback
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ragspine_eval.engines.base import error_text
from ragspine_eval.engines.engine_config import DEFAULT, EngineConfig, EngineConfigError
from ragspine_eval.engines.trace import LLMTrace, listening
from ragspine_eval.files import reading
from ragspine_eval.knowledge.workspace import WorkspaceError, private_copy

# which configuration key an engine error at start-up points at, by the words it uses
_KEY_WORDS = {"reranker": ("rerank",), "profile": ("embedding", "profile", "preset", "fastembed"),
              "graph": ("graph",), "contextual_index": ("contextual",),
              "query_translation": ("translation",), "page_parent": ("page_parent",)}


@dataclass
class Retrieved:
    """One question's retrieval: the engine's passages (full dicts), time, error, LLM calls."""

    # the outcome cache's format of a Retrieved (engines/base.Outcome)
    FORMAT: ClassVar[str] = "retrieved-1"
    hits: list[dict[str, Any]] = field(default_factory=list)
    seconds: float | None = None
    error: str | None = None
    llm_calls: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """What the outcome cache keeps: the passages and the error (the time and the LLM calls
        are the runner's, measured around the call)."""
        return {"hits": self.hits, "error": self.error}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Retrieved:
        return cls(hits=list(data["hits"]), error=data["error"])

    @classmethod
    def failed(cls, case: Any, error: str) -> Retrieved:
        """A question the runner ended with `error`: no passages."""
        return cls(error=error)


class _VectorChannel(logging.Handler):
    """The engine's `narrative.vector_channel` trace at assembly (counts and a reason code)."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.fields: dict[str, Any] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "op", None) == "narrative.vector_channel":
            self.fields = {k: getattr(record, k, None)
                           for k in ("vector_channel", "vector_reason", "n_vectors")}


def _config_error(cfg: EngineConfig, exc: BaseException) -> EngineConfigError | None:
    """The configuration's file and key when the engine's error at start-up points at a
    setting the configuration gives; None when it points at none (the workspace's turn)."""
    text = f"{type(exc).__name__}: {exc}".lower()
    if isinstance(exc, sqlite3.Error) or "sqlite" in text or "database" in text:
        return None  # a store of the workspace, whatever words its message uses
    given = cfg.settings()
    keys = [k for k in given if any(w in text for w in _KEY_WORDS.get(k, (k,)))]
    if not keys and not (isinstance(exc, ValueError) and given):
        return None
    keys = keys or list(given)
    shown = ", ".join(f"{k} = {given[k]!r}" for k in keys)
    return EngineConfigError(f"{cfg.path or 'engine config'}: {shown}: the engine refuses it "
                             f"({type(exc).__name__}: {reading.clip(str(exc), 200)[1:-1]}); "
                             f"change the key or set up what it needs")


class _Engine:
    """The engine on a copy of the workspace, opened, used and closed in one thread: a daemon
    thread of its own (`threaded`), or the caller's."""

    def __init__(self, workspace: Path, config: EngineConfig, trace: LLMTrace, threaded: bool,
                 provider: Any, recorded: Any = None):
        self.workspace, self.config, self.trace = workspace, config, trace
        self.provider = provider  # the MockProvider, or a model behind its cassette (models/)
        self.recorded = recorded  # the provider when it is the cassette's RecordedProvider
        self.jobs: queue.Queue[tuple[str, int] | None] = queue.Queue()
        self.answers: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.preset: dict[str, Any] = {}
        self.vector_channel: dict[str, Any] | None = None
        self.rag: Any = None
        self.retriever: Any = None
        self.thread: threading.Thread | None = None
        self._stack: list[Any] = []
        if not threaded:
            self._scratch = tempfile.TemporaryDirectory(prefix="ragspine-eval-ws-")
            try:
                self.retriever = self._open(Path(self._scratch.name) / (workspace.name or "ws"),
                                            self._stack)
            except BaseException:
                self._closed(self._stack, self._scratch)
                raise
            return
        self._finalizers_before: set[Any] = set()
        self.thread = threading.Thread(target=self._serve, daemon=True,
                                       name="ragspine-eval-retriever")
        self.thread.start()
        kind, value = self.answers.get()
        if kind == "failed":
            raise value

    @staticmethod
    def _closed(stack: list[Any], scratch: tempfile.TemporaryDirectory[str]) -> None:
        for item in reversed(stack):
            try:
                item.__exit__(None, None, None)
            except Exception:  # noqa: BLE001, S110 - closing a private copy
                pass
        stack.clear()
        scratch.cleanup()

    def _serve(self) -> None:
        scratch = tempfile.TemporaryDirectory(prefix="ragspine-eval-ws-")
        # the engine's stores close their SQLite handles in weakref finalizers that run at exit in
        # the main thread: for an engine abandoned past the time limit that would raise (its
        # handles belong to this thread), so those made from here on are dropped on abandon
        # (the scratch folder's own finalizer, made above, still removes the copy at exit)
        self._finalizers_before = set(getattr(weakref.finalize, "_registry", {}))
        stack: list[Any] = []
        try:
            try:
                retriever = self._open(Path(scratch.name) / (self.workspace.name or "ws"), stack)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                self.answers.put(("failed", exc))
                return
            self.answers.put(("ready", None))
            while (job := self.jobs.get()) is not None:
                question, top_k = job
                self.answers.put(("answer", self._retrieve(retriever, question, top_k)))
        finally:
            self._closed(stack, scratch)

    def _open(self, copy: Path, stack: list[Any]) -> Any:
        from ragspine.session import RAGSpine

        private_copy(self.workspace, copy)
        cfg = self.config
        overrides = {"retrieval": {"reranker": cfg.reranker}} if cfg.reranker else None
        capture = _VectorChannel()
        try:
            rag = RAGSpine.local(copy, provider=self.provider, preset=cfg.profile,
                                 graph=cfg.graph, config=overrides)
            stack.append(rag)
            self.rag = rag
            rag.retrieval = rag.retrieval.with_overrides(
                contextual_index=cfg.contextual_index, query_translation=cfg.query_translation,
                page_parent=cfg.page_parent)
            r = rag.retrieval
            self.preset = {k: getattr(r, k) for k in (
                "retrieval_mode", "embedding", "reranker", "postprocessor", "page_parent",
                "contextual_index", "query_translation")}
            opened = rag.open_retriever()
            with listening(capture):
                retriever = opened.__enter__()
            stack.append(opened)
        except Exception as exc:  # noqa: BLE001 - the engine refusing its input is bad input
            raise _config_error(cfg, exc) or WorkspaceError(
                f"{self.workspace}: the engine could not open this workspace "
                f"({type(exc).__name__}: {reading.clip(str(exc), 200)[1:-1]}); rebuild it with "
                f"`ragspine-eval kb build`") from None
        self.vector_channel = capture.fields
        if retriever is None:
            raise WorkspaceError(f"{self.workspace}: the engine has no narrative retriever for "
                                 f"this workspace (no narrative chunks?)")
        return retriever

    def _retrieve(self, retriever: Any, question: str, top_k: int) -> Retrieved:
        out = Retrieved()
        with self.trace.case() as calls:
            started = time.perf_counter()
            try:
                out.hits = [dict(h) for h in retriever.retrieve(
                    question, filters=None, top_k=top_k)][:top_k]
                if self.recorded is not None:  # the engine's rerank falls back on any error:
                    self.recorded.raise_swallowed()  # a miss it caught is still an error
            except Exception as exc:  # noqa: BLE001 - one question's failure is its error
                out.error = error_text(exc)  # a spent budget: not run (base.py)
                out.hits = []
                if not str(exc):
                    out.error += " " + traceback.format_exc(limit=1).strip().splitlines()[-1]
            out.seconds = time.perf_counter() - started
        out.llm_calls = list(calls)
        return out

    def ask(self, question: str, top_k: int, timeout: float | None) -> Retrieved | None:
        """The answer, or None when none came within `timeout` (the engine is then abandoned:
        the caller never asks it again; it closes itself once its question ends)."""
        if self.thread is None:
            return self._retrieve(self.retriever, question, top_k)
        self.jobs.put((question, top_k))
        try:
            return self.answers.get(timeout=timeout)[1]
        except queue.Empty:
            self.jobs.put(None)
            for finalizer in set(getattr(weakref.finalize, "_registry", {})) \
                    - self._finalizers_before:
                finalizer.atexit = False  # the OS closes its files; its thread cannot be joined
            return None

    def close(self) -> None:
        """Close the engine and remove its copy (in its own thread, waited for)."""
        if self.thread is None:
            self._closed(self._stack, self._scratch)
            return
        self.jobs.put(None)
        self.thread.join(timeout=60)


class WorkspaceRetriever:
    """A context manager: the engine's retriever over a copy of `workspace` (module docstring)."""

    def __init__(self, workspace: str | Path, config: EngineConfig = DEFAULT, model: Any = None,
                 case_timeout: float | None = None):
        self.workspace, self.config = Path(workspace), config
        self.model = model  # models.ModelRun, or None: the MockProvider
        self._provider: Any = None
        self.recorded: Any = None  # the provider, once opened, when it is behind a cassette
        self.case_timeout = case_timeout  # None: no limit, the engine in the caller's thread
        self.vector_channel: dict[str, Any] | None = None
        self.preset: dict[str, Any] = {}
        self.trace = LLMTrace()
        self._engine: _Engine | None = None
        self._listen: Any = None

    def _open(self) -> _Engine:
        if self._provider is None:
            self._provider, self.recorded = provider_of(self.model)
        return _Engine(self.workspace, self.config, self.trace, self.case_timeout is not None,
                       self._provider, self.recorded)

    @property
    def rag(self) -> Any:
        """The engine's facade on the copy, once entered (the caller's only without a limit)."""
        return None if self._engine is None else self._engine.rag

    @property
    def narrative(self) -> Any:
        """The engine's narrative retriever itself (what `ask` hands its agent), once entered."""
        return None if self._engine is None else self._engine.retriever

    def __enter__(self) -> WorkspaceRetriever:
        self._engine = self._open()
        self.preset, self.vector_channel = self._engine.preset, self._engine.vector_channel
        self._listen = listening(self.trace)
        self._listen.__enter__()
        return self

    def retrieve(self, question: str, top_k: int, case_id: str = "") -> Retrieved:
        """The engine's top `top_k` passages for `question`, unfiltered, in its order; an error
        when the engine raises or takes more than `case_timeout` seconds. A model's calls
        meanwhile are filed under `case_id` in its cassette."""
        if self.recorded is not None:
            self.recorded.case_id = case_id
            self.recorded.failures.clear()
        if self._engine is None:  # the last one was abandoned past the time limit
            self._engine = self._open()
        got = self._engine.ask(question, top_k, self.case_timeout)
        if got is None and self.case_timeout is not None:
            self._engine = None
            return Retrieved(seconds=self.case_timeout,
                             error=f"TimeoutError: no answer within the case timeout of "
                                   f"{self.case_timeout:g} s (--case-timeout)")
        return got

    def close(self) -> None:
        if self._listen is not None:
            self._listen.__exit__(None, None, None)
            self._listen = None
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def __exit__(self, *exc: object) -> None:
        self.close()


def provider_of(model: Any) -> tuple[Any, Any]:
    """The provider the engine is handed for `model` (models.ModelRun; None: the bare
    MockProvider), and the same provider again when it is the cassette's `RecordedProvider`
    (models/recorder.py: record, replay or live), else None: recognised by its type, once."""
    if model is None:
        from ragspine.agent.llm_provider import MockProvider

        return MockProvider(), None
    from ragspine_eval.models.recorder import RecordedProvider

    provider = model.provider_for("", None)
    return provider, provider if isinstance(provider, RecordedProvider) else None

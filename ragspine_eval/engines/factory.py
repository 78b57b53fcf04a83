"""From an `--engine` string to an engine: which kind, which mode, which baseline key.

| --engine | engine | modes (default first) | baseline key |
|---|---|---|---|
| `ragspine` | the in-process engine | tool, agent | `tool`, `agent` |
| `http://HOST:PORT[/prefix]` (or https) | a running RAGSpine service | agent | `agent@http` |
| `module:callable` | any importable callable | tool, agent | `<mode>@module:callable` |

Invariants: `parse_engine` checks everything it can without running a case (a bad URL, a
callable that does not import, a mode the engine lacks all raise EngineSpecError, which the CLI
turns into exit 2 before any engine call); the key and the name never hold a credential; the
in-process keys stay exactly "tool" and "agent", the keys of the committed baseline.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragspine_eval.errors import RagspineEvalError
from ragspine_eval.engines.base import EVAL_MODES, Engine
from ragspine_eval.engines.callable_engine import (
    CallableEngine,
    CallableSpecError,
    load_callable,
)
from ragspine_eval.knowledge.kb import EvalKB

# The HTTP engine, and its client httpx (50 ms to import), is imported only for an http://
# engine: an in-process run needs neither.

DEFAULT_ENGINE = "ragspine"


class EngineSpecError(RagspineEvalError, ValueError):
    """An --engine / --mode pair that names no usable engine; the message is the one line shown."""


@dataclass(frozen=True)
class EngineSpec:
    """A parsed --engine: `target` is the string as given (it may hold credentials: never show
    it); `name` is what reports show; `key` is the baseline key."""

    kind: str  # "ragspine" | "http" | "callable"
    target: str
    mode: str
    name: str
    key: str


def parse_engine(engine: str = DEFAULT_ENGINE, mode: str | None = None) -> EngineSpec:
    if mode is not None and mode not in EVAL_MODES:
        raise EngineSpecError(f"unknown mode {mode!r}; expected one of {', '.join(EVAL_MODES)}")
    if engine == DEFAULT_ENGINE:
        mode = mode or "tool"
        return EngineSpec("ragspine", engine, mode, "ragspine", mode)
    if engine.startswith(("http://", "https://")):
        from ragspine_eval.engines.http import HTTP_MODE, HttpEngine, HttpEngineError

        if mode not in (None, HTTP_MODE):
            raise EngineSpecError(
                f"--mode {mode} is not served over HTTP: the service's /v1/ask runs the engine's "
                f"answer_question, which is mode {HTTP_MODE}; drop --mode or use --mode {HTTP_MODE}")
        try:
            probe = HttpEngine(engine)
        except HttpEngineError as exc:
            raise EngineSpecError(f"--engine {exc}") from None
        return EngineSpec("http", engine, HTTP_MODE, probe.name, probe.label)
    if ":" in engine and "://" not in engine:
        try:
            load_callable(engine)
        except CallableSpecError as exc:
            raise EngineSpecError(str(exc)) from None
        mode = mode or "tool"
        return EngineSpec("callable", engine, mode, engine, f"{mode}@{engine}")
    raise EngineSpecError(f"--engine {engine!r} names no engine; use {DEFAULT_ENGINE} (in process), "
                          f"http://HOST:PORT (a running service) or module:callable")


def build_engine(spec: EngineSpec, kb: EvalKB, *, case_timeout: float,
                 retries: int | None = None,
                 retriever_options: dict[str, str] | None = None, model: object = None
                 ) -> Engine:
    """The engine a spec names, over a built KB (the HTTP engine reads its passages from it).
    `retries` is the HTTP engine's (None: its default, http.DEFAULT_RETRIES);
    `retriever_options` the in-process engine's retriever settings (engine_config.py);
    `model` the in-process agent's model (models.ModelRun; None: the MockProvider)."""
    if spec.kind == "ragspine":
        from ragspine_eval.engines.inprocess import RagspineEngine  # imports the engine

        return RagspineEngine(kb, spec.mode, retriever_options, model)
    if retriever_options:
        from ragspine_eval.engines.engine_config import EngineConfigError

        raise EngineConfigError(f"--engine-config sets the in-process engine's retriever; the "
                                f"engine {spec.name} is not in process, so it cannot take effect")
    if spec.kind == "http":
        from ragspine_eval.engines.http import (
            DEFAULT_RETRIES,
            HttpEngine,
            kb_passages,
        )

        return HttpEngine(spec.target, passages=kb_passages(kb.chunk_db),
                          case_timeout=case_timeout,
                          retries=DEFAULT_RETRIES if retries is None else retries)
    return CallableEngine(load_callable(spec.target), spec.target, spec.mode)

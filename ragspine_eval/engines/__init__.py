"""How a golden case reaches an engine and comes back as a `CaseOutcome`.

base (the seam), inprocess (the engine in this process), http (a running service),
callable_engine (any importable callable), factory (from an --engine string to an engine).
"""

from ragspine_eval.engines.base import CaseOutcome, Engine, OutcomeError, error_outcome
from ragspine_eval.engines.factory import (
    DEFAULT_ENGINE,
    EngineSpec,
    EngineSpecError,
    build_engine,
    parse_engine,
)
from ragspine_eval.engines.inprocess import EVAL_MODES, RagspineEngine

__all__ = ["DEFAULT_ENGINE", "EVAL_MODES", "CaseOutcome", "Engine", "EngineSpec",
           "EngineSpecError", "OutcomeError", "RagspineEngine", "build_engine", "error_outcome",
           "parse_engine"]

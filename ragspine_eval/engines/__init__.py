"""How a golden case reaches an engine and comes back as a `CaseOutcome`."""

from ragspine_eval.engines.base import CaseOutcome, Engine, error_outcome
from ragspine_eval.engines.inprocess import EVAL_MODES, RagspineEngine

__all__ = ["EVAL_MODES", "CaseOutcome", "Engine", "RagspineEngine", "error_outcome"]

"""How a case reaches an engine and comes back as its harness's outcome.

base (the seam), inprocess (the engine in this process), http (a running service),
callable_engine (any importable callable), factory (from an --engine string to an engine),
service (the engine's own HTTP service, for `ragspine-eval serve`), trace (the engine's LLM
trace listener), engine_config (`--engine-config`), and the engine over a workspace:
workspace_retriever (its retriever opened on a workspace, the top k passages of one question
as a `Retrieved`), workspace_retrieval (that retriever as an engine of the run path),
workspace_answers (one question answered on a route as an `AnswerOutcome`, and `AnswersEngine`,
the answer harness's engine of the run path), per_process (what those two open, once per
process and thread). Each engine says its outcome type
(base.Outcome: `CaseOutcome` for a golden case). A new kind of engine is a
class here with the `Engine` seam of base, and a branch of the factory.

The names below are imported on first use, not with the package: a worker process of a
parallel run imports the package for `base` and the one engine it runs, and importing every
engine (and the HTTP client) would add to each worker's start-up.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "CaseOutcome": "base", "Engine": "base", "OutcomeError": "base", "error_outcome": "base",
    "DEFAULT_ENGINE": "factory", "EngineSpec": "factory", "EngineSpecError": "factory",
    "build_engine": "factory", "parse_engine": "factory",
    "EVAL_MODES": "base", "RagspineEngine": "inprocess",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)

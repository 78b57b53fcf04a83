"""How a golden case reaches an engine and comes back as a `CaseOutcome`.

base (the seam), inprocess (the engine in this process), http (a running service),
callable_engine (any importable callable), factory (from an --engine string to an engine),
service (the engine's own HTTP service, for `ragspine-eval serve`). A new kind of engine is a
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

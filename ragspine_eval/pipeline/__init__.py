"""The run path: one short pipeline of named steps for every harness that asks an engine.

spec (`RunWhat`: what is run; `RunHow`: how) → plan (what the caches already answer) → answer
(the engine on the chosen executor, each answer stored as it comes) → score (as answers arrive,
or after: the harness's scorer) → keep (verdicts, the whole-run entry) → report (the cache's
share, latency, the workspace). qa/run.py and retrieval_only/run.py are this path with their
own cases, engine call and scorer. Each optimisation lives in the step it speeds up, with its
reason and measured gain in that module's docstring.

The names below are imported on first use.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "RunWhat": "spec",
    "RunHow": "spec",
    "Plan": "plan",
    "Answers": "answer",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)

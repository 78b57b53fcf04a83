"""The QA harness: golden cases in, verdicts per gate out.

golden (the JSONL format and its loader), golden_check (cases against a knowledge base), kb (the
knowledge base and the engine's stores built from it), engines/ (how a case reaches an engine:
in process, over HTTP, any callable), runner and workers (cases run in order, in parallel,
within a time limit), gates (one small function per gate), groundedness (claims and the
entailment judge), report (evaluate: verdicts into a QAEvalReport), run (run_qa_eval: load, run,
score) and gated_run (the whole gated run the CLI and the notebooks share), service (the
engine's own HTTP service, for `ragspine-eval serve`).

The names below are imported on first use, so that importing one part does not import all.
"""

from importlib import import_module
from typing import Any

_WHERE = {
    "GoldenCase": "golden", "GoldenSetError": "golden", "load_golden_set": "golden",
    "EvalKB": "kb", "KnowledgeBaseError": "kb", "build_eval_kb": "kb",
    "EVAL_MODES": "engines.inprocess", "CaseOutcome": "engines.base", "Engine": "engines.base",
    "GATE_METRICS": "gates", "Verdict": "gates", "FABRICATION": "gates",
    "GROUNDEDNESS_METRICS": "groundedness", "EntailmentJudge": "groundedness",
    "LexicalOverlapJudge": "groundedness",
    "GateMetric": "report", "QAEvalReport": "report", "CaseRecord": "report",
    "evaluate": "report", "make_baseline_entry": "report", "compare_to_baseline": "report",
    "run_qa_eval": "run",
    "QAGatedRun": "gated_run", "run_gated_qa": "gated_run",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)

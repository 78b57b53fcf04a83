"""ragspine_eval: the closed evaluation loop of the RAGSpine engine.

Two harnesses score the engine against version-controlled golden sets, `qa` and `extraction`;
one `ratchet` gates both (the baseline ratchets up and never down); `files` writes every output
whole or not at all; `outputs` turns a finished report into what people and CI read (console,
JUnit, Markdown, diff, provenance, stats); `workbench` makes the notebooks' tables, charts and
HTML reports; `cli` is the thin command line over all of it.

The public entry points are importable from here (on first use, so `import ragspine_eval` stays
cheap); the same names live in `ragspine_eval.qa` and `ragspine_eval.extraction`. Extraction's
`make_baseline_entry` and `compare_to_baseline` are reached through `ragspine_eval.extraction`.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_WHERE = {
    # the QA harness
    "run_qa_eval": "qa.run", "evaluate": "qa.report", "load_golden_set": "qa.golden",
    "build_eval_kb": "qa.kb", "EVAL_MODES": "qa.engines.inprocess", "GATE_METRICS": "qa.gates",
    "GROUNDEDNESS_METRICS": "qa.groundedness", "GateMetric": "qa.report",
    "QAEvalReport": "qa.report", "LexicalOverlapJudge": "qa.groundedness",
    "make_baseline_entry": "qa.report", "compare_to_baseline": "qa.report",
    "run_gated_qa": "qa.gated_run",
    # the extraction harness
    "run_eval": "extraction.scoring", "ChannelMetric": "extraction.report",
    "EvalReport": "extraction.report", "run_gated_extraction": "extraction.gated_run",
    # shared
    "RagspineEvalError": "errors",
}

__all__ = sorted([*_WHERE, "__version__"])


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)


from ragspine_eval import _relocated  # noqa: E402  (old module paths, with a warning)

_relocated.install()

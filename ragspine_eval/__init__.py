"""ragspine_eval: the closed evaluation loop of the RAGSpine engine.

The package in floors, each importing only from its own floor and below (tests/test_layout.py):
- ground: errors, paths, stats (Wilson, McNemar), provenance, files/ (whole-or-nothing writes);
- ratchet/ (the baseline ratchets up and never down), golden/ (the QA golden sets), judges/
  (faithfulness and accuracy judges);
- retrieval/ (the knowledge base, relevance, retrieval metrics, failure stages), engines/ (how a
  case reaches an engine), execution/ (runner, workers, Dask, the outcome cache);
- the two harnesses, qa/ and extraction/;
- outputs/ (console, JUnit, Markdown, diff), runs/ (the run store), gated/ (a whole gated run);
- workbench/ (frames, charts, HTML reports, notebooks) and cli/ (the thin command line).

The public entry points are importable from here (on first use, so `import ragspine_eval` stays
cheap); the same names live in the subpackages that own them. Extraction's
`make_baseline_entry` and `compare_to_baseline` are reached through `ragspine_eval.extraction`.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_WHERE = {
    # the QA harness
    "run_qa_eval": "qa.run", "evaluate": "qa.report", "load_golden_set": "golden.cases",
    "build_eval_kb": "retrieval.kb", "EVAL_MODES": "engines.inprocess",
    "GATE_METRICS": "qa.gates", "GROUNDEDNESS_METRICS": "judges.groundedness",
    "GateMetric": "qa.report", "QAEvalReport": "qa.report",
    "LexicalOverlapJudge": "judges.groundedness",
    "make_baseline_entry": "qa.baseline_entry", "compare_to_baseline": "qa.baseline_entry",
    "run_gated_qa": "gated.qa",
    # the extraction harness
    "run_eval": "extraction.scoring", "ChannelMetric": "extraction.report",
    "EvalReport": "extraction.report", "run_gated_extraction": "gated.extraction",
    # shared
    "RagspineEvalError": "errors",
}

__all__ = sorted([*_WHERE, "__version__"])


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)


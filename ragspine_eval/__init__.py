"""ragspine_eval: the closed evaluation loop of the RAGSpine engine.

The package in floors, each importing only from its own floor and below (tests/test_layout.py):
- ground: errors, paths, stats (Wilson, McNemar), fingerprints, provenance, files/ (whole-or-nothing writes);
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

from ragspine_eval.lazy import lazy_exports

__version__ = "0.1.0"

_WHERE = {
    # the QA harness
    "run_qa_eval": "qa.run", "evaluate": "qa.evaluation", "load_golden_set": "golden.cases",
    "build_eval_kb": "knowledge.kb", "EVAL_MODES": "engines.inprocess",
    "GATE_METRICS": "qa.gates", "GROUNDEDNESS_METRICS": "judges.groundedness",
    "GateMetric": "qa.report", "QAEvalReport": "qa.report",
    "LexicalOverlapJudge": "judges.groundedness",
    "make_baseline_entry": "qa.baseline_entry", "compare_to_baseline": "qa.baseline_entry",
    "QAHarness": "qa.harness", "QAWhat": "qa.harness",
    # any harness's gated run: run_gated(QAHarness(), QAWhat(RunWhat(...)), ...)
    "run_gated": "gated.runner", "Gate": "gated.harness", "GatedOutputs": "gated.outputs",
    # the extraction harness
    "run_eval": "extraction.scoring", "ChannelMetric": "extraction.report",
    "EvalReport": "extraction.report", "ExtractionHarness": "extraction.harness",
    "ExtractionWhat": "extraction.harness",
    # shared
    "RagspineEvalError": "errors",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE, also=("__version__",))

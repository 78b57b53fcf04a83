"""The extraction harness: documents in, per-channel scores out.

records (fact and ground-truth records: formats and validation), adapter (the engine's
extractors turned into facts), scoring (align facts with a ground truth, score each channel and
coverage), claims (what a record says on each channel, sameness, fingerprints), report (ChannelMetric, Coverage, EvalReport and the baseline entry), run (one run
over document sets or a facts file, and its JSON report), alignment (a ground truth against its
document and facts), harness (`ExtractionHarness`, `ExtractionWhat`: the harness as gated.run
takes it, on the gated run's floor), fixtures/ (the generated office documents and their ground
truth; a new document type starts there and in adapter).

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "ExtractionInputError": "records", "load_facts": "records", "load_ground_truth": "records",
    "run_eval": "scoring", "CHANNELS": "scoring", "COVERAGE": "scoring",
    "ChannelMetric": "report", "Coverage": "report", "EvalReport": "report",
    "make_baseline_entry": "report", "compare_to_baseline": "report",
    "ExtractionRun": "run", "Target": "run", "fixture_targets": "run", "score_engine": "run",
    "score_facts_file": "run",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)

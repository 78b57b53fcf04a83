"""The QA harness: golden cases and an engine's outcomes in, verdicts per gate out.

gates (one small function per gate), scored (a case's verdicts as the cache keeps them),
case_record (what a report keeps of each case), report (`QAEvalReport`), evaluation
(`evaluate`: verdicts into a QAEvalReport), streaming (cases scored as their answers arrive),
retrieval_gate (the retrieval gate and where a failure sits), report_file (the report's JSON,
its case list kept with the cache), answered (a run with engine errors judged on the cases it
answered), baseline_entry (a report's entry in the ratchet, and a report compared with one),
repeats (flaky cases over repeated runs), golden_check (cases against a knowledge base), run
(`run_qa_eval`: the run path of pipeline/ with these parts), harness (`QAHarness`, `QAWhat`:
the harness as gated.run takes it, on the gated run's floor). The golden set is golden/, the
engines engines/, the judges judges/, how cases run execution/ and pipeline/; the whole gated
run is gated/.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "GATE_METRICS": "gates", "Verdict": "gates", "FABRICATION": "gates",
    "GateMetric": "report", "QAEvalReport": "report", "CaseRecord": "report",
    "evaluate": "evaluation", "make_baseline_entry": "baseline_entry",
    "compare_to_baseline": "baseline_entry", "run_qa_eval": "run",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)

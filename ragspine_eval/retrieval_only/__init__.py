"""The retrieval-only harness: an engine workspace, a question file, the engine's retriever.

run (`run_retrieval_eval`: every question judged under the
question file's rules), report (`RetrievalRunReport`: per case rank and page rank, recall@k,
page_recall@k, MRR and page MRR per run, by tag and by document; its baseline entry). It sits
at the harness floor, beside qa/ and extraction/, because it runs the engine's retriever (engines/
workspace_retriever.py, as an engine of the run path: engines/workspace_retrieval.py); harness
(`RetrievalHarness`, `RetrievalWhat`: the harness as gated.run takes it, on the gated run's
floor), the command `ragspine-eval retrieval`.

The names below are imported on first use.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "RetrievalRunReport": "report",
    "run_retrieval_eval": "run",
    "make_retrieval_entry": "report",
    "compare_retrieval": "report",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)

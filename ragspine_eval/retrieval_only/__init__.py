"""The retrieval-only harness: an engine workspace, a question file, the engine's retriever.

engine (the engine opened on a workspace with an engine configuration, asked for the top k
passages of one question, timed), questions_engine (that retriever as an engine of the run
path, pipeline/), run (`run_retrieval_eval`: every question judged under the
question file's rules), report (`RetrievalRunReport`: per case rank and page rank, recall@k,
page_recall@k, MRR and page MRR per run, by tag and by document; its baseline entry). It sits
at the harness floor, beside qa/ and extraction/, because it calls the engine; the gated run is
gated/retrieval.py, the command `ragspine-eval retrieval`.

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

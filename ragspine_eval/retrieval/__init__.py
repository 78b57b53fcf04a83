"""Retrieval: what the engine retrieved, measured: relevance, rank metrics and failure stages.

passages (`RankedPassage`: what a retriever returned, in its order, bounded as a report keeps
it); relevance (`RelevanceRule` and `matches`: which passages a case needs); metrics (rank,
hit@k, MRR, nDCG@10, precision@k, recall@k per case, per run and by tag); stages (where a
failing verdict went wrong: routing, retrieval, the answer; RAGChecker's claim split);
question_check (a question file's relevance rules checked against a workspace). One
implementation shared by the QA harness, retrieval-only runs and answer runs; the knowledge
bases retrieved from are knowledge/'s. Nothing here knows a gate or a report.

The names below are imported on first use, so that importing one part does not import all.
"""

from ragspine_eval.lazy import lazy_exports

_WHERE = {
    "RankedPassage": "passages",
    "passages_from": "passages",
    "RelevanceRule": "relevance",
    "matches": "relevance",
    "rules_of": "relevance",
    "CaseRetrieval": "metrics",
    "RunRetrieval": "metrics",
    "measure_case": "metrics",
    "summarize": "metrics",
    "stage_of": "stages",
    "claim_split": "stages",
}

__all__, __getattr__ = lazy_exports(__name__, _WHERE)
